package nbisim

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// loginAs posts credentials, without the harness's token, and returns the answer.
func (h *harness) loginAs(username, password string) answer {
	h.t.Helper()
	saved := h.token
	h.token = ""
	defer func() { h.token = saved }()
	return h.request("POST", "/osm/admin/v1/tokens", map[string]string{"username": username, "password": password, "project_id": "admin"})
}

func TestLoginLockOut(t *testing.T) {
	const (
		bad    = "Invalid username/password"
		locked = "Failed to login as the account is locked due to MANY FAILED ATTEMPTS"
	)
	type attempt struct {
		password string
		status   int
		detail   string // the error's; for a login, the token's login_count as text
	}
	tests := []struct {
		name     string
		username string
		attempts []attempt
		status   string // the user's status at the end
	}{
		{
			name: "the fifth failure locks, then even the right password fails", username: "operator",
			attempts: []attempt{
				{"wrong", 401, bad}, {"wrong", 401, bad}, {"wrong", 401, bad}, {"wrong", 401, bad},
				{"wrong", 401, locked}, {"secret", 401, locked}, {"wrong", 401, locked},
			},
			status: "locked",
		},
		{
			name: "a login forgets the failures and shows their count", username: "operator",
			attempts: []attempt{
				{"wrong", 401, bad}, {"wrong", 401, bad}, {"wrong", 401, bad}, {"wrong", 401, bad},
				{"secret", 200, "4"}, {"wrong", 401, bad}, {"secret", 200, "1"}, {"secret", 200, "0"},
			},
			status: "active",
		},
		{
			name: "admin never locks", username: "admin",
			attempts: []attempt{
				{"wrong", 401, bad}, {"wrong", 401, bad}, {"wrong", 401, bad}, {"wrong", 401, bad},
				{"wrong", 401, bad}, {"wrong", 401, bad}, {"secret", 200, "6"},
			},
			status: "always-active",
		},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			h := newHarness(t, Config{Username: test.username, Password: "secret"})
			for i, try := range test.attempts {
				a := h.loginAs(test.username, try.password)
				if a.status != try.status {
					t.Fatalf("attempt %d: status %d, want %d: %s", i+1, a.status, try.status, a.body)
				}
				if try.status != http.StatusOK {
					if string(a.body) != errorBody(try.status, try.detail) {
						t.Errorf("attempt %d: %s, want %q", i+1, a.body, try.detail)
					}
					continue
				}
				if count := a.object(t)["login_count"]; count != mustAtoi(t, try.detail) {
					t.Errorf("attempt %d: login_count %v, want %s", i+1, count, try.detail)
				}
			}
			if user := h.sim.State().Users[0]; user.Username != test.username || user.Status != test.status {
				t.Errorf("user %+v, want status %s", user, test.status)
			}
		})
	}
}

func mustAtoi(t *testing.T, s string) float64 {
	t.Helper()
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("%q is not a number", s)
		}
		n = n*10 + int(r-'0')
	}
	return float64(n)
}

func TestUnlockUser(t *testing.T) {
	h := newHarness(t, Config{Username: "operator", Password: "secret"})
	for range maxPasswordAttempts {
		h.loginAs("operator", "wrong")
	}
	want := []UserState{{Username: "operator", Status: "locked", RetryCount: 5}}
	if diff := cmp.Diff(want, h.sim.State().Users); diff != "" {
		t.Errorf("locked user (-want +got):\n%s", diff)
	}
	h.must(http.StatusUnauthorized, "POST", "/osm/admin/v1/tokens", map[string]string{"username": "operator", "password": "secret"})

	// The Go method, then the control API.
	h.sim.UnlockUser()
	if a := h.loginAs("operator", "secret"); a.status != http.StatusOK || a.object(t)["login_count"] != float64(0) {
		t.Errorf("login after UnlockUser: %d %s", a.status, a.body)
	}
	for range maxPasswordAttempts {
		h.loginAs("operator", "wrong")
	}
	if a := h.request("POST", "/sim/v1/users/unlock", nil); a.status != http.StatusNoContent {
		t.Fatalf("POST /sim/v1/users/unlock: %d %s", a.status, a.body)
	}
	want = []UserState{{Username: "operator", Status: "active", RetryCount: 0}}
	if diff := cmp.Diff(want, h.sim.State().Users); diff != "" {
		t.Errorf("unlocked user (-want +got):\n%s", diff)
	}
	if a := h.loginAs("operator", "secret"); a.status != http.StatusOK {
		t.Errorf("login after the control API's unlock: %d %s", a.status, a.body)
	}

	// Reset forgets the lock too.
	for range maxPasswordAttempts {
		h.loginAs("operator", "wrong")
	}
	h.sim.Reset()
	if a := h.loginAs("operator", "secret"); a.status != http.StatusOK {
		t.Errorf("login after Reset: %d %s", a.status, a.body)
	}
}

// TestCredentialsExpire: as authconn_internal.py and nbi.py do with nbi.cfg's defaults, the
// configured user's record tells when its password (pwd_expire_days, 30) and its account
// (account_expire_days, 90) expire; from the first a login answers change_password, after the
// second it is refused and the user is expired. SetUserExpiry moves both. Admin never expires.
func TestCredentialsExpire(t *testing.T) {
	h := newHarness(t, Config{Username: "operator", Password: "secret"})
	start := h.clock.Now()
	login := h.loginAs("operator", "secret").object(t)
	h.token = login["id"].(string)
	record := h.must(http.StatusOK, "GET", "/osm/admin/v1/users/"+login["user_id"].(string), nil).object(t)
	admin := record["_admin"].(map[string]any)
	want := map[string]any{
		"password_expire_time": float64(start.Add(30 * 24 * time.Hour).Unix()),
		"account_expire_time":  float64(start.Add(90 * 24 * time.Hour).Unix()),
		"user_status":          "active",
	}
	got := map[string]any{"password_expire_time": admin["password_expire_time"], "account_expire_time": admin["account_expire_time"], "user_status": admin["user_status"]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the user's _admin (-want +got):\n%s", diff)
	}

	h.clock.SetTime(start.Add(30 * 24 * time.Hour))
	if a := h.loginAs("operator", "secret"); a.status != http.StatusOK || a.object(t)["message"] != "change_password" {
		t.Errorf("login at the password's expiry: %d %s, want change_password", a.status, a.body)
	}
	h.clock.SetTime(start.Add(90*24*time.Hour + time.Second))
	if a := h.loginAs("operator", "secret"); a.status != http.StatusUnauthorized || string(a.body) != errorBody(http.StatusUnauthorized, "Account expired") {
		t.Errorf("login after the account's expiry: %d %s", a.status, a.body)
	}
	if diff := cmp.Diff([]UserState{{Username: "operator", Status: "expired"}}, h.sim.State().Users); diff != "" {
		t.Errorf("expired user (-want +got):\n%s", diff)
	}

	now := h.clock.Now()
	h.sim.SetUserExpiry(now.Add(time.Hour), now.Add(2*time.Hour))
	if a := h.loginAs("operator", "secret"); a.status != http.StatusOK || a.object(t)["message"] != nil {
		t.Errorf("login after SetUserExpiry: %d %s", a.status, a.body)
	}

	adminHarness := newHarness(t, Config{})
	adminHarness.clock.SetTime(start.Add(365 * 24 * time.Hour))
	if a := adminHarness.loginAs("admin", "admin"); a.status != http.StatusOK || a.object(t)["message"] != nil {
		t.Errorf("admin's login a year on: %d %s", a.status, a.body)
	}
}
