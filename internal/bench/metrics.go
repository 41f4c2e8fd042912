package bench

import (
	"context"
	"time"

	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The reconcilers' own metrics tell the benchmark when a reconcile that changes nothing in
// status (a drift check) is over: there is no status update to watch for.
const (
	// deploymentReconcilesMetric is the OsmDeployment reconciler's histogram, by object.
	deploymentReconcilesMetric = "osmops_reconcile_duration_seconds"
	// clusterReconcilesMetric is controller-runtime's counter of reconciles, by controller.
	clusterReconcilesMetric = "controller_runtime_reconcile_total"
	// apiRequestsMetric is client-go's counter of requests to the API server, of every client
	// of the process.
	apiRequestsMetric = "rest_client_requests_total"
)

// clusterReconcilesLabels select the OsmCluster controller's reconciles.
var clusterReconcilesLabels = map[string]string{"controller": "osmcluster"}

// reconcilePollInterval is how often a wait for a reconcile reads the metrics.
const reconcilePollInterval = 20 * time.Millisecond

func deploymentLabels(namespace, name string) map[string]string {
	return map[string]string{"namespace": namespace, "name": name}
}

// ReconcileCount is how many reconciles a metric counted and, for a histogram, their total
// duration in seconds; Started counts the reconciles begun, where the benchmark knows it.
type ReconcileCount struct {
	Count   uint64
	Seconds float64
	Started int
}

// metricCount sums the series of a counter or histogram whose labels include labels.
func metricCount(name string, labels map[string]string) (ReconcileCount, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return ReconcileCount{}, err
	}
	var total ReconcileCount
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, metric := range family.GetMetric() {
			if !hasLabels(metric, labels) {
				continue
			}
			if h := metric.GetHistogram(); h != nil {
				total.Count += h.GetSampleCount()
				total.Seconds += h.GetSampleSum()
			}
			if c := metric.GetCounter(); c != nil {
				total.Count += uint64(c.GetValue())
			}
		}
	}
	return total, nil
}

func hasLabels(metric *dto.Metric, labels map[string]string) bool {
	matched := 0
	for _, pair := range metric.GetLabel() {
		if value, wanted := labels[pair.GetName()]; wanted && value == pair.GetValue() {
			matched++
		}
	}
	return matched == len(labels)
}

// waitForReconciles waits until the metric has counted at least count reconciles.
func waitForReconciles(ctx context.Context, name string, labels map[string]string, count uint64) error {
	ticker := time.NewTicker(reconcilePollInterval)
	defer ticker.Stop()
	for {
		current, err := metricCount(name, labels)
		if err != nil || current.Count >= count {
			return err
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
