package controller

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/pipeline"
	"github.com/osmops/osmops/internal/printable"
)

// maxEventNames bounds the NS instance names listed in one event.
const maxEventNames = 10

// maxConditionMessage bounds a condition's message: the API server refuses one over 32 KiB,
// which would leave the status unwritten, and OSM's answers and Git's files, quoted in it,
// are the tenant's to make as long as it likes.
const maxConditionMessage = 4096

// boundMessages makes the conditions' messages safe to show, in the one place every condition
// of both kinds passes before it is written: control characters from OSM or Git escaped
// (printable.String), then cut to maxConditionMessage bytes, on a rune boundary.
func boundMessages(conds []metav1.Condition) {
	for i := range conds {
		conds[i].Message = cut(printable.String(conds[i].Message), maxConditionMessage)
	}
}

// cut returns s cut to at most limit bytes, on a rune boundary, ending in "…" when cut.
func cut(s string, limit int) string { //nolint:unparam // the bound reads best at each call
	if len(s) <= limit {
		return s
	}
	end := limit - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}

// boundReasons bounds the reasons of the status inventory (engine.BoundReasons), so that the
// status of the most NS instances a revision declares fits in what the API server stores.
func boundReasons(status *gitopsv1alpha1.OsmDeploymentStatus) {
	if status.Inventory == nil {
		return
	}
	inventory := pipeline.EngineInventory(*status.Inventory)
	engine.BoundReasons(&inventory)
	status.Inventory = pipeline.APIInventory(inventory)
}

// summarize keeps the conditions consistent for kstatus: Stalled is final; Reconciling means
// in progress and makes Ready Unknown unless a step said False, also when Ready was True
// (a new revision, a drift correction: Ready=True says every operation of the revision
// completed, which holds no longer); Ready=True alone means done. Messages are bounded and
// the short revisions follow the long ones.
func summarize(obj *gitopsv1alpha1.OsmDeployment) {
	defer func() {
		boundMessages(obj.Status.Conditions)
		boundReasons(&obj.Status)
		boundHistory(obj.Status.History)
	}()
	obj.Status.LastAppliedRevisionShort = gitopsv1alpha1.ShortRevision(obj.Status.LastAppliedRevision)
	obj.Status.LastAttemptedRevisionShort = gitopsv1alpha1.ShortRevision(obj.Status.LastAttemptedRevision)
	switch {
	case conditions.IsStalled(obj):
		conditions.Delete(obj, meta.ReconcilingCondition)
	case conditions.IsReconciling(obj):
		if !conditions.IsFalse(obj, meta.ReadyCondition) {
			conditions.MarkUnknown(obj, meta.ReadyCondition, conditions.GetReason(obj, meta.ReconcilingCondition),
				"%s", conditions.GetMessage(obj, meta.ReconcilingCondition))
		}
	case conditions.IsReady(obj):
		conditions.Delete(obj, meta.StalledCondition)
	}
}

// suspend records that spec.suspend is set, as Flux does: the Ready condition keeps the status
// of the last observation (kubectl wait and dependsOn see what was last known) with the reason
// Suspended, Reconciling goes (nothing is in progress) and observedGeneration follows the
// spec, so that kstatus does not report the object in progress for as long as it is
// suspended: Current when it was Ready, Failed (Stalled) otherwise. A Normal event says so once.
func (r *OsmDeploymentReconciler) suspend(obj *gitopsv1alpha1.OsmDeployment) {
	obj.Status.ObservedGeneration = obj.Generation
	// Suspended, it waits for no wave (the Ready message keeps the last wait): its resume
	// judges the waves again (docs/rollouts.md).
	obj.Status.Rollout = nil
	conditions.Delete(obj, meta.ReconcilingCondition)
	if conditions.GetReason(obj, meta.ReadyCondition) == gitopsv1alpha1.SuspendedReason {
		return
	}
	msg := "reconciliation suspended: nothing is applied, pruned or checked for drift"
	status := metav1.ConditionUnknown
	if last := conditions.Get(obj, meta.ReadyCondition); last != nil {
		status = last.Status
		msg += "; last observation: " + last.Message
	}
	conditions.Set(obj, &metav1.Condition{Type: meta.ReadyCondition, Status: status,
		Reason: gitopsv1alpha1.SuspendedReason, Message: cut(msg, maxConditionMessage)})
	if status != metav1.ConditionTrue && !conditions.IsStalled(obj) {
		// kstatus reads a Ready condition that is not True as in progress, which a suspended
		// object is not: Stalled says that nothing changes until it is resumed.
		conditions.MarkStalled(obj, gitopsv1alpha1.SuspendedReason, "suspended while not Ready: nothing changes until spec.suspend is unset")
	}
	r.Eventf(obj, corev1.EventTypeNormal, gitopsv1alpha1.SuspendedReason, "reconciliation suspended: nothing is applied, pruned or checked for drift")
}

// resume notices that spec.suspend was unset: a Normal event, and the OsmDeployment in
// progress until the next steps say where it stands.
func (r *OsmDeploymentReconciler) resume(obj *gitopsv1alpha1.OsmDeployment) {
	if conditions.GetReason(obj, meta.ReadyCondition) != gitopsv1alpha1.SuspendedReason {
		return
	}
	r.Eventf(obj, corev1.EventTypeNormal, gitopsv1alpha1.ResumedReason, "reconciliation resumed")
	conditions.MarkReconciling(obj, meta.ProgressingReason, "reconciliation resumed")
	conditions.MarkUnknown(obj, meta.ReadyCondition, meta.ProgressingReason, "reconciliation resumed")
}

// markStalled records a failure that retrying cannot fix: it holds until the spec, the
// revision or a reconcile request changes.
func markStalled(obj *gitopsv1alpha1.OsmDeployment, reason, format string, args ...any) {
	conditions.MarkStalled(obj, reason, format, args...)
	conditions.MarkFalse(obj, meta.ReadyCondition, reason, format, args...)
	conditions.Delete(obj, meta.ReconcilingCondition)
	obj.Status.ObservedGeneration = obj.Generation
}

// waitFor records a wait that resolves by itself (a dependency, the OsmCluster, the source,
// values, OSM busy or down) but may need someone to look (something missing or failed), in
// one wording: "waiting for <kind> <name>: <why>", in the Ready and Reconciling conditions and
// in a Warning event. The event is emitted when the wait is new or says something new, not at
// every retry of the same one, as Flux emits on transitions; a why that changes at every retry
// (an error naming a connection's port, retried with back-off) is left to the event
// recorder's aggregation of similar events.
func (r *OsmDeploymentReconciler) waitFor(obj *gitopsv1alpha1.OsmDeployment, reason, kind, name, why string) {
	r.wait(obj, corev1.EventTypeWarning, reason, kind, name, why)
}

// awaitProgress records, as waitFor, a wait for what is on its way (an OsmCluster being
// checked, a source without an artifact yet, a dependency not Ready yet: see progressing),
// with a Normal event, as Flux's DependencyNotReady: every new OsmDeployment waits so at
// first, and a Warning is for what a person must act on.
func (r *OsmDeploymentReconciler) awaitProgress(obj *gitopsv1alpha1.OsmDeployment, reason, kind, name, why string) {
	r.wait(obj, corev1.EventTypeNormal, reason, kind, name, why)
}

func (r *OsmDeploymentReconciler) wait(obj *gitopsv1alpha1.OsmDeployment, eventType, reason, kind, name, why string) {
	msg := cut(fmt.Sprintf("waiting for %s %s: %s", kind, name, why), maxConditionMessage)
	if conditions.GetReason(obj, meta.ReadyCondition) != reason || conditions.GetMessage(obj, meta.ReadyCondition) != msg {
		r.Eventf(obj, eventType, reason, "%s", msg)
	}
	conditions.MarkReconciling(obj, reason, "%s", msg)
	conditions.MarkFalse(obj, meta.ReadyCondition, reason, "%s", msg)
}

// waitOn records a wait for an object that is not Ready: awaitProgress while it progresses,
// waitFor once it failed.
func (r *OsmDeploymentReconciler) waitOn(obj *gitopsv1alpha1.OsmDeployment, other conditions.Getter, reason, kind, name, why string) {
	if progressing(other) {
		r.awaitProgress(obj, reason, kind, name, why)
		return
	}
	r.waitFor(obj, reason, kind, name, why)
}

// progressing tells whether an object that is not Ready is on its way: it has not said
// whether it is Ready yet, or it is reconciling. Ready=False otherwise is a failure.
func progressing(obj conditions.Getter) bool {
	return !conditions.IsFalse(obj, meta.ReadyCondition) || conditions.IsReconciling(obj)
}

// notReady says why an object is not Ready, never with an empty reason: its Ready condition's
// message, else what it is reconciling for, else the Ready condition's reason; an object with
// neither (just created: a start, a new OsmCluster) has not been looked at yet.
func notReady(obj conditions.Getter) string {
	why := cmp.Or(conditions.GetMessage(obj, meta.ReadyCondition), conditions.GetMessage(obj, meta.ReconcilingCondition),
		conditions.GetReason(obj, meta.ReadyCondition))
	if why == "" {
		return "not checked yet by its controller"
	}
	return "not Ready: " + why
}

// refName names an object an OsmDeployment refers to: by name in its own namespace, by
// namespace/name in another.
func refName(obj *gitopsv1alpha1.OsmDeployment, key types.NamespacedName) string {
	if key.Namespace == obj.Namespace {
		return key.Name
	}
	return key.String()
}

// setSummary counts the declared NS instances that are Ready.
func setSummary(obj *gitopsv1alpha1.OsmDeployment, declared int) {
	ready := countInstances(obj, gitopsv1alpha1.NsInstanceReady)
	obj.Status.NsInstancesReady = int32(ready)
	obj.Status.NsInstancesTotal = int32(declared)
	obj.Status.NsInstancesSummary = fmt.Sprintf("%d/%d", ready, declared)
}

func countInstances(obj *gitopsv1alpha1.OsmDeployment, state gitopsv1alpha1.NsInstanceState) int {
	if obj.Status.Inventory == nil {
		return 0
	}
	n := 0
	for _, e := range obj.Status.Inventory.NsInstances {
		if e.State == state {
			n++
		}
	}
	return n
}

func hasFailedInstances(obj *gitopsv1alpha1.OsmDeployment) bool {
	return countInstances(obj, gitopsv1alpha1.NsInstanceFailed) > 0
}

// hasUnsettledInstances tells, once every recorded operation has ended, whether an NS
// instance still waits for a change no operation carried: a create, upgrade or delete that did
// not reach OSM (a transient failure), an instance OSM was busy with, or one being replaced
// (terminated, then created again by the next plan). The revision is then applied again, not
// reported applied.
func hasUnsettledInstances(obj *gitopsv1alpha1.OsmDeployment) bool {
	return countInstances(obj, gitopsv1alpha1.NsInstanceCreating)+countInstances(obj, gitopsv1alpha1.NsInstanceProgressing)+
		countInstances(obj, gitopsv1alpha1.NsInstanceDeleting)+countInstances(obj, gitopsv1alpha1.NsInstanceReplacing) > 0
}

// markFailedInstances stalls the OsmDeployment on the NS instances whose last operation
// failed, keeping OSM's own words when the Ready condition already has them.
func markFailedInstances(obj *gitopsv1alpha1.OsmDeployment) {
	msg := conditions.GetMessage(obj, meta.ReadyCondition)
	reason := conditions.GetReason(obj, meta.ReadyCondition)
	if reason != gitopsv1alpha1.OperationFailedReason && reason != gitopsv1alpha1.TimeoutReason && reason != gitopsv1alpha1.RemediationExhaustedReason {
		reason = gitopsv1alpha1.OperationFailedReason
		var names []string
		for _, e := range obj.Status.Inventory.NsInstances {
			if e.State == gitopsv1alpha1.NsInstanceFailed {
				names = append(names, e.Name)
			}
		}
		msg = "failed in OSM: NS instance(s) " + listNames(names) + "; retried on a new revision or a reconcile request"
	}
	markStalled(obj, failureReason(obj, reason), "%s", msg)
	healthFailed(obj, failureReason(obj, reason), msg)
}

// recordApplied writes what OSM answered into status: the ids of new packages and instances,
// and the operations to wait for. A package OSM refused, or that was not sent, keeps its entry
// of before the plan (previous), so that a later revision or reconcile request sends it again.
func recordApplied(obj *gitopsv1alpha1.OsmDeployment, previous gitopsv1alpha1.Inventory, plan *engine.Plan, result *engine.Result, now time.Time) {
	inventory := obj.Status.Inventory
	planned := map[string]bool{}
	for _, action := range plan.Packages {
		planned[action.Package.Descriptor.ID] = true
	}
	before := map[string]gitopsv1alpha1.PackageEntry{}
	for _, e := range previous.Packages {
		before[e.Name] = e
	}
	packages := inventory.Packages[:0]
	for _, e := range inventory.Packages {
		id, accepted := result.Packages[e.Name]
		switch {
		case accepted:
			e.ID = id
		case planned[e.Name]:
			old, known := before[e.Name]
			if !known {
				continue
			}
			e = old
		}
		packages = append(packages, e)
	}
	inventory.Packages = packages
	refused := map[string]bool{}
	for _, e := range result.Errors {
		if e.Action == engine.ActionCreateNSInstance && !retryable(e.Err) {
			refused[e.Subject] = true // OSM made nothing: nothing to own
		}
	}
	kept := inventory.NsInstances[:0]
	for _, e := range inventory.NsInstances {
		if refused[e.Name] {
			// A replacement OSM refused stays: its old instance is gone, and the next plan
			// creates it again rather than forget it.
			next := engine.Next(pipeline.EngineState(e.State), engine.CreateRefused)
			if next == engine.NoInstance {
				continue
			}
			e.State = pipeline.APIState(next)
		}
		if id, ok := result.NsInstanceIDs[e.Name]; ok {
			e.ID = id
			e.State = pipeline.APIState(engine.Next(pipeline.EngineState(e.State), engine.CreateAccepted))
		}
		kept = append(kept, e)
	}
	inventory.NsInstances = kept
	for _, op := range result.Operations {
		obj.Status.Operations = append(obj.Status.Operations, gitopsv1alpha1.OperationEntry{
			ID: op.ID, Type: op.Type, NsInstance: op.NsInstance, State: osm.OperationProcessing,
			StartTime: metav1.NewTime(now), MoreUpgrades: op.MoreUpgrades, Rollback: op.Rollback,
		})
	}
	setSummary(obj, int(obj.Status.NsInstancesTotal))
}

// setInstanceState records the outcome of a finished operation in the inventory, as the NS
// instance lifecycle (engine.Transition) says: a completed terminate removes the instance from
// it, but for a replace; a completed package move leaves it to the next plan.
func setInstanceState(obj *gitopsv1alpha1.OsmDeployment, outcome engine.Outcome) {
	if obj.Status.Inventory == nil {
		return
	}
	entries := obj.Status.Inventory.NsInstances
	for i := range entries {
		if entries[i].Name != outcome.Operation.NsInstance {
			continue
		}
		event := outcome.Event()
		counted := pipeline.EngineInstance(entries[i])
		pipeline.RemediationOf(obj).CountFailure(&counted, outcome)
		entries[i] = pipeline.APIInstance(counted)
		next, err := engine.Transition(counted.State, event)
		switch {
		case err != nil:
			// No answer is allowed about an entry whose state is none of the API's: it is left as it is.
		case next == engine.NoInstance:
			obj.Status.Inventory.NsInstances = append(entries[:i], entries[i+1:]...)
		case event == engine.TerminateCompleted:
			// The old instance of a replace is gone: the next plan creates the new one.
			entries[i].ID = ""
		default:
			entries[i].State = pipeline.APIState(next)
			if next == engine.InstanceReady {
				entries[i].Reason = ""
			}
		}
		break
	}
	setSummary(obj, int(obj.Status.NsInstancesTotal))
}

// describePlan says in a few words what a plan changes.
func describePlan(plan *engine.Plan) string {
	description := fmt.Sprintf("%d package upload(s), %d NS instance create(s), %d upgrade(s), %d delete(s)",
		len(plan.Packages), len(plan.Creates), len(plan.Upgrades), len(plan.Deletes))
	if len(plan.PackageMoves) > 0 {
		description += fmt.Sprintf(", %d move(s) to a VNF package revision", len(plan.PackageMoves))
	}
	return description
}

// eventApplied emits one Normal event for what an apply sent, naming the instances and why.
func (r *OsmDeploymentReconciler) eventApplied(obj *gitopsv1alpha1.OsmDeployment, revision string, plan *engine.Plan, result *engine.Result) {
	var parts []string
	for _, group := range []struct {
		verb    string
		actions []engine.NsAction
	}{{"create", plan.Creates}, {"upgrade", plan.Upgrades}, {"update", plan.PackageMoves}, {"delete", plan.Deletes}} {
		byReason := map[string][]string{}
		for _, a := range group.actions {
			byReason[a.Reason] = append(byReason[a.Reason], a.Name)
		}
		reasons := make([]string, 0, len(byReason))
		for reason := range byReason {
			reasons = append(reasons, reason)
		}
		slices.Sort(reasons)
		for _, reason := range reasons {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", group.verb, listNames(byReason[reason]), reason))
		}
	}
	var uploaded, marked []string
	for _, p := range plan.Packages {
		if p.MarkOnly {
			marked = append(marked, p.Package.Descriptor.ID)
		} else {
			uploaded = append(uploaded, p.Package.Descriptor.ID)
		}
	}
	if len(marked) > 0 {
		parts = append([]string{"mark package(s) " + listNames(marked) + " as this OsmDeployment's"}, parts...)
	}
	if len(uploaded) > 0 {
		parts = append([]string{"upload package(s) " + listNames(uploaded)}, parts...)
	}
	if len(parts) == 0 {
		return
	}
	r.Eventf(obj, corev1.EventTypeNormal, gitopsv1alpha1.ProgressingReason, "%s: %s; %d OSM operation(s) started",
		revision, strings.Join(parts, "; "), len(result.Operations))
}

// listNames joins names, at most maxEventNames of them.
func listNames(names []string) string {
	slices.Sort(names)
	if len(names) <= maxEventNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxEventNames], ", "), len(names)-maxEventNames)
}
