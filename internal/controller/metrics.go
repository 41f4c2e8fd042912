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
	// rollouts tells a site held back by a wave (Waiting, Baking) from one halted by a
	// dependency that failed the revision (Halted): 1 for the phase of status.rollout.
	rollouts = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "osmops_rollout_held",
		Help: "1 while an OsmDeployment holds its source's revision back at a dependsOn entry with revision Same, by phase (Waiting, Baking, Halted).",
	}, []string{"namespace", "name", "phase"})
	operations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "osmops_operations_total",
		Help: "OSM LCM operations the operator waited for, by type and outcome (completed, failed, timeout).",
	}, []string{"type", "outcome"})
	// Operations of KNFs take from seconds (an upgrade of values) to the deploy timeout of a
	// large NS (OSM's default is an hour): the buckets reach past the longest spec.timeout, 24h.
	operationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "osmops_operation_duration_seconds",
		Help:    "Time from sending an OSM LCM operation to seeing it end, by type and outcome.",
		Buckets: []float64{5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 21600, 86400},
	}, []string{"type", "outcome"})
	// The first poll of an operation is timed on how long OSM ran those of its type
	// (osmconn.PollSchedule): seconds for an upgrade of values, so the buckets are finer than
	// operationDuration's.
	osmOperationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "osmops_operation_osm_duration_seconds",
		Help:    "How long OSM ran the LCM operations the operator saw end, as their records say (statusEnteredTime less startTime), by type: what the first poll of the next ones is timed on.",
		Buckets: []float64{0.5, 1, 2, 3, 4, 5, 7.5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600},
	}, []string{"type"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(reconcileDuration, nsInstances, rollouts, operations, operationDuration, osmOperationDuration)
}

// instanceStates are the states reported by the osmops_ns_instances gauge: every state of the
// API's enum (TestInstanceStatesAreTheEnum).
var instanceStates = []gitopsv1alpha1.NsInstanceState{
	gitopsv1alpha1.NsInstanceCreating, gitopsv1alpha1.NsInstanceReady, gitopsv1alpha1.NsInstanceProgressing,
	gitopsv1alpha1.NsInstanceFailed, gitopsv1alpha1.NsInstanceDeleting, gitopsv1alpha1.NsInstanceOrphaned,
	gitopsv1alpha1.NsInstanceReplacing, gitopsv1alpha1.NsInstanceDrifted,
}

// rolloutPhases are the phases reported by the osmops_rollout_held gauge.
var rolloutPhases = []gitopsv1alpha1.RolloutPhase{gitopsv1alpha1.RolloutWaiting, gitopsv1alpha1.RolloutBaking, gitopsv1alpha1.RolloutHalted}

// recordMetrics records a reconcile's duration and the states of the owned NS instances; a
// deleted OsmDeployment's series are removed.
func recordMetrics(obj *gitopsv1alpha1.OsmDeployment, start time.Time) {
	if !obj.DeletionTimestamp.IsZero() && len(obj.Finalizers) == 0 {
		reconcileDuration.DeleteLabelValues(obj.Namespace, obj.Name)
		nsInstances.DeletePartialMatch(prometheus.Labels{"namespace": obj.Namespace, "name": obj.Name})
		rollouts.DeletePartialMatch(prometheus.Labels{"namespace": obj.Namespace, "name": obj.Name})
		return
	}
	reconcileDuration.WithLabelValues(obj.Namespace, obj.Name).Observe(time.Since(start).Seconds())
	for _, state := range instanceStates {
		nsInstances.WithLabelValues(obj.Namespace, obj.Name, string(state)).Set(float64(countInstances(obj, state)))
	}
	for _, phase := range rolloutPhases {
		held := 0.0
		if obj.Status.Rollout != nil && obj.Status.Rollout.Phase == phase {
			held = 1
		}
		rollouts.WithLabelValues(obj.Namespace, obj.Name, string(phase)).Set(held)
	}
}

// recordOperationMetric counts a finished OSM operation and how long it took; one given up on
// at the timeout is a "timeout", not a "failed": OSM may still finish it.
func recordOperationMetric(outcome engine.Outcome) {
	result := "completed"
	switch {
	case outcome.TimedOut:
		result = "timeout"
	case outcome.Failed:
		result = "failed"
	}
	operations.WithLabelValues(outcome.Operation.Type, result).Inc()
	operationDuration.WithLabelValues(outcome.Operation.Type, result).Observe(time.Since(outcome.Operation.StartTime).Seconds())
}

// recordOSMDuration records how long OSM ran an operation that ended, when its record says.
func recordOSMDuration(outcome engine.Outcome) {
	if outcome.Took > 0 {
		osmOperationDuration.WithLabelValues(outcome.Operation.Type).Observe(outcome.Took.Seconds())
	}
}
