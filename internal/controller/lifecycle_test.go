package controller

import (
	"context"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
)

// The lifecycle tests: connections that do not depend on which reconciler ran first in a process.
//
// A restart is a manager of the test's own stopped and another started: new cache, new
// reconcilers, an empty connection pool and claim registry. Those managers see only the objects
// labelled with their shard, which the suite's manager never sees, as with
// --watch-label-selector.

// shardLabel labels the objects of the tests that start managers of their own.
const shardLabel = "test.osmops.io/shard"

// testManager is a manager the test starts itself, as a (re)started operator process.
type testManager struct {
	t      *testing.T
	cancel context.CancelFunc
	done   chan error
}

// startManager starts a manager of the objects of shard, with new reconcilers, connection pool
// and claims; with the OsmCluster reconciler only when withClusters.
func startManager(t *testing.T, shard string, withClusters bool) *testManager {
	t.Helper()
	mgr, err := ctrl.NewManager(testOperatorConfig, managerOptions(shardLabel+"="+shard))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), ctrl.Log))
	if err := setupReconcilersWith(ctx, mgr, newConnectionPool(mgr), NewClusterRegistry(), withClusters); err != nil {
		cancel()
		t.Fatal(err)
	}
	m := &testManager{t: t, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	t.Cleanup(m.stop)
	return m
}

// stop stops the manager and waits until its reconciles have returned, as a process that exits.
func (m *testManager) stop() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	m.cancel = nil
	if err := <-m.done; err != nil {
		m.t.Errorf("manager: %v", err)
	}
}

// After a restart the pool is empty and the OsmCluster already Ready, so no readiness change
// comes: the OsmDeployment reconciler builds the client itself. Here the new manager has no
// OsmCluster reconciler at all.
func TestRestartedManagerConnectsWithoutTheClusterReconciler(t *testing.T) {
	const shard = "restart-connects"
	first := startManager(t, shard, true)
	tn := newTenantInShard(t, shard)
	first.stop()

	startManager(t, shard, false)
	d := tn.deployment("ldap", "gitops")
	tn.expectConverged(d, tn.publish("gitops", demoRepo("1", "ldap")), map[string]string{"ldap": "1"})
}
