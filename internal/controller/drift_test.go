package controller

import (
	"context"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/osm"
)

// nsAndVNFReads returns the paths (with their queries) of the NS instance and VNF record lists
// the tenant's NBI received since its stats were reset.
func (tn *tenant) nsAndVNFReads() (nsLists, vnfLists []string) {
	for _, r := range tn.sim.RequestLog() {
		switch {
		case r.Method != http.MethodGet:
		case r.Route == "/osm/nslcm/v1/ns_instances_content":
			nsLists = append(nsLists, r.Path)
		case r.Route == "/osm/nslcm/v1/vnf_instances":
			vnfLists = append(vnfLists, r.Path)
		}
	}
	return nsLists, vnfLists
}

var _ = Describe("Drift detection", func() {
	// A new revision reads the records of the NS instances whose declaration changed only: not the
	// list of every instance the OsmDeployment marked, nor the VNF records of the others. A drift
	// check (here a reconcile request on the applied revision) reads them all.
	It("a new revision reads only what changed", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepoOf(map[string]string{"a": "1", "b": "1", "c": "1"})))
		changed := tn.instances("b")[0].ID
		tn.sim.ResetStats()

		tn.eventuallyApplied(d, tn.publish("gitops", demoRepoOf(map[string]string{"a": "1", "b": "2", "c": "1"})))
		tn.g.Expect(tn.kduValues("b")).To(Equal(map[string]any{"replicaCount": "2"}))
		tn.g.Expect(tn.countRequests(actionRoute)).To(BeEquivalentTo(1))
		// b is read by the plan, and once more once its upgrade completed, for its health.
		nsLists, vnfLists := tn.nsAndVNFReads()
		onlyB := And(ContainSubstring("name.eq=b"), Not(ContainSubstring(osmOwnerParam)))
		tn.g.Expect(nsLists).To(ConsistOf(onlyB, onlyB), tn.describe(d))
		tn.g.Expect(vnfLists).To(ConsistOf(ContainSubstring(changed), ContainSubstring(changed)), tn.describe(d))

		tn.sim.ResetStats()
		requestReconcile(tn, d, "drift-check")
		tn.g.Eventually(func() []string { nsLists, _ := tn.nsAndVNFReads(); return nsLists }).Should(ContainElement(ContainSubstring(osmOwnerParam)))
		tn.g.Eventually(func() string { return tn.get(d).Status.LastHandledReconcileAt }).Should(Equal("drift-check"))
		tn.g.Expect(tn.mutatingRequests()).To(BeZero())
	})

	// With driftDetection warn, what changes in OSM outside Git is reported in the Drifted
	// condition, an event and the instance's state, and left as it is; mode enabled then sets it
	// back, and the condition goes.
	It("drift is reported in warn mode", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.appliedWithDriftDetection(gitopsv1alpha1.DriftDetectionWarn)
		id := tn.instances("ldap")[0].ID
		_, err := tn.nbiClient().UpgradeKDU(context.Background(), id, osm.KDUUpgrade{MemberVnfIndex: "openldap", KDUName: "ldap", Params: map[string]any{"replicaCount": "9"}})
		tn.g.Expect(err).NotTo(HaveOccurred())
		const what = "ldap: KDU ldap of VNF openldap: values changed in OSM outside Git"

		tn.eventuallyCondition(d, gitopsv1alpha1.DriftedCondition, And(HavePrefix("True "+gitopsv1alpha1.DriftDetectedReason), ContainSubstring(what)))
		tn.expectNoUpgradeInThreeDriftChecks()
		got := tn.get(d)
		tn.g.Expect(got.Status.Inventory.NsInstances).To(ConsistOf(And(HaveField("State", gitopsv1alpha1.NsInstanceDrifted),
			HaveField("Reason", "KDU ldap of VNF openldap: values changed in OSM outside Git"))))
		tn.g.Expect(readyStatus(got.Status.Conditions)).To(BeEquivalentTo("True"), "the revision was applied")
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "9"}))
		tn.g.Expect(strings.Count(recorder.messagesOf(d.Namespace, d.Name), what)).To(Equal(1), "one event while the drift stays the same")

		tn.update(d, func(o *gitopsv1alpha1.OsmDeployment) {
			o.Spec.DriftDetection.Mode = gitopsv1alpha1.DriftDetectionEnabled
		})
		tn.g.Eventually(func() map[string]any { return tn.kduValues("ldap") }).Should(Equal(map[string]any{"replicaCount": "1"}))
		tn.eventuallyCondition(d, gitopsv1alpha1.DriftedCondition, BeEmpty())
	})

	// With driftDetection disabled, OSM is read only where Git changed: an instance deleted in OSM
	// is neither seen nor created again, and the drift checks read no NS record.
	It("drift is ignored when disabled", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.appliedWithDriftDetection(gitopsv1alpha1.DriftDetectionDisabled)
		_, err := tn.nbiClient().DeleteNSInstance(context.Background(), tn.instances("ldap")[0].ID, true)
		tn.g.Expect(err).NotTo(HaveOccurred())
		tn.sim.ResetStats()

		descriptorLists := func() int64 { return tn.countRequests(http.MethodGet + " /osm/nsd/v1/ns_descriptors") }
		tn.g.Eventually(descriptorLists).Should(BeNumerically(">=", 3), "three drift checks")
		nsLists, vnfLists := tn.nsAndVNFReads()
		tn.g.Expect(nsLists).To(BeEmpty())
		tn.g.Expect(vnfLists).To(BeEmpty())
		tn.g.Expect(tn.mutatingRequests()).To(BeZero())
		tn.g.Expect(tn.instances("ldap")).To(BeEmpty())
		tn.g.Expect(tn.condition(d, gitopsv1alpha1.DriftedCondition)).To(BeEmpty())
	})
})

// osmOwnerParam is the owner marker's key, as it shows in a list's query.
const osmOwnerParam = "osmops_owner"

// appliedWithDriftDetection applies one NS instance with an OsmDeployment of that drift
// detection mode, whose drift checks come every 100 ms.
func (tn *tenant) appliedWithDriftDetection(mode gitopsv1alpha1.DriftDetectionMode) *gitopsv1alpha1.OsmDeployment {
	tn.t.Helper()
	d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
		d.Spec.Interval = &metav1.Duration{Duration: 100 * time.Millisecond}
		d.Spec.DriftDetection = &gitopsv1alpha1.DriftDetection{Mode: mode}
	})
	tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
	return d
}
