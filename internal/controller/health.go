package controller

// The health of the applied revision: the Healthy condition (gitopsv1alpha1.HealthyCondition).
//
// OSM's operation COMPLETED is not yet "the network service works". Once a revision is applied,
// the plan that follows (settleOperations) and every drift check observe OSM anyway; what they
// read tells, with no request more, whether each NS instance the OsmDeployment owns is READY,
// running, with its KDUs READY (osmHealth). Then the Kubernetes objects of spec.healthChecks are
// read, as a Flux Kustomization's are, and their readiness computed by Flux's own status
// readers (kstatus, the Job reader, the CEL expressions of spec.healthCheckExprs), once per
// reconcile: the worker is never held waiting, the reconcile is requeued at the operation poll
// interval until they pass or spec.healthCheckTimeout (counted from
// status.lastAppliedRevisionTime) runs out.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/statusreaders"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	osmengine "github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/healthexpr"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmconn"
)

// secretKind is refused in spec.healthChecks: the manager reads Secrets (valuesFrom), and a
// CEL expression on one's data, with its verdict in the condition, would disclose the data to
// whoever may write an OsmDeployment.
var secretKind = schema.GroupKind{Kind: "Secret"}

// health is a verdict on the applied revision: the Healthy condition's status, reason and
// message.
type health struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

// osmHealth tells from what OSM answered whether it runs the inventory's NS instances as it
// should: every one READY (nsState), its operational-status running, every KDU READY (kdur
// status), none failed. An instance the observation did not read (driftDetection disabled
// leaves the unchanged ones out: engine.RevisionScope) is taken as the inventory lists it. The
// worst verdict wins: False over Unknown over True.
func osmHealth(inventory gitopsv1alpha1.Inventory, observed *osmengine.Observed) health {
	var failed, unhealthy, progressing []string
	for _, e := range inventory.NsInstances {
		switch {
		case e.State == gitopsv1alpha1.NsInstanceOrphaned:
			continue // left running, no longer declared (prune off): not the revision's
		case e.State == gitopsv1alpha1.NsInstanceFailed:
			failed = append(failed, e.Name)
			continue
		case e.State != gitopsv1alpha1.NsInstanceReady && e.State != gitopsv1alpha1.NsInstanceDrifted:
			// Drifted (driftDetection warn) runs as OSM was changed by hand: its records tell.
			progressing = append(progressing, fmt.Sprintf("%s (%s)", e.Name, e.State))
			continue
		}
		record, read := observed.NSInstances[e.ID]
		if !read {
			continue
		}
		why, done := instanceHealth(record, observed.VNFs[e.ID])
		switch {
		case why == "":
		case done:
			unhealthy = append(unhealthy, e.Name+": "+why)
		default:
			progressing = append(progressing, e.Name+": "+why)
		}
	}
	switch {
	case len(failed) > 0:
		return health{metav1.ConditionFalse, gitopsv1alpha1.OperationFailedReason,
			"the last operation of NS instance(s) " + listNames(failed) + " failed in OSM"}
	case len(unhealthy) > 0:
		return health{metav1.ConditionFalse, gitopsv1alpha1.NSInstanceUnhealthyReason,
			"OSM reports NS instance(s) not healthy: " + listNames(unhealthy)}
	case len(progressing) > 0:
		return health{metav1.ConditionUnknown, gitopsv1alpha1.ProgressingReason,
			"waiting for OSM to make NS instance(s) ready: " + listNames(progressing)}
	}
	return health{metav1.ConditionTrue, gitopsv1alpha1.SucceededReason,
		fmt.Sprintf("%d NS instance(s) READY in OSM, their KDUs READY", len(inventory.NsInstances))}
}

// instanceHealth says what is wrong with an NS record and its VNF records ("" when nothing),
// and whether it is final (done: OSM ended in that state) rather than on its way.
func instanceHealth(record osm.NSInstance, vnfs []osm.VNFInstance) (string, bool) {
	switch record.NSState {
	case osm.NSStateReady:
	case osm.NSStateBuilding, "":
		return "nsState " + record.NSState, false
	default:
		return "nsState " + record.NSState, true
	}
	switch record.OperationalStatus {
	case "running":
	case "failed":
		return "operational-status failed", true
	default:
		return "operational-status " + string(record.OperationalStatus), false
	}
	for _, vnf := range vnfs {
		for _, kdu := range vnf.KDURecords {
			switch kdu.Status {
			case "READY", "ENABLED": // LCM's words for a KDU that runs (ns.py)
			case "ERROR", "FAILED":
				return fmt.Sprintf("KDU %s/%s status %s", vnf.MemberVnfIndex, kdu.KDUName, kdu.Status), true
			default:
				return fmt.Sprintf("KDU %s/%s status %q", vnf.MemberVnfIndex, kdu.KDUName, string(kdu.Status)), false
			}
		}
	}
	return "", false
}

// readHealth reads the records OSM keeps of the NS instances whose operations ended, and their
// VNF records (two GET requests), for their health once their revision is applied: an
// operation COMPLETED is not yet an instance READY with its KDUs. The other instances are
// taken as the inventory lists them (read again at the drift check). Nil when OSM did not
// answer: the health is then told by the next plan that observes.
func (r *OsmDeploymentReconciler) readHealth(ctx context.Context, conn *osmconn.Connection, ended []osmengine.Outcome) *osmengine.Observed {
	var names []string
	for _, o := range ended {
		if !o.Failed && !o.TimedOut && o.Operation.Type != osm.OperationTypeTerminate {
			names = append(names, o.Operation.NsInstance)
		}
	}
	observed := &osmengine.Observed{NSInstances: map[string]osm.NSInstance{}, VNFs: map[string][]osm.VNFInstance{}}
	if len(names) == 0 {
		return observed // terminates alone: the other instances are as the inventory lists them
	}
	slices.Sort(names)
	instances, err := conn.NBI.ListNSInstances(ctx, slices.Compact(names)...)
	if err != nil {
		return nil
	}
	ids := make([]string, len(instances))
	for i, ns := range instances {
		observed.NSInstances[ns.ID], ids[i] = ns, ns.ID
	}
	vnfs, err := conn.NBI.ListVNFInstances(ctx, ids...)
	if err != nil {
		return nil
	}
	for _, vnf := range vnfs {
		observed.VNFs[vnf.NSInstanceID] = append(observed.VNFs[vnf.NSInstanceID], vnf)
	}
	return observed
}

// healthProgressing records that OSM applies a revision: its health is not known until OSM is
// done.
func healthProgressing(obj *gitopsv1alpha1.OsmDeployment, revision string) {
	conditions.MarkUnknown(obj, gitopsv1alpha1.HealthyCondition, gitopsv1alpha1.ProgressingReason, "OSM applies revision %s", revision)
}

// healthFailed records an operation of the revision that failed or timed out (reason and OSM's
// message, as the Ready condition has them).
func healthFailed(obj *gitopsv1alpha1.OsmDeployment, reason, msg string) {
	conditions.MarkFalse(obj, gitopsv1alpha1.HealthyCondition, reason, "%s", msg)
}

// reportHealth sets the Healthy condition of a revision just found applied (Ready, after a plan
// that observed OSM: observed), from OSM's records, then from spec.healthChecks; it returns the
// outcome of the reconcile: applied's, unless the health checks are still waited for.
func (r *OsmDeploymentReconciler) reportHealth(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, observed *osmengine.Observed, applied outcome) outcome {
	if !conditions.IsReady(obj) || obj.Status.Inventory == nil {
		return applied
	}
	if observed == nil {
		r.setHealth(obj, health{metav1.ConditionUnknown, gitopsv1alpha1.ProgressingReason, "OSM's records not read: told at the next drift check"})
		return applied
	}
	verdict := osmHealth(*obj.Status.Inventory, observed)
	if verdict.status == metav1.ConditionTrue && len(obj.Spec.HealthChecks) > 0 {
		verdict = r.checkObjects(ctx, obj)
	}
	return r.settleHealth(obj, verdict, applied)
}

// settleHealth writes the verdict and returns the outcome it leaves: applied's when healthy or
// failed by OSM, stalling on a failed health check (looked at again at the drift check),
// waiting (poll) while it is not known yet.
func (r *OsmDeploymentReconciler) settleHealth(obj *gitopsv1alpha1.OsmDeployment, verdict health, applied outcome) outcome {
	r.setHealth(obj, verdict)
	switch {
	case verdict.reason == gitopsv1alpha1.HealthCheckFailedReason || verdict.reason == gitopsv1alpha1.InvalidCELExpressionReason ||
		verdict.reason == gitopsv1alpha1.AccessDeniedReason:
		markStalled(obj, verdict.reason, "revision %s: %s", obj.Status.LastAppliedRevision, verdict.message)
		return stalling(r.interval(obj)) // looked at again at the drift check
	case verdict.status == metav1.ConditionUnknown && applied.kind == outcomeDone:
		conditions.MarkReconciling(obj, meta.ProgressingReason, "%s", verdict.message)
		return waiting(r.OperationPollInterval)
	}
	return applied
}

// setHealth writes the verdict in the Healthy condition, with an event when it changes: Normal
// when it became healthy, Warning when not.
func (r *OsmDeploymentReconciler) setHealth(obj *gitopsv1alpha1.OsmDeployment, verdict health) {
	msg := cut(fmt.Sprintf("revision %s: %s", obj.Status.LastAppliedRevision, verdict.message), maxConditionMessage)
	last := conditions.Get(obj, gitopsv1alpha1.HealthyCondition)
	changed := last == nil || last.Status != verdict.status || last.Reason != verdict.reason || last.Message != msg
	switch {
	case !changed:
	case verdict.status == metav1.ConditionTrue:
		r.Eventf(obj, corev1.EventTypeNormal, verdict.reason, "healthy: %s", msg)
	case verdict.status == metav1.ConditionFalse:
		r.Eventf(obj, corev1.EventTypeWarning, verdict.reason, "not healthy: %s", msg)
	}
	conditions.Set(obj, &metav1.Condition{Type: gitopsv1alpha1.HealthyCondition, Status: verdict.status,
		Reason: verdict.reason, Message: msg})
}

// waitsForHealthChecks tells that OSM was found healthy on revision, applied with the current
// spec, and only spec.healthChecks are waited for (Healthy's reason HealthCheckPending, which
// checkObjects alone writes, and which a new applied revision replaces in the same reconcile:
// reportHealth follows markApplied): reading OSM again would tell nothing new at each poll (a
// whole drift-check observation), so only the objects are read until they pass or fail (the
// HealthChecking state).
func waitsForHealthChecks(obj *gitopsv1alpha1.OsmDeployment, revision string) bool {
	return conditions.GetReason(obj, gitopsv1alpha1.HealthyCondition) == gitopsv1alpha1.HealthCheckPendingReason &&
		obj.Status.LastAppliedRevision == revision && obj.Status.ObservedGeneration == obj.Generation && len(obj.Spec.HealthChecks) > 0
}

// recheckObjects is the action of HealthChecking: the revision stays applied, and the objects
// of spec.healthChecks say whether it is healthy yet.
func (r *OsmDeploymentReconciler) recheckObjects(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) outcome {
	conditions.MarkTrue(obj, meta.ReadyCondition, gitopsv1alpha1.AppliedReason, "Applied revision: %s", obj.Status.LastAppliedRevision)
	conditions.Delete(obj, meta.ReconcilingCondition)
	return r.settleHealth(obj, r.checkObjects(ctx, obj), done(r.interval(obj)))
}

// checkObjects reads the objects of spec.healthChecks and computes their readiness, as Flux's
// status poller does (the CEL expressions of their kind, else Flux's Job reader, else
// kstatus): True when all are Current; Unknown (naming the first that is not) until
// healthCheckTimeout after the revision was applied; False when one Failed, or past it.
func (r *OsmDeploymentReconciler) checkObjects(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) health {
	celReader, err := celStatusReader(obj)
	if err != nil {
		return health{metav1.ConditionFalse, gitopsv1alpha1.InvalidCELExpressionReason, err.Error()}
	}
	mapper := r.RESTMapper()
	readers := []engine.StatusReader{statusreaders.NewCustomJobStatusReader(mapper)}
	if celReader != nil {
		readers = append([]engine.StatusReader{celReader(mapper)}, readers...)
	}
	for _, ref := range obj.Spec.HealthChecks {
		key := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
		if key.Namespace == "" {
			key.Namespace = obj.Namespace
		}
		name := ref.Kind + " " + refName(obj, key)
		if schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind() == secretKind {
			return health{metav1.ConditionFalse, gitopsv1alpha1.AccessDeniedReason,
				"health check " + name + ": Secrets are never read for a health check (an expression on their data would disclose it)"}
		}
		if r.NoCrossNamespaceRefs && key.Namespace != obj.Namespace {
			return health{metav1.ConditionFalse, gitopsv1alpha1.AccessDeniedReason,
				"health check " + name + " is in another namespace, which --no-cross-namespace-refs forbids"}
		}
		gvk, namespaced, err := r.healthCheckKind(ref)
		var result *kstatus.Result
		switch {
		case err == nil && !namespaced && r.NoCrossNamespaceRefs:
			// A cluster-scoped object is in no tenant's namespace: reading it would tell a
			// tenant about others (a Namespace's labels, whether one exists).
			return health{metav1.ConditionFalse, gitopsv1alpha1.AccessDeniedReason,
				"health check " + ref.Kind + " " + ref.Name + " is cluster-scoped, outside the namespace, which --no-cross-namespace-refs forbids"}
		case err == nil:
			if !namespaced {
				key.Namespace = ""
			}
			result, err = r.objectStatus(ctx, readers, gvk, key)
		}
		switch {
		case err == nil && result.Status == kstatus.CurrentStatus:
			continue
		case err == nil && result.Status == kstatus.FailedStatus:
			return health{metav1.ConditionFalse, gitopsv1alpha1.HealthCheckFailedReason, fmt.Sprintf("health check %s failed: %s", name, result.Message)}
		case errors.Is(err, healthexpr.ErrCostLimit):
			// The expression is at fault, not the object: waiting would spend it again.
			return health{metav1.ConditionFalse, gitopsv1alpha1.InvalidCELExpressionReason, fmt.Sprintf("health check %s: %s", name, err)}
		}
		why := ""
		if err != nil {
			why = err.Error()
		} else {
			why = strings.TrimSuffix(string(result.Status)+": "+result.Message, ": ")
		}
		timeout := obj.GetHealthCheckTimeout()
		if since := obj.Status.LastAppliedRevisionTime; since != nil && time.Since(since.Time) > timeout {
			return health{metav1.ConditionFalse, gitopsv1alpha1.HealthCheckFailedReason,
				fmt.Sprintf("health check %s not ready within %s: %s", name, timeout, why)}
		}
		return health{metav1.ConditionUnknown, gitopsv1alpha1.HealthCheckPendingReason, fmt.Sprintf("waiting for health check %s: %s", name, why)}
	}
	return health{metav1.ConditionTrue, gitopsv1alpha1.SucceededReason,
		fmt.Sprintf("%d NS instance(s) READY in OSM, %d health check(s) passed", len(obj.Status.Inventory.NsInstances), len(obj.Spec.HealthChecks))}
}

// celStatusReader compiles spec.healthCheckExprs into a status reader with Flux's semantics
// and a cost limit (healthexpr: the tenant writes them, the shared manager evaluates them),
// nil when none; one per reconcile, as its expressions share one budget.
func celStatusReader(obj *gitopsv1alpha1.OsmDeployment) (func(apimeta.RESTMapper) engine.StatusReader, error) {
	if len(obj.Spec.HealthCheckExprs) == 0 {
		return nil, nil
	}
	return healthexpr.NewStatusReader(obj.Spec.HealthCheckExprs)
}

// healthCheckKind resolves the kind of a health check's reference, with the API server's
// mapping when the apiVersion names no version, and tells whether its objects are namespaced.
func (r *OsmDeploymentReconciler) healthCheckKind(ref meta.NamespacedObjectKindReference) (schema.GroupVersionKind, bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupVersionKind{}, false, fmt.Errorf("apiVersion %q: %w", ref.APIVersion, err)
	}
	gvk := gv.WithKind(ref.Kind)
	var versions []string
	if gvk.Version != "" {
		versions = append(versions, gvk.Version)
	}
	mapping, err := r.RESTMapper().RESTMapping(gvk.GroupKind(), versions...)
	if err != nil {
		return schema.GroupVersionKind{}, false, err
	}
	return mapping.GroupVersionKind, mapping.Scope.Name() == apimeta.RESTScopeNameNamespace, nil
}

// objectStatus reads one object of spec.healthChecks past the cache (get alone: no informer,
// no list or watch on a kind the tenant names) and computes its status with the first reader
// that supports its kind, else kstatus.
func (r *OsmDeploymentReconciler) objectStatus(ctx context.Context, readers []engine.StatusReader,
	gvk schema.GroupVersionKind, key types.NamespacedName) (*kstatus.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := r.APIReader.Get(ctx, key, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("not found")
		}
		return nil, err
	}
	for _, reader := range readers {
		if reader.Supports(gvk.GroupKind()) {
			status, err := reader.ReadStatusForObject(ctx, nil, u)
			if err != nil {
				return nil, err
			}
			if status.Error != nil {
				return nil, status.Error
			}
			return &kstatus.Result{Status: status.Status, Message: status.Message}, nil
		}
	}
	return kstatus.Compute(u)
}
