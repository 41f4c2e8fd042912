package controller

// The OsmDeployment reconcile reads, then acts, as helm-controller's does.
//
// Preconditions run first (checkPreconditions), in order: the dependencies (dependsOn), the
// OsmCluster and its connection, the source and its artifact, the waves (dependsOn entries with
// revision Same: waves.go), the revision (fetched, verified,
// validated, variables substituted) and the values of its KDUs. Each one that does not hold
// writes the condition that says why and ends the reconcile with its outcome: waiting (it
// resolves by itself), stalling (only a new spec or revision mends it) or retryable (an error).
// A deletion or spec.suspend skips them.
//
// Then determineState reads, and writes nothing: the spec, the status, the OsmCluster, and what
// OSM answers (operations, records: GET requests only). It returns one state with its reason;
// actForState runs that state's one action, which alone writes conditions, events and status
// and alone sends changes to OSM, and returns a typed outcome (outcome.go): done, waiting,
// stalling, retryable, or next (determine again: the action recorded operations that ended).
//
//	state                  recognised by                                action                                    outcome
//	---------------------  -------------------------------------------  ----------------------------------------  --------------------------------------
//	Suspended              spec.suspend, not deleted                    suspend: Ready keeps its status,          done (no requeue)
//	                                                                    reason Suspended
//	OperationsUnknown      status lists operations; OSM did not answer  waitFor OSMUnavailable                    retryable
//	OperationsRunning      status lists operations; OSM runs some       record those that ended, Reconciling      waiting (poll schedule: osmconn)
//	OperationsEnded        status lists operations; all ended or        record them; failed instances stall,      settled (revision attempted, nothing
//	                       timed out (and the records of the            else the revision is marked applied,      unsettled, no request): stalling
//	                       instances they completed, for Healthy)       Healthy                                   (retryInterval) on failures, else done
//	                                                                                                              (interval) or waiting on health checks;
//	                                                                                                              otherwise next
//	ReadFailed             a read of the API server failed, or OSM's    nothing written                           retryable
//	                       while the manager stops
//	OSMUnreadable          observing OSM failed                         osmFailure: waitFor or stall              retryable (transient) or stalling
//	Invalid                the plan has problems (references OSM        stall Conflict or ValidationFailed,       stalling (retryInterval: OSM may
//	                       lacks, conflicts)                            Warning event                             change by hand)
//	InSync                 the plan changes nothing                     inventory, drift report, Ready,           done (interval); stalling on failed
//	                                                                    Healthy (health.go)                       instances or health checks; waiting
//	                                                                                                              (poll) on progress
//	OutOfSync              the plan changes OSM                         apply it, record what OSM answered        waiting (poll) on operations; done
//	                                                                                                              (interval); retryable or stalling on
//	                                                                                                              refusals
//	Orphaning              deleted; deletionPolicy (or suspend, or      Normal event Orphaned, finalizer removed  done
//	                       MirrorPrune without prune) leaves NS
//	                       instances running
//	Deleted                deleted; nothing left in OSM to wait for     finalizer removed                         done
//	DeletionBlocked        deleted; OSM unreachable or its operations   let go (final or timed out) or            done, retryable, or waiting
//	                       unknown                                      waitFor DeletionFailed                    (retryInterval, not past spec.timeout)
//	DeletionOperations     deleted; status lists operations             record them; failed terminates block      next, or as DeletionBlocked
//	Terminating            deleted; OSM still runs owned NS instances   terminate them, let go past spec.timeout  waiting (poll), or as DeletionBlocked
//	HealthChecking         the revision applied, OSM healthy on it,     read spec.healthChecks again: Healthy     done (interval), waiting (poll), or
//	                       spec.healthChecks not passed yet             (health.go)                               stalling (HealthCheckFailed)
//
// Every requeue is jittered (outcome.result); a reconcile request is marked handled by the
// states that plan with it (ReadFailed, OSMUnreadable, Invalid, InSync, OutOfSync) and by
// OperationsEnded, which the plan follows unless settled without a request; and by a revision
// whose files are invalid (a precondition).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osmconn"
	"github.com/osmops/osmops/internal/pipeline"
)

// deploymentStatus is what an OsmDeployment needs, as determineState finds it (the state
// table above); one switch, in actForState, acts on it (helm-controller's
// DetermineReleaseState and actionForState).
type deploymentStatus int

const (
	statusSuspended deploymentStatus = iota
	statusOperationsUnknown
	statusOperationsRunning
	statusOperationsEnded
	statusReadFailed
	statusOSMUnreadable
	statusInvalid
	statusInSync
	statusOutOfSync
	statusOrphaning
	statusDeleted
	statusDeletionBlocked
	statusDeletionOperations
	statusTerminating
	statusHealthChecking
	// statusCount is the number of states; it sizes statusNames.
	statusCount
)

// statusNames names each state, for the log. Its length must be statusCount: a state added
// without its name leaves the array short and the two checks below fail to compile.
var statusNames = [...]string{
	statusSuspended:          "Suspended",
	statusOperationsUnknown:  "OperationsUnknown",
	statusOperationsRunning:  "OperationsRunning",
	statusOperationsEnded:    "OperationsEnded",
	statusReadFailed:         "ReadFailed",
	statusOSMUnreadable:      "OSMUnreadable",
	statusInvalid:            "Invalid",
	statusInSync:             "InSync",
	statusOutOfSync:          "OutOfSync",
	statusOrphaning:          "Orphaning",
	statusDeleted:            "Deleted",
	statusDeletionBlocked:    "DeletionBlocked",
	statusDeletionOperations: "DeletionOperations",
	statusTerminating:        "Terminating",
	statusHealthChecking:     "HealthChecking",
}

var (
	_ [len(statusNames) - int(statusCount)]struct{}
	_ [int(statusCount) - len(statusNames)]struct{}
)

// String names the state; never panics, whatever the value.
func (s deploymentStatus) String() string {
	if s < 0 || s >= statusCount {
		return fmt.Sprintf("deploymentStatus(%d)", int(s))
	}
	return statusNames[s]
}

// deploymentState is what determineState found, with what acting on it needs.
type deploymentState struct {
	status deploymentStatus
	// reason says why, for the log.
	reason string
	// err is the failure that made the state (ReadFailed, OSMUnreadable, OperationsUnknown,
	// DeletionBlocked).
	err error

	conn     *osmconn.Connection
	revision string
	rev      *gitops.Revision
	// requested is the reconcile request this state handles ("" when none or not yet).
	requested string
	// identity is the OSM's (clusterIdentity).
	identity string
	observed *engine.Observed
	// previous is the inventory before the plan.
	previous gitopsv1alpha1.Inventory
	plan     engine.Plan

	// running and ended are the operations of the status that OSM still runs, and those that
	// ended or timed out (Operations*, DeletionOperations).
	running []gitopsv1alpha1.OperationEntry
	ended   []engine.Outcome
	// final tells a DeletionBlocked that OSM cannot be reached for good.
	final bool
}

// readFailed is the state of a read that failed with nothing to report but the error.
func readFailed(err error) deploymentState {
	return deploymentState{status: statusReadFailed, reason: err.Error(), err: err}
}

// given is what the preconditions found, and what the machine has learnt in this reconcile.
type given struct {
	conn *osmconn.Connection
	// revision is the artifact's, rev its content with values resolved.
	revision string
	rev      *gitops.Revision
	// requested is the reconcile request not handled yet ("" when none).
	requested string
	// operationsFollowed: the operations of the status were checked in this reconcile.
	operationsFollowed bool
}

// reconcileDeployment runs the preconditions, then the machine until an action ends it.
func (r *OsmDeploymentReconciler) reconcileDeployment(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, patcher *serialPatcher, requested string) outcome {
	in := given{requested: requested}
	if obj.DeletionTimestamp.IsZero() {
		passed, stop := true, outcome{}
		if !obj.Spec.Suspend {
			in, stop, passed = r.checkPreconditions(ctx, obj, requested)
		}
		r.hold(obj)
		if !passed {
			return stop
		}
	}
	return r.runMachine(ctx, obj, patcher, in)
}

// runMachine determines the state and acts on it until an action ends the reconcile: at most
// twice, as the operations of the status are followed once.
func (r *OsmDeploymentReconciler) runMachine(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, patcher *serialPatcher, in given) outcome {
	for {
		st := r.determineState(ctx, obj, in)
		log.FromContext(ctx).V(1).Info("state determined", "state", st.status.String(),
			"reason", r.secrets.mask(client.ObjectKeyFromObject(obj), st.reason)) // OSM may quote a value from a Secret
		out := r.actForState(ctx, obj, patcher, st)
		if out.kind != outcomeNext {
			return out
		}
		in.operationsFollowed, in.conn = true, st.conn
	}
}

// hold keeps the finalizer on an OsmDeployment that is not being deleted, before anything is
// sent to OSM. (Its claims on an OSM the spec no longer points at go at its next plan:
// claimPlanned.)
func (r *OsmDeploymentReconciler) hold(obj *gitopsv1alpha1.OsmDeployment) {
	controllerutil.AddFinalizer(obj, gitopsv1alpha1.OsmDeploymentFinalizer)
}

// checkPreconditions resolves, in order, the dependencies, the OsmCluster, the source, the
// waves (dependencies with revision Same, which need the source's revision), the revision and
// its values; the first that does not hold wrote why, and its outcome ends the
// reconcile (passed false).
func (r *OsmDeploymentReconciler) checkPreconditions(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, requested string) (given, outcome, bool) {
	r.resume(obj)
	// Every step says again what holds it up: a stall of an earlier reconcile does not outlive
	// the change that triggered this one.
	conditions.Delete(obj, meta.StalledCondition)
	if out, ready := r.reconcileDependencies(ctx, obj); !ready {
		return given{}, out, false
	}
	conn, out := r.reconcileCluster(ctx, obj)
	if conn == nil {
		return given{}, out, false
	}
	artifactRef, out := r.reconcileSource(ctx, obj)
	if artifactRef == nil {
		return given{}, out, false
	}
	if out, ready := r.reconcileWaves(ctx, obj, artifactRef.Revision); !ready {
		return given{}, out, false
	}
	rev, out := r.reconcileRevision(ctx, obj, conn, artifactRef)
	if rev == nil {
		if conditions.IsStalled(obj) && requested != "" {
			obj.Status.SetLastHandledReconcileRequest(requested) // the revision is invalid: nothing to retry
		}
		return given{}, out, false
	}
	if rev, out = r.resolveValues(ctx, obj, rev, artifactRef.Revision); rev == nil {
		return given{}, out, false
	}
	return given{conn: conn, revision: artifactRef.Revision, rev: rev, requested: requested}, outcome{}, true
}

// determineState finds what the OsmDeployment needs. It only reads: the spec and status, the
// OsmCluster, and OSM (the operations the status lists, then the records a plan needs); it
// writes nothing and sends nothing that changes OSM. A reconcile request is handled by the plan
// once OSM operations ended: one that arrives while they run waits for them to end or time out.
func (r *OsmDeploymentReconciler) determineState(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, in given) deploymentState {
	switch {
	case !obj.DeletionTimestamp.IsZero():
		return r.determineDeletionState(ctx, obj, in)
	case obj.Spec.Suspend:
		return deploymentState{status: statusSuspended, reason: "spec.suspend is set"}
	}
	if len(obj.Status.Operations) > 0 && !in.operationsFollowed {
		st := deploymentState{conn: in.conn, revision: in.revision}
		var err error
		st.running, st.ended, err = r.checkOperations(ctx, obj, in.conn)
		switch {
		case err != nil:
			st.status, st.reason, st.err = statusOperationsUnknown, "checking OSM operations: "+err.Error(), err
		case len(st.running) > 0:
			st.status, st.reason = statusOperationsRunning, fmt.Sprintf("%d OSM operation(s) run", len(st.running))
		default:
			// Settled only without a request: one is handled by the plan that follows.
			st.status, st.reason, st.requested = statusOperationsEnded, fmt.Sprintf("%d OSM operation(s) ended", len(st.ended)), in.requested
			if in.requested == "" && obj.Status.LastAttemptedRevision == in.revision {
				// No plan follows to observe OSM (settleOperations): the health is read here.
				st.observed = r.readHealth(ctx, in.conn, st.ended)
			}
		}
		return st
	}
	if in.requested == "" && waitsForHealthChecks(obj, in.revision) {
		// OSM was found healthy on this revision: only the Kubernetes objects are read again.
		return deploymentState{status: statusHealthChecking, conn: in.conn, revision: in.revision, reason: "health checks not passed yet"}
	}
	st := r.observeAndPlan(ctx, obj, in.conn, in.rev, in.revision, in.requested != "")
	st.requested = in.requested
	if st.reason == "" {
		st.reason = fmt.Sprintf("revision %s: %d problem(s), %d change(s)", in.revision, len(st.plan.Problems), st.plan.Mutations())
	}
	return st
}

// checkOperations asks OSM about the operations the status lists, in the request of its
// connection's tick (operationPolls): those it still runs, and those that ended or ran past
// spec.timeout. How long OSM ran those that ended times the polls of the next ones on that OSM
// (osmconn.PollSchedule).
func (r *OsmDeploymentReconciler) checkOperations(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, conn *osmconn.Connection) (
	[]gitopsv1alpha1.OperationEntry, []engine.Outcome, error) {
	pending := pipeline.EngineOperations(obj.Status.Operations)
	unfinished, err := conn.CheckOperations(ctx, r.AnswerMemory, client.ObjectKeyFromObject(obj), pending, time.Now())
	if err != nil {
		return nil, nil, err
	}
	running, finished := engine.ClassifyOperations(pending, unfinished)
	for _, ended := range finished {
		conn.Learn(ended.Operation.Type, ended.Took)
		recordOSMDuration(ended)
	}
	running, expired := engine.ExpireOperations(running, time.Now(), obj.GetTimeout())
	return pipeline.APIOperations(running), append(finished, expired...), nil
}

// pollOperations is the requeue at now of an OsmDeployment whose status lists operations OSM
// runs: on conn's poll schedule and tick grid (Connection.NextPoll), before the reconciles
// that would send new operations. now is the real time, as the operations' start times are
// (not the reconciler's Clock, which tests move).
func (r *OsmDeploymentReconciler) pollOperations(conn *osmconn.Connection, obj *gitopsv1alpha1.OsmDeployment, now time.Time) outcome {
	wait, aligned := conn.NextPoll(osmconn.PollSchedule{Short: r.OperationPollMinInterval, Long: r.OperationPollInterval},
		client.ObjectKeyFromObject(obj), pipeline.EngineOperations(obj.Status.Operations), now)
	out := waiting(wait)
	if aligned {
		out = onTick(wait)
	}
	out.followsOperations = true
	return out
}

// determineDeletionState finds what the deletion of an OsmDeployment needs, as spec.deletionPolicy
// says: nothing (Orphaning), or OSM's terminations, read from the OSM the OsmCluster reaches.
func (r *OsmDeploymentReconciler) determineDeletionState(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, in given) deploymentState {
	var inventory gitopsv1alpha1.Inventory
	if obj.Status.Inventory != nil {
		inventory = *obj.Status.Inventory
	}
	if !obj.TerminatesOnDeletion() {
		return deploymentState{status: statusOrphaning, reason: orphanedBecause(obj)}
	}
	conn := in.conn
	if conn == nil {
		var why string
		var final bool
		var err error
		conn, why, final, err = r.deletionConnection(ctx, obj)
		switch {
		case err != nil:
			return readFailed(err)
		case conn == nil && len(inventory.NsInstances) == 0:
			// Nothing known to terminate, and no OSM to ask for its markers.
			return deploymentState{status: statusDeleted, reason: why + ", no NS instance recorded"}
		case conn == nil:
			return deploymentState{status: statusDeletionBlocked, reason: why, final: final}
		}
	}
	if len(obj.Status.Operations) > 0 && !in.operationsFollowed {
		// The operations OSM accepted are followed until they end, and nothing more is sent to
		// their instances meanwhile (engine.Observed.Busy): each terminate is sent once.
		running, ended, err := r.checkOperations(ctx, obj, conn)
		switch {
		case err != nil && ctx.Err() != nil:
			return readFailed(err) // the manager is stopping: no wait to report
		case err != nil:
			return deploymentState{status: statusDeletionBlocked, reason: "checking OSM operations: " + err.Error(), err: err}
		}
		return deploymentState{status: statusDeletionOperations, conn: conn, running: running, ended: ended,
			reason: fmt.Sprintf("%d OSM operation(s) run, %d ended", len(running), len(ended))}
	}
	planned, err := r.pipeline(obj, conn.NBI, nil).PlanDeletion(ctx, obj)
	var observing *pipeline.ObserveError
	switch {
	case err != nil && ctx.Err() != nil:
		return readFailed(err) // the manager is stopping: no wait to report
	case errors.As(err, &observing):
		return deploymentState{status: statusDeletionBlocked, reason: err.Error(), err: observing.Err}
	case err != nil:
		return readFailed(err)
	}
	st := deploymentState{conn: conn, observed: planned.Observed, previous: planned.Previous, plan: planned.Plan}
	if len(st.plan.Inventory.NsInstances) == 0 {
		st.status, st.reason = statusDeleted, "OSM runs no NS instance of it"
		return st
	}
	st.status, st.reason = statusTerminating, fmt.Sprintf("OSM runs %d NS instance(s) of it, %d to terminate",
		len(st.plan.Inventory.NsInstances), len(st.plan.Deletes))
	return st
}

// pipeline is the reconciler's Pipeline for obj: OSM through nbi, owners looked up on the API
// server, the OSM's identity read from obj's OsmCluster in the cache, and claims.
func (r *OsmDeploymentReconciler) pipeline(obj *gitopsv1alpha1.OsmDeployment, nbi engine.OSM, claims pipeline.ClaimsView) pipeline.Pipeline {
	return pipeline.ForDeployment(r.Client, r.APIReader, r.OwnerIdentity, obj, nbi, claims)
}

// observeAndPlan observes OSM (the OsmDeployment's own records, and the owners of what it
// declares) and plans the difference with the revision, through the reconciler's Pipeline.
func (r *OsmDeploymentReconciler) observeAndPlan(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment,
	conn *osmconn.Connection, rev *gitops.Revision, revision string, retryFailed bool) deploymentState {
	planned, err := r.pipeline(obj, conn.NBI, r.claims().View(obj, conn.NBI)).Plan(ctx, obj, rev, revision, retryFailed)
	var observing *pipeline.ObserveError
	switch {
	case errors.As(err, &observing) && ctx.Err() != nil:
		return readFailed(observing.Err) // the manager is stopping: no wait to report
	case errors.As(err, &observing):
		return deploymentState{status: statusOSMUnreadable, reason: err.Error(), err: observing.Err}
	case err != nil:
		return readFailed(err)
	}
	st := deploymentState{conn: conn, rev: rev, revision: revision,
		identity: planned.Identity, observed: planned.Observed, previous: planned.Previous, plan: planned.Plan}
	switch {
	case len(st.plan.Problems) > 0:
		st.status = statusInvalid
	case st.plan.Mutations() == 0:
		st.status = statusInSync
	default:
		st.status = statusOutOfSync
	}
	return st
}

// reportDrift sets the Drifted condition from the plan's drifts (spec.driftDetection.mode
// warn), with a Warning event when what differs is new; it removes the condition when none.
func (r *OsmDeploymentReconciler) reportDrift(obj *gitopsv1alpha1.OsmDeployment, plan engine.Plan) {
	if len(plan.Drifts) == 0 {
		conditions.Delete(obj, gitopsv1alpha1.DriftedCondition)
		return
	}
	whats := make([]string, len(plan.Drifts))
	for i, d := range plan.Drifts {
		whats[i] = d.Name + ": " + d.What
	}
	msg := cut(fmt.Sprintf("%d change(s) in OSM outside Git, left as they are (driftDetection.mode warn): %s",
		len(plan.Drifts), strings.Join(whats, "; ")), maxConditionMessage)
	if conditions.GetMessage(obj, gitopsv1alpha1.DriftedCondition) != msg {
		r.Eventf(obj, corev1.EventTypeWarning, gitopsv1alpha1.DriftDetectedReason, "%s", msg)
	}
	conditions.MarkTrue(obj, gitopsv1alpha1.DriftedCondition, gitopsv1alpha1.DriftDetectedReason, "%s", msg)
}

// actForState runs the one action of the state determineState found: it alone writes the
// conditions, events and status, and sends changes to OSM.
func (r *OsmDeploymentReconciler) actForState(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, patcher *serialPatcher, st deploymentState) outcome {
	if st.requested != "" {
		obj.Status.SetLastHandledReconcileRequest(st.requested)
	}
	if !obj.DeletionTimestamp.IsZero() && obj.Status.Inventory == nil {
		obj.Status.Inventory = &gitopsv1alpha1.Inventory{} // a deletion's actions read and report it
	}
	if !obj.DeletionTimestamp.IsZero() {
		defer func() {
			if !controllerutil.ContainsFinalizer(obj, gitopsv1alpha1.OsmDeploymentFinalizer) {
				r.claims().ReleaseAll(ctx, obj) // gone, whatever its deletionPolicy: its names are free
			}
		}()
	}
	if st.status == statusInSync || st.status == statusOutOfSync {
		// The names the inventory will list are claimed before it lists them, so before any
		// create is sent; those it no longer lists are released.
		if contested, stop := r.claimPlanned(ctx, obj, st); stop {
			return contested
		}
	}
	switch st.status {
	case statusSuspended:
		log.FromContext(ctx).V(1).Info("suspended: nothing applied")
		r.suspend(obj)
		return done(0)
	case statusOperationsUnknown:
		r.waitFor(obj, gitopsv1alpha1.OSMUnavailableReason, gitopsv1alpha1.OsmClusterKind, obj.Spec.ClusterRef.Name, st.reason)
		return retrying(st.err)
	case statusOperationsRunning:
		r.recordOperations(obj, st.running, st.ended)
		conditions.Delete(obj, meta.StalledCondition) // failed ones are reported once the rest finish
		conditions.MarkReconciling(obj, meta.ProgressingReason, "waiting for %d OSM operation(s) of %s", len(st.running), obj.Status.LastAttemptedRevision)
		healthProgressing(obj, obj.Status.LastAttemptedRevision)
		return r.pollOperations(st.conn, obj, time.Now())
	case statusOperationsEnded:
		settled := r.settleOperations(ctx, obj, st)
		if settled != next {
			// No plan follows to release the names of the instances terminated (claimPlanned).
			if err := r.claims().ReleaseEnded(ctx, obj); err != nil {
				return retrying(err)
			}
		}
		return settled
	case statusReadFailed:
		return retrying(st.err)
	case statusOSMUnreadable:
		return r.osmFailure(obj, "observing OSM", st.err)
	case statusInvalid:
		obj.Status.LastAttemptedRevision = st.revision
		err, unresolved := st.plan.Invalid()
		reason, verdict := gitopsv1alpha1.ConflictReason, "not applied"
		if unresolved {
			reason, verdict = gitopsv1alpha1.ValidationFailedReason, "rejected, nothing applied"
		}
		markStalled(obj, reason, "revision %s %s: %s", st.revision, verdict, err)
		r.Eventf(obj, corev1.EventTypeWarning, reason, "revision %s %s: %s", st.revision, verdict, err)
		// What stops it may change in OSM (a VIM account or an NSD made by hand, an owner
		// deleted): the plan is made again, unlike a file only a new revision can mend.
		return stalling(r.retryInterval(obj))
	case statusInSync:
		r.reportDrift(obj, st.plan)
		obj.Status.LastAttemptedRevision = st.revision
		obj.Status.Inventory = pipeline.APIInventory(st.plan.Inventory)
		setSummary(obj, len(st.rev.NsInstances))
		return r.reportHealth(ctx, obj, st.observed, r.finishWithoutChanges(obj, st.revision, st.plan))
	case statusOutOfSync:
		r.reportDrift(obj, st.plan)
		return r.applyPlan(ctx, obj, patcher, st)
	case statusOrphaning:
		if entries := obj.Status.Inventory.NsInstances; len(entries) > 0 {
			r.Eventf(obj, corev1.EventTypeNormal, gitopsv1alpha1.OrphanedReason, "%s: %d NS instance(s) left running in OSM: %s",
				st.reason, len(entries), describeInstances(entries))
		}
		r.release(obj)
		return done(0)
	case statusDeleted:
		if st.observed != nil {
			obj.Status.Inventory = pipeline.APIInventory(st.plan.Inventory)
		}
		r.release(obj)
		return done(0)
	case statusDeletionBlocked:
		return r.deletionBlocked(obj, st.reason, st.final, st.err)
	case statusDeletionOperations:
		if failed := r.recordDeletionOperations(obj, st.running, st.ended); failed != "" {
			return r.deletionBlocked(obj, failed, false, nil) // sent again after the retry interval
		}
		return next
	case statusHealthChecking:
		return r.recheckObjects(ctx, obj)
	default: // statusTerminating
		return r.terminate(ctx, obj, st)
	}
}
