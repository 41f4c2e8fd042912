package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// TestOSMHealth: the built-in health reads OSM's records: an instance READY and running with
// its KDUs READY is healthy; one BROKEN, failed or with a KDU in ERROR is not; one BUILDING or
// whose KDU is not deployed yet is on its way; one the observation did not read is taken as the
// inventory lists it.
func TestOSMHealth(t *testing.T) {
	g := NewWithT(t)
	ready := osm.NSInstance{ID: "id", NSState: osm.NSStateReady, OperationalStatus: "running"}
	kdu := func(status string) []osm.VNFInstance {
		return []osm.VNFInstance{{MemberVnfIndex: "openldap", KDURecords: []osm.KDURecord{{KDUName: "ldap", Status: osm.LooseString(status)}}}}
	}
	inventory := gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{{Name: "ldap", ID: "id", State: gitopsv1alpha1.NsInstanceReady}}}
	for _, test := range []struct {
		record osm.NSInstance
		vnfs   []osm.VNFInstance
		want   string
	}{
		{ready, kdu("READY"), "True " + gitopsv1alpha1.SucceededReason},
		{osm.NSInstance{ID: "id", NSState: osm.NSStateBroken, OperationalStatus: "failed"}, kdu("ERROR"), "False " + gitopsv1alpha1.NSInstanceUnhealthyReason},
		{osm.NSInstance{ID: "id", NSState: osm.NSStateReady, OperationalStatus: "failed"}, kdu("READY"), "False " + gitopsv1alpha1.NSInstanceUnhealthyReason},
		{ready, kdu("ERROR"), "False " + gitopsv1alpha1.NSInstanceUnhealthyReason},
		{osm.NSInstance{ID: "id", NSState: osm.NSStateBuilding, OperationalStatus: "init"}, nil, "Unknown " + gitopsv1alpha1.ProgressingReason},
		{ready, kdu(""), "Unknown " + gitopsv1alpha1.ProgressingReason},
	} {
		observed := &engine.Observed{NSInstances: map[string]osm.NSInstance{"id": test.record}, VNFs: map[string][]osm.VNFInstance{"id": test.vnfs}}
		got := osmHealth(inventory, observed)
		g.Expect(string(got.status)+" "+got.reason).To(Equal(test.want), "%+v %+v: %s", test.record, test.vnfs, got.message)
	}
	g.Expect(osmHealth(inventory, &engine.Observed{}).status).To(Equal(metav1.ConditionTrue), "not read: as the inventory lists it")
	orphaned := gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{{Name: "old", ID: "old", State: gitopsv1alpha1.NsInstanceOrphaned}}}
	g.Expect(osmHealth(orphaned, &engine.Observed{}).status).To(Equal(metav1.ConditionTrue), "orphaned: not the revision's")
	failed := gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{{Name: "ldap", ID: "id", State: gitopsv1alpha1.NsInstanceFailed}}}
	g.Expect(osmHealth(failed, &engine.Observed{}).reason).To(Equal(gitopsv1alpha1.OperationFailedReason))
}

// smokeTest is a ConfigMap that stands for a team's smoke test: its data.result says how it went.
func (tn *tenant) smokeTest(result string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tn.namespace, Name: "smoke"}, Data: map[string]string{"result": result}}
	tn.g.Expect(k8sClient.Create(tn.ctx, cm)).To(Succeed())
	return cm
}

// setResult sets the smoke test's data.result.
func (tn *tenant) setResult(cm *corev1.ConfigMap, result string) {
	tn.g.Expect(k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
	cm.Data["result"] = result
	tn.g.Expect(k8sClient.Update(tn.ctx, cm)).To(Succeed())
}

// gatedBySmokeTest makes an OsmDeployment whose health waits for the smoke test ConfigMap, read
// with CEL expressions.
func gatedBySmokeTest(d *gitopsv1alpha1.OsmDeployment) {
	d.Spec.HealthChecks = []meta.NamespacedObjectKindReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "smoke"}}
	d.Spec.HealthCheckExprs = []kustomize.CustomHealthCheck{{APIVersion: "v1", Kind: "ConfigMap",
		HealthCheckExpressions: kustomize.HealthCheckExpressions{
			Current: "data.result == 'passed'", InProgress: "data.result == 'running'", Failed: "data.result == 'failed'"}}}
}

var _ = Describe("Health", func() {
	// OSM's operations completed and its records say READY: Healthy, and since when the revision
	// is applied.
	It("a revision whose OSM operations complete is healthy", func() {
		tn := newTenant(GinkgoTB())
		d := tn.deployment("ldap", "gitops")
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		tn.eventuallyApplied(d, revision)
		tn.eventuallyCondition(d, gitopsv1alpha1.HealthyCondition, Equal("True "+gitopsv1alpha1.SucceededReason+
			": revision "+revision+": 1 NS instance(s) READY in OSM, their KDUs READY"))
		tn.g.Expect(tn.get(d).Status.LastAppliedRevisionTime).NotTo(BeNil())
	})

	It("a failed operation is not healthy", func() {
		tn := newTenant(GinkgoTB())
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "instantiate", NSName: "ldap",
			Message: "helm install failed", Count: 1})).To(Succeed())
		d := tn.deployment("ldap", "gitops")
		tn.publish("gitops", demoRepo("1", "ldap"))
		tn.eventuallyCondition(d, gitopsv1alpha1.HealthyCondition, And(HavePrefix("False "+gitopsv1alpha1.OperationFailedReason),
			ContainSubstring("helm install failed")))
	})

	// A health check gates Healthy, and Ready, until its CEL expression says it passed; one that
	// says it failed fails the revision at once.
	It("a health check gates the revision until its expression passes", func() {
		tn := newTenant(GinkgoTB())
		smoke := tn.smokeTest("running")
		d := tn.deployment("ldap", "gitops", gatedBySmokeTest)
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		tn.eventuallyCondition(d, gitopsv1alpha1.HealthyCondition, And(HavePrefix("Unknown "+gitopsv1alpha1.HealthCheckPendingReason),
			ContainSubstring("waiting for health check ConfigMap smoke: InProgress")))
		got := tn.get(d)
		tn.g.Expect(got.Status.LastAppliedRevision).To(Equal(revision))
		tn.g.Expect(readyStatus(got.Status.Conditions)).To(Equal(metav1.ConditionUnknown), tn.describe(d))

		tn.setResult(smoke, "passed")
		tn.eventuallyApplied(d, revision)
		tn.eventuallyCondition(d, gitopsv1alpha1.HealthyCondition, HavePrefix("True "+gitopsv1alpha1.SucceededReason))

		tn.setResult(smoke, "failed")
		requestReconcile(tn, d, "after-failure")
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "+gitopsv1alpha1.HealthCheckFailedReason),
			ContainSubstring("health check ConfigMap smoke failed")))
		tn.eventuallyCondition(d, gitopsv1alpha1.HealthyCondition, HavePrefix("False "+gitopsv1alpha1.HealthCheckFailedReason))
		tn.g.Expect(tn.condition(d, meta.StalledCondition)).To(HavePrefix("True " + gitopsv1alpha1.HealthCheckFailedReason))
	})

	// A health check not ready within healthCheckTimeout fails the revision.
	It("a health check times out", func() {
		tn := newTenant(GinkgoTB())
		d := tn.deployment("ldap", "gitops", gatedBySmokeTest, func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.HealthCheckTimeout = &metav1.Duration{Duration: time.Millisecond}
		})
		tn.publish("gitops", demoRepo("1", "ldap"))
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "+gitopsv1alpha1.HealthCheckFailedReason),
			ContainSubstring("health check ConfigMap smoke not ready within 1ms: not found")))
		tn.eventuallyCondition(d, gitopsv1alpha1.HealthyCondition, HavePrefix("False "+gitopsv1alpha1.HealthCheckFailedReason))
	})

	// A health check names an object of another namespace: with --no-cross-namespace-refs (the
	// suite's manager) it is not read.
	It("a health check in another namespace is refused", func() {
		tn := newTenant(GinkgoTB())
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.HealthChecks = []meta.NamespacedObjectKindReference{{APIVersion: "v1", Kind: "ConfigMap", Namespace: operatorNamespace, Name: "anything"}}
		})
		tn.publish("gitops", demoRepo("1", "ldap"))
		tn.eventuallyCondition(d, gitopsv1alpha1.HealthyCondition, And(HavePrefix("False "+gitopsv1alpha1.AccessDeniedReason),
			ContainSubstring("--no-cross-namespace-refs")))
		tn.eventuallyCondition(d, meta.StalledCondition, HavePrefix("True "+gitopsv1alpha1.AccessDeniedReason))
	})

	// Objects no tenant may read through the manager: a Secret, even in the OsmDeployment's
	// namespace (the manager may read it, whoever writes the OsmDeployment may not), and with
	// --no-cross-namespace-refs a cluster-scoped object, which is in no namespace (a tenant could
	// learn of another's namespace: whether it exists, its labels).
	DescribeTable("a health check on an object no tenant may read",
		func(kind, name, expression, why string) {
			tn := newTenant(GinkgoTB())
			d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
				d.Spec.HealthChecks = []meta.NamespacedObjectKindReference{{APIVersion: "v1", Kind: kind, Name: name}}
				d.Spec.HealthCheckExprs = []kustomize.CustomHealthCheck{{APIVersion: "v1", Kind: kind,
					HealthCheckExpressions: kustomize.HealthCheckExpressions{Current: expression}}}
			})
			tn.publish("gitops", demoRepo("1", "ldap"))
			tn.eventuallyCondition(d, gitopsv1alpha1.HealthyCondition, And(HavePrefix("False "+gitopsv1alpha1.AccessDeniedReason),
				ContainSubstring(why)))
		},
		Entry("a health check on a Secret is refused", "Secret", osmtenant.SecretName, "data.password.startsWith('cz')", "Secrets are never read"),
		Entry("a health check on a cluster-scoped object is refused", "Namespace", operatorNamespace,
			"metadata.labels.exists(k, k.startsWith('a'))", "is cluster-scoped"),
	)

	// An expression whose evaluation would hold the shared manager's worker (nested
	// comprehensions of 10^8 steps in 252 bytes) is stopped at its cost limit and refused,
	// without waiting for healthCheckTimeout.
	It("a health check expression over its cost is refused at once", func() {
		tn := newTenant(GinkgoTB())
		tn.smokeTest("running")
		ten := "[0,1,2,3,4,5,6,7,8,9]"
		costly := strings.Repeat(ten+".all(x, ", 8) + "true" + strings.Repeat(")", 8)
		d := tn.deployment("ldap", "gitops", gatedBySmokeTest, func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.HealthCheckExprs[0].InProgress = costly
			d.Spec.HealthCheckTimeout = &metav1.Duration{Duration: time.Hour}
		})
		tn.publish("gitops", demoRepo("1", "ldap"))
		tn.eventuallyCondition(d, gitopsv1alpha1.HealthyCondition, And(HavePrefix("False "+gitopsv1alpha1.InvalidCELExpressionReason),
			ContainSubstring("cost limit")))
		tn.eventuallyCondition(d, meta.StalledCondition, HavePrefix("True "+gitopsv1alpha1.InvalidCELExpressionReason))
	})
})
