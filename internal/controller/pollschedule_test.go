package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmconn"
)

func TestPollOnTickIsNotJittered(t *testing.T) {
	double := func(d time.Duration) time.Duration { return 2 * d }
	if res, _ := onTick(time.Second).result(double); res.RequeueAfter != time.Second {
		t.Errorf("a poll tick requeued after %s, want 1s", res.RequeueAfter)
	}
	if res, _ := waiting(time.Second).result(double); res.RequeueAfter != 2*time.Second {
		t.Errorf("a wait requeued after %s, want it jittered", res.RequeueAfter)
	}
}

// A poll of the operations OSM runs goes before the reconciles that would send new ones, on a
// connection's tick or not (a connection that has no tick grid yet).
func TestAPollOfOperationsGoesFirst(t *testing.T) {
	r := &OsmDeploymentReconciler{OperationPollInterval: 5 * time.Second}
	now := time.Now()
	obj := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "ldap"},
		Status: gitopsv1alpha1.OsmDeploymentStatus{Operations: []gitopsv1alpha1.OperationEntry{{ID: "op-1",
			Type: osm.OperationTypeInstantiate, NsInstance: "ldap", State: "PROCESSING", StartTime: metav1.NewTime(now)}}}}
	for _, origin := range []time.Time{{}, now.Add(-time.Hour)} {
		res, err := r.pollOperations(&osmconn.Connection{PollOrigin: origin}, obj, now).result(func(d time.Duration) time.Duration { return d })
		if err != nil || res.RequeueAfter <= 0 || res.Priority == nil || *res.Priority != operationsPriority {
			t.Errorf("pollOperations with tick origin %v: %+v (priority %v), %v; want a requeue at priority %d",
				origin, res, res.Priority, err, operationsPriority)
		}
	}
}

// The first poll of operations just sent, of a type not learnt, comes on the short grid when a
// plain poll of the interval would, not at the coarser grid's next tick, which can be much
// sooner than any operation ends; the polls after it meet on the coarser grid.
func TestTheFirstPollComesAfterThePollInterval(t *testing.T) {
	origin := time.Unix(1_700_000_000, 0)
	now := origin.Add(12*time.Second + 300*time.Millisecond)
	r := &OsmDeploymentReconciler{OperationPollInterval: 5 * time.Second, OperationPollMinInterval: time.Second}
	for _, tc := range []struct {
		name    string
		started time.Duration // before now
		want    time.Duration
	}{
		{"just sent: the short grid's tick before the poll interval", 0, 4700 * time.Millisecond},
		{"polled before: the coarser grid's tick", 3 * time.Second, 2700 * time.Millisecond},
	} {
		obj := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "ldap"},
			Status: gitopsv1alpha1.OsmDeploymentStatus{Operations: []gitopsv1alpha1.OperationEntry{{ID: "op-1",
				Type: osm.OperationTypeAction, NsInstance: "ldap", State: "PROCESSING", StartTime: metav1.NewTime(now.Add(-tc.started))}}}}
		res, err := r.pollOperations(&osmconn.Connection{PollOrigin: origin}, obj, now).result(func(d time.Duration) time.Duration { return d })
		if err != nil || res.RequeueAfter != tc.want {
			t.Errorf("%s: requeued after %s (%v), want %s", tc.name, res.RequeueAfter, err, tc.want)
		}
	}
}
