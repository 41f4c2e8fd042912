package nbisim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestInstantiateLifeCycle(t *testing.T) {
	h := newLoggedIn(t, Config{})
	vnfdID, nsdID := h.onboardOpenLDAP()
	nsID, opID := h.createNS(ldapCreateBody("ldap", nsdID, h.vimID("vim1"), map[string]any{"replicaCount": "2"}))

	// While LCM works: PROCESSING, BUILDING, the operation is current.
	op := h.operation(opID)
	ns := h.ns(nsID)
	running := map[string]any{
		"operationState": op["operationState"], "lcmOperationType": op["lcmOperationType"], "nsInstanceId": op["nsInstanceId"],
		"nsState": ns["nsState"], "currentOperation": ns["currentOperation"], "currentOperationID": ns["currentOperationID"],
		"_admin.nsState": dig(ns, "_admin", "nsState"),
	}
	want := map[string]any{
		"operationState": "PROCESSING", "lcmOperationType": "instantiate", "nsInstanceId": nsID,
		"nsState": "BUILDING", "currentOperation": "INSTANTIATING", "currentOperationID": opID,
		"_admin.nsState": "INSTANTIATED",
	}
	if diff := cmp.Diff(want, running); diff != "" {
		t.Errorf("while the instantiate runs (-want +got):\n%s", diff)
	}
	if got := dig(op, "operationParams", "nsr_id"); got != nsID {
		t.Errorf("operationParams.nsr_id = %v, want %s", got, nsID)
	}

	// One second before the delay ends nothing has changed.
	h.clock.Step(testOperationDelay - 1)
	if state := h.operation(opID)["operationState"]; state != "PROCESSING" {
		t.Fatalf("operationState before the delay = %v", state)
	}
	h.clock.Step(1)
	op = h.operation(opID)
	ns = h.ns(nsID)
	done := map[string]any{
		"operationState": op["operationState"], "errorMessage": op["errorMessage"], "detailed-status": op["detailed-status"],
		"nsState": ns["nsState"], "currentOperation": ns["currentOperation"], "currentOperationID": ns["currentOperationID"],
		"errorDescription": ns["errorDescription"], "detailed-status(ns)": ns["detailed-status"],
		"K8s.kdu-name":  dig(ns, "_admin", "deployed", "K8s", 0, "kdu-name"),
		"K8s.kdu-model": dig(ns, "_admin", "deployed", "K8s", 0, "kdu-model"),
	}
	want = map[string]any{
		"operationState": "COMPLETED", "errorMessage": nil, "detailed-status": "Done",
		"nsState": "READY", "currentOperation": "IDLE", "currentOperationID": nil,
		"errorDescription": nil, "detailed-status(ns)": "Done",
		"K8s.kdu-name": "ldap", "K8s.kdu-model": "stable/openldap",
	}
	if diff := cmp.Diff(want, done); diff != "" {
		t.Errorf("after the instantiate (-want +got):\n%s", diff)
	}
	if op["statusEnteredTime"].(float64)-op["startTime"].(float64) != testOperationDelay.Seconds() {
		t.Errorf("statusEnteredTime - startTime = %v, want the operation delay", op["statusEnteredTime"].(float64)-op["startTime"].(float64))
	}

	// The packages are in use.
	for _, path := range []string{"/osm/vnfpkgm/v1/vnf_packages/" + vnfdID, "/osm/nsd/v1/ns_descriptors/" + nsdID} {
		record := h.must(http.StatusOK, "GET", path, nil).object(t)
		if state := dig(record, "_admin", "usageState"); state != "IN_USE" {
			t.Errorf("%s usageState = %v, want IN_USE", path, state)
		}
	}
}

func TestVNFRecordValues(t *testing.T) {
	h := newLoggedIn(t, Config{})
	vnfdID, nsdID := h.onboardOpenLDAP()
	vim := h.vimID("vim1")
	nsID, _ := h.createNS(ldapCreateBody("ldap", nsdID, vim, map[string]any{"replicaCount": "2", "image": map[string]any{"tag": "1.2"}}))
	vnfs := h.must(http.StatusOK, "GET", vnfInstancePath+"?nsr-id-ref="+nsID, nil).list(t)
	if len(vnfs) != 1 {
		t.Fatalf("%d VNF records, want 1", len(vnfs))
	}
	vnf := vnfs[0]
	cluster := h.sim.State().VIMAccounts[0].K8sClusters[0]
	got := map[string]any{
		"nsr-id-ref": dig(vnf, "nsr-id-ref"), "member-vnf-index-ref": dig(vnf, "member-vnf-index-ref"),
		"vnfd-ref": dig(vnf, "vnfd-ref"), "vnfd-id": dig(vnf, "vnfd-id"), "vim-account-id": dig(vnf, "vim-account-id"),
		"additionalParams": dig(vnf, "kdur", 0, "additionalParams"), "kdu-name": dig(vnf, "kdur", 0, "kdu-name"),
		"helm-chart": dig(vnf, "kdur", 0, "helm-chart"), "k8s-cluster.id": dig(vnf, "kdur", 0, "k8s-cluster", "id"),
		"k8s-namespace": dig(vnf, "kdur", 0, "k8s-namespace"), "ext-cpd": dig(vnf, "k8s-cluster", "nets", 0, "external-connection-point-ref"),
	}
	want := map[string]any{
		"nsr-id-ref": nsID, "member-vnf-index-ref": "openldap", "vnfd-ref": "openldap_knf", "vnfd-id": vnfdID,
		"vim-account-id": vim,
		// Python's json.dumps, with a nested value as "!!yaml " + yaml.safe_dump
		// (the keys are in the order sent: sorted, as the test sends a map).
		"additionalParams": `{"image": "!!yaml tag: '1.2'\n", "replicaCount": "2"}`,
		"kdu-name":         "ldap", "helm-chart": "stable/openldap", "k8s-cluster.id": cluster,
		"k8s-namespace": h.sim.State().ProjectID, "ext-cpd": "mgmt-ext",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("VNF record (-want +got):\n%s", diff)
	}

	// An upgrade replaces the values when it completes, not before.
	h.clock.Step(testOperationDelay)
	a := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", map[string]any{
		"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade",
		"primitive_params": map[string]any{"replicaCount": "3"},
	})
	opID := a.object(t)["id"].(string)
	if a.object(t)["nsName"] != "ldap" {
		t.Errorf("action answer %s has no nsName", a.body)
	}
	params := func() any {
		return dig(h.must(http.StatusOK, "GET", vnfInstancePath+"/"+dig(vnf, "_id").(string), nil).object(t), "kdur", 0, "additionalParams")
	}
	if p := params(); p != want["additionalParams"] {
		t.Errorf("params while the upgrade runs = %v", p)
	}
	if got := dig(h.operation(opID), "operationParams", "primitive_params"); got != `{"replicaCount": "3"}` {
		t.Errorf("operationParams.primitive_params = %#v, want the JSON string", got)
	}
	h.clock.Step(testOperationDelay)
	// LCM runs Helm and leaves the VNF record alone: the record keeps the
	// instantiation's values, the release runs the new ones.
	if p := params(); p != want["additionalParams"] {
		t.Errorf("record params after the upgrade = %v", p)
	}
	kdu := h.sim.State().NSInstances[0].KDUs[0]
	if string(kdu.Params) != `{"image":{"tag":"1.2"},"replicaCount":"3"}` || string(kdu.RecordParams) != want["additionalParams"] {
		t.Errorf("after the upgrade: release values %s, record params %s", kdu.Params, kdu.RecordParams)
	}
	// A rollback brings the values of before the upgrade back.
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", map[string]any{
		"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "rollback", "primitive_params": map[string]any{},
	})
	h.clock.Step(testOperationDelay)
	if p := params(); p != want["additionalParams"] {
		t.Errorf("record params after the rollback = %v", p)
	}
	kdu = h.sim.State().NSInstances[0].KDUs[0]
	if string(kdu.Params) != `{"image":{"tag":"1.2"},"replicaCount":"2"}` || kdu.Revision != 3 {
		t.Errorf("after the rollback: release values %s, revision %d", kdu.Params, kdu.Revision)
	}
}

// The NBI accepts an operation on an NS that runs another (202) and LCM queues it
// (lcm_utils.py waitfor_related_HA): PROCESSING with queuePosition and "Waiting for N related
// tasks", polled every 10 s, started in the order accepted; the NS record shows only the
// operation LCM runs.
func TestQueuedOperations(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	nsID, _ := h.createNS(ldapCreateBody("ldap", nsdID, h.vimID("vim1"), nil))
	h.clock.Step(testOperationDelay)
	upgrade := map[string]any{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": map[string]any{"a": "1"}}
	first := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", upgrade).object(t)["id"].(string)
	second := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", upgrade).object(t)["id"].(string)
	terminate := h.must(http.StatusAccepted, "DELETE", nsContentPath+"/"+nsID, nil).object(t)["_id"].(string)

	type view struct {
		State, Detailed string
		Queue           any
	}
	look := func(id string) view {
		op := h.operation(id)
		detailed, _ := op["detailed-status"].(string)
		return view{op["operationState"].(string), detailed, op["queuePosition"]}
	}
	waiting := func(n int) view {
		return view{"PROCESSING", fmt.Sprintf("Waiting for %d related tasks to be completed.", n), float64(n)}
	}
	// action() writes nothing into its operation until it ends: one that never waited keeps the
	// NBI's nulls, one that waited keeps what the wait wrote last (ns.py, lcm_utils.py).
	running := view{"PROCESSING", "", nil}
	expect := func(when string, current string, want ...view) {
		t.Helper()
		got := []view{look(first), look(second), look(terminate)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: operations (-want +got):\n%s", when, diff)
		}
		ns := h.ns(nsID)
		if ns["currentOperationID"] != current || ns["nsState"] != "READY" {
			t.Errorf("%s: NS currentOperationID %v, nsState %v; want %s, READY", when, ns["currentOperationID"], ns["nsState"], current)
		}
	}
	expect("accepted", first, running, waiting(1), waiting(2))
	h.clock.Step(DefaultQueuePollInterval) // the first completes; LCM polls again
	expect("after the first", second, view{"COMPLETED", "", float64(0)}, waiting(1), waiting(1))
	h.clock.Step(DefaultQueuePollInterval)
	if ns := h.ns(nsID); ns["nsState"] != "TERMINATING" || ns["currentOperationID"] != terminate {
		t.Errorf("the terminate runs last: nsState %v, currentOperationID %v", ns["nsState"], ns["currentOperationID"])
	}
	h.clock.Step(testOperationDelay)
	h.must(http.StatusNotFound, "GET", nsContentPath+"/"+nsID, nil)
}

// With autoremove, LCM ends the terminate and sends a message; the NBI removes the NS record when
// it reads it (subscriptions.py): meanwhile the record says NOT_INSTANTIATED and its terminate
// COMPLETED, and a second DELETE is answered as for any record never instantiated.
func TestAutoremoveComesAfterTheTerminate(t *testing.T) {
	h := newLoggedIn(t, Config{AutoremoveDelay: DefaultAutoremoveDelay})
	_, nsdID := h.onboardOpenLDAP()
	nsID, _ := h.createNS(ldapCreateBody("ldap", nsdID, h.vimID("vim1"), nil))
	h.clock.Step(testOperationDelay)
	terminate := h.must(http.StatusAccepted, "DELETE", nsContentPath+"/"+nsID, nil).object(t)["_id"].(string)
	h.clock.Step(testOperationDelay)

	ns, op := h.ns(nsID), h.operation(terminate)
	got := []any{ns["nsState"], dig(ns, "_admin", "nsState"), ns["operational-status"], ns["currentOperation"], op["operationState"], op["queuePosition"]}
	want := []any{"NOT_INSTANTIATED", "NOT_INSTANTIATED", "terminated", "IDLE", "COMPLETED", float64(0)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("before the autoremove (-want +got):\n%s", diff)
	}
	h.must(http.StatusNoContent, "DELETE", nsContentPath+"/"+nsID, nil)
	h.clock.Step(DefaultAutoremoveDelay - 1)
	h.must(http.StatusOK, "GET", nsContentPath+"/"+nsID, nil)
	h.clock.Step(1)
	h.must(http.StatusNotFound, "GET", nsContentPath+"/"+nsID, nil)
	h.must(http.StatusNotFound, "GET", operationsPath+"/"+terminate, nil)
}

// LCM gives up on an operation whose related tasks did not end within its wait (3600 s;
// configurable here): FAILED with LCM's text, the NS record untouched.
func TestQueuedOperationTimesOut(t *testing.T) {
	h := newLoggedIn(t, Config{QueueTimeout: 30 * time.Second})
	_, nsdID := h.onboardOpenLDAP()
	nsID, _ := h.createNS(ldapCreateBody("ldap", nsdID, h.vimID("vim1"), nil))
	h.clock.Step(testOperationDelay)
	upgrade := map[string]any{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": map[string]any{"a": "1"}}
	first := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", upgrade).object(t)["id"].(string)
	h.sim.HoldOperations()
	action := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", upgrade).object(t)["id"].(string)
	terminate := h.must(http.StatusAccepted, "DELETE", nsContentPath+"/"+nsID, nil).object(t)["_id"].(string)

	h.clock.Step(2 * DefaultQueuePollInterval) // polls at 0, 10 and 20 s: still waiting
	if state := h.operation(action)["operationState"]; state != "PROCESSING" {
		t.Fatalf("before the timeout: %v", state)
	}
	h.clock.Step(DefaultQueuePollInterval)
	timeout := "Timeout (30) when waiting for related tasks to be completed"
	for _, test := range []struct{ id, errorMessage, detailed string }{
		{action, "FAILED Waiting for previous operations to terminate: " + timeout, "FAILED Waiting for previous operations to terminate: " + timeout},
		{terminate, "Stage 1/3: Preparing task. Detail: " + timeout, timeout},
	} {
		op := h.operation(test.id)
		got := []any{op["operationState"], op["errorMessage"], op["detailed-status"], op["queuePosition"], op["stage"]}
		if diff := cmp.Diff([]any{"FAILED", test.errorMessage, test.detailed, float64(0), ""}, got); diff != "" {
			t.Errorf("%s after the timeout (-want +got):\n%s", h.operation(test.id)["lcmOperationType"], diff)
		}
	}
	if ns := h.ns(nsID); ns["currentOperationID"] != first || ns["nsState"] != "READY" {
		t.Errorf("NS after the timeouts: currentOperationID %v, nsState %v", ns["currentOperationID"], ns["nsState"])
	}
	h.sim.ReleaseOperations()
	if state := h.operation(first)["operationState"]; state != "COMPLETED" {
		t.Errorf("the running one: %v", state)
	}
}

// Until LCM takes an operation up, the NBI's record of it has nulls (_create_nslcmop) and the
// NS record is as it was: an action on an NS whose instantiate has not started gets the NBI's
// 409. Once LCM starts it, the NS record shows it, with the three _admin fields of
// _write_ns_status, null again when LCM is idle.
func TestOperationBeforeLCMTakesItUp(t *testing.T) {
	h := newLoggedIn(t, Config{PickupDelay: time.Second})
	_, nsdID := h.onboardOpenLDAP()
	nsID, opID := h.createNS(ldapCreateBody("ldap", nsdID, h.vimID("vim1"), nil))

	op := h.operation(opID)
	for _, field := range []string{"queuePosition", "stage", "errorMessage", "detailedStatus"} {
		if value, present := op[field]; !present || value != nil {
			t.Errorf("new operation %s = %v (present %v), want null", field, value, present)
		}
	}
	if value, present := op["detailed-status"]; present {
		t.Errorf("new operation has detailed-status %v", value)
	}
	ns := h.ns(nsID)
	admin, _ := ns["_admin"].(map[string]any)
	if ns["nsState"] != "NOT_INSTANTIATED" || admin["nsState"] != "NOT_INSTANTIATED" || ns["currentOperation"] != "IDLE" {
		t.Errorf("NS before LCM: nsState %v, _admin.nsState %v, currentOperation %v", ns["nsState"], admin["nsState"], ns["currentOperation"])
	}
	for _, field := range []string{"nslcmop", "current-operation", "operation-type"} {
		if _, present := admin[field]; present {
			t.Errorf("_admin.%s before LCM wrote the NS", field)
		}
	}
	upgrade := map[string]any{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": map[string]any{"a": "1"}}
	a := h.must(http.StatusConflict, "POST", nsInstancesPath+"/"+nsID+"/action", upgrade)
	if detail := a.object(t)["detail"]; detail != "ns_instance '"+nsID+"' cannot be 'action' because it is not instantiated" {
		t.Errorf("action before LCM: %v", detail)
	}
	// A prune's DELETE then makes no terminate, and nbi.py answers 204 keeping the record.
	h.must(http.StatusNoContent, "DELETE", nsContentPath+"/"+nsID, nil)
	if ops := h.must(http.StatusOK, "GET", operationsPath+"?nsInstanceId="+nsID, nil).list(t); len(ops) != 1 {
		t.Errorf("operations after the DELETE: %d, want the instantiate only", len(ops))
	}

	lcmAdmin := func() []any {
		admin, _ := h.ns(nsID)["_admin"].(map[string]any)
		return []any{admin["nslcmop"], admin["current-operation"], admin["operation-type"]}
	}
	h.clock.Step(time.Second)
	if ns := h.ns(nsID); ns["nsState"] != "BUILDING" || ns["currentOperationID"] != opID {
		t.Errorf("NS once LCM started: nsState %v, currentOperationID %v", ns["nsState"], ns["currentOperationID"])
	}
	if diff := cmp.Diff([]any{opID, opID, "INSTANTIATING"}, lcmAdmin()); diff != "" {
		t.Errorf("_admin while instantiating (-want +got):\n%s", diff)
	}
	if op := h.operation(opID); op["queuePosition"] != float64(0) || op["stage"] == nil {
		t.Errorf("started operation: queuePosition %v, stage %v", op["queuePosition"], op["stage"])
	}
	h.clock.Step(testOperationDelay)
	if diff := cmp.Diff([]any{nil, nil, nil}, lcmAdmin()); diff != "" {
		t.Errorf("_admin when idle (-want +got):\n%s", diff)
	}
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", upgrade)
}

func TestDeleteNS(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	vim := h.vimID("vim1")
	nsID, _ := h.createNS(ldapCreateBody("ldap", nsdID, vim, nil))
	h.clock.Step(testOperationDelay)

	a := h.must(http.StatusAccepted, "DELETE", nsContentPath+"/"+nsID, nil)
	opID := a.object(t)["_id"].(string)
	// nbi.py: outdata = {"_id": op_id, "nsName": nsName}, nothing else.
	if want := fmt.Sprintf("{\n    \"_id\": %q,\n    \"nsName\": \"ldap\"\n}\n", opID); string(a.body) != want {
		t.Errorf("delete answer = %s, want %s", a.body, want)
	}
	ns := h.ns(nsID)
	if ns["nsState"] != "TERMINATING" || ns["currentOperation"] != "TERMINATING" {
		t.Errorf("while terminating: nsState %v, currentOperation %v", ns["nsState"], ns["currentOperation"])
	}
	if params := h.operation(opID)["operationParams"]; dig(params, "autoremove") != true {
		t.Errorf("terminate params = %v", params)
	}
	h.clock.Step(testOperationDelay)
	// Gone with its VNF records and operations, as LCM's autoremove does.
	h.must(http.StatusNotFound, "GET", nsContentPath+"/"+nsID, nil)
	h.must(http.StatusNotFound, "GET", operationsPath+"/"+opID, nil)
	if vnfs := h.must(http.StatusOK, "GET", vnfInstancePath, nil).list(t); len(vnfs) != 0 {
		t.Errorf("%d VNF records left", len(vnfs))
	}
	if state := h.sim.State(); state.Packages[1].UsageState != "NOT_IN_USE" || state.Packages[0].UsageState != "NOT_IN_USE" {
		t.Errorf("packages after the delete: %+v", state.Packages)
	}

	// ?FORCE=True removes at once, even while an operation runs.
	nsID, opID = h.createNS(ldapCreateBody("ldap", nsdID, vim, nil))
	h.must(http.StatusNoContent, "DELETE", nsContentPath+"/"+nsID+"?FORCE=True", nil)
	h.must(http.StatusNotFound, "GET", operationsPath+"/"+opID, nil)
	h.clock.Step(testOperationDelay)
	if n := len(h.sim.State().NSInstances); n != 0 {
		t.Errorf("%d NS instances after a forced delete", n)
	}

	// An NS that is not instantiated gets no terminate operation, and
	// nbi.py's DELETE answers 204 without deleting it; ?FORCE=True or the
	// other route deletes it.
	nsID = h.must(http.StatusCreated, "POST", nsInstancesPath, ldapCreateBody("plain", nsdID, vim, nil)).object(t)["id"].(string)
	a = h.must(http.StatusNoContent, "DELETE", nsContentPath+"/"+nsID, nil)
	if len(a.body) != 0 {
		t.Errorf("204 with a body: %s", a.body)
	}
	h.must(http.StatusOK, "GET", nsContentPath+"/"+nsID, nil)
	if ops := h.must(http.StatusOK, "GET", operationsPath+"?nsInstanceId="+nsID, nil).list(t); len(ops) != 0 {
		t.Errorf("operations of the NS: %v", ops)
	}
	h.must(http.StatusNoContent, "DELETE", nsInstancesPath+"/"+nsID, nil)
	h.must(http.StatusNotFound, "GET", nsContentPath+"/"+nsID, nil)
}

func TestTerminateThenActionIsRefused(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	nsID, _ := h.createNS(ldapCreateBody("ldap", nsdID, h.vimID("vim1"), nil))
	h.clock.Step(testOperationDelay)
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/terminate", map[string]any{"autoremove": false})
	h.clock.Step(testOperationDelay)
	ns := h.ns(nsID)
	if ns["nsState"] != "NOT_INSTANTIATED" || dig(ns, "_admin", "nsState") != "NOT_INSTANTIATED" {
		t.Fatalf("after terminate: %v / %v", ns["nsState"], dig(ns, "_admin", "nsState"))
	}
	a := h.must(http.StatusConflict, "POST", nsInstancesPath+"/"+nsID+"/action",
		map[string]any{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": map[string]any{}})
	want := problemDetails{Code: "CONFLICT", Status: 409, Detail: "ns_instance '" + nsID + "' cannot be 'action' because it is not instantiated"}
	if string(a.body) != string(encodeJSON(want, "")) {
		t.Errorf("body = %s", a.body)
	}
	// It can be instantiated again, and then not twice.
	instantiate := map[string]any{"nsName": "ldap", "nsdId": nsdID, "vimAccountId": h.vimID("vim1")}
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/instantiate", instantiate)
	h.clock.Step(testOperationDelay)
	if state := h.ns(nsID)["nsState"]; state != "READY" {
		t.Errorf("after re-instantiate: %v", state)
	}
	a = h.must(http.StatusConflict, "POST", nsInstancesPath+"/"+nsID+"/instantiate", instantiate)
	if detail := a.object(t)["detail"]; detail != "ns_instance '"+nsID+"' cannot be 'instantiate' because it is already instantiated" {
		t.Errorf("detail = %v", detail)
	}
}

func TestOperationControl(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	vim := h.vimID("vim1")

	h.sim.HoldOperations()
	_, opID := h.createNS(ldapCreateBody("held", nsdID, vim, nil))
	h.clock.Step(10 * testOperationDelay)
	if state := h.operation(opID)["operationState"]; state != "PROCESSING" {
		t.Errorf("held operation = %v", state)
	}
	h.sim.ReleaseOperations()
	if state := h.operation(opID)["operationState"]; state != "COMPLETED" {
		t.Errorf("released operation = %v", state)
	}

	_, opID = h.createNS(ldapCreateBody("now", nsdID, vim, nil))
	if n := h.sim.CompleteOperations(); n != 1 {
		t.Errorf("CompleteOperations = %d, want 1", n)
	}
	if state := h.operation(opID)["operationState"]; state != "COMPLETED" {
		t.Errorf("completed operation = %v", state)
	}

	h.sim.SetOperationDelay(0)
	_, opID = h.createNS(ldapCreateBody("zero", nsdID, vim, nil))
	if state := h.operation(opID)["operationState"]; state != "COMPLETED" {
		t.Errorf("with no delay = %v", state)
	}
}

func TestOperationFailures(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	vim := h.vimID("vim1")
	upgrade := map[string]any{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": map[string]any{"x": "1"}}

	if err := h.sim.FailOperations(OperationFailure{Operation: "instantiate", NSName: "bad", Message: "helm install failed", Count: 1}); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.FailOperations(OperationFailure{Operation: "upgrade", State: "FAILED_TEMP", Count: 1}); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.FailOperations(OperationFailure{State: "BROKEN"}); err == nil {
		t.Error("a failure with state BROKEN was accepted")
	}

	goodID, _ := h.createNS(ldapCreateBody("good", nsdID, vim, nil))
	badID, badOp := h.createNS(ldapCreateBody("bad", nsdID, vim, nil))
	h.clock.Step(testOperationDelay)
	if state := h.ns(goodID)["nsState"]; state != "READY" {
		t.Errorf("good NS = %v", state)
	}
	op, ns := h.operation(badOp), h.ns(badID)
	got := map[string]any{"operationState": op["operationState"], "errorMessage": op["errorMessage"], "nsState": ns["nsState"], "errorDetail": ns["errorDetail"]}
	want := map[string]any{"operationState": "FAILED", "errorMessage": "helm install failed", "nsState": "BROKEN", "errorDetail": "helm install failed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("failed instantiate (-want +got):\n%s", diff)
	}
	if description := ns["errorDescription"].(string); description != "Operation: INSTANTIATING."+badOp+", Stage 2/5: deployment of KDUs, VMs and execution environments." {
		t.Errorf("errorDescription = %q", description)
	}

	// The upgrade failure takes the next upgrade only.
	first := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+goodID+"/action", upgrade).object(t)["id"].(string)
	h.clock.Step(testOperationDelay)
	second := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+goodID+"/action", upgrade).object(t)["id"].(string)
	h.clock.Step(testOperationDelay)
	if state := h.operation(first)["operationState"]; state != "FAILED_TEMP" {
		t.Errorf("first upgrade = %v", state)
	}
	if state := h.operation(second)["operationState"]; state != "COMPLETED" {
		t.Errorf("second upgrade = %v", state)
	}
	if state := h.ns(goodID)["nsState"]; state != "READY" {
		t.Errorf("a failed upgrade changed nsState to %v", state)
	}
	if len(h.sim.OperationFailures()) != 0 {
		t.Errorf("failures left: %+v", h.sim.OperationFailures())
	}
}

func TestWrongParamsTargetsFailLater(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		want   string
	}{
		{
			name:   "member-vnf-index",
			params: map[string]any{"member-vnf-index": "nope", "additionalParams": map[string]any{"a": "1"}},
			want:   "Invalid parameter additionalParamsForVnf: member-vnf-index='nope' is not one of the nsd:constituent-vnfd",
		},
		{
			name: "kdu_name",
			params: map[string]any{"member-vnf-index": "openldap", "additionalParamsForKdu": []any{
				map[string]any{"kdu_name": "nope", "additionalParams": map[string]any{"a": "1"}},
			}},
			want: "Invalid parameter additionalParamsForVnf[member-vnf-index=openldap]: kdu_name='nope' not present at vnfd:kdu:name",
		},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			h := newLoggedIn(t, Config{})
			_, nsdID := h.onboardOpenLDAP()
			body := ldapCreateBody("ldap", nsdID, h.vimID("vim1"), nil)
			body["additionalParamsForVnf"] = []any{test.params}
			nsID, opID := h.createNS(body) // accepted, like the NBI does
			h.clock.Step(testOperationDelay)
			op, ns := h.operation(opID), h.ns(nsID)
			if op["operationState"] != "FAILED" || op["errorMessage"] != test.want || ns["nsState"] != "BROKEN" {
				t.Errorf("operation %v %q, NS %v; want FAILED %q, BROKEN", op["operationState"], op["errorMessage"], ns["nsState"], test.want)
			}
		})
	}
}

func TestNamesAreNotUnique(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	vim := h.vimID("vim1")
	first, _ := h.createNS(ldapCreateBody("twin", nsdID, vim, nil))
	second, _ := h.createNS(ldapCreateBody("twin", nsdID, vim, nil))
	h.createNS(ldapCreateBody("other", nsdID, vim, nil))
	if first == second {
		t.Fatal("two creates gave one id")
	}
	var ids []any
	for _, ns := range h.must(http.StatusOK, "GET", nsContentPath+"?name=twin", nil).list(t) {
		ids = append(ids, dig(ns, "_id"))
	}
	if diff := cmp.Diff([]any{first, second}, ids); diff != "" {
		t.Errorf("?name=twin (-want +got):\n%s", diff)
	}
	if n := len(h.must(http.StatusOK, "GET", nsInstancesPath, nil).list(t)); n != 3 {
		t.Errorf("%d NS instances, want 3", n)
	}
	// Other filters read the records.
	if n := len(h.must(http.StatusOK, "GET", nsContentPath+"?nsState=BUILDING&name=other", nil).list(t)); n != 1 {
		t.Errorf("?nsState=BUILDING&name=other: %d", n)
	}
	if n := len(h.must(http.StatusOK, "GET", operationsPath+"?nsInstanceId="+first, nil).list(t)); n != 1 {
		t.Errorf("?nsInstanceId: %d operations", n)
	}
}

// TestConcurrentRequests runs creates, actions and lists from several
// goroutines; with -race it checks the locking.
func TestConcurrentRequests(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	vim := h.vimID("vim1")
	h.sim.SetOperationDelay(0)
	var group sync.WaitGroup
	for worker := range 4 {
		group.Go(func() {
			// Errorf, not Fatalf: this is not the test's goroutine.
			expect := func(want int, method, path string, body any) answer {
				a := h.request(method, path, body)
				if a.status != want {
					t.Errorf("%s %s: %d, want %d: %s", method, path, a.status, want, a.body)
				}
				return a
			}
			for i := range 10 {
				created := expect(http.StatusCreated, "POST", nsContentPath, ldapCreateBody(fmt.Sprintf("w%d-%d", worker, i), nsdID, vim, nil))
				var ns struct{ ID string }
				_ = json.Unmarshal(created.body, &ns)
				expect(http.StatusOK, "GET", nsContentPath, nil)
				expect(http.StatusAccepted, "POST", nsInstancesPath+"/"+ns.ID+"/action", map[string]any{
					"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "status", "primitive_params": map[string]any{}})
				_ = h.sim.State()
			}
		})
	}
	group.Wait()
	if n := len(h.sim.State().NSInstances); n != 40 {
		t.Errorf("%d NS instances, want 40", n)
	}
}

// The NS parameters of a create are where the operator marks the instances it owns: the NBI
// keeps them in the record's additionalParamsForNs (NsrTopic._create_nsr_descriptor_from_nsd),
// not in instantiate_params, keeps them through the instance's operations, and list filters
// reach into them.
func TestNSParametersAreKeptAndFiltered(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	body := ldapCreateBody("ldap", nsdID, h.vimID("vim1"), map[string]any{"replicaCount": "2"})
	body["additionalParamsForNs"] = map[string]any{"osmops_owner": "cluster-a.telco.gitops", "nested": map[string]any{"a": 1}}
	nsID, _ := h.createNS(body)
	h.createNS(ldapCreateBody("ldap", nsdID, h.vimID("vim1"), nil)) // same name, not marked
	h.clock.Step(2 * testOperationDelay)
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", map[string]any{"member_vnf_index": "openldap",
		"kdu_name": "ldap", "primitive": "upgrade", "primitive_params": map[string]any{"replicaCount": "3"}})
	h.clock.Step(2 * testOperationDelay)

	found := h.must(http.StatusOK, "GET", nsContentPath+"?additionalParamsForNs.osmops_owner.eq=cluster-a.telco.gitops", nil).list(t)
	if len(found) != 1 || dig(found[0], "_id") != nsID {
		t.Fatalf("filtered by the owner: %d records, want the one marked", len(found))
	}
	want := map[string]any{"osmops_owner": "cluster-a.telco.gitops", "nested": "!!yaml a: 1\n"}
	if diff := cmp.Diff(want, dig(found[0], "additionalParamsForNs")); diff != "" {
		t.Errorf("additionalParamsForNs (-want +got):\n%s", diff)
	}
	if _, kept := dig(found[0], "instantiate_params").(map[string]any)["additionalParamsForNs"]; kept {
		t.Error("instantiate_params keeps additionalParamsForNs; the NBI removes it (_format_ns_request)")
	}
	a := h.request("POST", nsContentPath, map[string]any{"nsName": "x", "nsdId": nsdID, "vimAccountId": h.vimID("vim1"),
		"additionalParamsForNs": map[string]any{"osmops-owner": "x"}})
	if detail := a.object(t)["detail"]; a.status != http.StatusBadRequest || detail != fmt.Sprintf("Invalid param name at additionalParamsForNs:osmops-owner. "+
		"Must contain only alphanumeric characters and underscores, and cannot start with a digit while 'getting nsd id='%s' from database'", nsdID) {
		t.Errorf("a key that is not an identifier: %d %v", a.status, detail)
	}
}
