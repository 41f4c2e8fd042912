package engine

import (
	"errors"
	"testing"

	"github.com/osmops/osmops/internal/osm"
)

// TestLifecycle walks the whole table: every event from every state, NoInstance first, then
// the eight states of the API. "-" is NoInstance (removed from the inventory); "!" is a
// transition the table does not allow (the state stays, with ErrTransitionNotAllowed).
func TestLifecycle(t *testing.T) {
	states := []InstanceState{NoInstance,
		InstanceCreating, InstanceReady, InstanceProgressing,
		InstanceFailed, InstanceDeleting, InstanceOrphaned,
		InstanceReplacing, InstanceDrifted,
	}
	const (
		C, R, P, F, D, O, X, W = "Creating", "Ready", "Progressing", "Failed", "Deleting", "Orphaned", "Replacing", "Drifted"
		none, no               = "-", "!"
	)
	table := []struct {
		event Event
		// to, from each of states in order: NoInstance, Creating, Ready, Progressing, Failed,
		// Deleting, Orphaned, Replacing, Drifted.
		to [9]string
	}{
		{PlanCreate, [9]string{C, C, C, C, C, C, C, X, C}},
		{PlanUpgrade, [9]string{P, P, P, P, P, P, P, P, P}},
		{PlanMove, [9]string{P, P, P, P, P, P, P, P, P}},
		{PlanAwaitUpload, [9]string{P, P, P, P, P, P, P, P, P}},
		{PlanBusy, [9]string{P, P, P, P, P, P, P, P, P}},
		{PlanInStep, [9]string{R, R, R, R, R, R, R, R, R}},
		{PlanBroken, [9]string{F, F, F, F, F, F, F, F, F}},
		{PlanFailedKept, [9]string{no, no, no, no, F, no, no, no, no}},
		{PlanDriftReported, [9]string{W, W, W, W, W, W, W, W, W}},
		{PlanReplace, [9]string{X, X, X, X, X, X, X, X, X}},
		{PlanOrphan, [9]string{O, O, O, O, O, O, O, O, O}},
		{PlanPrune, [9]string{D, D, D, D, D, D, D, D, D}},
		{CreateAccepted, [9]string{no, P, no, no, no, no, no, P, no}},
		{CreateRefused, [9]string{no, none, no, no, no, no, no, X, no}},
		{OperationCompleted, [9]string{no, R, R, R, R, R, R, R, R}},
		{UpgradeCompletedWithMore, [9]string{no, P, P, P, P, P, P, P, P}},
		{MoveCompleted, [9]string{no, P, P, P, P, P, P, P, P}},
		{TerminateCompleted, [9]string{no, none, none, none, none, none, none, X, none}},
		{OperationFailed, [9]string{no, F, F, F, F, F, F, F, F}},
		{RollbackCompleted, [9]string{no, F, F, F, F, F, F, F, F}},
	}
	if len(table) != int(events) {
		t.Fatalf("the table names %d events, the lifecycle has %d", len(table), events)
	}
	for i, row := range table {
		if row.event != Event(i) {
			t.Fatalf("row %d is %v: the rows follow the events' order", i, row.event)
		}
		for j, from := range states {
			got, err := Transition(from, row.event)
			want := row.to[j]
			switch {
			case want == no:
				if !errors.Is(err, ErrTransitionNotAllowed) || got != from {
					t.Errorf("%v from %s = %q, %v; want %q, not allowed", row.event, stateName(from), got, err, from)
				}
			case err != nil:
				t.Errorf("%v from %s: %v; want %s", row.event, stateName(from), err, want)
			case want == none && got != NoInstance, want != none && string(got) != want:
				t.Errorf("%v from %s = %s; want %s", row.event, stateName(from), stateName(got), want)
			}
			if next := Next(from, row.event); next != got {
				t.Errorf("Next(%s, %v) = %q, Transition gave %q", stateName(from), row.event, next, got)
			}
		}
	}
}

func TestLifecycleUnknownEvent(t *testing.T) {
	for _, event := range []Event{-1, events} {
		if got, err := Transition(InstanceReady, event); !errors.Is(err, ErrTransitionNotAllowed) || got != InstanceReady {
			t.Errorf("%v from Ready = %q, %v; want Ready, not allowed", event, got, err)
		}
	}
}

func TestOutcomeEvent(t *testing.T) {
	op := func(kind string, more bool) OperationRecord {
		return OperationRecord{Type: kind, MoreUpgrades: more}
	}
	for _, tc := range []struct {
		outcome Outcome
		want    Event
	}{
		{Outcome{Operation: op(osm.OperationTypeInstantiate, false)}, OperationCompleted},
		{Outcome{Operation: op(osm.OperationTypeAction, false)}, OperationCompleted},
		{Outcome{Operation: op(osm.OperationTypeAction, true)}, UpgradeCompletedWithMore},
		{Outcome{Operation: op(osm.OperationTypeUpdate, false)}, MoveCompleted},
		{Outcome{Operation: op(osm.OperationTypeTerminate, false)}, TerminateCompleted},
		{Outcome{Operation: op(osm.OperationTypeAction, true), Failed: true}, OperationFailed},
		{Outcome{Operation: op(osm.OperationTypeTerminate, false), Failed: true, TimedOut: true}, OperationFailed},
		{Outcome{Operation: OperationRecord{Type: osm.OperationTypeAction, Rollback: true}}, RollbackCompleted},
		{Outcome{Operation: OperationRecord{Type: osm.OperationTypeAction, Rollback: true}, Failed: true}, OperationFailed},
	} {
		if got := tc.outcome.Event(); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.outcome, got, tc.want)
		}
	}
}
