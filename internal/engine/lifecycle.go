package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/osmops/osmops/internal/osm"
)

// NoInstance is the state of an NS instance the inventory does not list: the state before the
// first event of an instance Git newly declares (or that a marker alone names), and the state
// after the event that removes it from the inventory.
const NoInstance InstanceState = ""

// Event is what moves an NS instance from one state of its lifecycle to the next: what a plan
// did with it, given what OSM showed of it (the Plan… events, from Compute), or what OSM
// answered to what was sent (the others, recorded by the controller, on the apply and the
// deletion path alike).
type Event int

// The events of the lifecycle; the table at Transition says where each leads.
const (
	// PlanCreate: OSM has no instance of the declaration: the plan sends a create (a first one,
	// one again after a deletion outside Git, or the new instance of a replace).
	PlanCreate Event = iota
	// PlanUpgrade: a KDU's Helm release differs from the declaration: the plan sends an upgrade.
	PlanUpgrade
	// PlanMove: a VNF runs an older revision of its package than OSM holds
	// (spec.instancesFollowPackages): the plan sends its move.
	PlanMove
	// PlanAwaitUpload: a VNF's package is uploaded by this plan: its move waits for the upload.
	PlanAwaitUpload
	// PlanBusy: OSM runs or queued an operation on the instance: nothing is sent.
	PlanBusy
	// PlanInStep: the instance is idle and as declared, or differs only by a drift left alone
	// (IgnoreDrift): nothing is sent.
	PlanInStep
	// PlanBroken: OSM reports the instance BROKEN: nothing is sent.
	PlanBroken
	// PlanFailedKept: the change that failed last would be sent again unchanged (the same
	// declaration, the same package move): it is not, until a new revision or a reconcile
	// request.
	PlanFailedKept
	// PlanDriftReported: OSM changed or deleted the instance outside Git and ReportDrift leaves it so.
	PlanDriftReported
	// PlanReplace: OSM cannot make the declared change in place and spec.force is set: the old
	// instance's terminate is sent, or waited for.
	PlanReplace
	// PlanOrphan: Git no longer declares the instance and prune is off: it is left running.
	PlanOrphan
	// PlanPrune: Git no longer declares the instance (or the OsmDeployment is being deleted) and
	// prune is on: its terminate is sent, or waited for.
	PlanPrune
	// CreateAccepted: OSM gave the created instance an id; its instantiation runs.
	CreateAccepted
	// CreateRefused: OSM refused a create for good: it made nothing.
	CreateRefused
	// OperationCompleted: an instantiation, or the last upgrade of an instance, completed.
	OperationCompleted
	// UpgradeCompletedWithMore: an upgrade completed and other KDUs of the instance wait for
	// theirs (NsAction.MoreUpgrades).
	UpgradeCompletedWithMore
	// MoveCompleted: a package move (one VNF) completed: the next plan moves the next VNF, if any.
	MoveCompleted
	// TerminateCompleted: OSM terminated and removed the instance.
	TerminateCompleted
	// OperationFailed: an operation failed, or was given up on at the timeout.
	OperationFailed
	// RollbackCompleted: the upgrade that put a KDU back to the values and chart it last ran
	// successfully (remediateLastFailure) completed: the declaration still failed, so the
	// instance stays Failed and is not sent it again (PlanFailedKept).
	RollbackCompleted
	events // the number of events
)

// eventNames names each event. Its length must be events: an event added without its name
// leaves the array short and the two checks below fail to compile (sized [events], it
// compiled, and the name was empty).
var eventNames = [...]string{
	PlanCreate:               "PlanCreate",
	PlanUpgrade:              "PlanUpgrade",
	PlanMove:                 "PlanMove",
	PlanAwaitUpload:          "PlanAwaitUpload",
	PlanBusy:                 "PlanBusy",
	PlanInStep:               "PlanInStep",
	PlanBroken:               "PlanBroken",
	PlanFailedKept:           "PlanFailedKept",
	PlanDriftReported:        "PlanDriftReported",
	PlanReplace:              "PlanReplace",
	PlanOrphan:               "PlanOrphan",
	PlanPrune:                "PlanPrune",
	CreateAccepted:           "CreateAccepted",
	CreateRefused:            "CreateRefused",
	OperationCompleted:       "OperationCompleted",
	UpgradeCompletedWithMore: "UpgradeCompletedWithMore",
	MoveCompleted:            "MoveCompleted",
	TerminateCompleted:       "TerminateCompleted",
	OperationFailed:          "OperationFailed",
	RollbackCompleted:        "RollbackCompleted",
}

var (
	_ [len(eventNames) - int(events)]struct{}
	_ [int(events) - len(eventNames)]struct{}
)

func (e Event) String() string {
	if e < 0 || e >= events {
		return fmt.Sprintf("Event(%d)", int(e))
	}
	return eventNames[e]
}

// ErrTransitionNotAllowed is the error of an event the lifecycle table does not allow from a
// state: the state stays as it was.
var ErrTransitionNotAllowed = errors.New("transition not allowed")

// listedStates are the states of the instances the inventory lists: an answer of OSM is about
// one of them.
var listedStates = []InstanceState{
	InstanceCreating, InstanceReady, InstanceProgressing,
	InstanceFailed, InstanceDeleting, InstanceOrphaned,
	InstanceReplacing, InstanceDrifted,
}

// rule is where an event leads: to, from the states of from (every state when nil), but for
// the states of keep, which it leaves as they are.
type rule struct {
	to   InstanceState
	from []InstanceState
	keep []InstanceState
}

var (
	createAnswered = []InstanceState{InstanceCreating, InstanceReplacing}
	keepReplacing  = []InstanceState{InstanceReplacing}
	onlyFailed     = []InstanceState{InstanceFailed}
	lifecycle      = [events]rule{
		PlanCreate:               {to: InstanceCreating, keep: keepReplacing},
		PlanUpgrade:              {to: InstanceProgressing},
		PlanMove:                 {to: InstanceProgressing},
		PlanAwaitUpload:          {to: InstanceProgressing},
		PlanBusy:                 {to: InstanceProgressing},
		PlanInStep:               {to: InstanceReady},
		PlanBroken:               {to: InstanceFailed},
		PlanFailedKept:           {to: InstanceFailed, from: onlyFailed},
		PlanDriftReported:        {to: InstanceDrifted},
		PlanReplace:              {to: InstanceReplacing},
		PlanOrphan:               {to: InstanceOrphaned},
		PlanPrune:                {to: InstanceDeleting},
		CreateAccepted:           {to: InstanceProgressing, from: createAnswered},
		CreateRefused:            {to: NoInstance, from: createAnswered, keep: keepReplacing},
		OperationCompleted:       {to: InstanceReady, from: listedStates},
		UpgradeCompletedWithMore: {to: InstanceProgressing, from: listedStates},
		MoveCompleted:            {to: InstanceProgressing, from: listedStates},
		TerminateCompleted:       {to: NoInstance, from: listedStates, keep: keepReplacing},
		OperationFailed:          {to: InstanceFailed, from: listedStates},
		RollbackCompleted:        {to: InstanceFailed, from: listedStates},
	}
)

// Transition is the lifecycle of one NS instance: the state an event leads to from a state. It
// is a pure function, and the only place that decides an instance's state: the plan (Compute),
// the apply's answers and the deletion path all go through it. An event the table does not
// allow from a state leaves the state as it was and returns ErrTransitionNotAllowed.
//
//	event                     from                              to
//	PlanCreate                every state but Replacing         Creating
//	                          Replacing                         Replacing (the new instance of a replace)
//	PlanUpgrade               every state                       Progressing
//	PlanMove                  every state                       Progressing
//	PlanAwaitUpload           every state                       Progressing
//	PlanBusy                  every state                       Progressing
//	PlanInStep                every state                       Ready
//	PlanBroken                every state                       Failed
//	PlanFailedKept            Failed                            Failed; not allowed from any other
//	PlanDriftReported         every state                       Drifted
//	PlanReplace               every state                       Replacing
//	PlanOrphan                every state                       Orphaned
//	PlanPrune                 every state                       Deleting
//	CreateAccepted            Creating, Replacing               Progressing; not allowed from any other
//	CreateRefused             Creating                          NoInstance (OSM made nothing to own)
//	                          Replacing                         Replacing (the next plan creates it again)
//	                          any other                         not allowed
//	OperationCompleted        every listed state                Ready
//	UpgradeCompletedWithMore  every listed state                Progressing
//	MoveCompleted             every listed state                Progressing
//	TerminateCompleted        every listed state but Replacing  NoInstance
//	                          Replacing                         Replacing (the next plan creates the new one)
//	OperationFailed           every listed state                Failed
//	RollbackCompleted         every listed state                Failed (the declaration failed; its KDU was put back)
//
// "Every state" includes NoInstance: a plan meets instances the inventory does not list (new
// in Git, adopted, or found by their marker after a status was lost). The listed states are
// the eight of the API; OSM's answers are about instances the inventory lists, so they are not
// allowed from NoInstance. Entries a plan does not read (RevisionScope) or whose deletion
// outside Git IgnoreDrift leaves alone meet no event and keep their state.
func Transition(from InstanceState, event Event) (InstanceState, error) {
	if event < 0 || event >= events {
		return from, fmt.Errorf("%w: unknown event %v from %q", ErrTransitionNotAllowed, event, from)
	}
	r := lifecycle[event]
	switch {
	case r.from != nil && !slices.Contains(r.from, from):
		return from, fmt.Errorf("%w: %v from %q", ErrTransitionNotAllowed, event, stateName(from))
	case slices.Contains(r.keep, from):
		return from, nil
	}
	return r.to, nil
}

// Next is the state Transition gives, for callers whose events the table allows from the
// states they hold: one it does not allow leaves the state as it was.
func Next(from InstanceState, event Event) InstanceState {
	to, _ := Transition(from, event)
	return to
}

// Event is the lifecycle event of a finished operation.
func (o Outcome) Event() Event {
	switch {
	case o.Failed:
		return OperationFailed
	case o.Operation.Rollback:
		return RollbackCompleted
	case o.Operation.Type == osm.OperationTypeTerminate:
		return TerminateCompleted
	case o.Operation.Type == osm.OperationTypeUpdate:
		return MoveCompleted
	case o.Operation.MoreUpgrades:
		return UpgradeCompletedWithMore
	}
	return OperationCompleted
}

func stateName(s InstanceState) string {
	if s == NoInstance {
		return "NoInstance"
	}
	return string(s)
}
