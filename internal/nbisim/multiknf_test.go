package nbisim

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// onboardLDAPStack onboards the demo's NS of two KNFs (openldap_knf: KDU ldap; ldapweb_knf:
// KDUs admin and metrics) and returns the NSD's _id.
func (h *harness) onboardLDAPStack() string {
	h.t.Helper()
	h.onboard(vnfPackagesPath, openldapPackage(h.t, "openldap_knf"))
	h.onboard(vnfPackagesPath, openldapPackage(h.t, "ldapweb_knf"))
	return h.onboard(nsPackagesPath, openldapPackage(h.t, "ldap_stack_ns"))
}

// stackCreateBody is the create request the operator sends for the demo's ldap-stack.
func stackCreateBody(nsdID, vimID string) map[string]any {
	return map[string]any{
		"nsName": "stack", "nsdId": nsdID, "vimAccountId": vimID,
		"k8s-namespace": "stack", "timeout_ns_deploy": 900,
		"additionalParamsForNs": map[string]any{"osmops_owner": "m.telco.d", "region": "eu1"},
		"additionalParamsForVnf": []any{
			map[string]any{"member-vnf-index": "directory", "additionalParamsForKdu": []any{
				map[string]any{"kdu_name": "ldap", "kdu_model": "stable/openldap:1.2.7", "additionalParams": map[string]any{"replicaCount": "1"}},
			}},
			map[string]any{"member-vnf-index": "web", "k8s-namespace": "web", "additionalParams": map[string]any{"log_level": "debug"},
				"additionalParamsForKdu": []any{
					map[string]any{"kdu_name": "admin", "additionalParams": map[string]any{"service": map[string]any{"type": "ClusterIP"}}},
					map[string]any{"kdu_name": "metrics", "k8s-namespace": "monitoring", "additionalParams": map[string]any{"interval": "30s"}},
				}},
		},
	}
}

// TestSeveralVNFsAndKDUs holds the simulator to what the NBI does with a create of several
// VNFs and KDUs (instance_topics.py, _create_vnfr_descriptor_from_vnfd): each VNF record gets
// every KDU of its VNFD; a kdu_model replaces the kdur's helm-chart; the namespace is the KDU's,
// else the VNF's, else the request's; timeout_ns_deploy stays in instantiate_params and
// additionalParamsForNs at the record's top level. An upgrade with kdu_model runs that chart in
// the Helm release, is recorded in the operation's params, and leaves the VNF record alone.
func TestSeveralVNFsAndKDUs(t *testing.T) {
	h := newLoggedIn(t, Config{})
	nsdID := h.onboardLDAPStack()
	nsID, _ := h.createNS(stackCreateBody(nsdID, h.vimID("vim1")))
	ns := h.ns(nsID)
	if got := dig(ns, "instantiate_params", "timeout_ns_deploy"); got != float64(900) {
		t.Errorf("instantiate_params.timeout_ns_deploy = %v, want 900", got)
	}
	if got := dig(ns, "instantiate_params", "k8s-namespace"); got != "stack" {
		t.Errorf("instantiate_params.k8s-namespace = %v, want stack", got)
	}
	if got := dig(ns, "additionalParamsForNs", "region"); got != "eu1" {
		t.Errorf("additionalParamsForNs.region = %v", got)
	}
	if got := dig(ns, "instantiate_params", "additionalParamsForVnf"); got != nil {
		t.Errorf("instantiate_params keeps additionalParamsForVnf: %v", got)
	}
	type kdur struct{ Member, Name, Chart, Namespace, Params, VNFParams string }
	records := func() []kdur {
		var got []kdur
		for _, vnf := range h.must(http.StatusOK, "GET", vnfInstancePath+"?nsr-id-ref="+nsID, nil).list(t) {
			for i := range dig(vnf, "kdur").([]any) {
				params, _ := dig(vnf, "kdur", i, "additionalParams").(string)
				vnfParams, _ := dig(vnf, "additionalParamsForVnf", "log_level").(string)
				got = append(got, kdur{dig(vnf, "member-vnf-index-ref").(string), dig(vnf, "kdur", i, "kdu-name").(string),
					dig(vnf, "kdur", i, "helm-chart").(string), dig(vnf, "kdur", i, "k8s-namespace").(string), params, vnfParams})
			}
		}
		return got
	}
	want := []kdur{
		{"directory", "ldap", "stable/openldap:1.2.7", "stack", `{"replicaCount": "1"}`, ""},
		{"web", "admin", "cetic/phpldapadmin", "web", `{"service": "!!yaml type: ClusterIP\n"}`, "debug"},
		{"web", "metrics", "prometheus-community/prometheus-openldap-exporter", "monitoring", `{"interval": "30s"}`, "debug"},
	}
	if diff := cmp.Diff(want, records()); diff != "" {
		t.Errorf("VNF records (-want +got):\n%s", diff)
	}
	h.clock.Step(testOperationDelay)

	// An upgrade of one KDU to another chart version: only its release changes.
	opID := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", map[string]any{
		"member_vnf_index": "directory", "kdu_name": "ldap", "primitive": "upgrade",
		"primitive_params": map[string]any{"replicaCount": "2", "kdu_reset_values": "true", "kdu_model": "stable/openldap:1.2.8"},
	}).object(t)["id"].(string)
	h.clock.Step(testOperationDelay)
	if got := dig(h.operation(opID), "operationParams", "primitive_params"); !strings.Contains(got.(string), `"kdu_model": "stable/openldap:1.2.8"`) {
		t.Errorf("operationParams.primitive_params = %v, want the kdu_model", got)
	}
	if diff := cmp.Diff(want, records()); diff != "" {
		t.Errorf("VNF records after the upgrade (-want +got):\n%s", diff)
	}
	type release struct{ Member, Name, Model, RecordModel, Params string }
	var releases []release
	for _, kdu := range h.sim.State().NSInstances[0].KDUs {
		releases = append(releases, release{kdu.MemberVnfIndex, kdu.Name, kdu.Model, kdu.RecordModel, string(kdu.Params)})
	}
	wantReleases := []release{
		{"directory", "ldap", "stable/openldap:1.2.8", "stable/openldap:1.2.7", `{"replicaCount":"2"}`},
		{"web", "admin", "cetic/phpldapadmin", "cetic/phpldapadmin", `{"service":{"type":"ClusterIP"}}`},
		{"web", "metrics", "prometheus-community/prometheus-openldap-exporter", "prometheus-community/prometheus-openldap-exporter", `{"interval":"30s"}`},
	}
	if diff := cmp.Diff(wantReleases, releases); diff != "" {
		t.Errorf("Helm releases (-want +got):\n%s", diff)
	}
}

// TestInstantiateSchemaOfTheNewShapes holds the simulator to the NBI's validation schema
// (validation.py ns_instantiate, additional_params_for_vnf) for the shapes osmops sends.
func TestInstantiateSchemaOfTheNewShapes(t *testing.T) {
	h := newLoggedIn(t, Config{})
	nsdID := h.onboardLDAPStack()
	vim := h.vimID("vim1")
	for _, tc := range []struct {
		name   string
		change func(map[string]any)
		status int
		detail string
	}{
		{"a VNF parameter name that is not an identifier", func(b map[string]any) {
			b["additionalParamsForVnf"] = []any{map[string]any{"member-vnf-index": "web", "additionalParams": map[string]any{"log-level": "x"}}}
		}, http.StatusBadRequest, "Invalid param name at additionalParamsForVnf[member-vnf-index=web]:log-level. Must contain only alphanumeric characters and underscores, and cannot start with a digit while 'filling vnfr  vnfd-id='ldapweb_knf' constituent-vnfd='web''"},
		{"a k8s-namespace with a forbidden character", func(b map[string]any) { b["k8s-namespace"] = "bad;ns" },
			http.StatusUnprocessableEntity, "Format error at 'k8s-namespace' ''bad;ns' does not match '^[^,;()\\'\"]+$''"},
		{"a KDU item of its name alone", func(b map[string]any) {
			b["additionalParamsForVnf"] = []any{map[string]any{"member-vnf-index": "web", "additionalParamsForKdu": []any{map[string]any{"kdu_name": "admin"}}}}
		}, http.StatusUnprocessableEntity, "Format error at 'additionalParamsForVnf:0:additionalParamsForKdu:0' '{'kdu_name': 'admin'} does not have enough properties'"},
		{"a VNF item of its index alone", func(b map[string]any) {
			b["additionalParamsForVnf"] = []any{map[string]any{"member-vnf-index": "web"}}
		}, http.StatusUnprocessableEntity, "Format error at 'additionalParamsForVnf:0' '{'member-vnf-index': 'web'} does not have enough properties'"},
		{"an unknown field of a KDU item", func(b map[string]any) {
			b["additionalParamsForVnf"] = []any{map[string]any{"member-vnf-index": "web", "additionalParamsForKdu": []any{map[string]any{"kdu_name": "admin", "model": "x/y"}}}}
		}, http.StatusUnprocessableEntity, "Format error at 'additionalParamsForVnf:0:additionalParamsForKdu:0' 'Additional properties are not allowed ('model' was unexpected)'"},
		{"a timeout of 0", func(b map[string]any) { b["timeout_ns_deploy"] = 0 },
			http.StatusUnprocessableEntity, "Format error at 'timeout_ns_deploy' '0 is less than the minimum of 1'"},
		{"a timeout that is not an integer", func(b map[string]any) { b["timeout_ns_deploy"] = "600" },
			http.StatusUnprocessableEntity, "Format error at 'timeout_ns_deploy' ''600' is not of type 'integer''"},
		{"a kdu_model with a forbidden character", func(b map[string]any) {
			b["additionalParamsForVnf"] = []any{map[string]any{"member-vnf-index": "web", "additionalParamsForKdu": []any{map[string]any{"kdu_name": "admin", "kdu_model": "a/b;c"}}}}
		}, http.StatusUnprocessableEntity, "Format error at 'additionalParamsForVnf:0:additionalParamsForKdu:0:kdu_model' ''a/b;c' does not match '^[^,;()\\'\"]+$''"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := stackCreateBody(nsdID, vim)
			tc.change(body)
			a := h.request("POST", nsContentPath, body)
			if a.status != tc.status {
				t.Fatalf("status %d: %s", a.status, a.body)
			}
			if got := a.object(t)["detail"]; !strings.HasPrefix(got.(string), tc.detail) {
				t.Errorf("detail = %q, want it to start with %q", got, tc.detail)
			}
		})
	}
}
