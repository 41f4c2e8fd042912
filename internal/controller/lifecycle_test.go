package controller

import (
	"context"
	"net/http/httptest"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/osm/nbisim"
)

// The lifecycle tests: connections that do not depend on which reconciler ran first in a process,
// claims that do not outlive their owner.
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

// deleteWithoutFinalizer removes the finalizer of d by hand and deletes it, as a person who
// unsticks a deletion does: d is gone at once, and no reconcile of its deletion ran.
func (tn *tenant) deleteWithoutFinalizer(d *gitopsv1alpha1.OsmDeployment) {
	tn.t.Helper()
	tn.g.Eventually(func() error {
		got := tn.get(d)
		got.Finalizers = nil
		if err := k8sClient.Update(tn.ctx, got); err != nil {
			return err
		}
		// Refused if a reconcile has put the finalizer back meanwhile.
		version := got.ResourceVersion
		return k8sClient.Delete(tn.ctx, got, client.Preconditions{ResourceVersion: &version})
	}).Should(Succeed())
	tn.g.Expect(apierrors.IsNotFound(k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(d), &gitopsv1alpha1.OsmDeployment{}))).To(BeTrue())
}

// The claims of an OsmDeployment that went without its finalizer are released: another one can
// take its NS instance name (here with adoptExisting, as the instance still runs).
func TestClaimsOfADeploymentGoneWithoutFinalizerAreReleased(t *testing.T) {
	tn := newTenant(t)
	first := tn.deployment("first", "gitops")
	revision := tn.publish("gitops", demoRepo("1", "ldap"))
	tn.expectConverged(first, revision, map[string]string{"ldap": "1"})
	id := tn.instances("ldap")[0].ID

	tn.deleteWithoutFinalizer(first)
	second := tn.deployment("second", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
		d.Spec.AdoptExisting = true
		// A reconcile that ran before the claim was released retries soon.
		d.Spec.RetryInterval = &metav1.Duration{Duration: testRequeueDependency}
	})
	got := tn.eventuallyApplied(second, revision)
	tn.g.Expect(got.Status.Inventory.NsInstances).To(ConsistOf(HaveField("ID", id)))
	tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
}

// anotherNBI starts a second simulated OSM, with the same user and VIM account.
func (tn *tenant) anotherNBI() (*nbisim.Server, *httptest.Server) {
	sim := nbisim.New(nbisim.Config{
		Username: "operator", Password: testPassword, Project: "admin",
		OperationDelay: testOperationDelay, VIMAccounts: []nbisim.VIMAccount{{Name: "site1"}},
	})
	server := httptest.NewServer(sim)
	tn.t.Cleanup(server.Close)
	return sim, server
}

// An OsmDeployment moved to another OsmCluster no longer holds its names on the first one.
func TestClusterRefChangeReleasesClaims(t *testing.T) {
	tn := newTenant(t)
	otherSim, otherNBI := tn.anotherNBI()
	other := tn.newCluster("other", otherNBI.URL, "osm-credentials")
	tn.clusterReason(other, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
	first := tn.deployment("first", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Prune = false })
	revision := tn.publish("gitops", demoRepo("1", "ldap"))
	tn.expectConverged(first, revision, map[string]string{"ldap": "1"})
	id := tn.instances("ldap")[0].ID

	tn.update(first, func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = "other" })
	// Once it made ldap on the other OSM, its reconcile on the other OsmCluster has begun.
	tn.g.Eventually(func() int {
		n := 0
		for _, ns := range otherSim.State().NSInstances {
			if ns.Name == "ldap" {
				n++
			}
		}
		return n
	}).Should(Equal(1), func() string { return tn.describe(first) })

	second := tn.deployment("second", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
		d.Spec.AdoptExisting = true
		d.Spec.RetryInterval = &metav1.Duration{Duration: testRequeueDependency}
	})
	got := tn.eventuallyApplied(second, revision)
	tn.g.Expect(got.Status.Inventory.NsInstances).To(ConsistOf(HaveField("ID", id)))
	tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
}
