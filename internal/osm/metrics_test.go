package osm

import (
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gatheredMetric returns the metric of the registry with that name and labels, or nil.
func gatheredMetric(t *testing.T, registry *prometheus.Registry, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, metric := range family.GetMetric() {
			matches := 0
			for _, pair := range metric.GetLabel() {
				if labels[pair.GetName()] == pair.GetValue() {
					matches++
				}
			}
			if matches == len(labels) && len(metric.GetLabel()) == len(labels) {
				return metric
			}
		}
	}
	return nil
}

func TestMetricsAreRecordedPerRoute(t *testing.T) {
	const body = `{"_id": "ns-secret-id", "name": "ldap"}`
	nbi := newFakeNBI(t, answer(http.StatusOK, body))
	const cluster = "tenant/osm"
	registry := prometheus.NewRegistry()
	client := nbi.client(t, WithMetrics(NewMetrics(registry), cluster))
	if _, err := client.GetNSInstance(t.Context(), "ns-secret-id"); err != nil {
		t.Fatal(err)
	}
	get := map[string]string{"cluster": cluster, "method": "GET", "route": "/nslcm/v1/ns_instances_content/{id}"}
	withCode := map[string]string{"code": "200"}
	maps.Copy(withCode, get)
	if metric := gatheredMetric(t, registry, "osmops_nbi_requests_total", withCode); metric.GetCounter().GetValue() != 1 {
		t.Errorf("requests: %v", metric)
	}
	if metric := gatheredMetric(t, registry, "osmops_nbi_request_duration_seconds", withCode); metric.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("durations: %v", metric)
	}
	if metric := gatheredMetric(t, registry, "osmops_nbi_response_bytes_total", get); metric.GetCounter().GetValue() != float64(len(body)) {
		t.Errorf("response bytes: %v", metric)
	}
	token := map[string]string{"cluster": cluster, "method": "POST", "route": "/admin/v1/tokens"}
	if metric := gatheredMetric(t, registry, "osmops_nbi_request_bytes_total", token); metric.GetCounter().GetValue() == 0 {
		t.Errorf("request bytes of the token request: %v", metric)
	}
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range families {
		if strings.Contains(family.String(), "ns-secret-id") {
			t.Errorf("metric %s has a raw id in a label", family.GetName())
		}
	}
}

func TestMetricsCountFailedRequests(t *testing.T) {
	nbi := newFakeNBI(t, nil)
	const cluster = "tenant/osm"
	registry := prometheus.NewRegistry()
	client := nbi.client(t, WithMetrics(NewMetrics(registry), cluster))
	nbi.server.Close()
	if _, err := client.Version(t.Context()); err == nil {
		t.Fatal("Version succeeded against a closed server")
	}
	labels := map[string]string{"cluster": cluster, "method": "GET", "route": "/version", "code": "error"}
	if metric := gatheredMetric(t, registry, "osmops_nbi_requests_total", labels); metric.GetCounter().GetValue() != 1 {
		t.Errorf("failed requests: %v", metric)
	}
}

// An NBI answering every request with another status code makes no more series than the fixed
// set of `code` values.
func TestMetricsCodesAreAFixedSet(t *testing.T) {
	var mu sync.Mutex
	next := 100
	nbi := newFakeNBI(t, func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		status := next
		next++
		mu.Unlock()
		w.WriteHeader(status)
	})
	registry := prometheus.NewRegistry()
	client := nbi.client(t, WithMetrics(NewMetrics(registry), "tenant/osm"))
	for range 500 { // 100 to 599: every code an HTTP answer can have
		_, _ = client.GetNSInstance(t.Context(), "id")
	}
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, family := range families {
		if family.GetName() == "osmops_nbi_requests_total" {
			series = len(family.GetMetric())
		}
	}
	// At most every known code, the five classes, "other" and "error", whatever was answered.
	if limit := len(knownStatuses) + 5 + 2; series > limit {
		t.Errorf("%d series of osmops_nbi_requests_total for 500 codes, want at most %d", series, limit)
	}
	for status, want := range map[int]string{0: "error", 200: "200", 422: "422", 299: "2xx", 302: "3xx", 418: "4xx", 599: "5xx", 600: "other", 99: "other"} {
		if got := statusLabel(status); got != want {
			t.Errorf("statusLabel(%d) = %q, want %q", status, got, want)
		}
	}
}
