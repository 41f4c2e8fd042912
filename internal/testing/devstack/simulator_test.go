package devstack

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/osmops/osmops/internal/nbisim"
)

// newTestSimulator is a Simulator client of handler, with no process behind it.
func newTestSimulator(t *testing.T, handler http.Handler) *Simulator {
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	return &Simulator{url: server.URL, client: server.Client()}
}

// The client is checked against the simulator's own control API, so that a change of its wire
// format shows up here rather than in the end-to-end tests.
func TestSimulatorClientAgainstTheSimulator(t *testing.T) {
	ctx := boundedContext(t)
	server := nbisim.New(nbisim.Config{VIMAccounts: []nbisim.VIMAccount{{Name: "site1"}}})
	sim := newTestSimulator(t, server)

	version, err := sim.Version(ctx)
	if err != nil || version == "" {
		t.Fatalf("Version() = %q, %v; want a version", version, err)
	}
	stats, err := sim.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantStats := nbisim.Stats{Requests: 1, ReadRequests: 1, Endpoints: []nbisim.EndpointStats{
		{Route: "/osm/version", Method: http.MethodGet, Status: http.StatusOK, Requests: 1},
	}}
	if diff := cmp.Diff(wantStats, stats, cmpopts.IgnoreFields(nbisim.Stats{}, "BytesSent"), cmpopts.IgnoreFields(nbisim.EndpointStats{}, "BytesSent")); diff != "" {
		t.Errorf("Stats() (-want +got):\n%s", diff)
	}
	requests, err := sim.RequestLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(requests) != 1 || requests[0].Path != "/osm/version" || requests[0].Status != http.StatusOK {
		t.Errorf("RequestLog() = %+v, want the one GET /osm/version", requests)
	}

	if err := sim.ResetStats(ctx); err != nil {
		t.Fatal(err)
	}
	if stats, err := sim.Stats(ctx); err != nil || stats.Requests != 0 {
		t.Errorf("Stats() after ResetStats = %+v, %v; want zero", stats, err)
	}
	state, err := sim.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(state.NSInstances) != 0 || len(state.Packages) != 0 {
		t.Errorf("State() = %+v, want an empty OSM", state)
	}

	if err := sim.AddFault(ctx, nbisim.Fault{PathPrefix: "/osm/version", Status: http.StatusServiceUnavailable, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Version(ctx); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("Version() with a 503 fault: error %v, want the 503", err)
	}
	slow := nbisim.Fault{PathPrefix: "/osm/nsd", Latency: 250 * time.Millisecond}
	if err := sim.AddFault(ctx, slow); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]nbisim.Fault{slow}, server.Faults()); diff != "" {
		t.Errorf("faults after AddFault (-want +got):\n%s", diff)
	}
	if err := sim.ClearFaults(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Version(ctx); err != nil {
		t.Errorf("Version() after ClearFaults: %v", err)
	}
}

func TestSimulatorClientReportsErrorAnswers(t *testing.T) {
	sim := newTestSimulator(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":"broken"}`, http.StatusInternalServerError)
	}))
	_, err := sim.Stats(boundedContext(t))
	if err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "broken") {
		t.Errorf("Stats() error = %v, want the status and the answer", err)
	}
}

func TestSimulatorClientFailsOperations(t *testing.T) {
	ctx := boundedContext(t)
	server := nbisim.New(nbisim.Config{})
	sim := newTestSimulator(t, server)

	failure := nbisim.OperationFailure{Operation: "upgrade", NSName: "ldap", Message: "helm upgrade failed", Count: 1}
	if err := sim.FailOperations(ctx, failure); err != nil {
		t.Fatal(err)
	}
	want := []nbisim.OperationFailure{{Operation: "upgrade", NSName: "ldap", State: "FAILED", Message: "helm upgrade failed", Count: 1}}
	if diff := cmp.Diff(want, server.OperationFailures()); diff != "" {
		t.Errorf("operation failures (-want +got):\n%s", diff)
	}
	err := sim.FailOperations(ctx, nbisim.OperationFailure{State: "BROKEN"})
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("FailOperations with a bad state: error %v, want the simulator's 400", err)
	}
}
