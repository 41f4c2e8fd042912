package osm

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/osmops/osmops/internal/osmpkg"
)

func buildTestPackage(t *testing.T, name string) *osmpkg.Package {
	t.Helper()
	pkg, err := osmpkg.Build("../osmpkg/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// TestCallsSendTheRightRequests checks every call's method, path, query,
// headers and body, and what it makes of the answer.
func TestCallsSendTheRightRequests(t *testing.T) {
	knf := buildTestPackage(t, "openldap_knf")
	ns := buildTestPackage(t, "openldap_ns")
	gzipHeaders := func(pkg *osmpkg.Package) map[string]string {
		return map[string]string{"Content-Type": "application/gzip", "Content-Filename": pkg.Name + ".tar.gz", "Content-File-MD5": pkg.MD5}
	}
	jsonHeaders := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name        string
		call        func(context.Context, *Client) (any, error)
		status      int
		answer      string
		wantMethod  string
		wantPath    string
		wantQuery   string
		wantHeaders map[string]string
		// wantJSON is the expected body as JSON; wantRaw the expected raw body.
		wantJSON   string
		wantRaw    []byte
		wantResult any
	}{
		{name: "Version", call: func(ctx context.Context, c *Client) (any, error) { return c.Version(ctx) },
			status: 200, answer: `{"version": "19.0.0+g1", "date": "2025-06-01"}`,
			wantMethod: "GET", wantPath: "/osm/version", wantResult: &Version{Version: "19.0.0+g1", Date: "2025-06-01"}},
		{name: "ListVIMAccounts", call: func(ctx context.Context, c *Client) (any, error) { return c.ListVIMAccounts(ctx) },
			status: 200, answer: `[{"_id": "v1", "name": "vim1"}]`,
			wantMethod: "GET", wantPath: "/osm/admin/v1/vim_accounts", wantResult: []VIMAccount{{ID: "v1", Name: "vim1"}}},
		{name: "ListNSDescriptors", call: func(ctx context.Context, c *Client) (any, error) { return c.ListNSDescriptors(ctx) },
			status: 200, answer: `[]`, wantMethod: "GET", wantPath: "/osm/nsd/v1/ns_descriptors", wantResult: []NSDescriptor{}},
		{name: "ListVNFDescriptors", call: func(ctx context.Context, c *Client) (any, error) { return c.ListVNFDescriptors(ctx) },
			status: 200, answer: `[]`, wantMethod: "GET", wantPath: "/osm/vnfpkgm/v1/vnf_packages_content", wantResult: []VNFDescriptor{}},
		{name: "ListNSInstances by name", call: func(ctx context.Context, c *Client) (any, error) { return c.ListNSInstances(ctx, "ldap one") },
			status: 200, answer: `[{"_id": "n1", "name": "ldap one"}]`, wantMethod: "GET", wantPath: "/osm/nslcm/v1/ns_instances_content",
			wantQuery: "name.eq=ldap+one", wantResult: []NSInstance{{ID: "n1", Name: "ldap one"}}},
		{name: "ListNSInstances by names", call: func(ctx context.Context, c *Client) (any, error) { return c.ListNSInstances(ctx, "ldap", "other") },
			status: 200, answer: `[{"_id": "n1", "name": "ldap"}, {"_id": "n2", "name": "stray"}, {"_id": "n3"}]`, wantMethod: "GET",
			wantPath: "/osm/nslcm/v1/ns_instances_content", wantQuery: "name.cont=ldap%2Cother",
			// A record without a name is kept: the engine refuses such answers rather than missing an instance.
			wantResult: []NSInstance{{ID: "n1", Name: "ldap"}, {ID: "n3"}}},
		{name: "ListNSInstances all", call: func(ctx context.Context, c *Client) (any, error) { return c.ListNSInstances(ctx) },
			status: 200, answer: `[]`, wantMethod: "GET", wantPath: "/osm/nslcm/v1/ns_instances_content", wantResult: []NSInstance{}},
		{name: "GetNSInstance escapes the id", call: func(ctx context.Context, c *Client) (any, error) { return c.GetNSInstance(ctx, "a b/c") },
			status: 200, answer: `{"_id": "a b/c"}`, wantMethod: "GET", wantPath: "/osm/nslcm/v1/ns_instances_content/a%20b%2Fc",
			wantResult: &NSInstance{ID: "a b/c"}},
		{name: "ListVNFInstances of an NS", call: func(ctx context.Context, c *Client) (any, error) { return c.ListVNFInstances(ctx, "ns1") },
			status: 200, answer: `[]`, wantMethod: "GET", wantPath: "/osm/nslcm/v1/vnf_instances", wantQuery: "nsr-id-ref.eq=ns1",
			wantResult: []VNFInstance{}},
		{name: "ListUnfinishedOperations of some operations", call: func(ctx context.Context, c *Client) (any, error) {
			return c.ListUnfinishedOperations(ctx, time.UnixMilli(1700000000123), "op1", "op2")
		},
			status: 200, answer: `[{"_id": "op1", "operationState": "FAILED"}]`, wantMethod: "GET", wantPath: "/osm/nslcm/v1/ns_lcm_op_occs",
			wantQuery:  "_id.cont=op1%2Cop2&operationState.neq=COMPLETED&startTime.gte=1700000000.123",
			wantResult: []Operation{{ID: "op1", OperationState: OperationFailed}}},
		{name: "GetOperation", call: func(ctx context.Context, c *Client) (any, error) { return c.GetOperation(ctx, "op1") },
			status: 200, answer: `{"_id": "op1", "operationState": "COMPLETED"}`, wantMethod: "GET", wantPath: "/osm/nslcm/v1/ns_lcm_op_occs/op1",
			wantResult: &Operation{ID: "op1", OperationState: OperationCompleted}},
		{name: "ListOperations of an NS", call: func(ctx context.Context, c *Client) (any, error) { return c.ListOperations(ctx, "ns1") },
			status: 200, answer: `[]`, wantMethod: "GET", wantPath: "/osm/nslcm/v1/ns_lcm_op_occs", wantQuery: "nsInstanceId=ns1",
			wantResult: []Operation{}},
		{name: "CreatePackage VNF", call: func(ctx context.Context, c *Client) (any, error) { return c.CreatePackage(ctx, knf) },
			status: 201, answer: `{"id": "vnfd-1"}`, wantMethod: "POST", wantPath: "/osm/vnfpkgm/v1/vnf_packages_content",
			wantHeaders: gzipHeaders(knf), wantRaw: knf.Tarball, wantResult: "vnfd-1"},
		{name: "CreatePackage NS", call: func(ctx context.Context, c *Client) (any, error) { return c.CreatePackage(ctx, ns) },
			status: 201, answer: `{"id": "nsd-1"}`, wantMethod: "POST", wantPath: "/osm/nsd/v1/ns_descriptors_content",
			wantHeaders: gzipHeaders(ns), wantRaw: ns.Tarball, wantResult: "nsd-1"},
		{name: "UpdatePackage VNF", call: func(ctx context.Context, c *Client) (any, error) { return nil, c.UpdatePackage(ctx, "vnfd-1", knf) },
			status: 204, wantMethod: "PUT", wantPath: "/osm/vnfpkgm/v1/vnf_packages/vnfd-1/package_content",
			wantHeaders: gzipHeaders(knf), wantRaw: knf.Tarball},
		{name: "UpdatePackage NS", call: func(ctx context.Context, c *Client) (any, error) { return nil, c.UpdatePackage(ctx, "nsd-1", ns) },
			status: 202, answer: `{}`, wantMethod: "PUT", wantPath: "/osm/nsd/v1/ns_descriptors/nsd-1/nsd_content",
			wantHeaders: gzipHeaders(ns), wantRaw: ns.Tarball},
		{name: "DeletePackage VNF", call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.DeletePackage(ctx, osmpkg.KindVNF, "vnfd-1")
		}, status: 204, wantMethod: "DELETE", wantPath: "/osm/vnfpkgm/v1/vnf_packages_content/vnfd-1"},
		{name: "DeletePackage NS", call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.DeletePackage(ctx, osmpkg.KindNS, "nsd-1")
		}, status: 204, wantMethod: "DELETE", wantPath: "/osm/nsd/v1/ns_descriptors_content/nsd-1"},
		{name: "CreateNSInstance with KDU params", call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateNSInstance(ctx, NSInstanceCreate{Name: "ldap", NsdID: "nsd-1", VIMAccountID: "vim-1", Description: "Demo",
				AdditionalParamsForVnf: []VnfParams{{MemberVnfIndex: "openldap", AdditionalParamsForKdu: []KDUParams{
					{KDUName: "ldap", AdditionalParams: map[string]any{"replicaCount": "2"}}}}}})
		}, status: 201, answer: readSample(t, "ns_create.json"), wantMethod: "POST", wantPath: "/osm/nslcm/v1/ns_instances_content",
			wantHeaders: jsonHeaders,
			wantJSON: `{"nsName": "ldap", "nsdId": "nsd-1", "vimAccountId": "vim-1", "nsDescription": "Demo",
				"additionalParamsForVnf": [{"member-vnf-index": "openldap",
					"additionalParamsForKdu": [{"kdu_name": "ldap", "additionalParams": {"replicaCount": "2"}}]}]}`,
			wantResult: &NSInstanceCreated{ID: "f6f4f053-913b-4a6f-9eb1-e4b71474e5c7", OperationID: "6111ff50-b2e2-426a-b39b-ecad697ca026"}},
		{name: "CreateNSInstance without params", call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateNSInstance(ctx, NSInstanceCreate{Name: "ldap", NsdID: "nsd-1", VIMAccountID: "vim-1"})
		}, status: 201, answer: `{"id": "ns-1", "nslcmop_id": "op-1"}`, wantMethod: "POST", wantPath: "/osm/nslcm/v1/ns_instances_content",
			wantHeaders: jsonHeaders, wantJSON: `{"nsName": "ldap", "nsdId": "nsd-1", "vimAccountId": "vim-1"}`,
			wantResult: &NSInstanceCreated{ID: "ns-1", OperationID: "op-1"}},
		{name: "UpgradeKDU", call: func(ctx context.Context, c *Client) (any, error) {
			return c.UpgradeKDU(ctx, "ns-1", KDUUpgrade{MemberVnfIndex: "openldap", KDUName: "ldap", Params: map[string]any{"replicaCount": 3}})
		}, status: 202, answer: `{"id": "op-2"}`, wantMethod: "POST", wantPath: "/osm/nslcm/v1/ns_instances/ns-1/action",
			wantHeaders: jsonHeaders,
			wantJSON: `{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade",
				"primitive_params": {"replicaCount": 3, "kdu_reset_values": "true"}}`,
			wantResult: "op-2"},
		{name: "UpgradeKDU without params resets the values to the chart's", call: func(ctx context.Context, c *Client) (any, error) {
			return c.UpgradeKDU(ctx, "ns-1", KDUUpgrade{MemberVnfIndex: "openldap", KDUName: "ldap"})
		}, status: 202, answer: `{"id": "op-3"}`, wantMethod: "POST", wantPath: "/osm/nslcm/v1/ns_instances/ns-1/action",
			wantHeaders: jsonHeaders,
			wantJSON:    `{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": {"kdu_reset_values": "true"}}`,
			wantResult:  "op-3"},
		{name: "ListCompletedActions of NS instances", call: func(ctx context.Context, c *Client) (any, error) {
			return c.ListCompletedActions(ctx, "ns-1", "ns-2")
		}, status: 200, answer: `[{"_id": "op-2", "nsInstanceId": "ns-1"}]`, wantMethod: "GET", wantPath: "/osm/nslcm/v1/ns_lcm_op_occs",
			wantQuery:  "lcmOperationType=action&nsInstanceId.cont=ns-1%2Cns-2&operationState=COMPLETED",
			wantResult: []Operation{{ID: "op-2", NSInstanceID: "ns-1"}}},
		{name: "ListUnfinishedOperations of one operation", call: func(ctx context.Context, c *Client) (any, error) {
			return c.ListUnfinishedOperations(ctx, time.UnixMilli(1700000000123), "op1")
		},
			status: 200, answer: `[]`, wantMethod: "GET", wantPath: "/osm/nslcm/v1/ns_lcm_op_occs",
			wantQuery:  "_id.eq=op1&operationState.neq=COMPLETED&startTime.gte=1700000000.123",
			wantResult: []Operation{}},
		{name: "ScaleNSInstance", call: func(ctx context.Context, c *Client) (any, error) {
			return c.ScaleNSInstance(ctx, "ns-1", NSScale{MemberVnfIndex: "1", ScalingGroup: "web", Direction: ScaleOut})
		}, status: 202, answer: `{"id": "op-4"}`, wantMethod: "POST", wantPath: "/osm/nslcm/v1/ns_instances/ns-1/scale",
			wantHeaders: jsonHeaders,
			wantJSON: `{"scaleType": "SCALE_VNF", "scaleVnfData": {"scaleVnfType": "SCALE_OUT",
				"scaleByStepData": {"scaling-group-descriptor": "web", "member-vnf-index": "1"}}}`,
			wantResult: "op-4"},
		{name: "TerminateNSInstance", call: func(ctx context.Context, c *Client) (any, error) { return c.TerminateNSInstance(ctx, "ns-1", true) },
			status: 202, answer: `{"id": "op-5"}`, wantMethod: "POST", wantPath: "/osm/nslcm/v1/ns_instances/ns-1/terminate",
			wantHeaders: jsonHeaders, wantJSON: `{"autoremove": true}`, wantResult: "op-5"},
		{name: "DeleteNSInstance", call: func(ctx context.Context, c *Client) (any, error) { return c.DeleteNSInstance(ctx, "ns-1", false) },
			status: 202, answer: `{"_id": "op-6", "nsName": "ldap"}`, wantMethod: "DELETE", wantPath: "/osm/nslcm/v1/ns_instances_content/ns-1", wantResult: "op-6"},
		{name: "DeleteNSInstance forced", call: func(ctx context.Context, c *Client) (any, error) { return c.DeleteNSInstance(ctx, "ns-1", true) },
			status: 204, wantMethod: "DELETE", wantPath: "/osm/nslcm/v1/ns_instances_content/ns-1", wantQuery: "FORCE=True", wantResult: ""},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			nbi := newFakeNBI(t, answer(test.status, test.answer))
			result, err := test.call(t.Context(), nbi.client(t, WithUserAgent("osmops-test")))
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if diff := cmp.Diff(test.wantResult, result, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			calls := nbi.received()
			if len(calls) != 1 {
				t.Fatalf("got %d requests, want 1: %+v", len(calls), calls)
			}
			got := calls[0]
			if got.Method != test.wantMethod || got.Path != test.wantPath || got.Query != test.wantQuery {
				t.Errorf("request %s %s?%s, want %s %s?%s", got.Method, got.Path, got.Query, test.wantMethod, test.wantPath, test.wantQuery)
			}
			wantHeaders := map[string]string{"Accept": "application/json", "User-Agent": "osmops-test", "Authorization": "Bearer token-1"}
			if test.wantPath == "/osm/version" {
				wantHeaders["Authorization"] = ""
			}
			for name, value := range test.wantHeaders {
				wantHeaders[name] = value
			}
			for name, value := range wantHeaders {
				if got.Header.Get(name) != value {
					t.Errorf("header %s = %q, want %q", name, got.Header.Get(name), value)
				}
			}
			checkBody(t, got.Body, test.wantJSON, test.wantRaw)
		})
	}
}

// checkBody compares a request body with the JSON or raw bytes expected.
func checkBody(t *testing.T, body []byte, wantJSON string, wantRaw []byte) {
	t.Helper()
	if wantJSON == "" {
		if diff := cmp.Diff(wantRaw, body, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("body (-want +got):\n%s", diff)
		}
		return
	}
	var want, got any
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatalf("the test's JSON: %v", err)
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("body %q is not JSON: %v", body, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

// The NBI's DELETE of an NS instance names its operation `_id`: an answer without it (the
// `id` of the other operation answers) cannot be followed, and must not pass for a delete
// with no operation.
func TestDeleteNSInstanceNeedsTheOperationID(t *testing.T) {
	nbi := newFakeNBI(t, answer(http.StatusAccepted, `{"id": "op-6", "nsName": "ldap"}`))
	if opID, err := nbi.client(t).DeleteNSInstance(t.Context(), "ns-1", false); err == nil {
		t.Errorf("DeleteNSInstance = %q, want an error", opID)
	}
}

func TestPackageCallsRefuseAnUnknownKind(t *testing.T) {
	nbi := newFakeNBI(t, answer(http.StatusCreated, `{"id": "x"}`))
	client := nbi.client(t)
	pkg := &osmpkg.Package{Name: "p", Descriptor: osmpkg.Descriptor{Kind: "pnf"}}
	_, createErr := client.CreatePackage(t.Context(), pkg)
	for _, err := range []error{createErr, client.UpdatePackage(t.Context(), "id", pkg), client.DeletePackage(t.Context(), "pnf", "id")} {
		if err == nil {
			t.Error("a package call with an unknown kind succeeded")
		}
	}
	if calls := nbi.received(); len(calls) != 0 {
		t.Errorf("got %d requests, want none", len(calls))
	}
}
