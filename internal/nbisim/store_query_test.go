package nbisim

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// queryScenario has two NS instances, ldap and other, instantiated, and an
// upgrade of ldap still PROCESSING.
type queryScenario struct {
	h                          *harness
	vnfdID                     string
	ldap, other                string // NS ids
	ldapInstantiate, otherInst string // operation ids
	upgrade                    string
	startedAt                  float64 // the upgrade's startTime
}

func newQueryScenario(t *testing.T) *queryScenario {
	h := newLoggedIn(t, Config{})
	q := &queryScenario{h: h}
	var nsdID string
	q.vnfdID, nsdID = h.onboardOpenLDAP()
	vim := h.vimID("vim1")
	q.ldap, q.ldapInstantiate = h.createNS(ldapCreateBody("ldap", nsdID, vim, map[string]any{"replicaCount": "1"}))
	q.other, q.otherInst = h.createNS(ldapCreateBody("other", nsdID, vim, nil))
	h.clock.Step(testOperationDelay)
	q.upgrade = h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+q.ldap+"/action", map[string]any{
		"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": map[string]any{"replicaCount": "2"},
	}).object(t)["id"].(string)
	q.startedAt = h.operation(q.upgrade)["startTime"].(float64)
	return q
}

// ids lists the _id of the records of a list answer.
func ids(t *testing.T, a answer) []string {
	t.Helper()
	var list []string
	for _, record := range a.list(t) {
		list = append(list, dig(record, "_id").(string))
	}
	return list
}

func TestQueryIDIsTheItem(t *testing.T) {
	q := newQueryScenario(t)
	h := q.h
	missing := "0b5ae4d6-51a3-4e18-b7df-868c115dcb17"
	project := h.sim.State().ProjectID
	notFound := fmt.Sprintf("database exception Not found entry with filter='{'_id': '%s', '_admin.projects_read.cont': ['%s', 'ANY']}'", missing, project)

	tests := []struct {
		name   string
		method string
		path   string
		status int
		id     string // the _id of the one record answered
		detail string // the error's detail
	}{
		// The other filters are not applied: the operation is COMPLETED.
		{"operation, other filters ignored", "GET", operationsPath + "?_id=" + q.ldapInstantiate + "&operationState.neq=COMPLETED", 200, q.ldapInstantiate, ""},
		{"unknown operation", "GET", operationsPath + "?_id=" + missing + "&nsInstanceId=" + q.ldap, 404, "", notFound},
		{"NS instance", "GET", nsContentPath + "?_id=" + q.other + "&name=ldap", 200, q.other, ""},
		{"NS instance, other form", "GET", nsInstancesPath + "?_id=" + q.ldap, 200, q.ldap, ""},
		{"VNF package", "GET", "/osm/vnfpkgm/v1/vnf_packages?_id=" + q.vnfdID, 200, q.vnfdID, ""},
		{"_id in the path too", "GET", operationsPath + "/" + q.upgrade + "?_id=" + q.upgrade, 404, "", "Nothing matches the given URI"},
		{"_id twice", "GET", operationsPath + "?_id=" + q.upgrade + "&_id=" + q.ldapInstantiate, 400, "", "unhashable type: 'list'"},
		{"_id twice on an unknown topic", "GET", "/osm/nslcm/v1/nope?_id=a&_id=b", 405, "", "Unexpected URL item nope"},
		{"POST to an item", "POST", nsContentPath + "?_id=" + q.ldap, 405, "", "Method POST not supported for this URL"},
		{"DELETE of an item", "DELETE", nsInstancesPath + "?_id=" + missing, 404, "", notFound},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			a := h.request(test.method, test.path, nil)
			if a.status != test.status {
				t.Fatalf("status %d, want %d: %s", a.status, test.status, a.body)
			}
			if test.detail != "" {
				if string(a.body) != errorBody(test.status, test.detail) {
					t.Errorf("body %s, want detail %q", a.body, test.detail)
				}
				return
			}
			if got := a.object(t)["_id"]; got != test.id {
				t.Errorf("_id %v, want %s", got, test.id)
			}
		})
	}

	// The request is counted on the item's route.
	var routes []string
	for _, endpoint := range h.sim.Stats().Endpoints {
		routes = append(routes, endpoint.Route)
	}
	if !slices.Contains(routes, "/osm/nslcm/v1/ns_lcm_op_occs/{nsLcmOpOccId}") {
		t.Errorf("routes counted: %v", routes)
	}

	// An empty _id is no _id: the list, filtered.
	a := h.must(http.StatusOK, "GET", operationsPath+"?_id=&operationState=PROCESSING", nil)
	if diff := cmp.Diff([]string{q.upgrade}, ids(t, a)); diff != "" {
		t.Errorf("?_id= (-want +got):\n%s", diff)
	}
}

func TestListFilters(t *testing.T) {
	q := newQueryScenario(t)
	h := q.h
	all := []string{q.ldapInstantiate, q.otherInst, q.upgrade}
	tests := []struct {
		name  string
		path  string
		query string
		want  []string
	}{
		{"_id.eq", operationsPath, "_id.eq=" + q.upgrade, []string{q.upgrade}},
		{"_id.cont with one value", operationsPath, "_id.cont=" + q.upgrade, []string{q.upgrade}},
		{"_id.cont with two", operationsPath, "_id.cont=" + q.upgrade + "," + q.otherInst, []string{q.otherInst, q.upgrade}},
		{"_id.neq", operationsPath, "_id.neq=" + q.upgrade, []string{q.ldapInstantiate, q.otherInst}},
		{"_id.neq with two", operationsPath, "_id.neq=" + q.upgrade + "," + q.otherInst, []string{q.ldapInstantiate}},
		{"_id.ncont", operationsPath, "_id.ncont=" + q.upgrade, []string{q.ldapInstantiate, q.otherInst}},
		{"nsInstanceId", operationsPath, "nsInstanceId=" + q.ldap, []string{q.ldapInstantiate, q.upgrade}},
		{"nsInstanceId.cont with two", operationsPath, "nsInstanceId.cont=" + q.ldap + "," + q.other, all},
		{"nsInstanceId, a comma list", operationsPath, "nsInstanceId=" + q.other + "," + q.ldap, all},
		{"nsInstanceId repeated", operationsPath, "nsInstanceId=" + q.other + "&nsInstanceId=" + q.ldap, all},
		{"a leading comma is no list", operationsPath, "nsInstanceId=," + q.ldap, nil},
		{"lcmOperationType", operationsPath, "lcmOperationType=action", []string{q.upgrade}},
		{"lcmOperationType.neq", operationsPath, "lcmOperationType.neq=action", []string{q.ldapInstantiate, q.otherInst}},
		{"operationState.neq", operationsPath, "operationState.neq=COMPLETED", []string{q.upgrade}},
		{"operationState, a list", operationsPath, "operationState=FAILED,PROCESSING", []string{q.upgrade}},
		{"startTime.gte", operationsPath, fmt.Sprintf("startTime.gte=%f", q.startedAt), []string{q.upgrade}},
		{"startTime.lt", operationsPath, fmt.Sprintf("startTime.lt=%d", int64(q.startedAt)), []string{q.ldapInstantiate, q.otherInst}},
		{"startTime.gte with a word", operationsPath, "startTime.gte=soon", nil},
		{"combined", operationsPath, "nsInstanceId=" + q.ldap + "&operationState.neq=COMPLETED&lcmOperationType=action", []string{q.upgrade}},
		{"name", nsContentPath, "name=other", []string{q.other}},
		{"name, a list", nsContentPath, "name=other,ldap", []string{q.ldap, q.other}},
		{"name.neq", nsContentPath, "name.neq=other", []string{q.ldap}},
		{"name.cont with one value", nsContentPath, "name.cont=ldap", []string{q.ldap}},
		// A number is not equal to its text in Python.
		{"a number", nsContentPath, "revision=1", nil},
		{"a number, compared", nsContentPath, "revision.gte=1", []string{q.ldap, q.other}},
		// An empty value is None, which a missing or null field equals.
		{"null", nsContentPath, "errorDescription=", []string{q.ldap, q.other}},
		{"missing", nsContentPath, "colour=", []string{q.ldap, q.other}},
		{"not null", nsContentPath, "name.neq=", []string{q.ldap, q.other}},
		{"an array holds it", nsContentPath, "constituent-vnfr-ref.neq=nope", []string{q.ldap, q.other}},
		{"nested", nsContentPath, "_admin.nsState=INSTANTIATED&name=ldap", []string{q.ldap}},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			a := h.must(http.StatusOK, "GET", test.path+"?"+test.query, nil)
			got := ids(t, a)
			if diff := cmp.Diff(test.want, got); diff != "" {
				t.Errorf("?%s (-want +got):\n%s", test.query, diff)
			}
		})
	}

	// vnf_instances by nsr-id-ref, one and two values.
	vnfs := func(query string) int {
		return len(h.must(http.StatusOK, "GET", vnfInstancePath+"?"+query, nil).list(t))
	}
	if n, m := vnfs("nsr-id-ref="+q.ldap), vnfs("nsr-id-ref.cont="+url.QueryEscape(q.ldap+","+q.other)); n != 1 || m != 2 {
		t.Errorf("VNF records by nsr-id-ref: %d and %d, want 1 and 2", n, m)
	}
}

// TestTokenByQueryID: DELETE .../tokens?_id=X logs X out as
// DELETE .../tokens/X does, and the token stays out of the request log.
func TestTokenByQueryID(t *testing.T) {
	h := newLoggedIn(t, Config{})
	token := h.token
	h.token = ""
	if a := h.request("DELETE", "/osm/admin/v1/tokens?_id="+token, nil); a.status != http.StatusOK || string(a.body) != fmt.Sprintf("\"token '%s' deleted\"\n", token) {
		t.Fatalf("logout: %d %s", a.status, a.body)
	}
	if n := h.sim.State().Tokens; n != 0 {
		t.Errorf("%d tokens left", n)
	}
	for _, record := range h.sim.RequestLog() {
		if strings.Contains(record.Path, token) {
			t.Errorf("the request log holds the token: %s", record.Path)
		}
	}
	if log := h.sim.RequestLog(); log[len(log)-1].Path != "/osm/admin/v1/tokens?_id={tokenId}" {
		t.Errorf("logged path %s", log[len(log)-1].Path)
	}
}
