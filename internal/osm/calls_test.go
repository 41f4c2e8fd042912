package osm

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/osmops/osmops/internal/osmpkg"
)

// sentRequest is what a call must send: method, path and query, the headers beyond those every
// authenticated request carries, and the body, as JSON or raw bytes.
type sentRequest struct {
	method, path, query string
	headers             map[string]string
	json                string
	raw                 []byte
}

// callCheck is one call of the client, the fake NBI's answer to it (status 200 unless said),
// and what the call must send and return.
type callCheck struct {
	name   string
	call   func(context.Context, *Client) (any, error)
	status int
	answer string
	sent   sentRequest
	result any
}

// runCallChecks runs each check as a subtest against a fake NBI of its own.
func runCallChecks(t *testing.T, checks []callCheck) {
	for _, check := range checks {
		t.Run(check.name, func(t *testing.T) {
			status := check.status
			if status == 0 {
				status = http.StatusOK
			}
			nbi := newFakeNBI(t, answer(status, check.answer))
			result, err := check.call(t.Context(), nbi.client(t, WithUserAgent("osmops-test")))
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if diff := cmp.Diff(check.result, result, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			calls := nbi.received()
			if len(calls) != 1 {
				t.Fatalf("got %d requests, want 1: %+v", len(calls), calls)
			}
			got, want := calls[0], check.sent
			if got.Method != want.method || got.Path != want.path || got.Query != want.query {
				t.Errorf("request %s %s?%s, want %s %s?%s", got.Method, got.Path, got.Query, want.method, want.path, want.query)
			}
			headers := map[string]string{"Accept": "application/json", "User-Agent": "osmops-test", "Authorization": "Bearer token-1"}
			if want.path == "/osm/version" {
				headers["Authorization"] = ""
			}
			maps.Copy(headers, want.headers)
			for name, value := range headers {
				if got.Header.Get(name) != value {
					t.Errorf("header %s = %q, want %q", name, got.Header.Get(name), value)
				}
			}
			checkBody(t, got.Body, want.json, want.raw)
		})
	}
}

// get is a GET the reading calls send.
func get(path, query string) sentRequest {
	return sentRequest{method: http.MethodGet, path: path, query: query}
}

func TestReadingCallsSendTheRightRequests(t *testing.T) {
	since := time.UnixMilli(1700000000123)
	runCallChecks(t, []callCheck{
		{name: "Version", call: func(ctx context.Context, c *Client) (any, error) { return c.Version(ctx) },
			answer: `{"version": "19.0.0+g1", "date": "2025-06-01"}`,
			sent:   get("/osm/version", ""), result: &Version{Version: "19.0.0+g1", Date: "2025-06-01"}},
		{name: "ListVIMAccounts", call: func(ctx context.Context, c *Client) (any, error) { return c.ListVIMAccounts(ctx) },
			answer: `[{"_id": "v1", "name": "vim1"}]`,
			sent:   get("/osm/admin/v1/vim_accounts", ""), result: []VIMAccount{{ID: "v1", Name: "vim1"}}},
		{name: "ListNSDescriptors", call: func(ctx context.Context, c *Client) (any, error) { return c.ListNSDescriptors(ctx) },
			answer: `[]`, sent: get("/osm/nsd/v1/ns_descriptors", ""), result: []NSDescriptor{}},
		{name: "ListVNFDescriptors", call: func(ctx context.Context, c *Client) (any, error) { return c.ListVNFDescriptors(ctx) },
			answer: `[]`, sent: get("/osm/vnfpkgm/v1/vnf_packages_content", ""), result: []VNFDescriptor{}},
		{name: "ListNSInstances by name", call: func(ctx context.Context, c *Client) (any, error) { return c.ListNSInstances(ctx, "ldap one") },
			answer: `[{"_id": "n1", "name": "ldap one"}]`,
			sent:   get("/osm/nslcm/v1/ns_instances_content", "name.eq=ldap+one"), result: []NSInstance{{ID: "n1", Name: "ldap one"}}},
		{name: "ListNSInstances by names", call: func(ctx context.Context, c *Client) (any, error) { return c.ListNSInstances(ctx, "ldap", "other") },
			answer: `[{"_id": "n1", "name": "ldap"}, {"_id": "n2", "name": "stray"}, {"_id": "n3"}]`,
			sent:   get("/osm/nslcm/v1/ns_instances_content", "name.cont=ldap%2Cother"),
			// A record without a name is kept: the engine refuses such answers rather than missing an instance.
			result: []NSInstance{{ID: "n1", Name: "ldap"}, {ID: "n3"}}},
		{name: "ListNSInstances all", call: func(ctx context.Context, c *Client) (any, error) { return c.ListNSInstances(ctx) },
			answer: `[]`, sent: get("/osm/nslcm/v1/ns_instances_content", ""), result: []NSInstance{}},
		{name: "GetNSInstance escapes the id", call: func(ctx context.Context, c *Client) (any, error) { return c.GetNSInstance(ctx, "a b/c") },
			answer: `{"_id": "n1"}`, sent: get("/osm/nslcm/v1/ns_instances_content/a%20b%2Fc", ""), result: &NSInstance{ID: "n1"}},
		{name: "ListVNFInstances of an NS", call: func(ctx context.Context, c *Client) (any, error) { return c.ListVNFInstances(ctx, "ns1") },
			answer: `[]`, sent: get("/osm/nslcm/v1/vnf_instances", "nsr-id-ref.eq=ns1"), result: []VNFInstance{}},
		{name: "ListOperationsSince of some operations", call: func(ctx context.Context, c *Client) (any, error) {
			return c.ListOperationsSince(ctx, since, "op1", "op2")
		}, answer: `[{"_id": "op1", "operationState": "FAILED"}]`,
			sent:   get("/osm/nslcm/v1/ns_lcm_op_occs", "_id.cont=op1%2Cop2&startTime.gte=1700000000.123"),
			result: []Operation{{ID: "op1", OperationState: OperationFailed}}},
		{name: "ListOperationsSince of ids no filter can ask: only the unfinished ones of all", call: func(ctx context.Context, c *Client) (any, error) {
			return c.ListOperationsSince(ctx, since, "op1", "1e5")
		}, answer: `[{"_id": "op1", "operationState": "FAILED"}, {"_id": "op9", "operationState": "FAILED"}]`,
			sent:   get("/osm/nslcm/v1/ns_lcm_op_occs", "operationState.neq=COMPLETED&startTime.gte=1700000000.123"),
			result: []Operation{{ID: "op1", OperationState: OperationFailed}}},
		{name: "ListOperationsSince of one operation", call: func(ctx context.Context, c *Client) (any, error) {
			return c.ListOperationsSince(ctx, since, "op1")
		}, answer: `[]`,
			sent:   get("/osm/nslcm/v1/ns_lcm_op_occs", "_id.eq=op1&startTime.gte=1700000000.123"),
			result: []Operation{}},
		{name: "GetOperation", call: func(ctx context.Context, c *Client) (any, error) { return c.GetOperation(ctx, "op1") },
			answer: `{"_id": "op1", "operationState": "COMPLETED"}`,
			sent:   get("/osm/nslcm/v1/ns_lcm_op_occs/op1", ""), result: &Operation{ID: "op1", OperationState: OperationCompleted}},
		{name: "ListOperations of an NS", call: func(ctx context.Context, c *Client) (any, error) { return c.ListOperations(ctx, "ns1") },
			answer: `[]`, sent: get("/osm/nslcm/v1/ns_lcm_op_occs", "nsInstanceId=ns1"), result: []Operation{}},
		{name: "ListCompletedActions of NS instances", call: func(ctx context.Context, c *Client) (any, error) {
			return c.ListCompletedActions(ctx, "ns-1", "ns-2")
		}, answer: `[{"_id": "op-2", "nsInstanceId": "ns-1"}]`,
			sent:   get("/osm/nslcm/v1/ns_lcm_op_occs", "lcmOperationType=action&nsInstanceId.cont=ns-1%2Cns-2&operationState=COMPLETED"),
			result: []Operation{{ID: "op-2", NSInstanceID: "ns-1"}}},
	})
}

func TestPackageCallsSendTheRightRequests(t *testing.T) {
	knf, ns := OpenLDAPPackage(t, "openldap_knf"), OpenLDAPPackage(t, "openldap_ns")
	// upload is the request that sends a whole package.
	upload := func(method, path string, pkg *osmpkg.Package) sentRequest {
		return sentRequest{method: method, path: path, raw: pkg.Tarball,
			headers: map[string]string{"Content-Type": "application/gzip", "Content-Filename": pkg.Name + ".tar.gz", "Content-File-MD5": pkg.MD5}}
	}
	runCallChecks(t, []callCheck{
		{name: "CreatePackage VNF", call: func(ctx context.Context, c *Client) (any, error) { return c.CreatePackage(ctx, knf) },
			status: http.StatusCreated, answer: `{"id": "vnfd-1"}`,
			sent: upload(http.MethodPost, "/osm/vnfpkgm/v1/vnf_packages_content", knf), result: "vnfd-1"},
		{name: "CreatePackage NS", call: func(ctx context.Context, c *Client) (any, error) { return c.CreatePackage(ctx, ns) },
			status: http.StatusCreated, answer: `{"id": "nsd-1"}`,
			sent: upload(http.MethodPost, "/osm/nsd/v1/ns_descriptors_content", ns), result: "nsd-1"},
		{name: "UpdatePackage VNF", call: func(ctx context.Context, c *Client) (any, error) { return nil, c.UpdatePackage(ctx, "vnfd-1", knf) },
			status: http.StatusNoContent, sent: upload(http.MethodPut, "/osm/vnfpkgm/v1/vnf_packages/vnfd-1/package_content", knf)},
		{name: "UpdatePackage NS", call: func(ctx context.Context, c *Client) (any, error) { return nil, c.UpdatePackage(ctx, "nsd-1", ns) },
			status: http.StatusAccepted, answer: `{}`, sent: upload(http.MethodPut, "/osm/nsd/v1/ns_descriptors/nsd-1/nsd_content", ns)},
		{name: "DeletePackage VNF", call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.DeletePackage(ctx, osmpkg.KindVNF, "vnfd-1")
		}, status: http.StatusNoContent, sent: sentRequest{method: http.MethodDelete, path: "/osm/vnfpkgm/v1/vnf_packages_content/vnfd-1"}},
		{name: "DeletePackage NS", call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.DeletePackage(ctx, osmpkg.KindNS, "nsd-1")
		}, status: http.StatusNoContent, sent: sentRequest{method: http.MethodDelete, path: "/osm/nsd/v1/ns_descriptors_content/nsd-1"}},
	})
}

func TestNSInstanceCallsSendTheRightRequests(t *testing.T) {
	// post is a POST of a JSON body.
	post := func(path, body string) sentRequest {
		return sentRequest{method: http.MethodPost, path: path, json: body, headers: map[string]string{"Content-Type": "application/json"}}
	}
	const instances, actionOfNS1 = "/osm/nslcm/v1/ns_instances_content", "/osm/nslcm/v1/ns_instances/ns-1/action"
	runCallChecks(t, []callCheck{
		{name: "CreateNSInstance with KDU params", call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateNSInstance(ctx, NSInstanceCreate{Name: "ldap", NsdID: "nsd-1", VIMAccountID: "vim-1", Description: "Demo",
				AdditionalParamsForVnf: []VnfParams{{MemberVnfIndex: "openldap", AdditionalParamsForKdu: []KDUParams{
					{KDUName: "ldap", AdditionalParams: map[string]any{"replicaCount": "2"}}}}}})
		}, status: http.StatusCreated, answer: readSample(t, "ns_create.json"),
			sent: post(instances, `{"nsName": "ldap", "nsdId": "nsd-1", "vimAccountId": "vim-1", "nsDescription": "Demo",
				"additionalParamsForVnf": [{"member-vnf-index": "openldap",
					"additionalParamsForKdu": [{"kdu_name": "ldap", "additionalParams": {"replicaCount": "2"}}]}]}`),
			result: &NSInstanceCreated{ID: "f6f4f053-913b-4a6f-9eb1-e4b71474e5c7", OperationID: "6111ff50-b2e2-426a-b39b-ecad697ca026"}},
		{name: "CreateNSInstance without params", call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateNSInstance(ctx, NSInstanceCreate{Name: "ldap", NsdID: "nsd-1", VIMAccountID: "vim-1"})
		}, status: http.StatusCreated, answer: `{"id": "ns-1", "nslcmop_id": "op-1"}`,
			sent:   post(instances, `{"nsName": "ldap", "nsdId": "nsd-1", "vimAccountId": "vim-1"}`),
			result: &NSInstanceCreated{ID: "ns-1", OperationID: "op-1"}},
		{name: "UpgradeKDU", call: func(ctx context.Context, c *Client) (any, error) {
			return c.UpgradeKDU(ctx, "ns-1", KDUUpgrade{MemberVnfIndex: "openldap", KDUName: "ldap", Params: map[string]any{"replicaCount": 3}})
		}, status: http.StatusAccepted, answer: `{"id": "op-2"}`,
			sent: post(actionOfNS1, `{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade",
				"primitive_params": {"replicaCount": 3, "kdu_reset_values": "true"}}`),
			result: "op-2"},
		{name: "UpgradeKDU to a chart version", call: func(ctx context.Context, c *Client) (any, error) {
			return c.UpgradeKDU(ctx, "ns-1", KDUUpgrade{MemberVnfIndex: "openldap", KDUName: "ldap", Params: map[string]any{"replicaCount": 3}, Model: "bitnami/openldap:1.2.7"})
		}, status: http.StatusAccepted, answer: `{"id": "op-2"}`,
			sent: post(actionOfNS1, `{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade",
				"primitive_params": {"replicaCount": 3, "kdu_reset_values": "true", "kdu_model": "bitnami/openldap:1.2.7"}}`),
			result: "op-2"},
		{name: "CreateNSInstance of several VNFs and KDUs, with the NS-level settings", call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateNSInstance(ctx, NSInstanceCreate{Name: "core", NsdID: "nsd-1", VIMAccountID: "vim-1", K8sNamespace: "core", TimeoutNsDeploy: 600,
				AdditionalParamsForVnf: []VnfParams{{MemberVnfIndex: "amf", K8sNamespace: "amf", AdditionalParams: map[string]any{"a": "1"},
					AdditionalParamsForKdu: []KDUParams{{KDUName: "amf", KDUModel: "free5gc/amf:1.2", K8sNamespace: "amf2"}}}}})
		}, status: http.StatusCreated, answer: `{"id": "ns-1", "nslcmop_id": "op-1"}`,
			sent: post(instances, `{"nsName": "core", "nsdId": "nsd-1", "vimAccountId": "vim-1", "k8s-namespace": "core", "timeout_ns_deploy": 600,
				"additionalParamsForVnf": [{"member-vnf-index": "amf", "additionalParams": {"a": "1"}, "k8s-namespace": "amf",
					"additionalParamsForKdu": [{"kdu_name": "amf", "kdu_model": "free5gc/amf:1.2", "k8s-namespace": "amf2"}]}]}`),
			result: &NSInstanceCreated{ID: "ns-1", OperationID: "op-1"}},
		{name: "UpgradeKDU without params resets the values to the chart's", call: func(ctx context.Context, c *Client) (any, error) {
			return c.UpgradeKDU(ctx, "ns-1", KDUUpgrade{MemberVnfIndex: "openldap", KDUName: "ldap"})
		}, status: http.StatusAccepted, answer: `{"id": "op-3"}`,
			sent:   post(actionOfNS1, `{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": {"kdu_reset_values": "true"}}`),
			result: "op-3"},
		{name: "ChangeVNFPackage", call: func(ctx context.Context, c *Client) (any, error) {
			return c.ChangeVNFPackage(ctx, "ns-1", VNFPackageChange{VNFInstanceID: "vnf-1", VnfdID: "vnfd-1"})
		}, status: http.StatusAccepted, answer: `{"id": "op-7", "nsName": "ldap"}`,
			sent:   post("/osm/nslcm/v1/ns_instances/ns-1/update", `{"updateType": "CHANGE_VNFPKG", "changeVnfPackageData": {"vnfInstanceId": "vnf-1", "vnfdId": "vnfd-1"}}`),
			result: "op-7"},
		{name: "ScaleNSInstance", call: func(ctx context.Context, c *Client) (any, error) {
			return c.ScaleNSInstance(ctx, "ns-1", NSScale{MemberVnfIndex: "1", ScalingGroup: "web", Direction: ScaleOut})
		}, status: http.StatusAccepted, answer: `{"id": "op-4"}`,
			sent: post("/osm/nslcm/v1/ns_instances/ns-1/scale", `{"scaleType": "SCALE_VNF", "scaleVnfData": {"scaleVnfType": "SCALE_OUT",
				"scaleByStepData": {"scaling-group-descriptor": "web", "member-vnf-index": "1"}}}`),
			result: "op-4"},
		{name: "TerminateNSInstance", call: func(ctx context.Context, c *Client) (any, error) { return c.TerminateNSInstance(ctx, "ns-1", true) },
			status: http.StatusAccepted, answer: `{"id": "op-5"}`,
			sent: post("/osm/nslcm/v1/ns_instances/ns-1/terminate", `{"autoremove": true}`), result: "op-5"},
		{name: "DeleteNSInstance", call: func(ctx context.Context, c *Client) (any, error) { return c.DeleteNSInstance(ctx, "ns-1", false) },
			status: http.StatusAccepted, answer: `{"_id": "op-6", "nsName": "ldap"}`,
			sent: sentRequest{method: http.MethodDelete, path: instances + "/ns-1"}, result: "op-6"},
		{name: "DeleteNSInstance forced", call: func(ctx context.Context, c *Client) (any, error) { return c.DeleteNSInstance(ctx, "ns-1", true) },
			status: http.StatusNoContent, sent: sentRequest{method: http.MethodDelete, path: instances + "/ns-1", query: "FORCE=True"}, result: ""},
	})
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
	pkg := &osmpkg.Package{Name: "p", Descriptor: osmpkg.Descriptor{Kind: "pnf"}, Tarball: []byte("tarball")}
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

// A package whose bytes are missing is never uploaded empty (its tarball is given back to the
// upload by the controller's revision cache).
func TestPackageUploadsRefuseAnEmptyTarball(t *testing.T) {
	nbi := newFakeNBI(t, answer(http.StatusCreated, `{"id": "x"}`))
	client := nbi.client(t)
	pkg := &osmpkg.Package{Name: "p", Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindVNF}}
	_, createErr := client.CreatePackage(t.Context(), pkg)
	for _, err := range []error{createErr, client.UpdatePackage(t.Context(), "id", pkg)} {
		if err == nil || !strings.Contains(err.Error(), "no content") {
			t.Errorf("an upload without content: error %v, want one that says so", err)
		}
	}
	if calls := nbi.received(); len(calls) != 0 {
		t.Errorf("got %d requests, want none", len(calls))
	}
}
