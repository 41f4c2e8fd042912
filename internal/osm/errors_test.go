package osm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/go-logr/logr/funcr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/osmops/osmops/internal/pyjson"
)

func TestAPIErrors(t *testing.T) {
	tests := []struct {
		status        int
		body          string
		wantCode      string
		wantDetail    string
		wantMessage   string
		is            func(error) bool
		wantTransient bool
	}{
		{409, `{"code": "CONFLICT", "status": 409, "detail": "vnfd with id 'openldap_knf' already exists for this project"}`,
			"CONFLICT", "vnfd with id 'openldap_knf' already exists for this project",
			"OSM NBI GET /osm/nslcm/v1/ns_instances_content: 409 CONFLICT: vnfd with id 'openldap_knf' already exists for this project",
			IsConflict, false},
		{404, `{"code": "NOT_FOUND", "status": 404, "detail": "not found"}`, "NOT_FOUND", "not found", "", IsNotFound, false},
		{400, `{"code": "BAD_REQUEST", "status": 400, "detail": "No k8scluster"}`, "BAD_REQUEST", "No k8scluster", "", IsBadRequest, false},
		{422, `{"code": "UNPROCESSABLE_ENTITY", "status": 422, "detail": "Format error"}`, "UNPROCESSABLE_ENTITY", "Format error", "",
			IsUnprocessable, false},
		{429, `slow down`, "", "a 9-byte application/json answer, not OSM's error format",
			"OSM NBI GET /osm/nslcm/v1/ns_instances_content: 429 TOO_MANY_REQUESTS: a 9-byte application/json answer, not OSM's error format", nil, true},
		{500, `{"code": "INTERNAL_SERVER_ERROR", "status": 500, "detail": "boom"}`, "INTERNAL_SERVER_ERROR", "boom", "", nil, true},
		{502, "<html>\n<body>Bad\tGateway\x00\x07</body>\n</html>", "", "a 41-byte application/json answer, not OSM's error format",
			"OSM NBI GET /osm/nslcm/v1/ns_instances_content: 502 BAD_GATEWAY: a 41-byte application/json answer, not OSM's error format", nil, true},
		{503, ``, "", "", "OSM NBI GET /osm/nslcm/v1/ns_instances_content: 503 SERVICE_UNAVAILABLE", nil, true},
	}
	for _, test := range tests {
		t.Run(fmt.Sprint(test.status), func(t *testing.T) {
			nbi := newFakeNBI(t, answer(test.status, test.body))
			_, err := nbi.client(t).ListNSInstances(t.Context(), "ldap")
			var apiError *APIError
			if !errors.As(err, &apiError) {
				t.Fatalf("got %v, want an *APIError", err)
			}
			want := APIError{StatusCode: test.status, Code: test.wantCode, Detail: test.wantDetail, Method: "GET", Path: "/osm/nslcm/v1/ns_instances_content"}
			if *apiError != want {
				t.Errorf("got %+v, want %+v", *apiError, want)
			}
			if test.wantMessage != "" && err.Error() != test.wantMessage {
				t.Errorf("message %q, want %q", err, test.wantMessage)
			}
			if test.is != nil && !test.is(fmt.Errorf("wrapped: %w", err)) {
				t.Errorf("the Is helper does not recognise %v", err)
			}
			if IsTransient(err) != test.wantTransient {
				t.Errorf("IsTransient = %v, want %v", IsTransient(err), test.wantTransient)
			}
		})
	}
}

func TestIsHelpersTellStatusesApart(t *testing.T) {
	helpers := map[string]func(error) bool{
		"IsNotFound": IsNotFound, "IsConflict": IsConflict, "IsUnauthorized": IsUnauthorized,
		"IsUnprocessable": IsUnprocessable, "IsBadRequest": IsBadRequest,
	}
	statuses := map[string]int{
		"IsNotFound": 404, "IsConflict": 409, "IsUnauthorized": 401, "IsUnprocessable": 422, "IsBadRequest": 400,
	}
	for name, helper := range helpers {
		for otherName, status := range statuses {
			err := &APIError{StatusCode: status}
			if got := helper(err); got != (name == otherName) {
				t.Errorf("%s(%d) = %v", name, status, got)
			}
		}
		if helper(nil) || helper(errors.New("plain")) {
			t.Errorf("%s is true for a non-API error", name)
		}
	}
}

func TestLongErrorDetailIsCutShort(t *testing.T) {
	nbi := newFakeNBI(t, answer(http.StatusBadGateway, `{"code": "BAD_GATEWAY", "detail": "`+strings.Repeat("é\u0001", 1<<12)+`"}`))
	_, err := nbi.client(t).ListVIMAccounts(t.Context())
	var apiError *APIError
	if !errors.As(err, &apiError) {
		t.Fatalf("got %v", err)
	}
	if n := len([]rune(apiError.Detail)); n > maxDetailRunes+3 {
		t.Errorf("detail has %d runes", n)
	}
	if strings.ContainsFunc(apiError.Detail, func(r rune) bool { return !unicode.IsPrint(r) }) {
		t.Errorf("detail %q has unprintable characters", apiError.Detail)
	}
}

// What an answer that is not OSM's error format says is not shown: a tenant pointing its
// OsmCluster at an internal service must not read that service's answers in its status.
func TestOtherErrorBodiesAreDescribedNotQuoted(t *testing.T) {
	nbi := newFakeNBI(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html>internal admin console: secret-token-1234</html>"))
	})
	_, err := nbi.client(t).ListVIMAccounts(t.Context())
	want := "OSM NBI GET /osm/admin/v1/vim_accounts: 502 BAD_GATEWAY: a 54-byte text/html answer, not OSM's error format"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestSuccessWithABodyThatIsNotTheJSONExpected(t *testing.T) {
	tests := []struct{ name, body string }{
		{"not JSON", `<html>oops</html>`},
		{"an object for a list", `{"a": 1}`},
		{"empty", ``},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			nbi := newFakeNBI(t, answer(http.StatusOK, test.body))
			_, err := nbi.client(t).ListNSInstances(t.Context())
			var requestError *RequestError
			if !errors.As(err, &requestError) || IsTransient(err) || !strings.Contains(err.Error(), "the 200 answer is not the JSON expected") {
				t.Errorf("got %v, want a RequestError about the JSON", err)
			}
		})
	}
}

func TestTransportErrors(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		nbi := newFakeNBI(t, nil)
		client := nbi.client(t)
		nbi.server.Close()
		_, err := client.Version(t.Context())
		var requestError *RequestError
		if !errors.As(err, &requestError) || !IsTransient(err) || requestError.Path != "/osm/version" {
			t.Errorf("got %#v, want a transient RequestError", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		nbi := newFakeNBI(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		_, err := nbi.client(t, WithTimeout(50*time.Millisecond)).Version(t.Context())
		if !errors.Is(err, context.DeadlineExceeded) || !IsTransient(err) {
			t.Errorf("got %v, want a transient timeout", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		nbi := newFakeNBI(t, answer(http.StatusOK, `{}`))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := nbi.client(t).Version(ctx)
		if !errors.Is(err, context.Canceled) || IsTransient(err) {
			t.Errorf("got %v, want a cancellation that is not transient", err)
		}
	})
}

func TestSecretsAreRedactedFromDetails(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	got := newAPIError("POST", "/osm/admin/v1/tokens", 400, "application/json",
		[]byte(`{"code": "BAD_REQUEST", "detail": "bad input pw=hunter2x tok=`+token+`"}`), true, "hunter2x", "", token)
	if got.Detail != "bad input pw=[redacted] tok=[redacted]" {
		t.Errorf("detail %q", got.Detail)
	}
}

// A password is never shown, whatever its characters and however the NBI echoes it: as is,
// escaped for JSON by Go or by Python, escaped for a URL, with its white space collapsed, or
// at the end of a long detail.
func TestHostilePasswordsAreRedacted(t *testing.T) {
	passwords := []string{
		`p&ss<w>rd"\x`, "tab\tbed-pass", "two  spaces", "unicodé-密码", strings.Repeat("long-", 80),
		"new\nline-pass",
	}
	for _, password := range passwords {
		escapedGo, _ := json.Marshal(password)
		forms := map[string]string{
			"as is":               password,
			"Go JSON":             string(escapedGo[1 : len(escapedGo)-1]),
			"Python JSON":         pyjsonEscaped(password),
			"URL":                 url.QueryEscape(password),
			"collapsed":           strings.Join(strings.Fields(password), " "),
			"past the detail cut": strings.Repeat("x", maxDetailRunes-5) + password,
		}
		for name, echoed := range forms {
			t.Run(fmt.Sprintf("%.12s %s", password, name), func(t *testing.T) {
				body, _ := json.Marshal(map[string]any{"code": "UNAUTHORIZED", "status": 401, "detail": "wrong password " + echoed})
				err := newAPIError("POST", "/osm/admin/v1/tokens", 401, "application/json", body, true, password)
				// The start of any form of the password: a cut in its middle would show it.
				for _, form := range []string{password, forms["Go JSON"], forms["Python JSON"], forms["URL"], forms["collapsed"]} {
					if strings.Contains(err.Error(), form[:4]) {
						t.Errorf("%q shows %q", err.Error(), form[:4])
					}
				}
				if name != "past the detail cut" && !strings.Contains(err.Error(), "[redacted]") {
					t.Errorf("%q: nothing redacted", err.Error())
				}
			})
		}
	}
}

// The NBI never redirects: a redirect is an error that names only where it points, and
// nothing (the login's password, the token) is sent there.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var reached atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	t.Cleanup(elsewhere.Close)
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, what := range []string{"login", "list"} {
			t.Run(fmt.Sprintf("%d %s", status, what), func(t *testing.T) {
				target := strings.Replace(elsewhere.URL, "http://", "http://user:pw@", 1) + "/internal?key=secret-value"
				redirect := func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, status) }
				nbi := newFakeNBI(t, redirect)
				if what == "login" {
					nbi.answerTokenRequests(func(w http.ResponseWriter) { redirect(w, httptest.NewRequest("POST", "/", nil)) })
				}
				_, err := nbi.client(t).ListVIMAccounts(t.Context())
				want := fmt.Sprintf("a redirect to %s: not followed", elsewhere.URL)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("got %v, want %q", err, want)
				}
				if strings.Contains(err.Error(), "secret-value") || strings.Contains(err.Error(), "user:pw") {
					t.Errorf("%q shows the redirect's query or user", err)
				}
				if reached.Load() != 0 {
					t.Errorf("the redirect's target received %d requests", reached.Load())
				}
			})
		}
	}
}

// An answer that is small by nature (a login, the version, an error) is bounded far below a
// list's bound, and one announced larger than its bound is not read at all.
func TestAnswersAreBoundedByKind(t *testing.T) {
	huge := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"id": "`))
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 16 { // 1 MiB, without Content-Length: streamed until the client stops
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
	nbi := newFakeNBI(t, nil)
	nbi.answerTokenRequests(huge)
	err := nbi.client(t).Authenticate(t.Context())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("larger than %d bytes", maxSmallAnswerBytes)) {
		t.Errorf("a 1 MiB login answer: got %v", err)
	}

	announced := newFakeNBI(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(1<<30))
		w.WriteHeader(http.StatusOK)
	})
	_, err = announced.client(t, WithMaxResponseBytes(1<<20)).ListVIMAccounts(t.Context())
	if err == nil || !strings.Contains(err.Error(), "announces 1073741824 bytes, more than the 1048576 accepted: not read") {
		t.Errorf("a list announced at 1 GiB: got %v", err)
	}
}

// pyjsonEscaped is a password as OSM's Python code echoes it in JSON.
func pyjsonEscaped(s string) string {
	quoted := pyjson.Quote(s)
	return quoted[1 : len(quoted)-1]
}

// The body of a refused request goes to the debug log, which status and events never see:
// redacted, bounded, and nothing of it at the default level.
func TestRefusedBodiesGoToTheDebugLogRedacted(t *testing.T) {
	passwordStart := testPassword[:4]
	tests := []struct {
		name, body, want string
	}{
		{"an echo of the password and token", "<html>proxy: " + testPassword + " and Bearer token-1</html>",
			`"body"="<html>proxy: [redacted] and Bearer [redacted]</html>"`},
		{"the start of the password at the cut", strings.Repeat("x", maxSmallAnswerBytes+1-8) + testPassword, ` [cut]"`},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			nbi := newFakeNBI(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusBadGateway)
				_, _ = w.Write([]byte(test.body))
			})
			client := nbi.client(t)
			for verbosity, wantLines := range []int{0, 1} {
				var lines []string
				logger := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: verbosity})
				_, err := client.ListVIMAccounts(log.IntoContext(t.Context(), logger))
				if strings.Contains(err.Error(), "proxy") {
					t.Errorf("the error quotes the body: %v", err)
				}
				if len(lines) != wantLines {
					t.Fatalf("at verbosity %d, %d lines logged: %q", verbosity, len(lines), lines)
				}
				for _, line := range lines {
					if !strings.Contains(line, test.want) || strings.Contains(line, passwordStart) {
						t.Errorf("logged %.200q ... %.200q, want %q and no %q", line, line[max(0, len(line)-200):], test.want, passwordStart)
					}
					if len(line) > 2*maxSmallAnswerBytes {
						t.Errorf("logged %d bytes", len(line))
					}
				}
			}
		})
	}
}

// An endpoint that is not an OSM NBI, here an internal service answering OSM's error shape,
// has its error bodies described, never quoted, until it answered the version check as OSM's
// NBI does and accepted a login; then OSM's words are shown.
func TestUnprovenEndpointIsDescribedNotQuoted(t *testing.T) {
	const inner = "internal secret thing"
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"detail": inner})
	}))
	t.Cleanup(service.Close)
	client, err := NewClient(service.URL, testCredentials)
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"login":   func() error { return client.Authenticate(t.Context()) },
		"version": func() error { _, err := client.Version(t.Context()); return err },
		"list":    func() error { _, err := client.ListVIMAccounts(t.Context()); return err },
	} {
		err := call()
		if err == nil || strings.Contains(err.Error(), inner) || !strings.Contains(err.Error(), "not yet proved it is an OSM NBI") {
			t.Errorf("%s: got %v, want the answer described, not quoted", name, err)
		}
	}

	nbi := newFakeNBI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/osm/version" {
			writeJSON(w, http.StatusOK, map[string]any{"version": "19.0.0", "date": "2025-06-01"})
			return
		}
		writeOSMError(w, http.StatusBadRequest, inner)
	})
	proving, err := NewClient(nbi.server.URL, testCredentials)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := proving.ListVIMAccounts(t.Context()); err == nil || strings.Contains(err.Error(), inner) {
		t.Errorf("after a login only: got %v, want the answer described", err)
	}
	if _, err := proving.Version(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := proving.ListVIMAccounts(t.Context()); err == nil || !strings.Contains(err.Error(), inner) {
		t.Errorf("after the version check and a login: got %v, want OSM's detail", err)
	}
}
