package nbisim

import (
	"net/http"
	"testing"
)

// Users made through the API (UserTopicAuth, authconn_internal.py): created, listed, read by
// name or id and deleted as the NBI does; their first login answers change_password (their
// password expires at creation), and five failed logins lock them as they lock any user but
// admin.
func TestUsers(t *testing.T) {
	h := newLoggedIn(t, Config{})
	const password = "Secret-123"
	newUser := map[string]any{"username": "alice", "password": password,
		"project_role_mappings": []any{map[string]any{"project": "admin", "role": "project_user"}}}
	created := h.must(http.StatusCreated, "POST", "/osm/admin/v1/users", newUser)
	id := created.object(t)["id"].(string)
	if location := created.header.Get("Location"); location != "/osm/admin/v1/users/"+id {
		t.Errorf("Location %q", location)
	}

	for _, refusal := range []struct {
		name   string
		body   map[string]any
		status int
		detail string
	}{
		{"a used username", newUser, 409, "username 'alice' is already used"},
		{"no password", map[string]any{"username": "bob"}, 422, "Format error  ''password' is a required property' "},
		{"a weak password", map[string]any{"username": "bob", "password": "weak"}, 422,
			`Format error at 'password' ''weak' does not match '^.*(?=.{8,})((?=.*[!@#$%^&*()\\-_=+{};:,<.>]){1})(?=.*\\d)((?=.*[a-z]){1})((?=.*[A-Z]){1}).*$'' `},
		{"a uuid username", map[string]any{"username": "0b5ae4d6-51a3-4e18-b7df-868c115dcb17", "password": password}, 422,
			"username '0b5ae4d6-51a3-4e18-b7df-868c115dcb17' cannot have a uuid format"},
		{"an unknown role", map[string]any{"username": "bob", "password": password,
			"project_role_mappings": []any{map[string]any{"project": "admin", "role": "boss"}}}, 404, "Role with {'name': 'boss'} not found"},
	} {
		if a := h.request("POST", "/osm/admin/v1/users", refusal.body); a.status != refusal.status || a.object(t)["detail"] != refusal.detail {
			t.Errorf("%s: %d %s, want %d %q", refusal.name, a.status, a.body, refusal.status, refusal.detail)
		}
	}

	for _, key := range []string{"alice", id} {
		user := h.must(http.StatusOK, "GET", "/osm/admin/v1/users/"+key, nil).object(t)
		mappings, _ := user["project_role_mappings"].([]any)
		if user["_id"] != id || user["username"] != "alice" || dig(user, "_admin", "user_status") != "active" || len(mappings) != 1 ||
			dig(mappings[0], "role_name") != "project_user" || dig(mappings[0], "project_name") != "admin" || user["password"] == password {
			t.Errorf("GET users/%s = %v", key, user)
		}
	}
	if users := h.must(http.StatusOK, "GET", "/osm/admin/v1/users", nil).list(t); len(users) != 2 || dig(users[1], "username") != "alice" {
		t.Errorf("the list has %d users: %v", len(users), users)
	}

	// The first login: a token that works, and the NBI's request for a new password.
	login := h.loginAs("alice", password)
	answer := login.object(t)
	if login.status != http.StatusOK || answer["message"] != "change_password" || answer["user_id"] != id || len(answer) != 3 {
		t.Fatalf("first login: %d %v", login.status, answer)
	}
	if a := h.request("GET", "/osm/admin/v1/vim_accounts", nil, "Authorization", "Bearer "+answer["id"].(string)); a.status != http.StatusOK {
		t.Errorf("the token of a change_password answer: %d %s", a.status, a.body)
	}

	// Lock-out: the fifth failure locks alice, whose right password then fails too.
	const bad, locked = "Invalid username/password", "Failed to login as the account is locked due to MANY FAILED ATTEMPTS"
	for i, want := range []string{bad, bad, bad, bad, locked, locked} {
		try := "wrong"
		if i == 5 {
			try = password
		}
		if a := h.loginAs("alice", try); a.status != http.StatusUnauthorized || string(a.body) != errorBody(http.StatusUnauthorized, want) {
			t.Errorf("login %d: %d %s, want 401 %q", i+1, a.status, a.body, want)
		}
	}
	if users := h.sim.State().Users; len(users) != 2 || users[1] != (UserState{Username: "alice", Status: "locked", RetryCount: 5}) {
		t.Errorf("users %+v", users)
	}

	// Deletion revokes alice's tokens; the caller cannot delete itself.
	h.must(http.StatusNoContent, "DELETE", "/osm/admin/v1/users/"+id, nil)
	if a := h.request("GET", "/osm/admin/v1/vim_accounts", nil, "Authorization", "Bearer "+answer["id"].(string)); a.status != http.StatusUnauthorized {
		t.Errorf("a deleted user's token: %d", a.status)
	}
	if a := h.request("GET", "/osm/admin/v1/users/alice", nil); a.status != http.StatusNotFound || string(a.body) != errorBody(404, "User 'alice' not found") {
		t.Errorf("a deleted user: %d %s", a.status, a.body)
	}
	self := h.sim.State().Users[0].Username
	if a := h.request("DELETE", "/osm/admin/v1/users/"+self, nil); a.status != http.StatusConflict ||
		string(a.body) != errorBody(http.StatusConflict, "You cannot delete your own login user ") {
		t.Errorf("deleting oneself: %d %s", a.status, a.body)
	}
}
