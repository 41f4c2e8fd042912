package osm_test

import (
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/felixge/httpsnoop"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/nbisim/nbispec"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// specGap is something the client meets that OSM's OpenAPI file does not
// document: the file dates from 2020, and the NBI of release 19 has grown.
type specGap struct {
	method string
	// path is a path.Match pattern of the spec's paths, * for an id.
	path string
	// status is the one answer missing; 0 means the whole operation is.
	status int
	reason string
}

// specGaps is kept minimal: the test fails on an entry that nothing needs.
var specGaps = []specGap{
	{method: http.MethodGet, path: "/version", reason: "the NBI serves its version beside the SOL005 topics, the only ones the file describes"},
	{method: http.MethodPost, path: "/nslcm/v1/ns_instances/*/update", reason: "NS update came with OSM release 12"},
}

// covers tells whether the gap is why the spec does not document e.
func (gap specGap) covers(e exchange) bool {
	matched, _ := path.Match(gap.path, e.path)
	return matched && gap.method == e.method && (gap.status == 0 || gap.status == e.status)
}

// clientRoutes are the NBI routes the Client calls, in the simulator's terms.
var clientRoutes = []nbisim.Route{
	{Method: http.MethodGet, Path: "/osm/version"},
	{Method: http.MethodPost, Path: "/osm/admin/v1/tokens"},
	{Method: http.MethodDelete, Path: "/osm/admin/v1/tokens/{tokenId}"},
	{Method: http.MethodGet, Path: "/osm/admin/v1/vim_accounts"},
	{Method: http.MethodGet, Path: "/osm/nsd/v1/ns_descriptors"},
	{Method: http.MethodPost, Path: "/osm/nsd/v1/ns_descriptors_content"},
	{Method: http.MethodPut, Path: "/osm/nsd/v1/ns_descriptors/{nsdInfoId}/nsd_content"},
	{Method: http.MethodDelete, Path: "/osm/nsd/v1/ns_descriptors_content/{nsdInfoId}"},
	{Method: http.MethodGet, Path: "/osm/vnfpkgm/v1/vnf_packages_content"},
	{Method: http.MethodPost, Path: "/osm/vnfpkgm/v1/vnf_packages_content"},
	{Method: http.MethodPut, Path: "/osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}/package_content"},
	{Method: http.MethodDelete, Path: "/osm/vnfpkgm/v1/vnf_packages_content/{packageContentId}"},
	{Method: http.MethodGet, Path: "/osm/nslcm/v1/ns_instances_content"},
	{Method: http.MethodPost, Path: "/osm/nslcm/v1/ns_instances_content"},
	{Method: http.MethodGet, Path: "/osm/nslcm/v1/ns_instances_content/{nsInstanceContentId}"},
	{Method: http.MethodDelete, Path: "/osm/nslcm/v1/ns_instances_content/{nsInstanceContentId}"},
	{Method: http.MethodPost, Path: "/osm/nslcm/v1/ns_instances/{nsInstanceId}/action"},
	{Method: http.MethodPost, Path: "/osm/nslcm/v1/ns_instances/{nsInstanceId}/scale"},
	{Method: http.MethodPost, Path: "/osm/nslcm/v1/ns_instances/{nsInstanceId}/terminate"},
	{Method: http.MethodPost, Path: "/osm/nslcm/v1/ns_instances/{nsInstanceId}/update"},
	{Method: http.MethodGet, Path: "/osm/nslcm/v1/ns_lcm_op_occs"},
	{Method: http.MethodGet, Path: "/osm/nslcm/v1/ns_lcm_op_occs/{nsLcmOpOccId}"},
	{Method: http.MethodGet, Path: "/osm/nslcm/v1/vnf_instances"},
}

// exchange is a request the NBI answered: its method, its path as the spec
// writes paths (no /osm prefix, no query) and the answer's status.
type exchange struct {
	method, path string
	status       int
}

func (e exchange) String() string { return fmt.Sprintf("%s %s → %d", e.method, e.path, e.status) }

// exchangeRecorder records, on the server side, the exchanges of an NBI.
type exchangeRecorder struct {
	mu   sync.Mutex
	seen map[exchange]bool
}

// wrap makes a handler that serves with next and records each exchange.
func (r *exchangeRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		metrics := httpsnoop.CaptureMetrics(next, w, req)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.seen == nil {
			r.seen = map[exchange]bool{}
		}
		r.seen[exchange{req.Method, specPath(req.URL.Path), metrics.Code}] = true
	})
}

// exchanges returns the distinct exchanges, sorted.
func (r *exchangeRecorder) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all []exchange
	for e := range r.seen {
		all = append(all, e)
	}
	slices.SortFunc(all, func(a, b exchange) int { return strings.Compare(a.String(), b.String()) })
	return all
}

// specPath is a URL path as the spec writes it. A logout's path holds the
// token, which must show in no failure message: it becomes the spec's template.
func specPath(urlPath string) string {
	specified := strings.TrimPrefix(urlPath, "/osm")
	if strings.HasPrefix(specified, "/admin/v1/tokens/") {
		return "/admin/v1/tokens/{tokenId}"
	}
	return specified
}

// TestClientConformsToOpenAPI runs every call of the Client, with its
// successes and the refusals it handles, and checks each method, path and
// status against OSM's OpenAPI file.
func TestClientConformsToOpenAPI(t *testing.T) {
	spec, err := nbispec.OSM()
	noError(t, err)
	recorder := &exchangeRecorder{}
	f := newLDAPFixture(t, recorder.wrap)
	exerciseEveryCall(t, f)

	var reached []nbisim.Route
	for _, endpoint := range f.sim.Stats().Endpoints {
		route := nbisim.Route{Method: endpoint.Method, Path: endpoint.Route}
		if !slices.Contains(reached, route) {
			reached = append(reached, route)
		}
	}
	byPath := cmpopts.SortSlices(func(a, b nbisim.Route) bool { return a.Path+" "+a.Method < b.Path+" "+b.Method })
	if diff := cmp.Diff(clientRoutes, reached, byPath); diff != "" {
		t.Errorf("routes the scenario reached (-client's +reached):\n%s", diff)
	}

	used := make([]bool, len(specGaps))
	for _, e := range recorder.exchanges() {
		// A status is only documented on a documented method and path.
		if spec.StatusDocumented(e.method, e.path, e.status) {
			continue
		}
		gap := slices.IndexFunc(specGaps, func(gap specGap) bool { return gap.covers(e) })
		if gap < 0 {
			t.Errorf("%v: not in OSM's OpenAPI file", e)
			continue
		}
		used[gap] = true
	}
	for i, gap := range specGaps {
		if !used[i] {
			t.Errorf("spec gap %s %s %d (%s) is not needed: remove it", gap.method, gap.path, gap.status, gap.reason)
		}
	}
}

// exerciseEveryCall makes every call of the Client on the fixture (which
// already created the packages), meeting each refusal it must handle.
func exerciseEveryCall(t *testing.T, f *ldapFixture) {
	ctx := t.Context()
	_, err := f.client.Version(ctx)
	noError(t, err)
	wrong := simCredentials
	wrong.Password = "not-the-password"
	if err := f.newClient(t, wrong).Authenticate(ctx); !osm.IsUnauthorized(err) {
		t.Fatalf("a wrong password: %v", err)
	}
	noError(t, f.client.Authenticate(ctx))
	f.sim.RevokeTokens() // the next call meets a 401
	for _, list := range []func() error{
		func() error { _, err := f.client.ListVIMAccounts(ctx); return err },
		func() error { _, err := f.client.ListNSDescriptors(ctx); return err },
		func() error { _, err := f.client.ListVNFDescriptors(ctx); return err },
		func() error { _, err := f.client.ListNSInstances(ctx); return err },
		func() error { _, err := f.client.ListNSInstances(ctx, "ldap"); return err },
		func() error { _, err := f.client.ListOperations(ctx, ""); return err },
		func() error { _, err := f.client.ListVNFInstances(ctx); return err },
	} {
		noError(t, list())
	}

	// Packages.
	_, err = f.client.CreatePackage(ctx, f.knfPkg)
	wantAPIError(t, err, osm.IsConflict)
	wantAPIError(t, f.client.UpdatePackage(ctx, missingID, f.nsPkg), osm.IsNotFound)

	// NS instances and operations.
	for _, refused := range []struct {
		create osm.NSInstanceCreate
		is     func(error) bool
	}{
		{osm.NSInstanceCreate{Name: "ldap", NsdID: missingID, VIMAccountID: f.vimID}, osm.IsNotFound},
		{osm.NSInstanceCreate{Name: "ldap", NsdID: f.nsdID, VIMAccountID: f.noK8sVIMID}, osm.IsBadRequest},
		{osm.NSInstanceCreate{Name: "ldap", NsdID: f.nsdID}, osm.IsUnprocessable},
	} {
		_, err := f.client.CreateNSInstance(ctx, refused.create)
		wantAPIError(t, err, refused.is)
	}
	created := f.createNS(t, "ldap", map[string]any{"replicaCount": "2"})
	wantAPIError(t, f.client.DeletePackage(ctx, osmpkg.KindNS, f.nsdID), osm.IsConflict)
	f.finishOperations()
	_, err = f.client.GetNSInstance(ctx, created.ID)
	noError(t, err)
	_, err = f.client.GetNSInstance(ctx, missingID)
	wantAPIError(t, err, osm.IsNotFound)
	_, err = f.client.ListVNFInstances(ctx, created.ID)
	noError(t, err)
	upgradeID, err := f.upgrade(ctx, created.ID, map[string]any{"replicaCount": "3"})
	noError(t, err)
	_, err = f.client.ListOperationsSince(ctx, f.clock.Now())
	noError(t, err)
	f.finishOperations()
	_, err = f.client.GetOperation(ctx, upgradeID)
	noError(t, err)
	_, err = f.client.GetOperation(ctx, missingID)
	wantAPIError(t, err, osm.IsNotFound)
	_, err = f.client.ListOperations(ctx, created.ID)
	noError(t, err)
	_, err = f.client.UpgradeKDU(ctx, created.ID, osm.KDUUpgrade{MemberVnfIndex: memberIndex, KDUName: "nope"})
	wantAPIError(t, err, osm.IsBadRequest)
	scale := osm.NSScale{MemberVnfIndex: memberIndex, ScalingGroup: scalingGroup, Direction: osm.ScaleOut}
	_, err = f.client.ScaleNSInstance(ctx, created.ID, scale)
	wantAPIError(t, err, osm.IsBadRequest)
	noError(t, f.client.UpdatePackage(ctx, f.vnfdID, scalableKNFPackage(t)))
	noError(t, f.client.UpdatePackage(ctx, f.nsdID, f.nsPkg))
	_, err = f.client.ScaleNSInstance(ctx, created.ID, scale)
	noError(t, err)
	f.finishOperations()
	vnfs, err := f.client.ListVNFInstances(ctx, created.ID)
	noError(t, err)
	_, err = f.client.ChangeVNFPackage(ctx, created.ID, osm.VNFPackageChange{VNFInstanceID: vnfs[0].ID, VnfdID: f.nsdID})
	wantAPIError(t, err, osm.IsUnprocessable)
	_, err = f.client.ChangeVNFPackage(ctx, created.ID, osm.VNFPackageChange{VNFInstanceID: vnfs[0].ID, VnfdID: f.vnfdID})
	noError(t, err)
	f.finishOperations()
	_, err = f.client.TerminateNSInstance(ctx, created.ID, false)
	noError(t, err)
	f.finishOperations()
	_, err = f.client.DeleteNSInstance(ctx, created.ID, true)
	noError(t, err)
	instantiated := f.createReadyNS(t, "instantiated", nil)
	_, err = f.client.DeleteNSInstance(ctx, instantiated, false) // a terminate operation first
	noError(t, err)
	f.finishOperations()

	noError(t, f.client.DeletePackage(ctx, osmpkg.KindNS, f.nsdID))
	noError(t, f.client.DeletePackage(ctx, osmpkg.KindVNF, f.vnfdID))
	wantAPIError(t, f.client.DeletePackage(ctx, osmpkg.KindVNF, f.vnfdID), osm.IsNotFound)
	noError(t, f.client.Logout(ctx))
}
