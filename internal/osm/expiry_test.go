package osm_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
)

// TestUserExpiry: the Client reads when OSM expires its password and account from its own user
// record, whose id the login named; admin's never expire, and before a login nothing is asked.
func TestUserExpiry(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, username string
		want           osm.UserExpiry
	}{
		{"a user other than admin", "operator", osm.UserExpiry{
			PasswordExpires: start.Add(30 * 24 * time.Hour), AccountExpires: start.Add(90 * 24 * time.Hour)}},
		{"admin", "admin", osm.UserExpiry{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := testingclock.NewFakeClock(start)
			sim := nbisim.New(nbisim.Config{Username: tc.username, Password: "Right-passw0rd", Clock: clock.Now})
			server := httptest.NewServer(sim)
			t.Cleanup(server.Close)
			client, err := osm.NewClient(server.URL, osm.Credentials{Username: tc.username, Password: "Right-passw0rd", Project: "admin"}, osm.WithClock(clock.Now))
			noError(t, err)

			expiry, err := client.UserExpiry(t.Context())
			noError(t, err)
			if expiry != (osm.UserExpiry{}) || sim.Stats().Requests != 0 {
				t.Errorf("before a login: %+v, %d requests", expiry, sim.Stats().Requests)
			}
			noError(t, client.Authenticate(t.Context()))
			expiry, err = client.UserExpiry(t.Context())
			noError(t, err)
			if diff := cmp.Diff(tc.want, expiry); diff != "" {
				t.Errorf("expiry (-want +got):\n%s", diff)
			}
			var reads int64
			for _, e := range sim.Stats().Endpoints {
				if e.Method == http.MethodGet && e.Status == http.StatusOK {
					reads += e.Requests
				}
			}
			if reads != 1 {
				t.Errorf("%d reads, want 1 (the user's record)", reads)
			}
		})
	}
}

// TestUserExpiryOfARefusedRecord: an OSM whose role refuses the user its own record (401) is
// asked once; the refusal renews no token, logs in no more, and leaves the expiry unknown.
func TestUserExpiryOfARefusedRecord(t *testing.T) {
	var refusals atomic.Int32
	sim := nbisim.New(nbisim.Config{Username: "operator", Password: "Right-passw0rd"})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/admin/v1/users/") {
			refusals.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":"UNAUTHORIZED","status":401,"detail":"Access denied: lack of permissions."}`))
			return
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(server.Close)
	client, err := osm.NewClient(server.URL, osm.Credentials{Username: "operator", Password: "Right-passw0rd", Project: "admin"})
	noError(t, err)
	noError(t, client.Authenticate(t.Context()))
	for range 3 {
		expiry, err := client.UserExpiry(t.Context())
		noError(t, err)
		if expiry != (osm.UserExpiry{}) {
			t.Errorf("expiry %+v, want unknown", expiry)
		}
	}
	if got := refusals.Load(); got != 1 {
		t.Errorf("%d reads of the user's record, want 1", got)
	}
	if sessions := sim.Stats().SessionRequests; sessions != 1 {
		t.Errorf("%d token requests, want 1 (the login)", sessions)
	}
}
