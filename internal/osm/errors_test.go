package osm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
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
		{429, `slow down`, "", "slow down", "OSM NBI GET /osm/nslcm/v1/ns_instances_content: 429 TOO_MANY_REQUESTS: slow down", nil, true},
		{500, `{"code": "INTERNAL_SERVER_ERROR", "status": 500, "detail": "boom"}`, "INTERNAL_SERVER_ERROR", "boom", "", nil, true},
		{502, "<html>\n<body>Bad\tGateway\x00\x07</body>\n</html>", "", "<html> <body>Bad Gateway??</body> </html>",
			"OSM NBI GET /osm/nslcm/v1/ns_instances_content: 502 BAD_GATEWAY: <html> <body>Bad Gateway??</body> </html>", nil, true},
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

func TestLongErrorBodyIsCutShort(t *testing.T) {
	nbi := newFakeNBI(t, answer(http.StatusBadGateway, strings.Repeat("é\x01", 1<<20)))
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
	got := newAPIError("POST", "/osm/admin/v1/tokens", 400, []byte(`{"code": "BAD_REQUEST", "detail": "bad input pw=hunter2 tok=abc"}`), "hunter2", "", "abc")
	if got.Detail != "bad input pw=[redacted] tok=[redacted]" {
		t.Errorf("detail %q", got.Detail)
	}
}
