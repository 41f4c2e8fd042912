package nbisim

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/osmops/osmops/internal/osm"
)

// What a client sends through the recording proxy is counted and logged as the simulator counts
// and logs what it serves itself: by route template, with the bytes of both bodies.
func TestRecordingProxyCountsAsTheSimulator(t *testing.T) {
	sim := New(Config{Username: "admin", Password: "secret-password"})
	upstream := httptest.NewServer(sim)
	defer upstream.Close()
	target, _ := url.Parse(upstream.URL)
	proxy := NewRecordingProxy(target, 16)
	front := httptest.NewServer(proxy)
	defer front.Close()

	nbi, err := osm.NewClient(front.URL, osm.Credentials{Username: "admin", Password: "secret-password", Project: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nbi.ListNSInstances(t.Context()); err != nil {
		t.Fatal(err)
	}
	ignore := cmpopts.IgnoreFields(RequestRecord{}, "Time", "Duration")
	if diff := cmp.Diff(sim.RequestLog(), proxy.RequestLog(), ignore); diff != "" {
		t.Errorf("request log (-simulator +proxy):\n%s", diff)
	}
	if diff := cmp.Diff(sim.Stats(), proxy.Stats()); diff != "" {
		t.Errorf("stats (-simulator +proxy):\n%s", diff)
	}
	if got := proxy.Stats(); got.Requests != 2 || got.SessionRequests != 1 || got.BytesSent == 0 || got.BytesReceived == 0 {
		t.Errorf("stats %+v: want a log in and a list, with both bodies counted", got)
	}
	proxy.ResetStats()
	if got := proxy.RequestLog(); len(got) != 0 {
		t.Errorf("log after a reset: %v", got)
	}
	if got := proxy.Stats().Endpoints; len(got) != 0 {
		t.Errorf("endpoints after a reset: %v", got)
	}
}
