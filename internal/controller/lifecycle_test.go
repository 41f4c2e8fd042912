package controller

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
)

// The lifecycle tests: connections that do not depend on which reconciler ran first in a process,
// deletions that always end (spec.deletionPolicy), claims that do not outlive their owner.
//
// A restart is a manager of the test's own stopped and another started: new cache, new
// reconcilers and an empty connection pool. Those managers see only the objects
// labelled with their shard, which the suite's manager never sees, as with
// --watch-label-selector.
//
// envtest runs no namespace controller, so a namespace deleted here is marked Terminating, as a
// real one is before its objects go, but keeps its objects: the tests delete them as the
// namespace controller would, all at once, in any order.

// shardLabel labels the objects of the tests that start managers of their own.
const shardLabel = "test.osmops.io/shard"

// testManager is a manager the test starts itself, as a (re)started operator process.
type testManager struct {
	t      testing.TB
	shard  string
	cancel context.CancelFunc
	done   chan error
	// nbiRequests are the metrics of its NBI clients, which no other manager's share.
	nbiRequests *prometheus.Registry
}

// startManager starts a manager of the objects of shard, with new reconcilers, connection pool
// and claims; with the OsmCluster reconciler only when withClusters.
func startManager(t testing.TB, shard string, withClusters bool) *testManager {
	t.Helper()
	return startManagerWith(t, shard, withClusters, managerOptions(shardLabel+"="+shard))
}

// startManagerWith starts a manager of shard as startManager does, with options, its
// OsmDeployment reconciler edited by edits.
func startManagerWith(t testing.TB, shard string, withClusters bool, options ctrl.Options, edits ...func(*OsmDeploymentReconciler)) *testManager {
	t.Helper()
	selector := shardLabel + "=" + shard
	mgr, err := ctrl.NewManager(testOperatorConfig, options)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), ctrl.Log))
	pool, registry := newConnectionPool(mgr), prometheus.NewRegistry()
	pool.Metrics = osm.NewMetrics(registry)
	if err := setupReconcilersWith(ctx, mgr, pool, selector, withClusters, edits...); err != nil {
		cancel()
		t.Fatal(err)
	}
	m := &testManager{t: t, shard: shard, cancel: cancel, done: make(chan error, 1), nbiRequests: registry}
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

// deleteAll deletes objects, in that order, without waiting for any to go.
func (tn *tenant) deleteAll(objects ...client.Object) {
	tn.t.Helper()
	for _, obj := range objects {
		tn.g.Expect(k8sClient.Delete(tn.ctx, obj)).To(Succeed())
	}
}

// namespaceObject, secretObject: the tenant's namespace and credentials Secret, to delete them.
func (tn *tenant) namespaceObject() *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tn.namespace}}
}

func (tn *tenant) secretObject() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "osm-credentials", Namespace: tn.namespace}}
}

// eventuallyNoInstances waits until OSM runs no NS instance.
func (tn *tenant) eventuallyNoInstances() {
	tn.t.Helper()
	tn.g.Eventually(func() []nbisim.NSInstanceState { return tn.sim.State().NSInstances }).Should(BeEmpty())
}

// eventuallyTerminatesSent waits until OSM has accepted n NS instance deletions.
func (tn *tenant) eventuallyTerminatesSent(n int) {
	tn.t.Helper()
	tn.g.Eventually(func() int64 { return tn.acceptedRequests()[deleteNSRoute] }).Should(BeEquivalentTo(n))
}

// appliedDeployment makes the OsmDeployment "ldap" (pruning, then edited) of a revision that
// declares the NS instances names, and waits until OSM runs them.
func (tn *tenant) appliedDeployment(names []string, edit ...func(*gitopsv1alpha1.OsmDeployment)) *gitopsv1alpha1.OsmDeployment {
	tn.t.Helper()
	d := tn.deployment("ldap", "gitops", edit...)
	want := map[string]string{}
	for _, name := range names {
		want[name] = "1"
	}
	tn.expectConverged(d, tn.publish("gitops", demoRepo("1", names...)), want)
	return d
}

// appliedInShard starts a manager of shard, and in it a tenant whose OsmDeployment runs the NS
// instances ldap and ldap2.
func appliedInShard(t testing.TB, shard string) (*testManager, *tenant, *gitopsv1alpha1.OsmDeployment) {
	t.Helper()
	m := startManager(t, shard, true)
	tn := newTenantInShard(t, shard)
	return m, tn, tn.appliedDeployment([]string{"ldap", "ldap2"})
}

// expectTenantGone waits until d and the OsmCluster are gone, and checks that OSM runs nothing
// and that no Warning was needed.
func (tn *tenant) expectTenantGone(d *gitopsv1alpha1.OsmDeployment) {
	tn.t.Helper()
	tn.eventuallyGone(d)
	tn.eventuallyGone(tn.cluster)
	tn.g.Expect(tn.sim.State().NSInstances).To(BeEmpty())
	tn.g.Expect(warnings(d)).To(BeEmpty())
}

var _ = Describe("Deletion, restarts and take-over", func() {
	// The managers of these specs are their own (startManager), and so are the tenants, made in
	// a manager's shard: a tenant comes after the manager that serves it.
	Context("when the manager restarts", func() {
		// After a restart the pool is empty and the OsmCluster already Ready, so no readiness
		// change comes: the OsmDeployment reconciler builds the client itself. Here the new
		// manager has no OsmCluster reconciler at all.
		It("restarted manager connects without the cluster reconciler", func() {
			t := GinkgoTB()
			const shard = "restart-connects"
			By("starting a manager and a tenant whose OsmCluster it finds Ready")
			first := startManager(t, shard, true)
			tn := newTenantInShard(t, shard)
			first.stop()

			By("restarting it without the OsmCluster reconciler")
			startManager(t, shard, false)
			tn.appliedDeployment([]string{"ldap"})
		})

		// The manager is down when the namespace deletion starts; the new one (new reconcilers,
		// new pool) builds the client of the deleting OsmCluster from its Secret, which the
		// namespace controller deletes once the terminations were sent, and finishes the
		// deletion with the client it built. Before the pool, the OsmDeployment waited for a
		// client that only the OsmCluster reconciler built, which it never does for a deleting
		// OsmCluster: the deletion hung.
		It("namespace deletion across a restart", func() {
			t := GinkgoTB()
			first, tn, d := appliedInShard(t, "ns-deletion-restart")
			first.stop()

			By("deleting the namespace while the manager is down")
			tn.deleteAll(tn.namespaceObject(), tn.cluster, d)
			By("starting a new manager, which sends the terminations")
			startManager(t, first.shard, true)
			tn.eventuallyTerminatesSent(2)
			By("deleting the Secret, as the namespace controller does once they were sent")
			tn.deleteAll(tn.secretObject())
			tn.expectTenantGone(d)
		})

		// The manager restarts after the terminations were sent and the Secret went with the
		// namespace: the new one has no client and cannot make one, so the deletion ends with a
		// Warning naming what OSM may still run; OSM finishes the terminations it accepted, and
		// everything goes.
		It("namespace deletion restarted after the secret went", func() {
			t := GinkgoTB()
			first, tn, d := appliedInShard(t, "ns-deletion-no-secret")
			ids := []string{tn.instances("ldap")[0].ID, tn.instances("ldap2")[0].ID}

			By("deleting the whole namespace while OSM holds the terminations")
			tn.sim.HoldOperations() // the terminations outlast the first manager
			tn.deleteAll(tn.namespaceObject(), tn.secretObject(), tn.cluster, d)
			tn.eventuallyTerminatesSent(2)
			// Stopped once its status says so: a reconcile cut short by the stop writes no status.
			tn.g.Eventually(func() []gitopsv1alpha1.NsInstanceEntry { return tn.get(d).Status.Inventory.NsInstances }).Should(
				HaveEach(HaveField("State", gitopsv1alpha1.NsInstanceDeleting)))

			By("restarting the manager, which has no client and cannot make one")
			first.stop()
			startManager(t, first.shard, true)
			tn.eventuallyGone(d)
			tn.eventuallyGone(tn.cluster)
			tn.g.Expect(warnings(d)).To(ConsistOf(gitopsv1alpha1.DeletionFailedReason + ": OsmCluster osm: Secret " + tn.namespace +
				"/osm-credentials not found; deletionPolicy MirrorPrune lets the OsmDeployment go: 2 NS instance(s) may still run in OSM: " +
				"ldap (" + ids[0] + ", Deleting), ldap2 (" + ids[1] + ", Deleting)"))

			By("letting OSM finish the terminations it accepted")
			tn.sim.ReleaseOperations()
			tn.eventuallyNoInstances()
		})
	})

	Context("with a tenant of the suite's manager", func() {
		var tn *tenant
		BeforeEach(func() {
			tn = newTenant(GinkgoTB())
		})

		// A whole tenant deleted at once: the namespace is Terminating, then its Secret goes
		// first (the worst order), then the OsmCluster and the pruning OsmDeployment. The
		// OsmDeployment terminates its instances with the client built before the Secret went,
		// and everything goes.
		It("namespace deletion terminates instances", func() {
			d := tn.appliedDeployment([]string{"ldap", "ldap2"})

			tn.deleteAll(tn.namespaceObject(), tn.secretObject(), tn.cluster, d)
			tn.expectTenantGone(d)
		})

		Context("whose credentials Secret went before the rest", func() {
			// The client is dropped when the Secret is found gone, so the deletion
			// (MirrorPrune) cannot reach OSM and ends with a Warning that lists the instances
			// left in OSM.
			It("deletion after the secret went ends with a warning", func() {
				d := tn.appliedDeployment([]string{"ldap"})
				id := tn.instances("ldap")[0].ID

				tn.deleteSecretUntilNotFound()
				By("deleting the OsmCluster and the OsmDeployment")
				tn.deleteAll(tn.cluster, d)
				tn.eventuallyGone(d)
				tn.eventuallyGone(tn.cluster)
				tn.g.Expect(warnings(d)).To(ConsistOf(gitopsv1alpha1.DeletionFailedReason + ": OsmCluster osm: Secret " + tn.namespace +
					"/osm-credentials not found; deletionPolicy MirrorPrune lets the OsmDeployment go: 1 NS instance(s) may still run in OSM: " +
					"ldap (" + id + ", Ready)"))
				tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
			})

			// WaitForTermination waits as long as OSM cannot be reached, and terminates once it can.
			It("deletion policy WaitForTermination waits until OSM can be reached", func() {
				d := tn.appliedDeployment([]string{"ldap"}, func(d *gitopsv1alpha1.OsmDeployment) {
					d.Spec.DeletionPolicy = gitopsv1alpha1.DeletionPolicyWaitForTermination
				})

				tn.deleteSecretUntilNotFound()
				By("deleting the OsmCluster and the OsmDeployment")
				tn.deleteAll(tn.cluster, d)
				// The reconciler has seen the deletion, that OSM cannot be reached, and chose to wait.
				tn.eventuallyCondition(d, meta.ReadyCondition, Equal("False "+gitopsv1alpha1.DeletionFailedReason+
					": waiting for OSM to terminate 1 NS instance(s): OsmCluster osm: Secret "+
					tn.namespace+"/osm-credentials not found (deletionPolicy WaitForTermination)"))
				tn.g.Expect(tn.get(d).Finalizers).To(ContainElement(gitopsv1alpha1.OsmDeploymentFinalizer))
				tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
				tn.g.Expect(warnings(d)).To(ConsistOf(HavePrefix(gitopsv1alpha1.DeletionFailedReason+": waiting for OSM to terminate")), "the wait, said once")

				By("restoring the Secret: the wait ends with the instance terminated")
				tn.g.Expect(k8sClient.Create(tn.ctx, &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Name: "osm-credentials", Namespace: tn.namespace},
					StringData: map[string]string{"username": "operator", "password": testPassword},
				})).To(Succeed())
				requestReconcile(tn, d, "secret-restored")
				tn.eventuallyGone(d)
				tn.eventuallyGone(tn.cluster)
				tn.g.Expect(tn.sim.State().NSInstances).To(BeEmpty())
			})
		})

		Context("whose OSM keeps failing", func() {
			// Past spec.timeout from the deletion, an OSM that keeps failing no longer holds the
			// OsmDeployment back (but with WaitForTermination).
			It("deletion ends when OSM fails past the timeout", func() {
				d := tn.appliedDeployment([]string{"ldap"})
				id := tn.instances("ldap")[0].ID

				By("shortening the timeout, then failing every request")
				// A short timeout only now: it bounds the instantiation too.
				tn.update(d, func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Timeout = &metav1.Duration{Duration: time.Second} })
				tn.addFault(nbisim.Fault{Status: http.StatusServiceUnavailable})
				tn.deleteAll(d)
				tn.eventuallyGone(d)
				tn.g.Expect(warnings(d)).To(ContainElement(And(
					HavePrefix(gitopsv1alpha1.DeletionFailedReason+": observing OSM: "),
					HaveSuffix("; deletionPolicy MirrorPrune lets the OsmDeployment go: 1 NS instance(s) may still run in OSM: ldap ("+id+", Ready)"))))
				tn.sim.ClearFaults()
				tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
			})
		})

		Context("by deletion policy", func() {
			It("deletion policy orphan leaves instances despite prune", func() {
				d := tn.appliedDeployment([]string{"ldap"}, func(d *gitopsv1alpha1.OsmDeployment) {
					d.Spec.Prune = true
					d.Spec.DeletionPolicy = gitopsv1alpha1.DeletionPolicyOrphan
				})
				id := tn.instances("ldap")[0].ID

				tn.deleteAll(d)
				tn.eventuallyGone(d)
				tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
				tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).To(ContainSubstring(
					"Normal Orphaned: deleted with deletionPolicy Orphan: 1 NS instance(s) left running in OSM: ldap (" + id + ", Ready)"))
				tn.g.Expect(tn.acceptedRequests()[deleteNSRoute]).To(BeZero())
			})

			It("deletion policy delete terminates without prune", func() {
				d := tn.appliedDeployment([]string{"ldap", "ldap2"}, func(d *gitopsv1alpha1.OsmDeployment) {
					d.Spec.Prune = false
					d.Spec.DeletionPolicy = gitopsv1alpha1.DeletionPolicyDelete
				})

				tn.deleteAll(d)
				tn.eventuallyGone(d)
				tn.g.Expect(tn.sim.State().NSInstances).To(BeEmpty())
				tn.g.Expect(warnings(d)).To(BeEmpty())
			})

			// Deleting an OsmDeployment sends one terminate per instance and waits for it. OSM's
			// NBI accepts a DELETE of an instance whose terminate LCM has not started yet (LCM
			// slow, or busy with another operation on it, which it finishes first): the NS
			// record is unchanged until then, so a deletion that sent a DELETE for every
			// instance not shown terminating queued one more terminate in OSM at every poll.
			// Here LCM runs a KDU upgrade of ldap when the deletion comes, and takes up no new
			// operation for a long while.
			Context("deletion terminates each instance once", func() {
				for _, policy := range []struct {
					name string
					edit func(*gitopsv1alpha1.OsmDeployment)
				}{
					{"MirrorPrune", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Prune = true }},
					{"Delete", func(d *gitopsv1alpha1.OsmDeployment) {
						d.Spec.Prune = false
						d.Spec.DeletionPolicy = gitopsv1alpha1.DeletionPolicyDelete
					}},
				} {
					It(policy.name, func() {
						d := tn.appliedDeployment([]string{"ldap", "ldap2"}, policy.edit)

						By("holding a KDU upgrade of ldap in OSM, and LCM slow to take up operations")
						tn.sim.HoldOperations()
						tn.publish("gitops", demoRepoOf(map[string]string{"ldap": "2", "ldap2": "1"}))
						tn.g.Eventually(func() int64 { return tn.acceptedRequests()[upgradeRoute] }).Should(BeEquivalentTo(1))
						tn.sim.SetPickupDelay(time.Hour)

						By("deleting the OsmDeployment")
						tn.deleteAll(d)
						// ldap2's terminate is accepted, not started: its record still says READY.
						tn.eventuallyTerminatesSent(1)
						tn.eventuallyReconciledSinceNow(listNSDescriptorsRoute)
						tn.g.Expect(tn.acceptedRequests()[deleteNSRoute]).To(BeEquivalentTo(1), "terminates sent while OSM had not started the first")
						tn.g.Expect(tn.instances("ldap2")).To(ConsistOf(HaveField("NSState", "READY")))

						By("letting LCM catch up: the upgrade ends, then ldap gets its terminate, once")
						tn.sim.SetPickupDelay(0)
						tn.sim.ReleaseOperations()
						tn.sim.CompleteOperations()
						tn.eventuallyGone(d)
						tn.g.Expect(tn.sim.State().NSInstances).To(BeEmpty())
						tn.g.Expect(tn.acceptedRequests()[deleteNSRoute]).To(BeEquivalentTo(2))
						tn.g.Expect(warnings(d)).To(BeEmpty())
					})
				}
			})
		})

		Context("whose OsmDeployment lets go of its names", func() {
			// The claims of an OsmDeployment that went without its finalizer are released:
			// another one can take its NS instance name (here with adoptExisting, as the
			// instance still runs).
			It("claims of a deployment gone without finalizer are released", func() {
				first := tn.deployment("first", "gitops")
				revision := tn.publish("gitops", demoRepo("1", "ldap"))
				tn.expectConverged(first, revision, map[string]string{"ldap": "1"})
				id := tn.instances("ldap")[0].ID

				By("removing its finalizer by hand")
				tn.deleteWithoutFinalizer(first)
				tn.expectTakenOver(revision, id)
			})

			// An OsmDeployment moved to another OSM no longer holds its names on the first one.
			// (A name it made there stays its own through the marker in OSM: here the first OSM
			// refused the create, so only the claim in memory holds the name.)
			It("cluster ref change releases claims", func() {
				otherSim, otherNBI := tn.anotherNBI()
				other := tn.newCluster("other", otherNBI.URL, "osm-credentials")
				tn.clusterReason(other, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)

				By("claiming ldap on the first OSM, which refuses the create")
				tn.addFault(nbisim.Fault{Method: http.MethodPost, PathPrefix: "/osm/nslcm/v1/ns_instances_content", Status: http.StatusUnprocessableEntity})
				first := tn.deployment("first", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Prune = false })
				revision := tn.publish("gitops", demoRepo("1", "ldap"))
				tn.eventuallyCondition(first, meta.ReadyCondition, HavePrefix("False "+gitopsv1alpha1.OSMRequestFailedReason))

				By("moving the OsmDeployment to the other OSM")
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

				By("letting a second OsmDeployment take ldap on the first OSM")
				tn.sim.ClearFaults()
				second := tn.deployment("second", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
					d.Spec.RetryInterval = &metav1.Duration{Duration: testRequeueDependency}
				})
				tn.eventuallyApplied(second, revision)
				tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
			})
		})
	})
})

// deleteSecretUntilNotFound deletes the tenant's credentials Secret and waits until its
// OsmCluster says the Secret is not found.
func (tn *tenant) deleteSecretUntilNotFound() {
	tn.t.Helper()
	By("deleting the credentials Secret, until the OsmCluster finds it gone")
	tn.deleteAll(tn.secretObject())
	tn.clusterReason(tn.cluster, metav1.ConditionFalse, gitopsv1alpha1.SecretNotFoundReason)
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

// expectTakenOver makes a second OsmDeployment of the revision, with adoptExisting, and expects
// it to take over the one NS instance ldap, of OSM id id, that the first left running.
func (tn *tenant) expectTakenOver(revision, id string) {
	tn.t.Helper()
	second := tn.deployment("second", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
		d.Spec.AdoptExisting = true
		// A reconcile that ran before the first's claim was released retries soon.
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
