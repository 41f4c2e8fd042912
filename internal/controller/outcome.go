package controller

import (
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/jitter"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// outcomeKind is how a reconcile step ended (a precondition or the action of a state of the
// OsmDeployment, a check of the OsmCluster), as source-controller's reconcile results say it:
// one function, outcome.conclude, turns it into the conditions and what controller-runtime
// takes, for both reconcilers.
type outcomeKind int

const (
	// outcomeDone: the step did what it had to; after, when not 0, is the next periodic look
	// (spec.interval: the drift check). Nothing else is pending.
	outcomeDone outcomeKind = iota
	// outcomeWaiting: something that changes by itself holds the OsmDeployment (a dependency,
	// the OsmCluster, the source, values, OSM operations that run): looked at again after after.
	outcomeWaiting
	// outcomeStalling: retrying cannot help; a new spec, revision or reconcile request (each
	// triggers a reconcile) can. after, when not 0, looks again at what may change in OSM by
	// hand (an owner deleted, an NSD uploaded).
	outcomeStalling
	// outcomeRetryable: an error that may pass (OSM or the API server unavailable, the manager
	// stopping): returned to the work queue, which retries it with its back-off.
	outcomeRetryable
	// outcomeNext: the action changed what the state was determined from (it recorded OSM
	// operations that ended): the state is determined again in the same reconcile. It never
	// leaves the machine (reconcileDeployment).
	outcomeNext
)

// outcome is a typed end of a reconcile step.
type outcome struct {
	kind  outcomeKind
	after time.Duration
	err   error
	// exact is a requeue on a connection's poll tick (onTick): not jittered.
	exact bool
	// followsOperations is a requeue to poll OSM operations already sent (pollOperations): it
	// goes before the reconciles that would send new ones (operationsPriority).
	followsOperations bool
	// ready, reason and message are the Ready condition a concluded outcome writes (reason
	// set). The OsmDeployment's steps write their conditions themselves (markStalled, waitFor),
	// which summarize keeps consistent.
	ready           metav1.ConditionStatus
	reason, message string
}

// Work queue priorities of the requeues (controller-runtime's priority queue serves the highest
// of those due first, in order of arrival within one priority). A reconcile that follows
// operations OSM runs goes before one that would start new work, a new OsmDeployment's first
// apply among them: a fleet of 1,000 created at once otherwise went through every first apply
// before any poll, and its OsmDeployments became Ready all at the end (16 of 1,000 after 30 s,
// all after 110 s, osmops-bench with a client-side limit of 1,000 requests a second). Every result sets its priority:
// controller-runtime keeps an item's last one, which would otherwise follow an OsmDeployment to
// its drift checks.
const (
	defaultPriority    = 0
	operationsPriority = 10
)

func done(after time.Duration) outcome     { return outcome{kind: outcomeDone, after: after} }
func waiting(after time.Duration) outcome  { return outcome{kind: outcomeWaiting, after: after} }
func stalling(after time.Duration) outcome { return outcome{kind: outcomeStalling, after: after} }
func retrying(err error) outcome           { return outcome{kind: outcomeRetryable, err: err} }

// onTick waits for a poll tick of the OsmDeployment's connection (pollSchedule.onTick). It is not
// jittered: the OsmDeployments of that OSM polling on one tick share one request, and the ticks
// of different OSMs are spread by their connections' origins.
func onTick(after time.Duration) outcome {
	return outcome{kind: outcomeWaiting, after: after, exact: true}
}

// concluded is a done step with its verdict, the Ready condition (True or False, with its
// reason and message): a check that is over, whatever it found, until the next look after.
func concluded(after time.Duration, ready metav1.ConditionStatus, reason, message string) outcome {
	return outcome{kind: outcomeDone, after: after, ready: ready, reason: reason, message: message}
}

// next determines the state again (outcomeNext).
var next = outcome{kind: outcomeNext}

// conclude writes the conditions of a concluded outcome on obj as kstatus reads them (Ready
// says the verdict; neither Reconciling nor Stalled: nothing is in progress, and a later look
// may find otherwise), and returns its result. An outcome without a verdict leaves the
// conditions as its step wrote them.
func (o outcome) conclude(obj conditions.Setter, jitterFn jitter.Duration) (ctrl.Result, error) {
	if o.reason != "" {
		conditions.Set(obj, &metav1.Condition{Type: meta.ReadyCondition, Status: o.ready, Reason: o.reason, Message: o.message})
		conditions.Delete(obj, meta.ReconcilingCondition)
		conditions.Delete(obj, meta.StalledCondition)
	}
	return o.result(jitterFn)
}

// result is what controller-runtime takes for an outcome, with its work queue priority: an
// error for the work queue's back-off, or a requeue after the outcome's interval jittered by
// jitterFn (every requeue of both reconcilers goes through here: many objects with one
// interval do not wake at once).
func (o outcome) result(jitterFn jitter.Duration) (ctrl.Result, error) {
	priority := defaultPriority
	if o.followsOperations {
		priority = operationsPriority
	}
	result := ctrl.Result{Priority: &priority}
	switch {
	case o.kind == outcomeRetryable:
		return result, o.err
	case o.after <= 0:
	case o.exact:
		result.RequeueAfter = o.after
	default:
		result.RequeueAfter = jitterFn(o.after)
	}
	return result, nil
}
