package controller

import (
	"context"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/jitter"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
)

// deploymentStatus is what an OsmDeployment needs, as determineState finds it; one switch, in
// actForState, acts on it (helm-controller's DetermineReleaseState and actionForState).
type deploymentStatus int

const (
	// statusDeleting: the OsmDeployment is being deleted: OSM is cleaned up as its
	// deletionPolicy says.
	statusDeleting deploymentStatus = iota
	// statusSuspended: nothing is applied, nothing is pruned.
	statusSuspended
	// statusBlocked: a dependency, the OsmCluster, the source, the revision's files or OSM's
	// answers stop the reconcile; the step that found it wrote the condition that says why.
	statusBlocked
	// statusOperationsRunning: OSM operations the operator started still run.
	statusOperationsRunning
	// statusSettled: the last operations ended, on the revision already attempted, and no
	// reconcile is requested: their outcome, recorded as they ended, is the status.
	statusSettled
	// statusInvalid: the plan cannot be applied (engine.Problem: references OSM lacks, conflicts).
	statusInvalid
	// statusInSync: OSM matches the revision.
	statusInSync
	// statusOutOfSync: the plan changes OSM.
	statusOutOfSync
)

// deploymentState is what determineState found, with what acting on it needs.
type deploymentState struct {
	status deploymentStatus
	// result and err end the reconcile of a blocked, running or settled state.
	result ctrl.Result
	err    error

	conn     *Connection
	revision string
	rev      *gitops.Revision
	// identity is the OSM's (clusterIdentity).
	identity string
	observed *engine.Observed
	// previous is the inventory before the plan.
	previous gitopsv1alpha1.Inventory
	plan     engine.Plan
}

func stopped(status deploymentStatus, result ctrl.Result, err error) deploymentState {
	return deploymentState{status: status, result: result, err: err}
}

// determineState finds what the OsmDeployment needs: it resolves the dependencies, the
// OsmCluster and the source, loads the revision, follows the running OSM operations, then
// observes OSM and plans. A reconcile request (requested, "" when none) is marked handled
// only once the revision was checked or planned with it: one that arrives while OSM operations
// run waits for them to end or time out.
func (r *OsmDeploymentReconciler) determineState(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, requested string) deploymentState {
	switch {
	case !obj.DeletionTimestamp.IsZero():
		return deploymentState{status: statusDeleting}
	case obj.Spec.Suspend:
		return deploymentState{status: statusSuspended}
	}
	r.resume(obj)
	// Every step says again what holds it up: a stall of an earlier reconcile does not outlive
	// the change that triggered this one.
	conditions.Delete(obj, meta.StalledCondition)
	if res, ready := r.reconcileDependencies(ctx, obj); !ready {
		return stopped(statusBlocked, res, nil)
	}
	conn, res, ready := r.reconcileCluster(ctx, obj)
	if !ready {
		return stopped(statusBlocked, res, nil)
	}
	artifactRef, res, err := r.reconcileSource(ctx, obj)
	if artifactRef == nil {
		return stopped(statusBlocked, res, err)
	}
	rev, res, err := r.reconcileRevision(ctx, obj, artifactRef)
	if rev == nil {
		if conditions.IsStalled(obj) && requested != "" {
			obj.Status.SetLastHandledReconcileRequest(requested) // the revision is invalid: nothing to retry
		}
		return stopped(statusBlocked, res, err)
	}
	if len(obj.Status.Operations) > 0 {
		finished, res, err := r.reconcileOperations(ctx, obj, conn)
		switch {
		case !finished || err != nil:
			return stopped(statusOperationsRunning, res, err)
		case obj.Status.LastAttemptedRevision == artifactRef.Revision && !hasUnsettledInstances(obj) && requested == "":
			return stopped(statusSettled, res, nil)
		}
	}
	if requested != "" {
		obj.Status.SetLastHandledReconcileRequest(requested)
	}
	if rev, res, err = r.resolveValues(ctx, obj, rev, artifactRef.Revision); rev == nil {
		return stopped(statusBlocked, res, err)
	}
	return r.observeAndPlan(ctx, obj, conn, rev, artifactRef.Revision, requested != "")
}

// observeAndPlan observes OSM (the OsmDeployment's own records, and the owners of what it
// declares) and plans the difference with the revision.
func (r *OsmDeploymentReconciler) observeAndPlan(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment,
	conn *Connection, rev *gitops.Revision, revision string, retryFailed bool) deploymentState {
	st := deploymentState{conn: conn, rev: rev, revision: revision}
	if obj.Status.Inventory != nil {
		st.previous = *obj.Status.Inventory
	}
	owner := r.owner(obj)
	observed, err := engine.Observe(ctx, conn.NBI, observationScope(obj, rev, revision, st.previous, owner))
	if err != nil {
		if ctx.Err() != nil {
			return stopped(statusBlocked, ctrl.Result{}, err) // the manager is stopping: no wait to report
		}
		res, err := r.osmFailure(obj, "observing OSM", err)
		return stopped(statusBlocked, res, err)
	}
	liveOwners, err := r.liveOwners(ctx, observed.ForeignOwners(owner))
	if err != nil {
		return stopped(statusBlocked, ctrl.Result{}, err)
	}
	st.identity, err = r.osmIdentity(ctx, r.Client, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ClusterRef.Name})
	if err != nil {
		return stopped(statusBlocked, ctrl.Result{}, fmt.Errorf("OsmCluster %s: %w", obj.Spec.ClusterRef.Name, err))
	}
	claims, err := r.claims(ctx, obj, rev, st.identity)
	if err != nil {
		return stopped(statusBlocked, ctrl.Result{}, err)
	}
	st.observed = observed
	st.plan = engine.Compute(planInput(obj, rev, observed, withoutRetries(st.previous, retryFailed), owner, liveOwners, claims))
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

// planInput is what the plan of rev for obj is computed from: what was observed and found, and
// the spec's settings.
func planInput(obj *gitopsv1alpha1.OsmDeployment, rev *gitops.Revision, observed *engine.Observed,
	inventory gitopsv1alpha1.Inventory, owner engine.Owner, liveOwners map[string]bool, claims map[string]string) engine.Input {
	return engine.Input{
		Revision: rev, Observed: observed, Inventory: inventory, Claims: claims,
		Owner: owner, LiveOwners: liveOwners, Prune: obj.Spec.Prune, AdoptExisting: obj.Spec.AdoptExisting,
		Force: obj.Spec.Force, FollowPackages: obj.Spec.InstancesFollowPackages, Drift: driftPolicies[obj.GetDriftDetectionMode()],
	}
}

// driftPolicies are the plan's policies of the drift detection modes.
var driftPolicies = map[gitopsv1alpha1.DriftDetectionMode]engine.DriftPolicy{
	gitopsv1alpha1.DriftDetectionEnabled:  engine.CorrectDrift,
	gitopsv1alpha1.DriftDetectionWarn:     engine.ReportDrift,
	gitopsv1alpha1.DriftDetectionDisabled: engine.IgnoreDrift,
}

// observationScope is what a plan reads of OSM. A drift check (the revision was applied
// already, and drift detection is not disabled) reads everything the OsmDeployment owns; a
// revision being applied reads only what changed since the inventory (engine.RevisionScope),
// unless its instances follow a package the revision changes, which may move any of them.
func observationScope(obj *gitopsv1alpha1.OsmDeployment, rev *gitops.Revision, revision string,
	inventory gitopsv1alpha1.Inventory, owner engine.Owner) engine.Scope {
	driftCheck := obj.Status.LastAppliedRevision == revision && obj.GetDriftDetectionMode() != gitopsv1alpha1.DriftDetectionDisabled
	if driftCheck || obj.Spec.InstancesFollowPackages && packagesChanged(rev, inventory) {
		return engine.ScopeOf(rev, inventory, owner)
	}
	return engine.RevisionScope(rev, inventory, owner)
}

// packagesChanged tells whether the revision holds a package the inventory lacks or lists with
// other content.
func packagesChanged(rev *gitops.Revision, inventory gitopsv1alpha1.Inventory) bool {
	uploaded := make(map[string]string, len(inventory.Packages))
	for _, e := range inventory.Packages {
		uploaded[e.Name] = e.Digest
	}
	for _, pkg := range rev.Packages {
		if uploaded[pkg.Descriptor.ID] != pkg.Digest {
			return true
		}
	}
	return false
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

// actForState acts on the state determineState found.
func (r *OsmDeploymentReconciler) actForState(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, patcher *serialPatcher, st deploymentState) (ctrl.Result, error) {
	if st.status == statusDeleting {
		res, err := r.reconcileDelete(ctx, obj)
		if !controllerutil.ContainsFinalizer(obj, gitopsv1alpha1.OsmDeploymentFinalizer) {
			r.releaseClaims(ctx, obj) // gone, whatever its deletionPolicy: its names are free
		}
		return res, err
	}
	controllerutil.AddFinalizer(obj, gitopsv1alpha1.OsmDeploymentFinalizer)
	if st.status == statusSettled {
		if err := r.releaseEnded(ctx, obj); err != nil {
			return ctrl.Result{}, err
		}
	}
	if st.status == statusInSync || st.status == statusOutOfSync {
		// The names the inventory will list are claimed before it lists them, so before any
		// create is sent; those it no longer lists are released.
		if res, stop, err := r.claimPlanned(ctx, obj, st); stop {
			return res, err
		}
	}
	switch st.status {
	case statusSuspended:
		log.FromContext(ctx).V(1).Info("suspended: nothing applied")
		r.suspend(obj)
		return ctrl.Result{}, nil
	case statusBlocked, statusOperationsRunning, statusSettled:
		return st.result, st.err
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
		return ctrl.Result{RequeueAfter: jitter.JitteredIntervalDuration(obj.GetRetryInterval())}, nil
	case statusInSync:
		r.reportDrift(obj, st.plan)
		obj.Status.LastAttemptedRevision = st.revision
		obj.Status.Inventory = &st.plan.Inventory
		setSummary(obj, len(st.rev.NsInstances))
		return r.finishWithoutChanges(obj, st.revision, st.plan)
	default: // statusOutOfSync
		r.reportDrift(obj, st.plan)
		return r.applyPlan(ctx, obj, patcher, st)
	}
}
