package osm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNewTokenRenewal(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		answer tokenAnswer
		want   time.Duration
		// warned are the fields out of range.
		warned []string
	}{
		{"an hour: renewed 5 minutes before", tokenAnswer{IssuedAt: 1000, Expires: 4600}, 55 * time.Minute, nil},
		{"10 minutes: renewed at 90%", tokenAnswer{IssuedAt: 1000, Expires: 1600}, 9 * time.Minute, nil},
		{"OSM's clock far from ours", tokenAnswer{IssuedAt: 9e9, Expires: 9e9 + 3600}, 55 * time.Minute, nil},
		{"no issued_at: expires read against our clock", tokenAnswer{Expires: Number(now.Add(time.Hour).Unix())}, 55 * time.Minute, nil},
		// Out of range: no answer makes every request log in again, nor keeps a token for years.
		{"expired before issued: a minute", tokenAnswer{IssuedAt: 5000, Expires: 1000}, 54 * time.Second, []string{"expires"}},
		{"expired already by our clock: a minute", tokenAnswer{Expires: 1000}, 54 * time.Second, []string{"expires"}},
		{"a century: a day", tokenAnswer{IssuedAt: 1000, Expires: 1000 + 100*365*86400}, 24*time.Hour - 5*time.Minute, []string{"expires"}},
		{"issued_at no time: expires read against our clock", tokenAnswer{IssuedAt: Number(math.NaN()), Expires: Number(now.Add(time.Hour).Unix())},
			55 * time.Minute, []string{"issued_at"}},
	}
	for _, test := range tests {
		expires, ok := answerTime(test.answer.Expires)
		if !ok {
			t.Fatalf("%s: expires out of range", test.name)
		}
		var warned []string
		fresh := newToken(test.answer, expires, now, func(field, _ string) { warned = append(warned, field) })
		if got := fresh.renewAt.Sub(now); got != test.want {
			t.Errorf("%s: renewed after %v, want %v", test.name, got, test.want)
		}
		if diff := cmp.Diff(test.warned, warned); diff != "" {
			t.Errorf("%s: fields warned of (-want +got):\n%s", test.name, diff)
		}
	}
}

func bearerOf(req recordedRequest) string {
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
}

func TestTokenIsSharedAndRenewedBeforeExpiry(t *testing.T) {
	nbi := newFakeNBI(t, answer(http.StatusOK, `[]`))
	clock := newFakeClock()
	client := nbi.client(t, WithClock(clock.Now))
	steps := []struct {
		advance    time.Duration
		wantTokens int
	}{
		{0, 1},
		{54 * time.Minute, 1},
		{2 * time.Minute, 2}, // 56 minutes into a 60-minute token
		{30 * time.Minute, 2},
	}
	for i, step := range steps {
		clock.Step(step.advance)
		if _, err := client.ListVIMAccounts(t.Context()); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := nbi.tokenCount(); got != step.wantTokens {
			t.Errorf("step %d: %d token requests, want %d", i, got, step.wantTokens)
		}
	}
	var used []string
	for _, req := range nbi.received() {
		used = append(used, bearerOf(req))
	}
	if diff := cmp.Diff([]string{"token-1", "token-1", "token-2", "token-2"}, used); diff != "" {
		t.Errorf("tokens used (-want +got):\n%s", diff)
	}
}

func TestUnauthorizedIsRetriedOnceWithANewToken(t *testing.T) {
	nbi := newFakeNBI(t, answer(http.StatusCreated, `{"id": "ns-1", "nslcmop_id": "op-1"}`))
	client := nbi.client(t)
	mustAuthenticate(t, client)
	nbi.revokeAll()
	created, err := client.CreateNSInstance(t.Context(), NSInstanceCreate{Name: "ldap", NsdID: "n", VIMAccountID: "v"})
	if err != nil || created.ID != "ns-1" {
		t.Fatalf("CreateNSInstance = %+v, %v", created, err)
	}
	calls := nbi.received()
	if len(calls) != 2 || bearerOf(calls[0]) != "token-1" || bearerOf(calls[1]) != "token-2" {
		t.Fatalf("calls: %+v", calls)
	}
	if string(calls[0].Body) != string(calls[1].Body) || len(calls[1].Body) == 0 {
		t.Errorf("the retry sent %q, the first attempt %q", calls[1].Body, calls[0].Body)
	}
}

func TestSecondUnauthorizedIsReturned(t *testing.T) {
	nbi := newFakeNBI(t, answer(http.StatusUnauthorized, `{"code": "UNAUTHORIZED", "status": 401, "detail": "Access denied"}`))
	client := nbi.client(t)
	_, err := client.ListNSInstances(t.Context())
	var apiError *APIError
	if !errors.As(err, &apiError) || !IsUnauthorized(err) || apiError.Detail != "Access denied" {
		t.Fatalf("got %v, want the 401", err)
	}
	if calls, tokens := len(nbi.received()), nbi.tokenCount(); calls != 2 || tokens != 2 {
		t.Errorf("%d calls and %d token requests, want 2 and 2", calls, tokens)
	}
}

func TestConcurrentCallersShareOneTokenRequest(t *testing.T) {
	nbi := newFakeNBI(t, answer(http.StatusOK, `[]`))
	client := nbi.client(t)
	start := make(chan struct{})
	errs := make(chan error, 100)
	var callers sync.WaitGroup
	for range 100 {
		callers.Go(func() {
			<-start
			_, err := client.ListNSDescriptors(t.Context())
			errs <- err
		})
	}
	close(start)
	callers.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := nbi.tokenCount(); got != 1 {
		t.Errorf("%d token requests, want 1", got)
	}
}

func mustAuthenticate(t *testing.T, client *Client) {
	t.Helper()
	if err := client.Authenticate(t.Context()); err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
}

func TestAuthenticationFailures(t *testing.T) {
	tests := []struct {
		name          string
		tokenAnswer   http.HandlerFunc
		unauthorized  bool
		transient     bool
		wantInMessage string
	}{
		{"password change", answer(http.StatusOK, `{"id": "x", "message": "change_password", "user_id": "u"}`), true, false,
			"OSM wants the password changed"},
		{"bad credentials echoed by the NBI", answer(http.StatusUnauthorized,
			`{"code": "UNAUTHORIZED", "status": 401, "detail": "wrong password '`+testPassword+`' for admin"}`), true, false,
			`user "admin" in project "admin" failed: OSM refused the username, password or project`},
		{"no expiry", answer(http.StatusOK, `{"id": "x"}`), true, false, "the token answer has no expiry"},
		{"no id", answer(http.StatusOK, `{"expires": 5000, "issued_at": 1000}`), false, false, "the token answer has no id"},
		{"server error", answer(http.StatusServiceUnavailable, `{"code": "SERVICE_UNAVAILABLE", "status": 503, "detail": "db down"}`),
			false, true, "503 SERVICE_UNAVAILABLE: a 67-byte application/json answer, not shown"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			nbi := newFakeNBI(t, nil)
			nbi.answerTokenRequests(func(w http.ResponseWriter) { test.tokenAnswer(w, nil) })
			err := nbi.client(t).Authenticate(t.Context())
			if err == nil {
				t.Fatal("Authenticate succeeded")
			}
			if IsUnauthorized(err) != test.unauthorized || IsTransient(err) != test.transient {
				t.Errorf("IsUnauthorized %v IsTransient %v, want %v %v", IsUnauthorized(err), IsTransient(err), test.unauthorized, test.transient)
			}
			if !strings.Contains(err.Error(), test.wantInMessage) {
				t.Errorf("got %q, want it to contain %q", err, test.wantInMessage)
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("the error shows the password: %q", err)
			}
		})
	}
}

// OSM locks an account after a few failed logins: once OSM refused the credentials, no call
// logs in again until AllowLogin, and each fails with the refusal.
func TestARefusedLoginIsNotRepeated(t *testing.T) {
	nbi := newFakeNBI(t, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, []any{}) })
	nbi.answerTokenRequests(func(w http.ResponseWriter) {
		writeOSMError(w, http.StatusUnauthorized, "Failed to login as the account is locked due to MANY FAILED ATTEMPTS")
	})
	client := nbi.client(t)
	first := client.Authenticate(t.Context())
	_, listErr := client.ListVIMAccounts(t.Context())
	for _, err := range []error{first, client.Authenticate(t.Context()), listErr} {
		// Described, not quoted: an endpoint that never accepted a login has not proved it
		// is an OSM.
		if !IsUnauthorized(err) || !strings.Contains(fmt.Sprint(err), "401 UNAUTHORIZED") {
			t.Errorf("got %v, want the refusal", err)
		}
	}
	if got := nbi.tokenCount(); got != 1 {
		t.Fatalf("%d token requests after a refusal, want 1", got)
	}

	nbi.answerTokenRequests(nil)
	client.AllowLogin()
	mustAuthenticate(t, client)
	if got := nbi.tokenCount(); got != 2 {
		t.Errorf("%d token requests, want 2: AllowLogin lets the Client log in again", got)
	}
}

func TestAuthenticateGetsAFreshToken(t *testing.T) {
	nbi := newFakeNBI(t, nil)
	client := nbi.client(t)
	mustAuthenticate(t, client)
	mustAuthenticate(t, client)
	if got := nbi.tokenCount(); got != 2 {
		t.Errorf("%d token requests, want 2", got)
	}
	nbi.mutex.Lock()
	tokenBody := nbi.requests[0].Body
	nbi.mutex.Unlock()
	checkBody(t, tokenBody, `{"username": "admin", "password": "`+testPassword+`", "project_id": "admin"}`, nil)
}

func TestCancelledWhileWaitingForAToken(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{})
	nbi := newFakeNBI(t, answer(http.StatusOK, `[]`))
	nbi.answerTokenRequests(func(w http.ResponseWriter) {
		close(arrived)
		<-release
		answer(http.StatusOK, `{"id": "late", "expires": 5000, "issued_at": 1000}`)(w, nil)
	})
	client := nbi.client(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() {
		_, err := client.ListVIMAccounts(ctx)
		done <- err
	}()
	<-arrived
	cancel()
	err := <-done
	close(release)
	if !errors.Is(err, context.Canceled) || IsTransient(err) {
		t.Errorf("got %v, want a cancellation that is not transient", err)
	}
}
