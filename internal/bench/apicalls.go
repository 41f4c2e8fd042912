package bench

import (
	"maps"
	"net/http"
	"strings"
	"sync"
)

// apiCalls counts the operator's requests to the API server by verb and resource, so that the
// report shows what an OsmDeployment costs the API server, not only a total.
type apiCalls struct {
	mu     sync.Mutex
	counts map[string]int64
}

func newAPICalls() *apiCalls { return &apiCalls{counts: map[string]int64{}} }

// wrap is a rest.Config transport wrapper.
func (a *apiCalls) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		key := req.Method + " " + resourceOf(req.URL.Path)
		if req.URL.Query().Get("watch") == "true" {
			key = "WATCH " + resourceOf(req.URL.Path)
		}
		a.mu.Lock()
		a.counts[key]++
		a.mu.Unlock()
		return next.RoundTrip(req)
	})
}

// snapshot copies the counts.
func (a *apiCalls) snapshot() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.counts)
}

// since returns the counts grown since before.
func (a *apiCalls) since(before map[string]int64) map[string]int64 {
	grown := map[string]int64{}
	for key, n := range a.snapshot() {
		if d := n - before[key]; d > 0 {
			grown[key] = d
		}
	}
	return grown
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// resourceOf names the resource of an API path: "osmdeployments", "osmdeployments/status",
// "events" (/api/VERSION/... or /apis/GROUP/VERSION/..., then [namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]]).
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) > 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) > 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return path
	}
	if len(parts) > 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) >= 3 {
		return parts[0] + "/" + parts[2]
	}
	return parts[0]
}
