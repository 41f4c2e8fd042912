package controller

import (
	"net/http"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
)

// withSecondNSD adds the NS package openldap2_ns (the example's NSD under another id) to files,
// and declares the instance name on it.
func withSecondNSD(files map[string]string, name string) map[string]string {
	nsd := files["osm-pkgs/openldap_ns/openldap_nsd.yaml"]
	files["osm-pkgs/openldap2_ns/openldap_nsd.yaml"] = strings.ReplaceAll(nsd, "openldap_ns", "openldap2_ns")
	files["deploy/"+name+".osmops.yaml"] = strings.Replace(files["deploy/"+name+".osmops.yaml"],
		"nsdName: openldap_ns", "nsdName: openldap2_ns", 1)
	return files
}

var _ = Describe("Replacing NS instances", func() {
	// Without spec.force an NSD change stalls with the precise Conflict, naming the way out.
	It("NSD change without force stalls", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		tn.sim.ResetStats()

		tn.publish("gitops", withSecondNSD(demoRepo("1", "ldap"), "ldap"))
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "+gitopsv1alpha1.ConflictReason),
			ContainSubstring(`NS instance "ldap" runs NSD "openldap_ns": OSM cannot change the NSD of an instance`),
			ContainSubstring("set spec.force to replace it")))
		tn.g.Expect(tn.countRequests(deleteNSRoute)).To(BeZero())
		tn.g.Expect(tn.countRequests(createNSRoute)).To(BeZero())
	})

	// With spec.force an NSD changed in Git replaces the instance: the old one is terminated once,
	// and once OSM has removed it the new one is created once, with the same name and the new NSD.
	It("force replaces an instance whose NSD changed", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Force = true })
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap", "ldap2")))
		old := tn.instances("ldap")[0].ID
		tn.sim.ResetStats()

		got := tn.eventuallyApplied(d, tn.publish("gitops", withSecondNSD(demoRepo("1", "ldap", "ldap2"), "ldap")))
		instances := tn.instances("ldap")
		tn.g.Expect(instances).To(HaveLen(1))
		tn.g.Expect(instances[0].ID).NotTo(Equal(old))
		tn.g.Expect(instances[0].NsdID).To(Equal("openldap2_ns"))
		tn.g.Expect(instances[0].NSState).To(Equal("READY"))
		tn.g.Expect(tn.instances("ldap2")[0].NsdID).To(Equal("openldap_ns"), "the other instance is left alone")
		tn.g.Expect(tn.countRequests(deleteNSRoute)).To(BeEquivalentTo(1), tn.describe(d))
		tn.g.Expect(tn.countRequests(createNSRoute)).To(BeEquivalentTo(1), tn.describe(d))
		tn.g.Expect(got.Status.Inventory.NsInstances).To(ContainElement(MatchFields(IgnoreExtras, Fields{
			"Name": Equal("ldap"), "ID": Equal(instances[0].ID), "State": Equal(gitopsv1alpha1.NsInstanceReady),
			"Reason": BeEmpty(), "InstallFailures": BeZero()})))
		events := recorder.messagesOf(d.Namespace, d.Name)
		tn.g.Expect(events).To(ContainSubstring("delete ldap (replacing it (NSD changed from openldap_ns to openldap2_ns): terminating the old instance)"))
		tn.g.Expect(events).To(ContainSubstring("create ldap (replacing it (NSD changed from openldap_ns to openldap2_ns): the old instance is gone)"))
	})

	// With instancesFollowPackages, a KNF package updated in Git cannot move the instances that use
	// it: OSM 19's LCM fails CHANGE_VNFPKG on a KNF after it moved the VNF record's revision. The
	// revision is refused before anything is sent (no upload, no update), saying why, and drift
	// checks send nothing either.
	It("instances following a KNF package are refused up front", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.InstancesFollowPackages = true
			d.Spec.Interval = &metav1.Duration{Duration: 100 * time.Millisecond}
			d.Spec.RetryInterval = &metav1.Duration{Duration: 100 * time.Millisecond}
		})
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap", "ldap2")))
		uploadRoute := http.MethodPut + " /osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}/package_content"
		uploads := tn.countRequests(uploadRoute)

		tn.publish("gitops", withNewSoftwareVersion(demoRepo("1", "ldap", "ldap2")))
		tn.eventuallyConflict(d, "OSM 19's LCM fails that move")
		tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).To(ContainSubstring(`NS instance "ldap": spec.instancesFollowPackages would move VNF openldap to the new revision of VNF package openldap_knf`))

		updateRoute := http.MethodPost + " /osm/nslcm/v1/ns_instances/{nsInstanceId}/update"
		vnfRecordsRead := func() int64 { return tn.countRequests(http.MethodGet + " /osm/nslcm/v1/vnf_instances") }
		seen := vnfRecordsRead()
		tn.g.Eventually(vnfRecordsRead).Should(BeNumerically(">=", seen+3))
		tn.g.Expect(tn.countRequests(updateRoute)).To(BeZero(), tn.describe(d))
		tn.g.Expect(tn.countRequests(uploadRoute)).To(Equal(uploads), "package uploads")
	})

	// Without instancesFollowPackages a package update leaves the instances at their revision.
	It("instances keep their package revision by default", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		tn.eventuallyApplied(d, tn.publish("gitops", withNewSoftwareVersion(demoRepo("1", "ldap"))))
		tn.g.Expect(tn.countRequests(http.MethodPost + " /osm/nslcm/v1/ns_instances/{nsInstanceId}/update")).To(BeZero())
	})

	// A package move OSM refuses, and one whose operation FAILS, are reported in words in Ready and
	// in the events (the refused one once read "%!s(PANIC=String method: ...)").
	It("failed package move is reported in words", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.InstancesFollowPackages = true
		})
		tn.eventuallyApplied(d, tn.publish("gitops", withVDUList(demoRepo("1", "ldap"))))

		// Refused: the only POST under ns_instances/ of this revision is the CHANGE_VNFPKG.
		tn.addFault(nbisim.Fault{Method: http.MethodPost, PathPrefix: "/osm/nslcm/v1/ns_instances/", Status: http.StatusUnprocessableEntity, Count: 1})
		revision := tn.publish("gitops", withNewSoftwareVersion(withVDUList(demoRepo("1", "ldap"))))
		tn.eventuallyCondition(d, meta.ReadyCondition, ContainSubstring("move VNF package ldap: "))
		tn.g.Expect(tn.condition(d, meta.ReadyCondition)).NotTo(ContainSubstring("PANIC"))
		tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).To(And(ContainSubstring("move VNF package ldap: "), Not(ContainSubstring("PANIC"))))

		// Failed: OSM accepts the CHANGE_VNFPKG and its operation FAILS.
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "update", NSName: "ldap",
			Message: "Error updating VNF 'vdu'", Count: 1})).To(Succeed())
		requestReconcile(tn, d, "retry")
		failure := gitopsv1alpha1.OperationFailedReason + ": NS instance ldap: update operation FAILED: Error updating VNF 'vdu'"
		tn.eventuallyCondition(d, meta.ReadyCondition, Equal("False "+failure))
		tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).To(And(ContainSubstring("update operation FAILED: Error updating VNF 'vdu'"), Not(ContainSubstring("PANIC"))))
		tn.g.Expect(tn.get(d).Status.LastAppliedRevision).NotTo(Equal(revision))
	})

	// OSM keeps nested NS params as PyYAML writes them, "5e3" and "0o17" unquoted (PyYAML reads
	// them as strings): with spec.force, drift checks find the instance as declared and replace
	// nothing.
	It("force leaves an instance with params as OSM stores them", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Force = true
			d.Spec.Interval = &metav1.Duration{Duration: 100 * time.Millisecond}
		})
		files := demoRepo("1", "ldap")
		files["deploy/ldap.osmops.yaml"] = strings.Replace(files["deploy/ldap.osmops.yaml"], "kdu:\n",
			"params:\n  tuning:\n    rate: \"5e3\"\n    mode: \"0o17\"\n    flag: \"yes\"\nkdu:\n", 1)
		tn.eventuallyApplied(d, tn.publish("gitops", files))
		records, err := tn.nbiClient().ListNSInstances(tn.ctx, "ldap")
		tn.g.Expect(err).NotTo(HaveOccurred())
		tn.g.Expect(records).To(HaveLen(1))
		tn.g.Expect(string(records[0].AdditionalParamsForNs["tuning"])).To(
			Equal("!!yaml flag: 'yes'\nmode: 0o17\nrate: 5e3\n"), "stored as yaml.safe_dump writes it")

		observations := func() int64 { return tn.countRequests(listNSDescriptorsRoute) }
		seen := observations()
		tn.g.Eventually(observations).Should(BeNumerically(">=", seen+3))
		tn.g.Expect(tn.countRequests(deleteNSRoute)).To(BeZero(), tn.describe(d))
		tn.g.Expect(tn.countRequests(createNSRoute)).To(BeEquivalentTo(1), tn.describe(d))
	})
})

// withNewSoftwareVersion gives the OpenLDAP VNF package of files a new software-version, which OSM accepts
// while NS instances use the package.
func withNewSoftwareVersion(files map[string]string) map[string]string {
	const vnfd = "osm-pkgs/openldap_knf/openldap_vnfd.yaml"
	files[vnfd] = strings.Replace(files[vnfd], `version: "1.0"`, "version: \"1.0\"\n  software-version: \"1.1\"", 1)
	return files
}

// withVDUList gives the OpenLDAP VNF package a `vdu` list, which makes it a package that OSM's
// LCM can move with CHANGE_VNFPKG (a KNF's move is refused before anything is sent).
func withVDUList(files map[string]string) map[string]string {
	const vnfd = "osm-pkgs/openldap_knf/openldap_vnfd.yaml"
	files[vnfd] = strings.Replace(files[vnfd], "  kdu:\n", "  vdu:\n    - id: vdu\n      name: vdu\n  kdu:\n", 1)
	return files
}
