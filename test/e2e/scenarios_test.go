//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/devstack"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// The scenarios around the engine: NS instances removed from Git, an upgrade OSM fails, OSM
// down for a while, and tenants kept apart. Each has its own tenants and simulators. The specs
// that kill or restart the operator are Serial: `ginkgo -p` runs them alone.

// Routes and values the scenarios use.
const (
	nsDeleteRoute = "/osm/nslcm/v1/ns_instances_content/{nsInstanceContentId}"
	// orphanedReason is the reason of the event that reports NS instances left running.
	orphanedReason = "Orphaned"
	// clusterHealthInterval is the OsmCluster's spec.interval where a test waits for a health
	// check to notice OSM going away.
	clusterHealthInterval = 2 * time.Second
	noCrossNamespaceRefs  = "--no-cross-namespace-refs=true"
)

var _ = Describe("Failures and tenants", func() {
	Context("when an NS instance is removed from Git", func() {
		for _, tc := range []struct {
			name  string
			prune bool
			// wantInOSM maps the NS instances left in OSM to their state.
			wantInOSM map[string]string
			// wantInventory maps the NS instances of the inventory to their state.
			wantInventory map[string]gitopsv1alpha1.NsInstanceState
			// wantDeletes counts the deletes sent to OSM, the only changes.
			wantDeletes int64
		}{
			{
				name: "prune terminates and deletes it", prune: true,
				wantInOSM: map[string]string{}, wantInventory: map[string]gitopsv1alpha1.NsInstanceState{}, wantDeletes: 1,
			},
			{
				name: "without prune it is left running and reported", prune: false,
				wantInOSM:     map[string]string{ldapInstanceName: "READY"},
				wantInventory: map[string]gitopsv1alpha1.NsInstanceState{ldapInstanceName: gitopsv1alpha1.NsInstanceOrphaned},
			},
		} {
			It(tc.name, func() {
				t := GinkgoTB()
				ctx, tenant, g := bootstrap(t)
				if !tc.prune {
					tenant.turnPruneOff(ctx, t)
				}
				g.Expect(tenant.sim.ResetStats(ctx)).To(Succeed())

				removed, err := tenant.repo.Remove(ldapFile)
				g.Expect(err).NotTo(HaveOccurred())
				tenant.expectApplied(ctx, t, removed)

				// Ready comes once OSM completed the terminate; OSM removes the terminated record
				// by itself a moment later (autoremove, about 2 s on OSM 19).
				g.Eventually(func(g Gomega) {
					g.Expect(nsStates(tenant.state(ctx, g))).To(Equal(tc.wantInOSM))
				}).WithContext(ctx).WithTimeout(eventuallyTimeout).WithPolling(pollInterval).Should(Succeed())
				stats := tenant.stats(ctx, g)
				g.Expect(requestsTo(stats, http.MethodDelete, nsDeleteRoute)).To(Equal(tc.wantDeletes))
				g.Expect(changes(stats)).To(Equal(tc.wantDeletes), "nothing but the deletes")
				deployment, err := tenant.deployment(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(inventoryStates(deployment)).To(Equal(tc.wantInventory))
				if !tc.prune {
					eventually(ctx, t, func(g Gomega) {
						g.Expect(tenant.events(ctx, g)).To(ContainElement(And(
							HaveField("Type", corev1.EventTypeNormal),
							HaveField("Reason", orphanedReason),
							HaveField("Message", ContainSubstring(ldapInstanceName)))))
					})
				}
			})
		}
	})

	It("reports a failed upgrade and recovers when it is fixed", func() {
		t := GinkgoTB()
		ctx, tenant, g := bootstrap(t)
		failure := nbisim.OperationFailure{
			Operation: "upgrade", NSName: ldapInstanceName, Message: "helm upgrade: UPGRADE FAILED: injected by e2e", Count: 1,
		}
		g.Expect(tenant.sim.FailOperations(ctx, failure)).To(Succeed())

		failing, err := tenant.repo.Commit(map[string]string{ldapFile: ldapInstance(ldapInstanceName, "2")}, "Scale LDAP to 2, which OSM fails")
		g.Expect(err).NotTo(HaveOccurred())
		eventually(ctx, t, func(g Gomega) {
			deployment, err := tenant.deployment(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(deployment.Status.LastAttemptedRevision).To(Equal(revision(failing)))
			g.Expect(deployment.Status.Conditions).To(haveCondition(meta.ReadyCondition, metav1.ConditionFalse, gitopsv1alpha1.OperationFailedReason))
			g.Expect(apimeta.FindStatusCondition(deployment.Status.Conditions, meta.ReadyCondition).Message).To(ContainSubstring(failure.Message))
			g.Expect(deployment.Status.LastAppliedRevision).To(Equal(revision(tenant.seeded)))
			g.Expect(kstatusOf(ctx, g, deployment)).To(Equal(kstatus.FailedStatus), "Flux's health check must fail, not wait")
		})
		failed := nbisim.OperationState{Type: "action", Primitive: "upgrade", State: "FAILED", ErrorMessage: failure.Message}
		g.Expect(upgradeOperations(tenant.state(ctx, g), ldapInstanceName)).To(Equal([]nbisim.OperationState{failed}))

		tenant.commitAndExpectApplied(ctx, t, map[string]string{ldapFile: ldapInstance(ldapInstanceName, "3")})
		state := tenant.state(ctx, g)
		g.Expect(kduParams(state, ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "3"}))
		completed := nbisim.OperationState{Type: "action", Primitive: "upgrade", State: "COMPLETED"}
		g.Expect(upgradeOperations(state, ldapInstanceName)).To(Equal([]nbisim.OperationState{failed, completed}))
	})

	It("waits while OSM is down and converges when it is back", func() {
		t := GinkgoTB()
		ctx, tenant, g := bootstrap(t)
		operatorPid := stack.Operator().Pid()
		patchObject(ctx, t, &gitopsv1alpha1.OsmCluster{ObjectMeta: tenant.objectMeta(osmtenant.ClusterName)},
			func(cluster *gitopsv1alpha1.OsmCluster) {
				cluster.Spec.Interval = &metav1.Duration{Duration: clusterHealthInterval}
			})

		g.Expect(tenant.sim.AddFault(ctx, nbisim.Fault{Status: http.StatusServiceUnavailable})).To(Succeed())
		tenant.expectClusterReady(ctx, t, metav1.ConditionFalse, gitopsv1alpha1.UnreachableReason)
		changed, err := tenant.repo.Commit(map[string]string{ldapFile: ldapInstance(ldapInstanceName, "2")}, "Scale LDAP to 2 while OSM is down")
		g.Expect(err).NotTo(HaveOccurred())
		tenant.expectArtifact(ctx, t, changed)
		eventually(ctx, t, func(g Gomega) {
			deployment, err := tenant.deployment(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(deployment.Status.Conditions).To(haveCondition(meta.ReadyCondition, metav1.ConditionFalse,
				gitopsv1alpha1.OSMUnavailableReason, gitopsv1alpha1.ClusterNotReadyReason))
			g.Expect(deployment.Status.LastAppliedRevision).To(Equal(revision(tenant.seeded)))
			g.Expect(kstatusOf(ctx, g, deployment)).To(Equal(kstatus.InProgressStatus), "Flux's health check must wait")
		})

		g.Expect(tenant.sim.ClearFaults(ctx)).To(Succeed())
		tenant.expectClusterReady(ctx, t, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		tenant.expectApplied(ctx, t, changed)
		g.Expect(kduParams(tenant.state(ctx, g), ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "2"}))
		g.Expect(stack.Operator().Pid()).To(Equal(operatorPid), "the operator must recover without a restart")
	})

	It("lets each tenant change only its own OSM", func() {
		t := GinkgoTB()
		ctx := testContext(t)
		g := NewWithT(t)
		tenants := []*testTenant{newTenant(ctx, t, true), newTenant(ctx, t, true)}
		for _, tenant := range tenants {
			tenant.expectApplied(ctx, t, tenant.seeded)
			g.Expect(tenant.sim.ResetStats(ctx)).To(Succeed())
		}

		// Different values for each, so that an upgrade sent to the wrong OSM shows.
		replicas := []string{"2", "3"}
		commits := make([]string, len(tenants))
		for i, tenant := range tenants {
			var err error
			commits[i], err = tenant.repo.Commit(map[string]string{ldapFile: ldapInstance(ldapInstanceName, replicas[i])}, t.Name())
			g.Expect(err).NotTo(HaveOccurred())
		}
		for i, tenant := range tenants {
			tenant.expectApplied(ctx, t, commits[i])
			stats := tenant.stats(ctx, g)
			g.Expect(requestsTo(stats, http.MethodPost, nsActionRoute)).To(BeEquivalentTo(1), "%s: its own upgrade only", tenant.Namespace)
			g.Expect(changes(stats)).To(BeEquivalentTo(1), "%s: nothing but its own upgrade", tenant.Namespace)
			state := tenant.state(ctx, g)
			g.Expect(nsStates(state)).To(Equal(map[string]string{ldapInstanceName: "READY"}), tenant.Namespace)
			g.Expect(kduParams(state, ldapInstanceName)).To(Equal(map[string]any{"replicaCount": replicas[i]}), tenant.Namespace)
		}
	})

	// Two tenants, in two namespaces, whose OsmClusters point at one OSM: the second, declaring the
	// first's NS instance, is told whose it is and takes nothing; the packages both ship are shared;
	// once it names an instance of its own, each changes only its own.
	It("keeps two tenants of one OSM apart", func() {
		t := GinkgoTB()
		ctx := testContext(t)
		g := NewWithT(t)
		sim := startSimulator(ctx, t, tenantName(t.Name(), tenantSeq.Add(1)))
		first := newTenantOn(ctx, t, tenantName(t.Name(), tenantSeq.Add(1)), sim)
		first.expectApplied(ctx, t, first.seeded)
		second := newTenantOn(ctx, t, tenantName(t.Name(), tenantSeq.Add(1)), sim)
		// Polled: the second tenant's operator reconcile finds the conflict in its own time.
		g.Eventually(func(g Gomega) {
			deployment, err := second.deployment(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			ready := apimeta.FindStatusCondition(deployment.Status.Conditions, meta.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Reason).To(Equal(gitopsv1alpha1.ConflictReason))
			g.Expect(ready.Message).To(ContainSubstring(first.Namespace + "/" + first.Repository))
		}).WithContext(ctx).WithTimeout(eventuallyTimeout).WithPolling(pollInterval).Should(Succeed())

		removed, err := second.repo.Remove(ldapFile)
		g.Expect(err).NotTo(HaveOccurred())
		second.expectApplied(ctx, t, removed)
		second.commitAndExpectApplied(ctx, t, map[string]string{"deploy/own.osmops.yaml": ldapInstance("ldap-second", "3")})
		first.commitAndExpectApplied(ctx, t, map[string]string{ldapFile: ldapInstance(ldapInstanceName, "2")})

		state := first.state(ctx, g)
		g.Expect(nsStates(state)).To(Equal(map[string]string{ldapInstanceName: "READY", "ldap-second": "READY"}))
		g.Expect(kduParams(state, ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "2"}))
		g.Expect(kduParams(state, "ldap-second")).To(Equal(map[string]any{"replicaCount": "3"}))
		for _, p := range state.Packages {
			g.Expect(p.Revision).To(Equal(1), "package %s uploaded once, shared", p.DescriptorID)
		}
	})

	// Serial: it restarts the operator with --no-cross-namespace-refs (and without it at the
	// end), so it must not run in parallel with other specs.
	It("denies a source in another namespace", Serial, func() {
		t := GinkgoTB()
		ctx := testContext(t)
		g := NewWithT(t)
		operator := stack.Operator()
		g.Expect(operator.RestartWith(ctx, noCrossNamespaceRefs)).To(Succeed())
		t.Cleanup(func() {
			if err := operator.RestartWith(ctx); err != nil {
				t.Errorf("restarting the operator without %s: %v", noCrossNamespaceRefs, err)
			}
		})
		owner, other := newTenant(ctx, t, true), newTenant(ctx, t, true)
		// Both apply their own repository: the flag leaves references within a namespace alone.
		owner.expectApplied(ctx, t, owner.seeded)
		other.expectApplied(ctx, t, other.seeded)
		g.Expect(other.sim.ResetStats(ctx)).To(Succeed())

		intruder := osmtenant.Deployment(other.Namespace, "borrowed-source", owner.Repository)
		intruder.Spec.SourceRef.Namespace = owner.Namespace
		intruder.Spec.Prune = true
		g.Expect(devstack.Apply(ctx, stack.Client(), intruder)).To(Succeed())
		t.Cleanup(func() { deleteAndWait(ctx, t, intruder) })
		eventually(ctx, t, func(g Gomega) {
			denied := &gitopsv1alpha1.OsmDeployment{}
			g.Expect(stack.Client().Get(ctx, client.ObjectKeyFromObject(intruder), denied)).To(Succeed())
			g.Expect(denied.Status.Conditions).To(haveCondition(meta.StalledCondition, metav1.ConditionTrue, gitopsv1alpha1.AccessDeniedReason))
			g.Expect(denied.Status.Conditions).To(haveCondition(meta.ReadyCondition, metav1.ConditionFalse, gitopsv1alpha1.AccessDeniedReason))
			g.Expect(denied.Status.LastAttemptedRevision).To(BeEmpty(), "nothing of the other namespace may be tried")
		})
		g.Expect(changes(other.stats(ctx, g))).To(BeZero(), "the denied OsmDeployment must not touch OSM")
		g.Expect(nsStates(other.state(ctx, g))).To(Equal(map[string]string{ldapInstanceName: "READY"}))
	})
})

// objectMeta names an object of the tenant's namespace.
func (tt *testTenant) objectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: tt.Namespace, Name: name}
}

// turnPruneOff sets the OsmDeployment's spec.prune to false and waits until the operator has
// acted on it, so that the next revision is applied without prune.
func (tt *testTenant) turnPruneOff(ctx context.Context, t testing.TB) {
	t.Helper()
	patchObject(ctx, t, &gitopsv1alpha1.OsmDeployment{ObjectMeta: tt.objectMeta(tt.Repository)},
		func(deployment *gitopsv1alpha1.OsmDeployment) { deployment.Spec.Prune = false })
	eventually(ctx, t, func(g Gomega) {
		deployment, err := tt.deployment(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(deployment.Spec.Prune).To(BeFalse())
		g.Expect(deployment.Status.ObservedGeneration).To(Equal(deployment.Generation))
	})
}

// events returns the events of the tenant's OsmDeployment.
func (tt *testTenant) events(ctx context.Context, g Gomega) []corev1.Event {
	var events corev1.EventList
	g.Expect(stack.Client().List(ctx, &events, client.InNamespace(tt.Namespace))).To(Succeed())
	var mine []corev1.Event
	for _, event := range events.Items {
		if event.InvolvedObject.Kind == gitopsv1alpha1.OsmDeploymentKind && event.InvolvedObject.Name == tt.Repository {
			mine = append(mine, event)
		}
	}
	return mine
}

// nsStates maps the NS instances in OSM to their nsState.
func nsStates(state nbisim.State) map[string]string {
	states := map[string]string{}
	for _, ns := range state.NSInstances {
		states[ns.Name] = ns.NSState
	}
	return states
}

// inventoryStates maps the NS instances of the OsmDeployment's inventory to their state.
func inventoryStates(deployment *gitopsv1alpha1.OsmDeployment) map[string]gitopsv1alpha1.NsInstanceState {
	states := map[string]gitopsv1alpha1.NsInstanceState{}
	if deployment.Status.Inventory != nil {
		for _, entry := range deployment.Status.Inventory.NsInstances {
			states[entry.Name] = entry.State
		}
	}
	return states
}

// upgradeOperations returns the KDU upgrades of the NS instance name, oldest first, without
// their ids.
func upgradeOperations(state nbisim.State, name string) []nbisim.OperationState {
	var ops []nbisim.OperationState
	for _, ns := range state.NSInstances {
		for _, op := range ns.Operations {
			if ns.Name == name && op.Type == "action" && op.Primitive == "upgrade" {
				op.ID, op.Accepted, op.Ended = "", time.Time{}, nil // compared by what happened, not when
				ops = append(ops, op)
			}
		}
	}
	return ops
}
