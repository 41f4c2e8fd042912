package osm_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	yaml "go.yaml.in/yaml/v3"
	"golang.org/x/sync/errgroup"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// The simulated NBI's setup and the names of the openldap packages.
const (
	vimName      = "vim1"
	noK8sVIMName = "vim-nok8s"
	// operationDelay is how long, on the fake clock, an LCM operation stays PROCESSING.
	operationDelay = 10 * time.Second
	// missingID is a well-formed id that names nothing.
	missingID    = "0b5ae4d6-51a3-4e18-b7df-868c115dcb17"
	memberIndex  = "openldap"
	kduName      = "ldap"
	scalingGroup = "ldap-replicas"
	// tokensRoute is the simulator's name of the login route, in its stats.
	tokensRoute = "/osm/admin/v1/tokens"
	// anyStatus makes requestCount count every answer; 0 is taken (a reset connection).
	anyStatus = -1
)

var simCredentials = osm.Credentials{Username: nbisim.DefaultUsername, Password: nbisim.DefaultPassword, Project: nbisim.DefaultProject}

// simNBI is a simulated NBI behind a local HTTP server, and a Client of it.
type simNBI struct {
	sim    *nbisim.Server
	server *httptest.Server
	clock  *testingclock.FakeClock
	client *osm.Client
}

// newSimNBI starts a simulated NBI with a VIM account that has a K8s
// cluster and one that has none. wrap, when not nil, wraps its handler.
func newSimNBI(t *testing.T, wrap func(http.Handler) http.Handler) *simNBI {
	t.Helper()
	// The simulator and the Client read the same fake clock, so that token
	// lifetimes and operation delays need no sleeping.
	clock := testingclock.NewFakeClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	sim := nbisim.New(nbisim.Config{
		Clock:          clock.Now,
		OperationDelay: operationDelay,
		VIMAccounts:    []nbisim.VIMAccount{{Name: vimName}, {Name: noK8sVIMName, NoK8sCluster: true}},
	})
	var handler http.Handler = sim
	if wrap != nil {
		handler = wrap(sim)
	}
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	nbi := &simNBI{sim: sim, server: server, clock: clock}
	nbi.client = nbi.newClient(t, simCredentials)
	return nbi
}

// newClient makes a Client of the simulated NBI, on its fake clock.
func (nbi *simNBI) newClient(t *testing.T, credentials osm.Credentials) *osm.Client {
	t.Helper()
	client, err := osm.NewClient(nbi.server.URL, credentials, osm.WithClock(nbi.clock.Now))
	noError(t, err)
	return client
}

// requestCount counts the NBI's answers of a status (or anyStatus) to a
// method on a route, as the simulator names routes.
func (nbi *simNBI) requestCount(method, route string, status int) int64 {
	var count int64
	for _, endpoint := range nbi.sim.Stats().Endpoints {
		if endpoint.Method == method && endpoint.Route == route && (status == anyStatus || endpoint.Status == status) {
			count += endpoint.Requests
		}
	}
	return count
}

// tokenRequests counts the logins.
func (nbi *simNBI) tokenRequests() int64 {
	return nbi.requestCount(http.MethodPost, tokensRoute, anyStatus)
}

// finishOperations lets the pending LCM operations come due; the simulator
// ends them at its next request.
func (nbi *simNBI) finishOperations() { nbi.clock.Step(operationDelay) }

// ldapFixture is a simulated NBI where the client onboarded the openldap packages.
type ldapFixture struct {
	*simNBI
	vnfdID, nsdID     string
	vimID, noK8sVIMID string
	knfPkg, nsPkg     *osmpkg.Package
}

// newLDAPFixture starts a simulated NBI (see newSimNBI) and onboards the packages.
func newLDAPFixture(t *testing.T, wrap func(http.Handler) http.Handler) *ldapFixture {
	t.Helper()
	f := &ldapFixture{simNBI: newSimNBI(t, wrap), knfPkg: osm.OpenLDAPPackage(t, "openldap_knf"), nsPkg: osm.OpenLDAPPackage(t, "openldap_ns")}
	var err error
	f.vnfdID, err = f.client.CreatePackage(t.Context(), f.knfPkg)
	noError(t, err)
	f.nsdID, err = f.client.CreatePackage(t.Context(), f.nsPkg)
	noError(t, err)
	for _, vim := range f.sim.State().VIMAccounts {
		switch vim.Name {
		case vimName:
			f.vimID = vim.ID
		case noK8sVIMName:
			f.noK8sVIMID = vim.ID
		}
	}
	return f
}

// nsCreate is the creation of an openldap NS instance on the VIM account
// with a K8s cluster; values, when not nil, are the KDU's Helm values.
func (f *ldapFixture) nsCreate(name string, values map[string]any) osm.NSInstanceCreate {
	create := osm.NSInstanceCreate{Name: name, NsdID: f.nsdID, VIMAccountID: f.vimID, Description: "LDAP for " + name}
	if values != nil {
		create.AdditionalParamsForVnf = []osm.VnfParams{{
			MemberVnfIndex:         memberIndex,
			AdditionalParamsForKdu: []osm.KDUParams{{KDUName: kduName, AdditionalParams: values}},
		}}
	}
	return create
}

// createNS creates an openldap NS instance; its instantiation is then PROCESSING.
func (f *ldapFixture) createNS(t *testing.T, name string, values map[string]any) *osm.NSInstanceCreated {
	t.Helper()
	created, err := f.client.CreateNSInstance(t.Context(), f.nsCreate(name, values))
	noError(t, err)
	return created
}

// createReadyNS creates an openldap NS instance and lets its instantiation complete.
func (f *ldapFixture) createReadyNS(t *testing.T, name string, values map[string]any) string {
	t.Helper()
	created := f.createNS(t, name, values)
	f.finishOperations()
	return created.ID
}

// upgrade changes the values of the ldap KDU and returns the operation id.
func (f *ldapFixture) upgrade(ctx context.Context, nsID string, values map[string]any) (string, error) {
	return f.client.UpgradeKDU(ctx, nsID, osm.KDUUpgrade{MemberVnfIndex: memberIndex, KDUName: kduName, Params: values})
}

// kduValues reads the values of the ldap KDU of an NS instance from its VNF record.
func (f *ldapFixture) kduValues(t *testing.T, nsID string) map[string]any {
	t.Helper()
	vnfs, err := f.client.ListVNFInstances(t.Context(), nsID)
	noError(t, err)
	if len(vnfs) != 1 || len(vnfs[0].KDURecords) != 1 {
		t.Fatalf("NS instance %s: want one VNF record with one KDU, got %+v", nsID, vnfs)
	}
	values, err := vnfs[0].KDURecords[0].Params()
	noError(t, err)
	return values
}

// helmValues returns the values the only KDU of an NS instance runs with, as the operator
// works them out from the VNF record and the completed actions.
func (f *ldapFixture) helmValues(t *testing.T, nsID string) map[string]any {
	t.Helper()
	actions, err := f.client.ListCompletedActions(t.Context(), nsID)
	noError(t, err)
	var kduActions []osm.KDUAction
	for _, op := range actions {
		action, ok, err := op.KDUAction()
		noError(t, err)
		if ok {
			kduActions = append(kduActions, action)
		}
	}
	return osm.ReplayHelmRelease(osm.HelmRelease{Values: f.kduValues(t, nsID)}, kduActions).Values
}

// nsState returns the nsState of an NS instance.
func (f *ldapFixture) nsState(t *testing.T, id string) string {
	t.Helper()
	ns, err := f.client.GetNSInstance(t.Context(), id)
	noError(t, err)
	return ns.NSState
}

// newDescriptorAdmin is the _admin of a descriptor onboarded now, at its
// first revision, and not used yet.
func (f *ldapFixture) newDescriptorAdmin() osm.DescriptorAdmin {
	onboarded := osm.Number(f.clock.Now().Unix())
	return osm.DescriptorAdmin{OnboardingState: "ONBOARDED", OperationalState: "ENABLED", UsageState: "NOT_IN_USE",
		Revision: 1, Created: onboarded, Modified: onboarded, UserDefinedData: map[string]osm.LooseString{}}
}

// wantRemoved checks that the NBI no longer knows an NS instance.
func (f *ldapFixture) wantRemoved(t *testing.T, nsID string) {
	t.Helper()
	_, err := f.client.GetNSInstance(t.Context(), nsID)
	wantAPIError(t, err, osm.IsNotFound)
}

// scalableKNFPackage is openldap_knf with a scaling aspect in its
// deployment flavour, which OSM needs to scale the VNF.
func scalableKNFPackage(t *testing.T) *osmpkg.Package {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "osmpkg", "testdata", "openldap_knf", "openldap_vnfd.yaml"))
	noError(t, err)
	var descriptor struct {
		VNFD map[string]any `yaml:"vnfd"`
	}
	noError(t, yaml.Unmarshal(data, &descriptor))
	flavours, _ := descriptor.VNFD["df"].([]any)
	flavour, _ := flavours[0].(map[string]any)
	flavour["scaling-aspect"] = []any{map[string]any{
		"id": scalingGroup, "name": scalingGroup, "max-scale-level": 3,
		"aspect-delta-details": map[string]any{"deltas": []any{map[string]any{
			"id": "one-more", "kdu-resource-delta": []any{map[string]any{"id": kduName, "number-of-instances": 1}},
		}}},
	}}
	data, err = yaml.Marshal(&descriptor)
	noError(t, err)
	dir := filepath.Join(t.TempDir(), "openldap_knf")
	noError(t, os.Mkdir(dir, 0o755))
	noError(t, os.WriteFile(filepath.Join(dir, "openldap_vnfd.yaml"), data, 0o644))
	pkg, err := osmpkg.Build(dir)
	noError(t, err)
	return pkg
}

// noError fails the test at once on an error.
func noError(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantAPIError checks that err is the NBI's answer, of the kind is tells,
// and not transient (a retry of a 4xx cannot succeed).
func wantAPIError(t *testing.T, err error, is func(error) bool) {
	t.Helper()
	var apiError *osm.APIError
	switch {
	case !errors.As(err, &apiError):
		t.Fatalf("want an *osm.APIError, got %T: %v", err, err)
	case !is(err):
		t.Fatalf("the error is not of the kind expected: %v", err)
	case osm.IsTransient(err):
		t.Fatalf("IsTransient(%v) = true", err)
	}
}

// TestClientCalls runs every call of the Client against the simulated NBI.
func TestClientCalls(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *ldapFixture)
	}{
		{"Version needs no token", func(t *testing.T, f *ldapFixture) {
			before := f.tokenRequests()
			version, err := f.newClient(t, simCredentials).Version(t.Context())
			noError(t, err)
			if diff := cmp.Diff(&osm.Version{Version: nbisim.Version, Date: nbisim.VersionDate}, version); diff != "" {
				t.Errorf("version (-want +got):\n%s", diff)
			}
			if after := f.tokenRequests(); after != before {
				t.Errorf("%d token requests for the version", after-before)
			}
		}},
		{"Authenticate logs in once", func(t *testing.T, f *ldapFixture) {
			before := f.tokenRequests()
			noError(t, f.client.Authenticate(t.Context()))
			if got := f.tokenRequests() - before; got != 1 {
				t.Errorf("%d token requests, want 1", got)
			}
		}},
		{"Authenticate with a wrong password", func(t *testing.T, f *ldapFixture) {
			wrong := simCredentials
			wrong.Password = "not-the-password"
			err := f.newClient(t, wrong).Authenticate(t.Context())
			var authError *osm.AuthError
			if !errors.As(err, &authError) || !osm.IsUnauthorized(err) || osm.IsTransient(err) {
				t.Fatalf("want a lasting *osm.AuthError, got %T: %v", err, err)
			}
			if strings.Contains(err.Error(), wrong.Password) {
				t.Errorf("the error shows the password: %v", err)
			}
		}},
		{"a user made through the API must change its password first", func(t *testing.T, f *ldapFixture) {
			post := func(path, token string, body any) map[string]any {
				t.Helper()
				data, err := json.Marshal(body)
				noError(t, err)
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.server.URL+path, bytes.NewReader(data))
				noError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json")
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := f.server.Client().Do(req)
				noError(t, err)
				defer resp.Body.Close()
				var answer map[string]any
				noError(t, json.NewDecoder(resp.Body).Decode(&answer))
				return answer
			}
			admin := post("/osm/admin/v1/tokens", "", map[string]string{"username": simCredentials.Username, "password": simCredentials.Password})
			post("/osm/admin/v1/users", admin["id"].(string), map[string]any{"username": "alice", "password": "Secret-123",
				"project_role_mappings": []any{map[string]string{"project": simCredentials.Project, "role": "project_user"}}})
			err := f.newClient(t, osm.Credentials{Username: "alice", Password: "Secret-123", Project: simCredentials.Project}).Authenticate(t.Context())
			if !osm.IsUnauthorized(err) || !strings.Contains(err.Error(), "wants the password changed") {
				t.Fatalf("want the refusal of a password OSM wants changed, got %v", err)
			}
		}},
		{"Logout revokes the token and the next call logs in again", func(t *testing.T, f *ldapFixture) {
			tokensBefore := f.sim.State().Tokens
			noError(t, f.client.Logout(t.Context()))
			if got := f.sim.State().Tokens; got != tokensBefore-1 {
				t.Errorf("%d tokens left, want %d", got, tokensBefore-1)
			}
			noError(t, f.client.Logout(t.Context())) // no token: no request
			if got := f.requestCount(http.MethodDelete, tokensRoute+"/{tokenId}", anyStatus); got != 1 {
				t.Errorf("%d logout requests, want 1", got)
			}
			logins := f.tokenRequests()
			_, err := f.client.ListVIMAccounts(t.Context())
			noError(t, err)
			if got := f.tokenRequests() - logins; got != 1 {
				t.Errorf("%d token requests after the logout, want 1", got)
			}
		}},
		{"ListVIMAccounts", func(t *testing.T, f *ldapFixture) {
			accounts, err := f.client.ListVIMAccounts(t.Context())
			noError(t, err)
			const seeded = "VIM account seeded by the NBI simulator"
			enabled := osm.VIMAccountAdmin{OperationalState: "ENABLED"}
			want := []osm.VIMAccount{
				{ID: f.vimID, Name: vimName, VIMType: nbisim.DefaultVIMType, Description: seeded, Admin: enabled},
				{ID: f.noK8sVIMID, Name: noK8sVIMName, VIMType: nbisim.DefaultVIMType, Description: seeded, Admin: enabled},
			}
			byName := cmpopts.SortSlices(func(a, b osm.VIMAccount) bool { return a.Name < b.Name })
			if diff := cmp.Diff(want, accounts, byName); diff != "" {
				t.Errorf("VIM accounts (-want +got):\n%s", diff)
			}
		}},
		{"ListNSDescriptors", func(t *testing.T, f *ldapFixture) {
			nsds, err := f.client.ListNSDescriptors(t.Context())
			noError(t, err)
			want := []osm.NSDescriptor{{
				ID: f.nsdID, DescriptorID: "openldap_ns", Name: "openldap_ns", Version: "1.0", VnfdIDs: []string{"openldap_knf"},
				DeploymentFlavours: []osm.NSDeploymentFlavour{{ID: "default-df", VnfProfiles: []osm.NSVnfProfile{{ID: memberIndex, VnfdID: "openldap_knf"}}}},
				Admin:              f.newDescriptorAdmin(),
			}}
			if diff := cmp.Diff(want, nsds); diff != "" {
				t.Errorf("NS descriptors (-want +got):\n%s", diff)
			}
		}},
		{"ListVNFDescriptors", func(t *testing.T, f *ldapFixture) {
			vnfds, err := f.client.ListVNFDescriptors(t.Context())
			noError(t, err)
			want := []osm.VNFDescriptor{{
				ID: f.vnfdID, DescriptorID: "openldap_knf", ProductName: "openldap_knf", Version: "1.0",
				KDUs:  []osm.DescriptorKDU{{Name: kduName, HelmChart: "stable/openldap"}},
				Admin: f.newDescriptorAdmin(),
			}}
			if diff := cmp.Diff(want, vnfds); diff != "" {
				t.Errorf("VNF descriptors (-want +got):\n%s", diff)
			}
		}},
		{"UpdatePackage makes a new revision", func(t *testing.T, f *ldapFixture) {
			noError(t, f.client.UpdatePackage(t.Context(), f.vnfdID, scalableKNFPackage(t)))
			noError(t, f.client.UpdatePackage(t.Context(), f.nsdID, f.nsPkg))
			vnfds, err := f.client.ListVNFDescriptors(t.Context())
			noError(t, err)
			nsds, err := f.client.ListNSDescriptors(t.Context())
			noError(t, err)
			revisions := map[string]osm.Number{vnfds[0].ID: vnfds[0].Admin.Revision, nsds[0].ID: nsds[0].Admin.Revision}
			if diff := cmp.Diff(map[string]osm.Number{f.vnfdID: 2, f.nsdID: 2}, revisions); diff != "" {
				t.Errorf("revisions (-want +got):\n%s", diff)
			}
		}},
		{"DeletePackage once nothing uses the package", func(t *testing.T, f *ldapFixture) {
			ctx := t.Context()
			ns := f.createNS(t, "ldap", nil)
			wantAPIError(t, f.client.DeletePackage(ctx, osmpkg.KindNS, f.nsdID), osm.IsConflict)
			wantAPIError(t, f.client.DeletePackage(ctx, osmpkg.KindVNF, f.vnfdID), osm.IsConflict)
			_, err := f.client.DeleteNSInstance(ctx, ns.ID, true)
			noError(t, err)
			noError(t, f.client.DeletePackage(ctx, osmpkg.KindNS, f.nsdID))
			noError(t, f.client.DeletePackage(ctx, osmpkg.KindVNF, f.vnfdID))
			if packages := f.sim.State().Packages; len(packages) != 0 {
				t.Errorf("packages left: %+v", packages)
			}
			wantAPIError(t, f.client.DeletePackage(ctx, osmpkg.KindVNF, f.vnfdID), osm.IsNotFound)
		}},
		{"ListNSInstances by names, which are not unique, whatever the names", func(t *testing.T, f *ldapFixture) {
			first, second := f.createNS(t, "ldap", nil), f.createNS(t, "ldap", nil)
			other := f.createNS(t, "other", nil)
			// Names the NBI's query parser would change are listed another way.
			yamlWord, digits := f.createNS(t, "true", nil), f.createNS(t, "42", nil)
			many := make([]string, 300)
			for i := range many {
				many[i] = fmt.Sprintf("ns-with-a-long-name-%04d", i)
			}
			for _, list := range []struct {
				names []string
				want  []string
			}{
				{[]string{"ldap"}, []string{first.ID, second.ID}},
				{nil, []string{first.ID, second.ID, other.ID, yamlWord.ID, digits.ID}},
				{[]string{"none"}, nil},
				{[]string{"ldap", "other", "none"}, []string{first.ID, second.ID, other.ID}},
				{[]string{"true"}, []string{yamlWord.ID}},
				{[]string{"42", "other"}, []string{digits.ID, other.ID}},
				{append(many, "other"), []string{other.ID}},
			} {
				instances, err := f.client.ListNSInstances(t.Context(), list.names...)
				noError(t, err)
				var ids []string
				for _, instance := range instances {
					ids = append(ids, instance.ID)
				}
				if diff := cmp.Diff(list.want, ids, cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("NS instances named %q (-want +got):\n%s", list.names, diff)
				}
			}
		}},
		{"GetNSInstance follows the instantiation", func(t *testing.T, f *ldapFixture) {
			created := f.createNS(t, "ldap", map[string]any{"replicaCount": "2"})
			ns, err := f.client.GetNSInstance(t.Context(), created.ID)
			noError(t, err)
			if ns.ID != created.ID || ns.Name != "ldap" || ns.NsdID != f.nsdID || ns.NsdRef != "openldap_ns" ||
				ns.InstantiateParams.VIMAccountID != f.vimID || len(ns.VNFInstanceIDs) != 1 {
				t.Errorf("NS instance %+v does not match its creation %+v", ns, created)
			}
			if ns.NSState != osm.NSStateBuilding || ns.CurrentOperationID != osm.LooseString(created.OperationID) {
				t.Errorf("while instantiating: nsState %s, current operation %q, want %s, %q",
					ns.NSState, ns.CurrentOperationID, osm.NSStateBuilding, created.OperationID)
			}
			f.finishOperations()
			ns, err = f.client.GetNSInstance(t.Context(), created.ID)
			noError(t, err)
			if ns.NSState != osm.NSStateReady || ns.CurrentOperation != "IDLE" || len(ns.Admin.Deployed.K8s) != 1 ||
				ns.Admin.Deployed.K8s[0].KDUName != kduName || ns.Admin.Deployed.K8s[0].MemberVnfIndex != memberIndex {
				t.Errorf("once instantiated: %+v", ns)
			}
		}},
		{"ListVNFInstances keeps the instantiation values; the completed upgrade has the new ones", func(t *testing.T, f *ldapFixture) {
			nsID := f.createReadyNS(t, "ldap", map[string]any{"replicaCount": "2"})
			f.createNS(t, "other", nil)
			if diff := cmp.Diff(map[string]any{"replicaCount": "2"}, f.kduValues(t, nsID)); diff != "" {
				t.Errorf("values after creation (-want +got):\n%s", diff)
			}
			_, err := f.upgrade(t.Context(), nsID, map[string]any{"replicaCount": "3", "image": "openldap:2.6"})
			noError(t, err)
			f.finishOperations()
			// OSM's LCM runs the Helm upgrade and never writes the VNF record's values.
			if diff := cmp.Diff(map[string]any{"replicaCount": "2"}, f.kduValues(t, nsID)); diff != "" {
				t.Errorf("VNF record values after the upgrade (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]any{"replicaCount": "3", "image": "openldap:2.6"}, f.helmValues(t, nsID)); diff != "" {
				t.Errorf("values after the upgrade (-want +got):\n%s", diff)
			}
			all, err := f.client.ListVNFInstances(t.Context())
			noError(t, err)
			if len(all) != 2 {
				t.Errorf("%d VNF records in all, want 2", len(all))
			}
		}},
		{"UpgradeKDU with nil params resets the values to the chart's", func(t *testing.T, f *ldapFixture) {
			nsID := f.createReadyNS(t, "ldap", map[string]any{"replicaCount": "2"})
			opID, err := f.upgrade(t.Context(), nsID, nil)
			noError(t, err)
			op, err := f.client.GetOperation(t.Context(), opID)
			noError(t, err)
			if diff := cmp.Diff(`{"kdu_reset_values": "true"}`, op.OperationParams["primitive_params"]); diff != "" {
				t.Errorf("primitive_params as the NBI stores them (-want +got):\n%s", diff)
			}
			f.finishOperations()
			if values := f.helmValues(t, nsID); len(values) != 0 {
				t.Errorf("values after an upgrade to none: %v", values)
			}
		}},
		{"ScaleNSInstance needs a scaling aspect", func(t *testing.T, f *ldapFixture) {
			nsID := f.createReadyNS(t, "ldap", nil)
			scale := osm.NSScale{MemberVnfIndex: memberIndex, ScalingGroup: scalingGroup, Direction: osm.ScaleOut}
			_, err := f.client.ScaleNSInstance(t.Context(), nsID, scale)
			wantAPIError(t, err, osm.IsBadRequest)
			noError(t, f.client.UpdatePackage(t.Context(), f.vnfdID, scalableKNFPackage(t)))
			opID, err := f.client.ScaleNSInstance(t.Context(), nsID, scale)
			noError(t, err)
			f.finishOperations()
			op, err := f.client.GetOperation(t.Context(), opID)
			noError(t, err)
			if op.LCMOperationType != "scale" || !op.Succeeded() || op.NSInstanceID != nsID {
				t.Errorf("scale operation: %+v", op)
			}
		}},
		{"TerminateNSInstance keeps the record without autoremove", func(t *testing.T, f *ldapFixture) {
			nsID := f.createReadyNS(t, "ldap", nil)
			_, err := f.client.TerminateNSInstance(t.Context(), nsID, false)
			noError(t, err)
			if state := f.nsState(t, nsID); state != osm.NSStateTerminating {
				t.Errorf("while terminating: %s", state)
			}
			f.finishOperations()
			if state := f.nsState(t, nsID); state != osm.NSStateNotInstantiated {
				t.Errorf("once terminated: %s", state)
			}
		}},
		{"TerminateNSInstance with autoremove removes the record", func(t *testing.T, f *ldapFixture) {
			nsID := f.createReadyNS(t, "ldap", nil)
			_, err := f.client.TerminateNSInstance(t.Context(), nsID, true)
			noError(t, err)
			f.finishOperations()
			f.wantRemoved(t, nsID)
		}},
		{"DeleteNSInstance terminates first", func(t *testing.T, f *ldapFixture) {
			nsID := f.createReadyNS(t, "ldap", nil)
			opID, err := f.client.DeleteNSInstance(t.Context(), nsID, false)
			noError(t, err)
			op, err := f.client.GetOperation(t.Context(), opID)
			noError(t, err)
			if op.LCMOperationType != "terminate" || op.OperationState != osm.OperationProcessing {
				t.Errorf("delete operation: %+v", op)
			}
			f.finishOperations()
			f.wantRemoved(t, nsID)
		}},
		{"DeleteNSInstance with force removes at once", func(t *testing.T, f *ldapFixture) {
			nsID := f.createReadyNS(t, "ldap", nil)
			opID, err := f.client.DeleteNSInstance(t.Context(), nsID, true)
			noError(t, err)
			if opID != "" {
				t.Errorf("operation %q for a forced delete", opID)
			}
			f.wantRemoved(t, nsID)
		}},
		{"GetOperation follows the operation", func(t *testing.T, f *ldapFixture) {
			started := f.clock.Now()
			created := f.createNS(t, "ldap", nil)
			op, err := f.client.GetOperation(t.Context(), created.OperationID)
			noError(t, err)
			if op.ID != created.OperationID || op.NSInstanceID != created.ID || op.LCMOperationType != "instantiate" ||
				op.OperationState != osm.OperationProcessing || op.Done() || !op.StartedAt().Equal(started) {
				t.Errorf("new operation: %+v", op)
			}
			f.finishOperations()
			op, err = f.client.GetOperation(t.Context(), created.OperationID)
			noError(t, err)
			if !op.Succeeded() || !op.StatusEnteredAt().Equal(started.Add(operationDelay)) {
				t.Errorf("completed operation: %+v", op)
			}
		}},
		{"ListOperations of one NS instance or of all", func(t *testing.T, f *ldapFixture) {
			nsID := f.createReadyNS(t, "ldap", nil)
			upgradeID, err := f.upgrade(t.Context(), nsID, map[string]any{"replicaCount": "3"})
			noError(t, err)
			other := f.createNS(t, "other", nil)
			ops, err := f.client.ListOperations(t.Context(), nsID)
			noError(t, err)
			types := map[string]string{}
			for _, op := range ops {
				types[op.LCMOperationType] = op.OperationState
			}
			if diff := cmp.Diff(map[string]string{"instantiate": osm.OperationCompleted, "action": osm.OperationProcessing}, types); diff != "" {
				t.Errorf("operations of %s (-want +got):\n%s", nsID, diff)
			}
			all, err := f.client.ListOperations(t.Context(), "")
			noError(t, err)
			var ids []string
			for _, op := range all {
				ids = append(ids, op.ID)
			}
			if len(ids) != 3 || !slices.Contains(ids, upgradeID) || !slices.Contains(ids, other.OperationID) {
				t.Errorf("all operations: %v", ids)
			}
		}},
		{"ListOperationsSince lists the running and failed operations since a time, and the completed ones asked by id", func(t *testing.T, f *ldapFixture) {
			noError(t, f.sim.FailOperations(nbisim.OperationFailure{NSName: "old"}))
			f.createReadyNS(t, "old", nil) // failed before since
			// A time just under a whole second checks that since is not
			// rounded up past the operations started at that very time.
			f.clock.Step(time.Minute + 999_600*time.Microsecond)
			since := f.clock.Now()
			noError(t, f.sim.FailOperations(nbisim.OperationFailure{NSName: "broken", Message: "chart openldap not found"}))
			done := f.createNS(t, "done", nil)
			broken := f.createNS(t, "broken", nil)
			f.finishOperations()
			running := f.createNS(t, "running", nil)

			ops, err := f.client.ListOperationsSince(t.Context(), since)
			noError(t, err)
			got := map[string]string{}
			for _, op := range ops {
				got[op.ID] = op.OperationState + " " + string(op.ErrorMessage)
			}
			want := map[string]string{
				broken.OperationID:  osm.OperationFailed + " chart openldap not found",
				running.OperationID: osm.OperationProcessing + " ",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unfinished operations (-want +got):\n%s", diff)
			}

			// One id: a query _id would be the item id to the NBI, which would answer one
			// object and drop the other filters.
			ops, err = f.client.ListOperationsSince(t.Context(), since, running.OperationID)
			noError(t, err)
			if len(ops) != 1 || ops[0].ID != running.OperationID {
				t.Errorf("unfinished operations of %s: %+v", running.OperationID, ops)
			}

			// Asked by id, a completed operation is listed, with the time it ended: the
			// operator's poll schedule learns from it.
			ops, err = f.client.ListOperationsSince(t.Context(), since, running.OperationID, done.OperationID)
			noError(t, err)
			got = map[string]string{}
			for _, op := range ops {
				got[op.ID] = op.OperationState
				if op.ID == done.OperationID && op.StatusEnteredAt().Before(op.StartedAt()) {
					t.Errorf("completed operation %s ended at %s, before it started at %s", op.ID, op.StatusEnteredAt(), op.StartedAt())
				}
			}
			want = map[string]string{running.OperationID: osm.OperationProcessing, done.OperationID: osm.OperationCompleted}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("operations asked by id (-want +got):\n%s", diff)
			}
		}},
		{"operations on a busy NS instance are queued, and listed as running until they end", func(t *testing.T, f *ldapFixture) {
			nsID := f.createReadyNS(t, "ldap", nil)
			upgrade, err := f.upgrade(t.Context(), nsID, map[string]any{"replicaCount": "3"})
			noError(t, err)
			f.sim.HoldOperations()
			terminate, err := f.client.TerminateNSInstance(t.Context(), nsID, true)
			noError(t, err) // the NBI accepts it; LCM runs it after the upgrade
			ns, err := f.client.GetNSInstance(t.Context(), nsID)
			noError(t, err)
			if string(ns.CurrentOperationID) != upgrade || ns.NSState != osm.NSStateReady {
				t.Errorf("NS record: current operation %s, nsState %s; want %s, READY", ns.CurrentOperationID, ns.NSState, upgrade)
			}
			running, err := f.client.ListRunningOperations(t.Context(), nsID, missingID)
			noError(t, err)
			var ids []string
			for _, op := range running {
				ids = append(ids, op.ID)
			}
			if diff := cmp.Diff([]string{upgrade, terminate}, ids); diff != "" {
				t.Errorf("running operations (-want +got):\n%s", diff)
			}
			if completed := f.sim.CompleteOperations(); completed != 2 {
				t.Fatalf("%d operations completed, want 2", completed)
			}
			if running, err = f.client.ListRunningOperations(t.Context(), nsID); err != nil || len(running) != 0 {
				t.Errorf("running operations once done: %v, %v", running, err)
			}
		}},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			test.run(t, newLDAPFixture(t, nil))
		})
	}
}

// TestClientErrorKinds checks the typed helpers on the NBI's refusals.
func TestClientErrorKinds(t *testing.T) {
	withCreate := func(edit func(f *ldapFixture, create *osm.NSInstanceCreate)) func(*testing.T, *ldapFixture) error {
		return func(t *testing.T, f *ldapFixture) error {
			create := f.nsCreate("ldap", nil)
			edit(f, &create)
			_, err := f.client.CreateNSInstance(t.Context(), create)
			return err
		}
	}
	tests := []struct {
		name string
		call func(*testing.T, *ldapFixture) error
		is   func(error) bool
	}{
		{"NS creation with an unknown NSD", withCreate(func(_ *ldapFixture, c *osm.NSInstanceCreate) { c.NsdID = missingID }), osm.IsNotFound},
		{"NS creation on a VIM account without K8s cluster", withCreate(func(f *ldapFixture, c *osm.NSInstanceCreate) { c.VIMAccountID = f.noK8sVIMID }), osm.IsBadRequest},
		{"NS creation on an unknown VIM account", withCreate(func(_ *ldapFixture, c *osm.NSInstanceCreate) { c.VIMAccountID = missingID }), osm.IsBadRequest},
		{"NS creation without VIM account", withCreate(func(_ *ldapFixture, c *osm.NSInstanceCreate) { c.VIMAccountID = "" }), osm.IsUnprocessable},
		{"NS creation without name", withCreate(func(_ *ldapFixture, c *osm.NSInstanceCreate) { c.Name = "" }), osm.IsUnprocessable},
		{"an unknown NS instance", func(t *testing.T, f *ldapFixture) error {
			_, err := f.client.GetNSInstance(t.Context(), missingID)
			return err
		}, osm.IsNotFound},
		{"an unknown operation", func(t *testing.T, f *ldapFixture) error {
			_, err := f.client.GetOperation(t.Context(), missingID)
			return err
		}, osm.IsNotFound},
		{"an update of an unknown package", func(t *testing.T, f *ldapFixture) error {
			return f.client.UpdatePackage(t.Context(), missingID, f.nsPkg)
		}, osm.IsNotFound},
		{"a package whose descriptor id exists", func(t *testing.T, f *ldapFixture) error {
			_, err := f.client.CreatePackage(t.Context(), f.knfPkg)
			return err
		}, osm.IsConflict},
		{"an upgrade of an unknown KDU", func(t *testing.T, f *ldapFixture) error {
			nsID := f.createReadyNS(t, "ldap", nil)
			_, err := f.client.UpgradeKDU(t.Context(), nsID, osm.KDUUpgrade{MemberVnfIndex: memberIndex, KDUName: "nope"})
			return err
		}, osm.IsBadRequest},
		{"an operation on a terminated NS instance", func(t *testing.T, f *ldapFixture) error {
			nsID := f.createReadyNS(t, "ldap", nil)
			_, err := f.client.TerminateNSInstance(t.Context(), nsID, false)
			noError(t, err)
			f.finishOperations()
			_, err = f.upgrade(t.Context(), nsID, nil)
			return err
		}, osm.IsConflict},
		{"a delete of an unknown NS instance", func(t *testing.T, f *ldapFixture) error {
			_, err := f.client.DeleteNSInstance(t.Context(), missingID, false)
			return err
		}, osm.IsNotFound},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			wantAPIError(t, test.call(t, newLDAPFixture(t, nil)), test.is)
		})
	}
}

// TestTokenRenewedBeforeExpiry checks that the Client renews its token
// before the NBI would refuse it: one new login, and no 401.
func TestTokenRenewedBeforeExpiry(t *testing.T) {
	tests := []struct {
		name     string
		lifetime time.Duration
		elapsed  time.Duration
		// wantLogins counts the logins, the first one included.
		wantLogins int64
	}{
		{"well within the lifetime", time.Hour, 30 * time.Minute, 1},
		// The Client renews 5 minutes (at most) before the expiry.
		{"in the renewal margin", time.Hour, 56 * time.Minute, 2},
		{"past a short lifetime", time.Minute, 2 * time.Minute, 2},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			nbi := newSimNBI(t, nil)
			nbi.sim.SetTokenLifetime(test.lifetime)
			noError(t, nbi.client.Authenticate(t.Context()))
			nbi.clock.Step(test.elapsed)
			_, err := nbi.client.ListVIMAccounts(t.Context())
			noError(t, err)
			if got := nbi.tokenRequests(); got != test.wantLogins {
				t.Errorf("%d token requests, want %d", got, test.wantLogins)
			}
			if refused := nbi.requestCount(http.MethodGet, "/osm/admin/v1/vim_accounts", http.StatusUnauthorized); refused != 0 {
				t.Errorf("%d calls refused with 401", refused)
			}
		})
	}
}

// TestRevokedTokenReauthenticatesOnce revokes the token behind the
// Client's back, as an NBI restart would: the next call gets a 401, logs
// in once more and succeeds on its retry.
func TestRevokedTokenReauthenticatesOnce(t *testing.T) {
	nbi := newSimNBI(t, nil)
	noError(t, nbi.client.Authenticate(t.Context()))
	if revoked := nbi.sim.RevokeTokens(); revoked != 1 {
		t.Fatalf("%d tokens revoked, want 1", revoked)
	}
	_, err := nbi.client.ListVIMAccounts(t.Context())
	noError(t, err)
	const route = "/osm/admin/v1/vim_accounts"
	got := []int64{nbi.tokenRequests(),
		nbi.requestCount(http.MethodGet, route, http.StatusUnauthorized), nbi.requestCount(http.MethodGet, route, http.StatusOK)}
	if diff := cmp.Diff([]int64{2, 1, 1}, got); diff != "" {
		t.Errorf("[logins, 401 answers, 200 answers] (-want +got):\n%s", diff)
	}
}

// TestConcurrentCallsShareOneLogin starts 100 calls at once on a Client
// with no token: they must wait for a single login.
func TestConcurrentCallsShareOneLogin(t *testing.T) {
	const calls = 100
	nbi := newSimNBI(t, nil)
	start := make(chan struct{})
	var group errgroup.Group
	for range calls {
		group.Go(func() error {
			<-start
			_, err := nbi.client.ListVIMAccounts(t.Context())
			return err
		})
	}
	close(start)
	noError(t, group.Wait())
	if got := nbi.tokenRequests(); got != 1 {
		t.Errorf("%d token requests, want 1", got)
	}
	if got := nbi.requestCount(http.MethodGet, "/osm/admin/v1/vim_accounts", http.StatusOK); got != calls {
		t.Errorf("%d calls answered, want %d", got, calls)
	}
}

// TestFaultsAreTransient checks that what a retry may cure, the Client
// says is transient.
func TestFaultsAreTransient(t *testing.T) {
	const route = "/osm/admin/v1/vim_accounts"
	tests := []struct {
		name  string
		fault nbisim.Fault
	}{
		{"service unavailable", nbisim.Fault{PathPrefix: route, Status: http.StatusServiceUnavailable, Count: 1}},
		{"too many requests", nbisim.Fault{PathPrefix: route, Status: http.StatusTooManyRequests, Count: 1}},
		{"internal server error", nbisim.Fault{PathPrefix: route, Status: http.StatusInternalServerError, Count: 1}},
		// No count: Go's transport resends a GET once on its own when a
		// reused connection breaks, so a single reset would go unseen.
		{"connection reset", nbisim.Fault{PathPrefix: route, Reset: true}},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			nbi := newSimNBI(t, nil)
			noError(t, nbi.client.Authenticate(t.Context()))
			noError(t, nbi.sim.AddFault(test.fault))
			_, err := nbi.client.ListVIMAccounts(t.Context())
			if err == nil || !osm.IsTransient(err) {
				t.Fatalf("want a transient error, got %v", err)
			}
			nbi.sim.ClearFaults()
			_, err = nbi.client.ListVIMAccounts(t.Context())
			noError(t, err)
		})
	}
}

// TestTLS serves the simulated NBI over TLS with a certificate of its own
// authority: a Client trusting that authority gets in, one trusting the
// system's authorities fails for good.
func TestTLS(t *testing.T) {
	server := httptest.NewUnstartedServer(nbisim.New(nbisim.Config{}))
	// The refused handshakes would otherwise be logged as server errors.
	server.Config.ErrorLog = log.New(io.Discard, "", 0)
	server.StartTLS()
	t.Cleanup(server.Close)
	authority := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})

	tests := []struct {
		name    string
		options []osm.Option
		wantErr bool
	}{
		{"the NBI's authority", []osm.Option{osm.WithCABundle(authority)}, false},
		{"the system's authorities", nil, true},
		{"no verification", []osm.Option{osm.WithInsecureSkipTLSVerify(true)}, false},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			client, err := osm.NewClient(server.URL, simCredentials, test.options...)
			noError(t, err)
			_, err = client.ListVIMAccounts(t.Context())
			if !test.wantErr {
				noError(t, err)
				return
			}
			var verification *tls.CertificateVerificationError
			if !errors.As(err, &verification) || osm.IsTransient(err) {
				t.Errorf("want a lasting certificate verification error, got %T: %v", err, err)
			}
		})
	}
}
