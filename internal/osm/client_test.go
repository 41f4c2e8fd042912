package osm

import (
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewClientURLs(t *testing.T) {
	tests := []struct {
		url      string
		wantBase string
		wantErr  string
	}{
		{url: "https://osm.example.com:9999", wantBase: "https://osm.example.com:9999/osm"},
		{url: "https://osm.example.com:9999/", wantBase: "https://osm.example.com:9999/osm"},
		{url: "http://10.0.0.1:9999", wantBase: "http://10.0.0.1:9999/osm"},
		{url: "https://gateway.example.com/tenants/a/osm/", wantBase: "https://gateway.example.com/tenants/a/osm"},
		{url: "ftp://osm.example.com", wantErr: "the scheme must be http or https"},
		{url: "osm.example.com:9999", wantErr: "the scheme must be http or https"},
		{url: "https://admin:pw123@osm.example.com", wantErr: "credentials belong in the Credentials"},
		{url: "https://", wantErr: "has no host"},
		{url: "https://osm.example.com?x=1", wantErr: "a query or fragment is not allowed"},
		{url: "https://osm example.com", wantErr: "invalid character"},
	}
	for _, test := range tests {
		client, err := NewClient(test.url, testCredentials)
		switch {
		case test.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), test.wantErr) {
				t.Errorf("NewClient(%q) error %v, want %q", test.url, err, test.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "pw123") {
				t.Errorf("NewClient(%q) error shows the URL's password: %v", test.url, err)
			}
		case err != nil:
			t.Errorf("NewClient(%q): %v", test.url, err)
		case client.baseURL.String() != test.wantBase:
			t.Errorf("NewClient(%q) base %q, want %q", test.url, client.baseURL, test.wantBase)
		}
	}
}

func TestClientUsesTheProxyPath(t *testing.T) {
	var paths []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		if r.Method == http.MethodPost {
			writeJSON(w, 200, map[string]any{"id": "t", "expires": 5000, "issued_at": 1000})
			return
		}
		writeJSON(w, 200, []any{})
	}))
	defer server.Close()
	client, err := NewClient(server.URL+"/proxy/nbi", testCredentials)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ListVIMAccounts(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/proxy/nbi/admin/v1/tokens", "/proxy/nbi/admin/v1/vim_accounts"}, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

func TestPasswordIsNeverPrinted(t *testing.T) {
	client, err := NewClient("https://osm.example.com", testCredentials)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, value := range []any{testCredentials, &testCredentials, client} {
			if printed := fmt.Sprintf(format, value); strings.Contains(printed, testPassword) {
				t.Errorf("%s of %T shows the password: %s", format, value, printed)
			}
		}
	}
}

func TestOptionErrors(t *testing.T) {
	tests := []struct {
		name    string
		options []Option
		wantErr string
	}{
		{"nil HTTP client", []Option{WithHTTPClient(nil)}, "nil HTTP client"},
		{"zero timeout", []Option{WithTimeout(0)}, "not a positive duration"},
		{"zero concurrency", []Option{WithMaxConcurrentRequests(0)}, "not positive"},
		{"zero response size", []Option{WithMaxResponseBytes(0)}, "not positive"},
		{"CA bundle without certificates", []Option{WithCABundle([]byte("nothing here"))}, "no PEM certificate"},
		{"TLS options on a client without an http.Transport",
			[]Option{WithHTTPClient(&http.Client{Transport: roundTripperFunc(nil)}), WithInsecureSkipTLSVerify(true)}, "need an *http.Transport"},
	}
	for _, test := range tests {
		if _, err := NewClient("https://osm.example.com", testCredentials, test.options...); err == nil || !strings.Contains(err.Error(), test.wantErr) {
			t.Errorf("%s: error %v, want %q", test.name, err, test.wantErr)
		}
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTLS(t *testing.T) {
	server := httptest.NewUnstartedServer(answer(http.StatusOK, `{"version": "19.0.0", "date": "2025"}`))
	server.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	server.StartTLS()
	defer server.Close()
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})

	t.Run("trusted through the CA bundle", func(t *testing.T) {
		client, err := NewClient(server.URL, testCredentials, WithCABundle(caBundle))
		if err != nil {
			t.Fatal(err)
		}
		if version, err := client.Version(t.Context()); err != nil || version.Version != "19.0.0" {
			t.Errorf("Version = %+v, %v", version, err)
		}
	})
	t.Run("refused without it", func(t *testing.T) {
		client, err := NewClient(server.URL, testCredentials)
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.Version(t.Context())
		if err == nil || IsTransient(err) || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("got %v, want a certificate error that is not transient", err)
		}
	})
	t.Run("insecure", func(t *testing.T) {
		client, err := NewClient(server.URL, testCredentials, WithInsecureSkipTLSVerify(true))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Version(t.Context()); err != nil {
			t.Errorf("Version: %v", err)
		}
	})
	t.Run("the caller's HTTP client is left alone", func(t *testing.T) {
		transport := &http.Transport{}
		own := &http.Client{Transport: transport}
		client, err := NewClient(server.URL, testCredentials, WithHTTPClient(own), WithCABundle(caBundle))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Version(t.Context()); err != nil {
			t.Errorf("Version: %v", err)
		}
		// Transport.Clone itself fills in the HTTP/2 defaults of the original
		// (NextProtos), but its trusted CAs must stay the caller's.
		if own.Transport != transport || transport.TLSClientConfig != nil && transport.TLSClientConfig.RootCAs != nil {
			t.Error("NewClient changed the caller's HTTP client")
		}
	})
}

func TestMaxConcurrentRequests(t *testing.T) {
	const limit, callers = 2, 6
	var inFlight, maxInFlight atomic.Int32
	arrived := make(chan struct{}, callers)
	proceed := make(chan struct{})
	nbi := newFakeNBI(t, func(w http.ResponseWriter, r *http.Request) {
		now := inFlight.Add(1)
		for {
			seen := maxInFlight.Load()
			if now <= seen || maxInFlight.CompareAndSwap(seen, now) {
				break
			}
		}
		arrived <- struct{}{}
		<-proceed
		inFlight.Add(-1)
		answer(http.StatusOK, `{"version": "1"}`)(w, r)
	})
	client := nbi.client(t, WithMaxConcurrentRequests(limit))
	errs := make(chan error, callers)
	for range callers {
		go func() {
			_, err := client.Version(t.Context())
			errs <- err
		}()
	}
	// Let requests finish only once as many as allowed are waiting, so
	// that a missing limit would show as more requests in flight.
	for range limit {
		<-arrived
	}
	for i := range callers {
		proceed <- struct{}{}
		if i+limit < callers {
			<-arrived
		}
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got := maxInFlight.Load(); got > limit {
		t.Errorf("%d requests in flight at once, want at most %d", got, limit)
	}
}

func TestMaxResponseBytes(t *testing.T) {
	nbi := newFakeNBI(t, answer(http.StatusOK, `[{"_id": "a"}, {"_id": "b"}, {"_id": "c"}]`))
	_, err := nbi.client(t, WithMaxResponseBytes(10)).ListVIMAccounts(t.Context())
	var requestError *RequestError
	if !errors.As(err, &requestError) || !strings.Contains(err.Error(), "more than the 10 accepted") {
		t.Errorf("got %v, want a RequestError about the size", err)
	}
}
