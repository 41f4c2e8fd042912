package controller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/pipeline"
)

// TestFinishedOperationsFollowTheLifecycle: the inventory entry of an instance whose operation
// ended takes the state engine.Transition gives, on the apply and the deletion path alike, and
// keeps or drops its id and reason as the event says.
func TestFinishedOperationsFollowTheLifecycle(t *testing.T) {
	op := func(kind string, more bool) engine.OperationRecord {
		return engine.OperationRecord{ID: "op", Type: kind, NsInstance: "ldap", MoreUpgrades: more}
	}
	entry := func(state gitopsv1alpha1.NsInstanceState, id, reason string) []gitopsv1alpha1.NsInstanceEntry {
		return []gitopsv1alpha1.NsInstanceEntry{{Name: "ldap", ID: id, State: state, Reason: reason}}
	}
	for _, tc := range []struct {
		name    string
		from    gitopsv1alpha1.NsInstanceState
		outcome engine.Outcome
		want    []gitopsv1alpha1.NsInstanceEntry
	}{
		{"OperationCompleted", gitopsv1alpha1.NsInstanceProgressing, engine.Outcome{Operation: op(osm.OperationTypeInstantiate, false)},
			entry(gitopsv1alpha1.NsInstanceReady, "id", "")},
		{"UpgradeCompletedWithMore", gitopsv1alpha1.NsInstanceProgressing, engine.Outcome{Operation: op(osm.OperationTypeAction, true)},
			entry(gitopsv1alpha1.NsInstanceProgressing, "id", "why")},
		{"UpgradeCompletedWithMore while deleting", gitopsv1alpha1.NsInstanceDeleting, engine.Outcome{Operation: op(osm.OperationTypeAction, true)},
			entry(gitopsv1alpha1.NsInstanceProgressing, "id", "why")},
		{"MoveCompleted", gitopsv1alpha1.NsInstanceProgressing, engine.Outcome{Operation: op(osm.OperationTypeUpdate, false)},
			entry(gitopsv1alpha1.NsInstanceProgressing, "id", "why")},
		{"TerminateCompleted", gitopsv1alpha1.NsInstanceDeleting, engine.Outcome{Operation: op(osm.OperationTypeTerminate, false)},
			[]gitopsv1alpha1.NsInstanceEntry{}},
		{"TerminateCompleted of a replace", gitopsv1alpha1.NsInstanceReplacing, engine.Outcome{Operation: op(osm.OperationTypeTerminate, false)},
			entry(gitopsv1alpha1.NsInstanceReplacing, "", "why")},
		{"OperationFailed", gitopsv1alpha1.NsInstanceDeleting, engine.Outcome{Operation: op(osm.OperationTypeTerminate, false), Failed: true},
			entry(gitopsv1alpha1.NsInstanceFailed, "id", "why")},
		{"OperationFailed at the timeout", gitopsv1alpha1.NsInstanceProgressing, engine.Outcome{Operation: op(osm.OperationTypeAction, true), Failed: true, TimedOut: true},
			entry(gitopsv1alpha1.NsInstanceFailed, "id", "why")},
		{"not allowed: no state", pipeline.APIState(engine.NoInstance), engine.Outcome{Operation: op(osm.OperationTypeTerminate, false)},
			entry(pipeline.APIState(engine.NoInstance), "id", "why")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &gitopsv1alpha1.OsmDeployment{}
			obj.Status.Inventory = &gitopsv1alpha1.Inventory{NsInstances: entry(tc.from, "id", "why")}
			setInstanceState(obj, tc.outcome)
			if diff := cmp.Diff(tc.want, obj.Status.Inventory.NsInstances); diff != "" {
				t.Errorf("inventory (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCreateAnswersFollowTheLifecycle: a create OSM accepted is Progressing with its id; one
// refused for good is dropped, but for a replacement, which the next plan creates again; one
// that failed transiently stays Creating.
func TestCreateAnswersFollowTheLifecycle(t *testing.T) {
	refused := &osm.APIError{StatusCode: 422, Detail: "refused"}
	transient := &osm.APIError{StatusCode: 503, Detail: "unavailable"}
	obj := &gitopsv1alpha1.OsmDeployment{}
	obj.Status.Inventory = &gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{
		{Name: "accepted", State: gitopsv1alpha1.NsInstanceCreating},
		{Name: "refused", State: gitopsv1alpha1.NsInstanceCreating},
		{Name: "replacement", State: gitopsv1alpha1.NsInstanceReplacing, Reason: "NSD changed"},
		{Name: "retried", State: gitopsv1alpha1.NsInstanceCreating},
	}}
	result := &engine.Result{NsInstanceIDs: map[string]string{"accepted": "id"}, Errors: []engine.ActionError{
		{Subject: "refused", Action: engine.ActionCreateNSInstance, Err: refused},
		{Subject: "replacement", Action: engine.ActionCreateNSInstance, Err: refused},
		{Subject: "retried", Action: engine.ActionCreateNSInstance, Err: transient},
	}}
	if !retryable(transient) || retryable(refused) {
		t.Fatal("the errors of the test are not what it says")
	}
	recordApplied(obj, gitopsv1alpha1.Inventory{}, &engine.Plan{}, result, time.Unix(0, 0))
	want := []gitopsv1alpha1.NsInstanceEntry{
		{Name: "accepted", ID: "id", State: gitopsv1alpha1.NsInstanceProgressing},
		{Name: "replacement", State: gitopsv1alpha1.NsInstanceReplacing, Reason: "NSD changed"},
		{Name: "retried", State: gitopsv1alpha1.NsInstanceCreating},
	}
	if diff := cmp.Diff(want, obj.Status.Inventory.NsInstances); diff != "" {
		t.Errorf("inventory (-want +got):\n%s", diff)
	}
}
