//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/osmops/osmops/internal/testing/monitoring"
)

var _ = Describe("Monitoring", func() {
	// Every metric that the alerts and the dashboard of config/monitoring query is one the running
	// operator serves on /metrics once it has applied a revision, or one kube-state-metrics exports
	// with the layer's configuration.
	It("exports every metric the monitoring queries use", func() {
		t := GinkgoTB()
		ctx, _, g := bootstrap(t)
		layer, err := monitoring.Read()
		g.Expect(err).NotTo(HaveOccurred())
		served, err := servedMetrics(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", stack.Ports().OperatorMetrics))
		g.Expect(err).NotTo(HaveOccurred())
		for _, q := range layer.Queries {
			for _, name := range q.MetricNames() {
				if !slices.Contains(layer.StateMetrics, name) {
					g.Expect(served).To(HaveKey(name), "%s queries %s, which the operator does not serve", q.Where, name)
				}
			}
		}
	})
})

// servedMetrics returns the names of the series a Prometheus text exposition at url holds
// (histograms as their _bucket, _sum and _count series, as queries name them).
func servedMetrics(ctx context.Context, url string) (map[string]bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	names := map[string]bool{}
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		line := lines.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if end := strings.IndexAny(line, "{ "); end > 0 {
			names[line[:end]] = true
		}
	}
	return names, lines.Err()
}
