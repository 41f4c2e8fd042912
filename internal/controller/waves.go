package controller

// Waves of a rollout: a dependsOn entry with revision Same holds the revision of the source back
// until the dependency has applied that same revision (the same commit or digest, through
// whichever source object), is Ready on it with every NS instance ready, and has stayed so for
// its bakeTime. A dependency that failed the revision halts the OsmDeployment on its previous
// one. Held back, the reconcile ends at this precondition: nothing is sent to OSM, and no drift
// check runs, until the wave starts: the revision it runs is no longer served by its source,
// and applied again with the values of now it would reach every held site at once
// (docs/rollouts.md).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// now is the time of the reconciler's clock.
func (r *OsmDeploymentReconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// waveHold is what holds a revision back at one dependency; the zero phase passes.
type waveHold struct {
	phase gitopsv1alpha1.RolloutPhase
	// why says it, after "waiting for OsmDeployment <name>: " (or "halted by ...").
	why string
	// bakedAt is when a Baking dependency's bake time ends.
	bakedAt time.Time
}

// judgeWave says whether the dependency (nil when it does not exist) lets revision through:
// applied, Ready on it with every NS instance ready, and since bake. A Ready on another
// revision never counts; a dependency Stalled on the revision, or halted on it, halts.
func judgeWave(dep *gitopsv1alpha1.OsmDeployment, revision string, bake time.Duration, now time.Time) waveHold {
	short := gitopsv1alpha1.ShortRevision(revision)
	switch {
	case dep == nil:
		return waveHold{phase: gitopsv1alpha1.RolloutWaiting, why: "not found"}
	case !dep.DeletionTimestamp.IsZero():
		return waveHold{phase: gitopsv1alpha1.RolloutWaiting, why: "being deleted"}
	case failedRevision(dep, revision):
		return waveHold{phase: gitopsv1alpha1.RolloutHalted,
			why: fmt.Sprintf("it failed that revision (%s)", conditions.GetReason(dep, meta.ReadyCondition))}
	case haltedOn(dep, revision):
		return waveHold{phase: gitopsv1alpha1.RolloutHalted, why: "it is halted on that revision"}
	case !gitopsv1alpha1.SameRevision(dep.Status.LastAppliedRevision, revision):
		runs := "nothing applied yet"
		if dep.Status.LastAppliedRevision != "" {
			runs = "it runs " + gitopsv1alpha1.ShortRevision(dep.Status.LastAppliedRevision)
		}
		return waveHold{phase: gitopsv1alpha1.RolloutWaiting,
			why: fmt.Sprintf("revision %s not applied yet (%s; %s)", short, runs, readiness(dep))}
	case !conditions.IsReady(dep) || dep.Status.ObservedGeneration != dep.Generation ||
		dep.Status.NsInstancesReady != dep.Status.NsInstancesTotal:
		return waveHold{phase: gitopsv1alpha1.RolloutWaiting,
			why: fmt.Sprintf("not Ready on revision %s (%s, NS instances ready %d/%d)", short, readiness(dep),
				dep.Status.NsInstancesReady, dep.Status.NsInstancesTotal)}
	case conditions.Has(dep, gitopsv1alpha1.HealthyCondition) && !conditions.IsTrue(dep, gitopsv1alpha1.HealthyCondition):
		// Ready stays True on an applied revision whose NS instances OSM later reports unhealthy.
		return waveHold{phase: gitopsv1alpha1.RolloutWaiting,
			why: fmt.Sprintf("not healthy on revision %s (Healthy=%s %s)", short,
				conditions.Get(dep, gitopsv1alpha1.HealthyCondition).Status, conditions.GetReason(dep, gitopsv1alpha1.HealthyCondition))}
	}
	if dep.Status.ReadySince == nil {
		return waveHold{phase: gitopsv1alpha1.RolloutWaiting,
			why: fmt.Sprintf("not steady on revision %s yet (%s)", short, readiness(dep))}
	}
	since := dep.Status.ReadySince.Time
	if bakedAt := since.Add(bake); now.Before(bakedAt) {
		return waveHold{phase: gitopsv1alpha1.RolloutBaking, bakedAt: bakedAt,
			why: fmt.Sprintf("Ready on revision %s since %s, bake time %s: %s left", short,
				since.UTC().Format(time.RFC3339), bake, bakedAt.Sub(now).Round(time.Second))}
	}
	return waveHold{}
}

// failedRevision tells whether dep failed revision itself: it attempted it and is Stalled, not
// merely suspended.
func failedRevision(dep *gitopsv1alpha1.OsmDeployment, revision string) bool {
	return gitopsv1alpha1.SameRevision(dep.Status.LastAttemptedRevision, revision) && conditions.IsStalled(dep) &&
		conditions.GetReason(dep, meta.StalledCondition) != gitopsv1alpha1.SuspendedReason
}

// haltedOn tells whether dep is halted on revision by a site before it.
func haltedOn(dep *gitopsv1alpha1.OsmDeployment, revision string) bool {
	return dep.Status.Rollout != nil && dep.Status.Rollout.Phase == gitopsv1alpha1.RolloutHalted &&
		gitopsv1alpha1.SameRevision(dep.Status.Rollout.Revision, revision)
}

// readiness says in a few words what a dependency's Ready condition says.
func readiness(dep *gitopsv1alpha1.OsmDeployment) string {
	ready := conditions.Get(dep, meta.ReadyCondition)
	if ready == nil {
		return "Ready unknown"
	}
	return fmt.Sprintf("Ready=%s %s", ready.Status, ready.Reason)
}

// markSteadySince keeps status.readySince, the start of the bake of the waves after obj, at
// every status write: since when obj has been Ready and Healthy (or not yet judged healthy)
// on its applied revision without a break, nil while it is not. A bake is judged from status
// alone, so any spell of anything else, even one that ended before a dependent looked, must
// leave its mark here: it restarts the bake. markApplied clears it for a new revision.
func markSteadySince(obj *gitopsv1alpha1.OsmDeployment, now time.Time) {
	steady := obj.Status.LastAppliedRevision != "" && conditions.IsReady(obj) &&
		(!conditions.Has(obj, gitopsv1alpha1.HealthyCondition) || conditions.IsTrue(obj, gitopsv1alpha1.HealthyCondition))
	switch {
	case !steady:
		obj.Status.ReadySince = nil
	case obj.Status.ReadySince == nil:
		obj.Status.ReadySince = &metav1.Time{Time: now}
	}
}

// reconcileWaves holds revision back while a dependsOn entry with revision Same does not let it
// through (judgeWave): a halt stalls the OsmDeployment on its previous revision; a wait requeues
// at the dependency interval, or when the bake time ends. It records where the OsmDeployment
// stands in status.rollout, and clears it once every wave passed.
func (r *OsmDeploymentReconciler) reconcileWaves(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, revision string) (outcome, bool) {
	if gitopsv1alpha1.SameRevision(obj.Status.LastAttemptedRevision, revision) {
		// Its waves let the revision through when it was sent to OSM. Judged again (a
		// dependency's bake restarted, its health read again, the dependency gone), they would
		// hold it back mid-apply, its own operations no longer followed, or halt it on a
		// revision it already runs.
		passWaves(obj, revision)
		return outcome{}, true
	}
	now := r.now()
	var held *gitopsv1alpha1.RolloutStatus
	var holdWhy string
	requeue := time.Duration(0)
	for _, dep := range obj.Spec.DependsOn {
		if dep.Revision != gitopsv1alpha1.DependencyRevisionSame {
			continue
		}
		key := dependencyKey(obj, dep)
		other := &gitopsv1alpha1.OsmDeployment{}
		switch err := r.Get(ctx, key, other); {
		case apierrors.IsNotFound(err):
			other = nil
		case err != nil:
			return retrying(err), false
		}
		var bake time.Duration
		if dep.BakeTime != nil {
			bake = dep.BakeTime.Duration
		}
		hold := judgeWave(other, revision, bake, now)
		if hold.phase == "" {
			continue
		}
		rollout := &gitopsv1alpha1.RolloutStatus{Revision: revision, Dependency: refName(obj, key), Phase: hold.phase}
		if hold.phase == gitopsv1alpha1.RolloutHalted {
			if haltedOn(other, revision) {
				failed, err := r.failedSite(ctx, obj, other, revision)
				if err != nil {
					return retrying(err), false
				}
				hold.why += ", which " + failed
			}
			r.halt(obj, rollout, hold.why)
			return stalling(r.RequeueDependency), false // the dependency mended by a reconcile request lets it go on
		}
		after := r.RequeueDependency
		if hold.phase == gitopsv1alpha1.RolloutBaking {
			rollout.BakedAt = &metav1.Time{Time: hold.bakedAt}
			after = hold.bakedAt.Sub(now)
		}
		if held == nil {
			held, holdWhy = rollout, hold.why
		}
		if requeue == 0 || after < requeue {
			requeue = after
		}
	}
	if held == nil {
		passWaves(obj, revision)
		return outcome{}, true
	}
	r.holdBack(obj, held, holdWhy)
	return waiting(requeue), false
}

// passWaves records that no wave holds revision back: status.rollout goes, and so does the wait
// or halt the waves wrote in an earlier reconcile. Left, that Ready=False would outlive it while
// the revision is applied (summarize keeps a Ready=False as it is), the site reading as waiting
// for its wave while it applies it.
func passWaves(obj *gitopsv1alpha1.OsmDeployment, revision string) {
	obj.Status.Rollout = nil
	switch conditions.GetReason(obj, meta.ReadyCondition) {
	case gitopsv1alpha1.WaitingForWaveReason, gitopsv1alpha1.RolloutHaltedReason:
		conditions.MarkReconciling(obj, meta.ProgressingReason, "applying %s: its waves let it through", revision)
		conditions.MarkUnknown(obj, meta.ReadyCondition, meta.ProgressingReason, "applying %s: its waves let it through", revision)
	}
}

// failedSite follows the halted sites from dep, each halted by the one before it, to the site
// that failed revision (the one to mend), and names it, relative to obj, with its Ready reason:
// "OsmDeployment lab failed (OperationFailed)". Its message is left out: each halted site's
// would embed all the ones before it.
func (r *OsmDeploymentReconciler) failedSite(ctx context.Context, obj, dep *gitopsv1alpha1.OsmDeployment, revision string) (string, error) {
	seen := map[types.NamespacedName]bool{client.ObjectKeyFromObject(dep): true}
	for haltedOn(dep, revision) {
		key := rolloutDependencyKey(dep)
		if seen[key] {
			break // halts gone stale in a cycle: the walk ends at the last site it reached
		}
		seen[key] = true
		next := &gitopsv1alpha1.OsmDeployment{}
		switch err := r.Get(ctx, key, next); {
		case apierrors.IsNotFound(err):
			return fmt.Sprintf("%s %s failed (not found now)", gitopsv1alpha1.OsmDeploymentKind, refName(obj, key)), nil
		case err != nil:
			return "", err
		}
		dep = next
	}
	return fmt.Sprintf("%s %s failed (%s)", gitopsv1alpha1.OsmDeploymentKind, refName(obj, client.ObjectKeyFromObject(dep)),
		conditions.GetReason(dep, meta.ReadyCondition)), nil
}

// rolloutDependencyKey is the dependency a halted dep names in status.rollout: "name" in its
// own namespace, or "namespace/name" (refName).
func rolloutDependencyKey(dep *gitopsv1alpha1.OsmDeployment) types.NamespacedName {
	if namespace, name, ok := strings.Cut(dep.Status.Rollout.Dependency, "/"); ok {
		return types.NamespacedName{Namespace: namespace, Name: name}
	}
	return types.NamespacedName{Namespace: dep.Namespace, Name: dep.Status.Rollout.Dependency}
}

// holdBack records a wave that waits (Reconciling, Ready=False WaitingForWave), with a Normal
// event when it waits for something new: not at every requeue of the same wait, nor as the
// bake time left counts down.
func (r *OsmDeploymentReconciler) holdBack(obj *gitopsv1alpha1.OsmDeployment, rollout *gitopsv1alpha1.RolloutStatus, why string) {
	msg := fmt.Sprintf("waiting for %s %s: %s", gitopsv1alpha1.OsmDeploymentKind, rollout.Dependency, why)
	if !sameRollout(obj.Status.Rollout, rollout) {
		r.Eventf(obj, corev1.EventTypeNormal, gitopsv1alpha1.WaitingForWaveReason, "%s", msg)
	}
	obj.Status.Rollout = rollout
	conditions.MarkReconciling(obj, gitopsv1alpha1.WaitingForWaveReason, "%s", msg)
	conditions.MarkFalse(obj, meta.ReadyCondition, gitopsv1alpha1.WaitingForWaveReason, "%s", msg)
}

// halt stalls the OsmDeployment on its previous revision, as its dependency failed the one it
// would apply, with a Warning event naming the dependency, the revision and its message.
func (r *OsmDeploymentReconciler) halt(obj *gitopsv1alpha1.OsmDeployment, rollout *gitopsv1alpha1.RolloutStatus, why string) {
	msg := fmt.Sprintf("rollout of %s halted by %s %s: %s; it stays on %s", gitopsv1alpha1.ShortRevision(rollout.Revision),
		gitopsv1alpha1.OsmDeploymentKind, rollout.Dependency, why, previousRevision(obj))
	if !sameRollout(obj.Status.Rollout, rollout) {
		r.Eventf(obj, corev1.EventTypeWarning, gitopsv1alpha1.RolloutHaltedReason, "%s", msg)
	}
	obj.Status.Rollout = rollout
	markStalled(obj, gitopsv1alpha1.RolloutHaltedReason, "%s", msg)
}

// previousRevision names the revision an OsmDeployment held back keeps running.
func previousRevision(obj *gitopsv1alpha1.OsmDeployment) string {
	if obj.Status.LastAppliedRevision == "" {
		return "no revision"
	}
	return "revision " + gitopsv1alpha1.ShortRevision(obj.Status.LastAppliedRevision)
}

// sameRollout tells whether two rollout statuses hold the same revision at the same dependency
// in the same phase.
func sameRollout(a, b *gitopsv1alpha1.RolloutStatus) bool {
	return a != nil && b != nil && a.Revision == b.Revision && a.Dependency == b.Dependency && a.Phase == b.Phase
}

// dependencyKey is the OsmDeployment dep names: in obj's namespace unless it names another.
func dependencyKey(obj *gitopsv1alpha1.OsmDeployment, dep gitopsv1alpha1.DependencyReference) types.NamespacedName {
	key := types.NamespacedName{Namespace: dep.Namespace, Name: dep.Name}
	if key.Namespace == "" {
		key.Namespace = obj.Namespace
	}
	return key
}
