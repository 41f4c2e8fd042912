package nbisim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// errorBody is an NBI error answer written out by hand, the way
// json.dumps(problem_details, indent=4) prints it.
func errorBody(status int, detail string) string {
	quoted, _ := json.Marshal(detail)
	return fmt.Sprintf("{\n    \"code\": %q,\n    \"status\": %d,\n    \"detail\": %s\n}\n", statusName(status), status, quoted)
}

func TestErrorAnswers(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	vim, noK8s := h.vimID("vim1"), h.vimID("vim-nok8s")
	project := h.sim.State().ProjectID
	nsID, _ := h.createNS(ldapCreateBody("ldap", nsdID, vim, nil))
	h.clock.Step(testOperationDelay)
	missing := "0b5ae4d6-51a3-4e18-b7df-868c115dcb17"
	notFound := fmt.Sprintf("database exception Not found entry with filter='{'_id': '%s', '_admin.projects_read.cont': ['%s', 'ANY']}'", missing, project)
	action := nsInstancesPath + "/" + nsID + "/action"
	without := func(key string) map[string]any {
		body := ldapCreateBody("x", nsdID, vim, nil)
		delete(body, key)
		return body
	}

	tests := []struct {
		name         string
		method, path string
		body         any
		status       int
		detail       string
	}{
		{"create without vimAccountId", "POST", nsContentPath, without("vimAccountId"), 422,
			"Format error  ''vimAccountId' is a required property'  while 'validating input parameters'"},
		{"create without nsName", "POST", nsContentPath, without("nsName"), 422,
			"Format error  ''nsName' is a required property'  while 'validating input parameters'"},
		{"create with an unknown field", "POST", nsContentPath, map[string]any{"nsName": "x", "nsdId": nsdID, "vimAccountId": vim, "colour": "red"}, 422,
			"Format error  'Additional properties are not allowed ('colour' was unexpected)'  while 'validating input parameters'"},
		{"create with a bad nsdId", "POST", nsContentPath, ldapCreateBody("x", "openldap_ns", vim, nil), 422,
			"Format error at 'nsdId' ''openldap_ns' does not match '^[a-fA-F0-9]{8}(-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}$''  while 'validating input parameters'"},
		{"create with a bad kdu params", "POST", nsContentPath, map[string]any{"nsName": "x", "nsdId": nsdID, "vimAccountId": vim,
			"additionalParamsForVnf": []any{map[string]any{"member-vnf-index": "openldap", "additionalParamsForKdu": []any{map[string]any{"kdu_name": "ldap", "additionalParams": "x"}}}}}, 422,
			"Format error at 'additionalParamsForVnf:0:additionalParamsForKdu:0:additionalParams' ''x' is not of type 'object''  while 'validating input parameters'"},
		{"create with an unknown NSD", "POST", nsContentPath, ldapCreateBody("x", missing, vim, nil), 404,
			notFound + " while 'getting nsd id='" + missing + "' from database'"},
		{"create on an unknown VIM", "POST", nsContentPath, ldapCreateBody("x", nsdID, missing, nil), 400,
			"Invalid vimAccountId='" + missing + "' not present for the project"},
		{"create a KNF on a VIM without K8s cluster", "POST", nsContentPath, ldapCreateBody("x", nsdID, noK8s, nil), 400,
			"No k8scluster with requirements='{}' at vim_account=" + noK8s + " found for member_vnf_index=openldap"},
		{"create with a bad VNF param name", "POST", nsContentPath, map[string]any{"nsName": "x", "nsdId": nsdID, "vimAccountId": vim,
			"additionalParamsForVnf": []any{map[string]any{"member-vnf-index": "openldap", "additionalParams": map[string]any{"1st": "x"}}}}, 400,
			"Invalid param name at additionalParamsForVnf[member-vnf-index=openldap]:1st. Must contain only alphanumeric characters " +
				"and underscores, and cannot start with a digit while 'filling vnfr  vnfd-id='openldap_knf' constituent-vnfd='openldap''"},
		{"malformed JSON", "POST", nsContentPath, "{", 400, "Invalid json format unexpected end of JSON input"},
		{"get an unknown NS", "GET", nsContentPath + "/" + missing, nil, 404, notFound},
		{"get an unknown operation", "GET", operationsPath + "/" + missing, nil, 404, notFound},
		{"action with null params", "POST", action, map[string]any{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": nil}, 422,
			"Format error at 'primitive_params' 'None is not of type 'object'' "},
		{"action without primitive", "POST", action, map[string]any{"primitive_params": map[string]any{}}, 422,
			"Format error  ''primitive' is a required property' "},
		{"action on an unknown member", "POST", action, map[string]any{"member_vnf_index": "nope", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": map[string]any{}}, 400,
			"Invalid parameter member_vnf_index='nope' is not one of the nsd:constituent-vnfd"},
		{"action on an unknown KDU", "POST", action, map[string]any{"member_vnf_index": "openldap", "kdu_name": "nope", "primitive": "upgrade", "primitive_params": map[string]any{}}, 400,
			"Invalid parameter kdu_name='nope' not present at vnfd:kdu:name"},
		{"KDU primitive without member", "POST", action, map[string]any{"kdu_name": "ldap", "primitive": "upgrade", "primitive_params": map[string]any{}}, 400,
			"Missing action parameter 'member_vnf_index' for default KDU primitive 'upgrade'"},
		{"unknown primitive", "POST", action, map[string]any{"member_vnf_index": "openldap", "primitive": "touch", "primitive_params": map[string]any{}}, 400,
			"Invalid primitive 'touch' is not present at vnfd/nsd"},
		{"action on an unknown NS", "POST", nsInstancesPath + "/" + missing + "/action", map[string]any{"primitive": "upgrade", "primitive_params": map[string]any{}}, 404, notFound},
		{"scale a KNF", "POST", nsInstancesPath + "/" + nsID + "/scale", map[string]any{"scaleType": "SCALE_VNF", "scaleVnfData": map[string]any{
			"scaleVnfType": "SCALE_OUT", "scaleByStepData": map[string]any{"scaling-group-descriptor": "g", "member-vnf-index": "openldap"}}}, 400,
			"'scaling-aspect'"},
		{"update with a bad type", "POST", nsInstancesPath + "/" + nsID + "/update", map[string]any{"updateType": "REPAINT"}, 422,
			"Format error at 'updateType' ''REPAINT' is not one of ['CHANGE_VNFPKG', 'REMOVE_VNF', 'MODIFY_VNF_INFORMATION', 'OPERATE_VNF', 'VERTICAL_SCALE']' "},
		{"remove an unknown VNF", "POST", nsInstancesPath + "/" + nsID + "/update", map[string]any{"updateType": "REMOVE_VNF", "removeVnfInstanceId": missing}, 400,
			"Invalid VNF Instance Id. '" + missing + "' is not present in the NS '" + nsID + "'"},
		{"delete an instantiated NS without terminate", "DELETE", nsInstancesPath + "/" + nsID, nil, 409,
			"nsr '" + nsID + "' cannot be deleted because it is in 'INSTANTIATED' state. Launch 'terminate' operation first; or force deletion"},
		{"duplicate VIM account", "POST", "/osm/admin/v1/vim_accounts", map[string]any{"name": "vim1", "vim_type": "openstack",
			"vim_url": "http://x", "vim_user": "u", "vim_password": "p", "vim_tenant_name": "t"}, 409,
			"name 'vim1' already exists for vim_accounts"},
		{"unknown topic", "GET", "/osm/nslcm/v1/ns_things", nil, 405, "Unexpected URL item ns_things"},
		{"unknown main topic", "GET", "/osm/foo/v1/bar", nil, 405, "URL main_topic 'foo' not supported"},
		{"unknown version", "GET", "/osm/nslcm/v2/ns_instances", nil, 405, "URL version 'v2' not supported"},
		{"short URL", "GET", "/osm/nslcm", nil, 405, "URL must contain at least 'main_topic/version/topic'"},
		{"extra URL items", "GET", operationsPath + "/" + missing + "/more", nil, 405, "URL contains unexpected extra items 'more'"},
		{"wrong method", "PUT", nsContentPath, nil, 405, "Method PUT not supported for this URL"},
		{"outside /osm", "GET", "/nslcm/v1/ns_instances", nil, 404, "The path '/nslcm/v1/ns_instances' was not found."},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			a := h.request(test.method, test.path, test.body)
			if want := errorBody(test.status, test.detail); a.status != test.status || string(a.body) != want {
				t.Errorf("got %d\n%s\nwant %d\n%s", a.status, a.body, test.status, want)
			}
		})
	}
	// No failed create left a record behind.
	if n := len(h.sim.State().NSInstances); n != 1 {
		t.Errorf("%d NS instances, want 1", n)
	}
}

func TestAuthentication(t *testing.T) {
	h := newHarness(t, Config{TokenLifetime: 30 * 60 * 1e9})
	login := func(body any) answer { return h.request("POST", "/osm/admin/v1/tokens", body) }

	for _, test := range []struct {
		name   string
		body   any
		detail string
	}{
		{"wrong password", map[string]string{"username": "admin", "password": "nope"}, "Invalid username/password"},
		{"unknown user", map[string]string{"username": "root", "password": "admin"}, "Invalid username/password"},
		{"no credentials", map[string]string{}, "Provide credentials: username/password or Authorization Bearer token"},
		{"unknown project", map[string]string{"username": "admin", "password": "admin", "project_id": "other"}, "project other not allowed for this user"},
	} {
		a := login(test.body)
		if want := errorBody(401, test.detail); a.status != 401 || string(a.body) != want {
			t.Errorf("%s: %d %s", test.name, a.status, a.body)
		}
		if strings.Contains(string(a.body), "nope") {
			t.Errorf("%s: the answer holds the password", test.name)
		}
	}

	// The project may be named by its id; the answer has the sample's fields.
	project := h.sim.State().ProjectID
	a := login(map[string]string{"username": "admin", "password": "admin", "project_id": project})
	if a.status != http.StatusOK {
		t.Fatalf("login with the project id: %d %s", a.status, a.body)
	}
	token := a.object(t)
	for _, field := range []string{"issued_at", "expires", "_id", "id", "project_id", "project_name", "username", "user_id", "admin", "roles", "remote_host"} {
		if _, ok := token[field]; !ok {
			t.Errorf("token answer has no %s: %s", field, a.body)
		}
	}
	if token["expires"].(float64)-token["issued_at"].(float64) != 1800 || token["project_id"] != project || token["project_name"] != "admin" {
		t.Errorf("token answer = %s", a.body)
	}
	h.token = token["id"].(string)
	h.must(http.StatusOK, "GET", "/osm/admin/v1/vim_accounts", nil)

	// Expiry, by the clock.
	h.clock.Step(30*60*1e9 + 1)
	expired := h.request("GET", "/osm/admin/v1/vim_accounts", nil)
	if expired.status != 401 || string(expired.body) != errorBody(401, "Expired Token or Authorization HTTP header") {
		t.Errorf("expired token: %d %s", expired.status, expired.body)
	}
	if challenge := expired.header.Get("WWW-Authenticate"); challenge != `Bearer realm="Expired Token or Authorization HTTP header"` {
		t.Errorf("WWW-Authenticate = %q", challenge)
	}

	// Logout by id (no token needed), and revocation of all tokens.
	h.login()
	id := h.token
	h.token = ""
	if a := h.must(http.StatusOK, "DELETE", "/osm/admin/v1/tokens/"+id, nil); string(a.body) != `"token '`+id+`' deleted"`+"\n" {
		t.Errorf("logout answer = %s", a.body)
	}
	h.token = id
	if a := h.request("GET", "/osm/admin/v1/vim_accounts", nil); string(a.body) != errorBody(401, "Invalid Token or Authorization HTTP header") {
		t.Errorf("revoked token: %s", a.body)
	}
	h.login()
	h.must(http.StatusOK, "DELETE", "/osm/admin/v1/tokens", nil) // logs the caller out
	h.must(http.StatusUnauthorized, "GET", "/osm/admin/v1/vim_accounts", nil)
	h.login()
	if n := h.sim.RevokeTokens(); n != 2 { // the expired one and the last
		t.Errorf("RevokeTokens = %d, want 2", n)
	}
	h.must(http.StatusUnauthorized, "GET", "/osm/admin/v1/vim_accounts", nil)

	h.token = ""
	if a := h.request("GET", "/osm/admin/v1/vim_accounts", nil); string(a.body) != errorBody(401, "Needed a token or Authorization http header") {
		t.Errorf("no token: %s", a.body)
	}
	// The version needs no token.
	if a := h.must(http.StatusOK, "GET", "/osm/version", nil); a.object(t)["version"] != Version {
		t.Errorf("version = %s", a.body)
	}
}
