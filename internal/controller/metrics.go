package controller

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
)

var (
	reconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "osmops_reconcile_duration_seconds",
		Help:    "Duration of OsmDeployment reconciles.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 14),
	}, []string{"namespace", "name"})
	nsInstances = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "osmops_ns_instances",
		Help: "NS instances owned by an OsmDeployment, by state.",
	}, []string{"namespace", "name", "state"})
	operations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "osmops_operations_total",
		Help: "OSM LCM operations the operator waited for, by type and outcome.",
	}, []string{"type", "outcome"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(reconcileDuration, nsInstances, operations)
}

// instanceStates are the states reported by the osmops_ns_instances gauge.
var instanceStates = []gitopsv1alpha1.NsInstanceState{
	gitopsv1alpha1.NsInstanceCreating, gitopsv1alpha1.NsInstanceReady, gitopsv1alpha1.NsInstanceProgressing,
	gitopsv1alpha1.NsInstanceFailed, gitopsv1alpha1.NsInstanceDeleting, gitopsv1alpha1.NsInstanceOrphaned,
}

// recordMetrics records a reconcile's duration and the states of the owned NS instances; a
// deleted OsmDeployment's series are removed.
func recordMetrics(obj *gitopsv1alpha1.OsmDeployment, start time.Time) {
	if !obj.DeletionTimestamp.IsZero() && len(obj.Finalizers) == 0 {
		reconcileDuration.DeleteLabelValues(obj.Namespace, obj.Name)
		nsInstances.DeletePartialMatch(prometheus.Labels{"namespace": obj.Namespace, "name": obj.Name})
		return
	}
	reconcileDuration.WithLabelValues(obj.Namespace, obj.Name).Observe(time.Since(start).Seconds())
	for _, state := range instanceStates {
		nsInstances.WithLabelValues(obj.Namespace, obj.Name, string(state)).Set(float64(countInstances(obj, state)))
	}
}

// recordOperationMetric counts a finished OSM operation.
func recordOperationMetric(outcome engine.Outcome) {
	result := "completed"
	if outcome.Failed {
		result = "failed"
	}
	operations.WithLabelValues(outcome.Operation.Type, result).Inc()
}
