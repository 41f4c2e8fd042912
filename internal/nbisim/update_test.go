package nbisim

import (
	"net/http"
	"testing"
)

// CHANGE_VNFPKG as the NBI checks it (_check_update_ns_operation, NsLcmOpTopic.new) and LCM
// carries it out (ns.py update, for a VNF without charms): the VNF record's revision moves to
// the VNFD's, newVdur is added when the software-version changed, and then a KNF fails (its
// VNFD has no vdu); KDUs are not touched.
func TestChangeVNFPackage(t *testing.T) {
	h := newLoggedIn(t, Config{})
	vnfdID, nsdID := h.onboardOpenLDAP()
	nsID, _ := h.createNS(ldapCreateBody("ldap", nsdID, h.vimID("vim1"), map[string]any{"replicaCount": "2"}))
	h.clock.Step(testOperationDelay)
	vnfID := dig(h.must(http.StatusOK, "GET", vnfInstancePath, nil).list(t)[0], "_id").(string)
	updatePath := nsInstancesPath + "/" + nsID + "/update"
	change := func(vnf, vnfd string) map[string]any {
		return map[string]any{"updateType": "CHANGE_VNFPKG", "changeVnfPackageData": map[string]any{"vnfInstanceId": vnf, "vnfdId": vnfd}}
	}
	vnfRevision := func() any {
		return h.must(http.StatusOK, "GET", vnfInstancePath+"/"+vnfID, nil).object(t)["revision"]
	}
	chart := func() string { return h.sim.State().NSInstances[0].KDUs[0].Model }
	chartBefore := chart()

	// Refusals, with the NBI's status and text.
	withTimeout := change(vnfID, vnfdID)
	withTimeout["timeout_ns_update"] = 299
	for _, refusal := range []struct {
		name   string
		body   map[string]any
		status int
		detail string
	}{
		{"a VNF of another NS", change(nsdID, vnfdID), 422, "Error in validating ns-update request: vnf " + nsdID + " does not belong to NS " + nsID},
		{"another VNFD than the record's", change(vnfID, nsdID), 422,
			"Error in validating ns-update request: vnfd-id " + nsdID + " does not match with the vnfd-id: " + vnfdID + " of VNF instance: " + vnfID},
		{"a timeout under 300 seconds", withTimeout, 422, "Error in validating ns-update request: 299 second is not enough to upgrade the VNF instance: " + vnfID},
	} {
		if a := h.request("POST", updatePath, refusal.body); a.status != refusal.status || string(a.body) != errorBody(refusal.status, refusal.detail) {
			t.Errorf("%s: %d %s, want %d %q", refusal.name, a.status, a.body, refusal.status, refusal.detail)
		}
	}
	withoutVNFD := map[string]any{"updateType": "CHANGE_VNFPKG", "changeVnfPackageData": map[string]any{"vnfInstanceId": vnfID}}
	if a, want := h.request("POST", updatePath, withoutVNFD), errorBody(422, "Format error at 'changeVnfPackageData' ''vnfdId' is a required property' "); string(a.body) != want {
		t.Errorf("without vnfdId: %d %s, want %s", a.status, a.body, want)
	}

	// At the VNFD's revision: LCM completes and changes nothing.
	opID := h.must(http.StatusAccepted, "POST", updatePath, change(vnfID, vnfdID)).object(t)["id"].(string)
	if got := dig(h.ns(nsID), "currentOperation"); got != "UPDATING" {
		t.Errorf("currentOperation while the update runs = %v, want UPDATING", got)
	}
	h.clock.Step(testOperationDelay)
	if op := h.operation(opID); op["operationState"] != "COMPLETED" || op["errorMessage"] != "" || vnfRevision() != float64(1) {
		t.Errorf("update at the same revision: %v %q, VNF revision %v", op["operationState"], op["errorMessage"], vnfRevision())
	}

	// A new software-version (OSM accepts it while the VNFD is in use): newVdur, then the move.
	vnfd := readOpenLDAPFile(t, "openldap_knf", "openldap_vnfd.yaml")
	withVersion := edit(t, vnfd, "  version: \"1.0\"\n", "  version: \"1.0\"\n  software-version: \"2.0\"\n")
	put := func(content string) {
		t.Helper()
		pkg := buildPackage(t, "openldap_knf", "openldap_vnfd.yaml", content)
		h.must(http.StatusNoContent, "PUT", "/osm/vnfpkgm/v1/vnf_packages/"+vnfdID+"/package_content", pkg.Tarball,
			"Content-Type", "application/gzip", "Content-File-MD5", pkg.MD5)
	}
	put(withVersion)
	opID = h.must(http.StatusAccepted, "POST", updatePath, change(vnfID, vnfdID)).object(t)["id"].(string)
	params := h.operation(opID)["operationParams"].(map[string]any)
	if newVdur, given := params["newVdur"]; !given || len(newVdur.([]any)) != 0 || params["updateType"] != "CHANGE_VNFPKG" || params["lcmOperationType"] != "update" {
		t.Errorf("operationParams = %v, want the request with newVdur: []", params)
	}
	// LCM's _ns_redeploy_vnf moves the record, then reads the VNFD's vdu, which a KNF lacks:
	// the update FAILS, the NS is marked failed and stays READY, the VNF record has moved.
	h.clock.Step(testOperationDelay)
	const failure = "Error updating VNF 'vdu'"
	if op := h.operation(opID); op["operationState"] != "FAILED" || op["errorMessage"] != failure || op["detailed-status"] != failure || vnfRevision() != float64(2) {
		t.Errorf("update of a KNF to revision 2: %v %q %q, VNF revision %v; want FAILED %q and revision 2",
			op["operationState"], op["errorMessage"], op["detailed-status"], vnfRevision(), failure)
	}
	if ns := h.ns(nsID); ns["nsState"] != "READY" || ns["operational-status"] != "failed" || ns["detailed-status"] != failure || ns["currentOperation"] != "IDLE" {
		t.Errorf("NS after the failed update: nsState %v, operational-status %v, detailed-status %v, currentOperation %v",
			ns["nsState"], ns["operational-status"], ns["detailed-status"], ns["currentOperation"])
	}
	if chart() != chartBefore {
		t.Errorf("the KDU's chart moved from %q to %q: the failed update does not touch KDUs", chartBefore, chart())
	}

	// The same software-version: no newVdur, the revision moves.
	put(withVersion + "# a comment\n")
	opID = h.must(http.StatusAccepted, "POST", updatePath, change(vnfID, vnfdID)).object(t)["id"].(string)
	if _, given := h.operation(opID)["operationParams"].(map[string]any)["newVdur"]; given {
		t.Errorf("newVdur given for the same software-version")
	}
	h.clock.Step(testOperationDelay)
	if vnfRevision() != float64(3) {
		t.Errorf("VNF revision after the update to revision 3 = %v", vnfRevision())
	}
	if chart() != chartBefore {
		t.Errorf("the KDU's chart moved from %q to %q: LCM's update does not touch KDUs", chartBefore, chart())
	}
}
