package nbisim

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
)

// kduAction is one action on the openldap KDU: a primitive and its params.
type kduAction struct {
	primitive string
	params    map[string]any
}

func upgrade(params map[string]any) kduAction { return kduAction{"upgrade", params} }

var rollback = kduAction{"rollback", map[string]any{}}

func TestKDUActionsOnTheHelmRelease(t *testing.T) {
	// The record's values: LCM sends them, updated with an upgrade's, unless
	// the upgrade resets the values.
	const recordValues = `{"replicaCount":"1","image":{"tag":"1.0","pull":"always"}}`
	traceback := func(frames, exception string) string {
		return "FAILED Executing kdu upgrade: Traceback (most recent call last):\n" + frames + exception + "\n"
	}
	const file = `  File "/app/.venv/lib/python3.10/site-packages/osm_lcm/ns.py", `

	tests := []struct {
		name    string
		actions []kduAction
		// The last operation's outcome.
		state, errorMessage string
		// The release's values, chart and revision after the actions.
		values   string
		model    string
		revision int
	}{
		{
			name:    "Helm merges the values over the release's",
			actions: []kduAction{upgrade(map[string]any{"image": map[string]any{"tag": "2.0"}})},
			state:   "COMPLETED", values: `{"replicaCount":"1","image":{"tag":"2.0","pull":"always"}}`, revision: 2,
		},
		{
			name: "the record's values come back with the next upgrade",
			actions: []kduAction{
				upgrade(map[string]any{"replicaCount": "3"}),
				upgrade(map[string]any{"service": "x"}),
			},
			state: "COMPLETED", values: `{"replicaCount":"1","image":{"tag":"1.0","pull":"always"},"service":"x"}`, revision: 3,
		},
		{
			name:    "kdu_reset_values: the upgrade's values alone",
			actions: []kduAction{upgrade(map[string]any{"kdu_reset_values": "yes", "replicaCount": "5"})},
			state:   "COMPLETED", values: `{"replicaCount":"5"}`, revision: 2,
		},
		{
			name:    "kdu_reset_then_reuse_values merges and is passed on as a value",
			actions: []kduAction{upgrade(map[string]any{"kdu_reset_then_reuse_values": "True", "replicaCount": "4"})},
			state:   "COMPLETED", values: `{"replicaCount":"4","image":{"tag":"1.0","pull":"always"},"kdu_reset_then_reuse_values":"True"}`, revision: 2,
		},
		{
			name:    "all options false: reuse",
			actions: []kduAction{upgrade(map[string]any{"kdu_reuse_values": "false", "kdu_reset_values": "0", "replicaCount": "2"})},
			state:   "COMPLETED", values: `{"replicaCount":"2","image":{"tag":"1.0","pull":"always"}}`, revision: 2,
		},
		{
			name:    "an empty option is a value",
			actions: []kduAction{upgrade(map[string]any{"kdu_atomic_upgrade": "", "replicaCount": "2"})},
			state:   "COMPLETED", values: `{"replicaCount":"2","image":{"tag":"1.0","pull":"always"},"kdu_atomic_upgrade":""}`, revision: 2,
		},
		{
			name:    "null removes a value",
			actions: []kduAction{upgrade(map[string]any{"image": nil})},
			state:   "COMPLETED", values: `{"replicaCount":"1"}`, revision: 2,
		},
		{
			name:    "kdu_model changes the chart",
			actions: []kduAction{upgrade(map[string]any{"kdu_model": "stable/openldap:1.2.7", "kdu_atomic_upgrade": "false", "replicaCount": "2"})},
			state:   "COMPLETED", values: `{"replicaCount":"2","image":{"tag":"1.0","pull":"always"}}`, model: "stable/openldap:1.2.7", revision: 2,
		},
		{
			name: "without kdu_model the record's chart comes back",
			actions: []kduAction{
				upgrade(map[string]any{"kdu_model": "bitnami/openldap"}),
				upgrade(map[string]any{"replicaCount": "2"}),
			},
			state: "COMPLETED", values: `{"replicaCount":"2","image":{"tag":"1.0","pull":"always"}}`, revision: 3,
		},
		{
			name:    "two true options",
			actions: []kduAction{upgrade(map[string]any{"kdu_reset_values": "yes", "kdu_reuse_values": "TRUE", "replicaCount": "9"})},
			state:   "FAILED", errorMessage: "FAILED Executing kdu upgrade: Cannot upgrade the KDU simultaneously with two true options to handle values",
			values: recordValues, revision: 1,
		},
		{
			name:    "an option that is not a string",
			actions: []kduAction{upgrade(map[string]any{"kdu_reset_values": true})},
			state:   "FAILED",
			errorMessage: traceback(file+"line 5348, in action\n    ).lower() in (\"yes\", \"true\", \"1\")\n",
				"AttributeError: 'bool' object has no attribute 'lower'"),
			values: recordValues, revision: 1,
		},
		{
			name:    "no params",
			actions: []kduAction{upgrade(map[string]any{})},
			state:   "FAILED",
			errorMessage: traceback(file+"line 5410, in action\n    params = self._map_primitive_params(\n"+
				file+"line 4927, in _map_primitive_params\n    for parameter in primitive_desc.Get(\"parameter\", ()):\n",
				"AttributeError: 'NoneType' object has no attribute 'get'"),
			values: recordValues, revision: 1,
		},
		{
			name: "a rollback goes to the revision before the current one",
			actions: []kduAction{
				upgrade(map[string]any{"replicaCount": "2"}),
				upgrade(map[string]any{"replicaCount": "3"}),
				rollback, // revision 4, as revision 2
				rollback, // revision 5, as revision 3
			},
			state: "COMPLETED", values: `{"replicaCount":"3","image":{"tag":"1.0","pull":"always"}}`, revision: 5,
		},
		{
			name:    "a rollback with no revision before",
			actions: []kduAction{rollback},
			state:   "FAILED", errorMessage: "helm: release has no 0 version", // see below
			values: recordValues, revision: 1,
		},
		{
			name:    "status changes nothing",
			actions: []kduAction{{"status", map[string]any{}}},
			state:   "COMPLETED", values: recordValues, revision: 1,
		},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			h := newLoggedIn(t, Config{})
			_, nsdID := h.onboardOpenLDAP()
			params := map[string]any{}
			_ = json.Unmarshal([]byte(recordValues), &params)
			nsID, _ := h.createNS(ldapCreateBody("ldap", nsdID, h.vimID("vim1"), params))
			h.clock.Step(testOperationDelay)
			before := h.ns(nsID)
			vnf := h.must(http.StatusOK, "GET", vnfInstancePath+"?nsr-id-ref="+nsID, nil).list(t)[0]

			var op map[string]any
			for _, action := range test.actions {
				id := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", map[string]any{
					"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": action.primitive, "primitive_params": action.params,
				}).object(t)["id"].(string)
				h.clock.Step(testOperationDelay)
				op = h.operation(id)
			}

			wantMessage := test.errorMessage
			if test.name == "a rollback with no revision before" {
				k8s := dig(before, "_admin", "deployed", "K8s", 0).(map[string]any)
				wantMessage = fmt.Sprintf("FAILED Executing kdu rollback: Error executing command: env KUBECONFIG=/app/storage/%s/.kube/config "+
					"/usr/local/bin/helm3 rollback %s 0 --namespace=%s --wait\nOutput: Error: release has no 0 version",
					k8s["k8scluster-uuid"], k8s["kdu-instance"], k8s["namespace"])
			}
			if op["operationState"] != test.state || op["errorMessage"] != wantMessage {
				t.Errorf("operation %v, errorMessage %q; want %s, %q", op["operationState"], op["errorMessage"], test.state, wantMessage)
			}
			if test.state == "COMPLETED" && test.actions[len(test.actions)-1].primitive != "status" && op["detailed-status"] != float64(test.revision) {
				t.Errorf("detailed-status %v, want the revision %d", op["detailed-status"], test.revision)
			}

			kdu := h.sim.State().NSInstances[0].KDUs[0]
			model := test.model
			if model == "" {
				model = "stable/openldap"
			}
			if !sameJSON(t, kdu.Params, test.values) || kdu.Model != model || kdu.Revision != test.revision {
				t.Errorf("release: values %s, model %s, revision %d; want %s, %s, %d", kdu.Params, kdu.Model, kdu.Revision, test.values, model, test.revision)
			}
			// LCM changes neither the VNF record nor _admin.deployed.K8s, but for what its Helm
			// connector writes of the release: operation, status and detailed-status.
			withoutStatus := func(ns map[string]any) string {
				k8s := maps.Clone(dig(ns, "_admin", "deployed", "K8s", 0).(map[string]any))
				delete(k8s, "operation")
				delete(k8s, "status")
				delete(k8s, "detailed-status")
				return fmt.Sprint(k8s)
			}
			after := h.ns(nsID)
			if a, b := withoutStatus(before), withoutStatus(after); a != b {
				t.Errorf("_admin.deployed.K8s changed:\n%v\n%v", a, b)
			}
			if status := dig(after, "_admin", "deployed", "K8s", 0, "detailed-status").(string); !strings.Contains(status, fmt.Sprintf("'version': %d}", test.revision)) ||
				!strings.Contains(status, "'helm.sh/chart': 'openldap-"+kdu.ChartVersion+"'") {
				t.Errorf("detailed-status %s: want revision %d and chart version %s", status, test.revision, kdu.ChartVersion)
			}
			vnfAfter := h.must(http.StatusOK, "GET", vnfInstancePath+"/"+dig(vnf, "_id").(string), nil).object(t)
			if a, b := dig(vnf, "kdur", 0), dig(vnfAfter, "kdur", 0); fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("kdur changed:\n%v\n%v", a, b)
			}
			if kdu.RecordModel != "stable/openldap" || string(kdu.RecordParams) != dig(vnf, "kdur", 0, "additionalParams") {
				t.Errorf("record: model %s, params %s", kdu.RecordModel, kdu.RecordParams)
			}
		})
	}
}

// TestKDUReleaseLifeCycle: no release before the instantiation completes
// nor after the terminate; a new one after a new instantiation.
func TestKDUReleaseLifeCycle(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	vim := h.vimID("vim1")
	nsID, _ := h.createNS(ldapCreateBody("ldap", nsdID, vim, map[string]any{"replicaCount": "1"}))
	release := func() (string, int) {
		kdu := h.sim.State().NSInstances[0].KDUs[0]
		return string(kdu.Params), kdu.Revision
	}
	if values, revision := release(); values != "null" || revision != 0 {
		t.Errorf("while instantiating: %s, revision %d", values, revision)
	}
	h.clock.Step(testOperationDelay)
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", map[string]any{
		"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": map[string]any{"replicaCount": "2"}})
	h.clock.Step(testOperationDelay)
	if values, revision := release(); !sameJSON(t, []byte(values), `{"replicaCount":"2"}`) || revision != 2 {
		t.Errorf("after the upgrade: %s, revision %d", values, revision)
	}
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/terminate", map[string]any{"autoremove": false})
	h.clock.Step(testOperationDelay)
	if values, revision := release(); values != "null" || revision != 0 {
		t.Errorf("after the terminate: %s, revision %d", values, revision)
	}
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/instantiate", map[string]any{"nsName": "ldap", "nsdId": nsdID, "vimAccountId": vim})
	h.clock.Step(testOperationDelay)
	if values, revision := release(); values != `{"replicaCount":"1"}` || revision != 1 {
		t.Errorf("after a new instantiation: %s, revision %d", values, revision)
	}
}

// TestOperationAnswers checks the bodies nbi.py writes for the NS and
// operation requests, member by member.
func TestOperationAnswers(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	vim := h.vimID("vim1")
	created := h.must(http.StatusCreated, "POST", nsContentPath, ldapCreateBody("ldap", nsdID, vim, nil))
	nsID, opID := created.object(t)["id"].(string), created.object(t)["nslcmop_id"].(string)
	h.clock.Step(testOperationDelay)
	plain := h.must(http.StatusCreated, "POST", nsInstancesPath, ldapCreateBody("plain", nsdID, vim, nil))
	plainID := plain.object(t)["id"].(string)
	action := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", map[string]any{
		"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "status", "primitive_params": map[string]any{}})
	actionID := action.object(t)["id"].(string)
	terminate := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+plainID+"/terminate", map[string]any{"autoremove": true})

	tests := []struct {
		name     string
		got      answer
		body     string
		location string
	}{
		{"create and instantiate", created, fmt.Sprintf("{\n    \"id\": %q,\n    \"nslcmop_id\": %q,\n    \"nsName\": \"ldap\"\n}\n", nsID, opID),
			"/osm/nslcm/v1/ns_instances_content/" + nsID},
		{"create", plain, fmt.Sprintf("{\n    \"_id\": %q,\n    \"id\": %q\n}\n", plainID, plainID), "/osm/nslcm/v1/ns_instances/" + plainID},
		{"action", action, fmt.Sprintf("{\n    \"id\": %q,\n    \"nsName\": \"ldap\"\n}\n", actionID), "/osm/nslcm/v1/ns_lcm_op_occs/" + actionID},
		// No operation for an NS that is not instantiated: Python's None.
		{"terminate and remove what is not instantiated", terminate, "{\n    \"id\": null,\n    \"nsName\": null\n}\n", "/osm/nslcm/v1/ns_lcm_op_occs/None"},
	}
	for _, test := range tests {
		if string(test.got.body) != test.body || test.got.header.Get("Location") != test.location {
			t.Errorf("%s: %s (Location %q), want %s (Location %q)", test.name, test.got.body, test.got.header.Get("Location"), test.body, test.location)
		}
	}
}

// sameJSON tells whether two JSON documents hold the same values, the
// members of objects in any order (a test's maps send them sorted).
func sameJSON(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}
