package osm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

const (
	testUser     = "admin"
	testPassword = "s3cret-Passw0rd"
	testProject  = "admin"
)

var testCredentials = Credentials{Username: testUser, Password: testPassword, Project: testProject}

// recordedRequest is what the fake NBI received.
type recordedRequest struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// fakeNBI is a small NBI: it hands out tokens ("token-1", "token-2", ...)
// that live tokenLifetime seconds, checks them, and passes the other
// requests to handler.
type fakeNBI struct {
	t       testing.TB
	server  *httptest.Server
	handler http.HandlerFunc

	mutex         sync.Mutex
	tokenRequests int
	validTokens   map[string]bool
	requests      []recordedRequest
	// tokenAnswer, when set, is written instead of a new token.
	tokenAnswer func(w http.ResponseWriter)
}

// tokenLifetime is the lifetime of the fake NBI's tokens, in seconds.
const tokenLifetime = 3600

func newFakeNBI(t testing.TB, handler http.HandlerFunc) *fakeNBI {
	t.Helper()
	nbi := &fakeNBI{t: t, handler: handler, validTokens: map[string]bool{}}
	nbi.server = httptest.NewServer(http.HandlerFunc(nbi.serve))
	t.Cleanup(nbi.server.Close)
	return nbi
}

func (nbi *fakeNBI) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		nbi.t.Errorf("reading the request body: %v", err)
	}
	nbi.mutex.Lock()
	nbi.requests = append(nbi.requests, recordedRequest{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), body})
	nbi.mutex.Unlock()
	if r.URL.Path == "/osm/admin/v1/tokens" && r.Method == http.MethodPost {
		nbi.issueToken(w)
		return
	}
	if r.URL.Path != "/osm/version" && !nbi.isValid(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")) {
		writeOSMError(w, http.StatusUnauthorized, "Invalid Token or Authorization HTTP header")
		return
	}
	if nbi.handler == nil {
		writeOSMError(w, http.StatusNotFound, "no handler")
		return
	}
	nbi.handler(w, r)
}

func (nbi *fakeNBI) issueToken(w http.ResponseWriter) {
	nbi.mutex.Lock()
	nbi.tokenRequests++
	id := fmt.Sprintf("token-%d", nbi.tokenRequests)
	answer := nbi.tokenAnswer
	if answer == nil {
		nbi.validTokens[id] = true
	}
	nbi.mutex.Unlock()
	if answer != nil {
		answer(w)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "_id": id, "issued_at": 1000.5, "expires": 1000.5 + tokenLifetime})
}

// answerTokenRequests makes the NBI answer token requests with answer.
func (nbi *fakeNBI) answerTokenRequests(answer func(w http.ResponseWriter)) {
	nbi.mutex.Lock()
	defer nbi.mutex.Unlock()
	nbi.tokenAnswer = answer
}

func (nbi *fakeNBI) isValid(token string) bool {
	nbi.mutex.Lock()
	defer nbi.mutex.Unlock()
	return nbi.validTokens[token]
}

// revokeAll makes every token issued so far invalid.
func (nbi *fakeNBI) revokeAll() {
	nbi.mutex.Lock()
	defer nbi.mutex.Unlock()
	nbi.validTokens = map[string]bool{}
}

func (nbi *fakeNBI) tokenCount() int {
	nbi.mutex.Lock()
	defer nbi.mutex.Unlock()
	return nbi.tokenRequests
}

// received returns the requests other than token requests.
func (nbi *fakeNBI) received() []recordedRequest {
	nbi.mutex.Lock()
	defer nbi.mutex.Unlock()
	var calls []recordedRequest
	for _, req := range nbi.requests {
		if req.Path != "/osm/admin/v1/tokens" {
			calls = append(calls, req)
		}
	}
	return calls
}

func (nbi *fakeNBI) client(t testing.TB, options ...Option) *Client {
	t.Helper()
	client, err := NewClient(nbi.server.URL, testCredentials, options...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	// The fake stands for an NBI that answered the version check as OSM's does; that an
	// unproven endpoint's words are not shown is TestUnprovenEndpointIsDescribedNotQuoted's.
	client.answeredVersion.Store(true)
	return client
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeOSMError(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, map[string]any{"code": strings.ToUpper(strings.ReplaceAll(http.StatusText(status), " ", "_")), "status": status, "detail": detail})
}

// answer is a handler that always writes status and body.
func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func readSample(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// newFakeClock is a clock that tests move by hand.
func newFakeClock() *testingclock.FakeClock {
	return testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}
