package controller

import (
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
)

// entryOf returns the inventory entry of the NS instance name.
func (tn *tenant) entryOf(d *gitopsv1alpha1.OsmDeployment, name string) gitopsv1alpha1.NsInstanceEntry {
	tn.t.Helper()
	got := tn.get(d)
	tn.g.Expect(got.Status.Inventory).NotTo(BeNil())
	for _, e := range got.Status.Inventory.NsInstances {
		if e.Name == name {
			return e
		}
	}
	return gitopsv1alpha1.NsInstanceEntry{}
}

// remediations returns the Remediation events of d, as "Normal Remediation: message".
func remediations(d *gitopsv1alpha1.OsmDeployment) []string {
	return eventsWith(d.Namespace, d.Name, corev1.EventTypeNormal, gitopsv1alpha1.RemediationReason)
}

var _ = Describe("Remediation", func() {
	It("retries a failed upgrade, then puts the KDU back to the values it last ran", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		// Frequent drift checks: the reconciles that could send something more by themselves.
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Interval = &metav1.Duration{Duration: 200 * time.Millisecond}
			d.Spec.Upgrade = &gitopsv1alpha1.Upgrade{Remediation: &gitopsv1alpha1.UpgradeRemediation{Retries: 2}}
		})
		tn.expectConverged(d, tn.publish("gitops", demoRepo("1", "ldap")), map[string]string{"ldap": "1"})
		// The upgrade and its two retries fail; the rollback goes through.
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "upgrade", NSName: "ldap",
			Message: "helm upgrade failed: bad values", Count: 3})).To(Succeed())
		tn.sim.ResetStats()

		tn.publish("gitops", demoRepo("2", "ldap"))
		tn.eventuallyCondition(d, meta.StalledCondition, Equal("True "+gitopsv1alpha1.RemediationExhaustedReason+
			": NS instance ldap: action operation FAILED: helm upgrade failed: bad values"))
		tn.g.Eventually(func() gitopsv1alpha1.NsInstanceEntry { return tn.entryOf(d, "ldap") }).Should(And(
			HaveField("State", gitopsv1alpha1.NsInstanceFailed), HaveField("UpgradeFailures", BeEquivalentTo(3)), HaveField("RolledBack", true)),
			func() string { return tn.describe(d) })
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "1"}), "the values the KDU last ran")
		tn.g.Expect(remediations(d)).To(Equal([]string{
			"Normal Remediation: remediation 1/2 of NS instance ldap: upgrading KDU ldap of VNF openldap again after its upgrade failed",
			"Normal Remediation: remediation 2/2 of NS instance ldap: upgrading KDU ldap of VNF openldap again after its upgrade failed",
			"Normal Remediation: remediation of NS instance ldap: upgrade of KDU ldap of VNF openldap failed 3 time(s): putting it back to the values and chart it last ran successfully",
		}))

		// Nothing more is sent by itself: the upgrade, two retries and the rollback.
		tn.eventuallyReconciledSinceNow(listNSDescriptorsRoute)
		tn.g.Expect(tn.acceptedRequests()[upgradeRoute]).To(BeEquivalentTo(4), tn.describe(d))
		tn.g.Expect(tn.condition(d, meta.StalledCondition)).To(HavePrefix("True " + gitopsv1alpha1.RemediationExhaustedReason))

		// The fix commit applies, and the failures of the old declaration are forgotten.
		revision := tn.publish("gitops", demoRepo("3", "ldap"))
		tn.expectConverged(d, revision, map[string]string{"ldap": "3"})
		tn.g.Expect(tn.entryOf(d, "ldap")).To(And(HaveField("UpgradeFailures", BeZero()), HaveField("RolledBack", false)))
	})

	It("recreates a failed instantiation once per retry", Label("slow"), func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Install = &gitopsv1alpha1.Install{Remediation: &gitopsv1alpha1.InstallRemediation{Retries: 2}}
		})
		// The instantiation and the first recreate fail; the second recreate goes through.
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "instantiate", NSName: "ldap",
			Message: "helm install failed: no Kubernetes cluster answers", Count: 2})).To(Succeed())
		revision := tn.publish("gitops", demoRepo("1", "ldap"))

		tn.expectConverged(d, revision, map[string]string{"ldap": "1"})
		tn.g.Expect(tn.acceptedRequests()).To(And(HaveKeyWithValue(createNSRoute, BeEquivalentTo(3)), HaveKeyWithValue(deleteNSRoute, BeEquivalentTo(2))))
		tn.g.Expect(remediations(d)).To(Equal([]string{
			"Normal Remediation: remediation 1/2 of NS instance ldap: its instantiation failed: terminating it to create it again",
			"Normal Remediation: remediation 2/2 of NS instance ldap: its instantiation failed: terminating it to create it again",
		}))
		tn.g.Expect(tn.entryOf(d, "ldap").InstallFailures).To(BeZero())
	})

	It("stops after the last retry of a failed instantiation", Label("slow"), func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Interval = &metav1.Duration{Duration: 200 * time.Millisecond}
			d.Spec.Install = &gitopsv1alpha1.Install{Remediation: &gitopsv1alpha1.InstallRemediation{Retries: 1}}
		})
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "instantiate", NSName: "ldap",
			Message: "helm install failed"})).To(Succeed())
		tn.publish("gitops", demoRepo("1", "ldap"))

		tn.eventuallyCondition(d, meta.StalledCondition, Equal("True "+gitopsv1alpha1.RemediationExhaustedReason+
			": NS instance ldap: instantiate operation FAILED: helm install failed"))
		tn.g.Expect(tn.entryOf(d, "ldap")).To(And(HaveField("State", gitopsv1alpha1.NsInstanceFailed), HaveField("InstallFailures", BeEquivalentTo(2))))
		tn.eventuallyReconciledSinceNow(listNSDescriptorsRoute)
		tn.g.Expect(tn.acceptedRequests()[createNSRoute]).To(BeEquivalentTo(2), tn.describe(d))
		tn.g.Expect(tn.instances("ldap")).To(ConsistOf(HaveField("NSState", "BROKEN")))
	})
})
