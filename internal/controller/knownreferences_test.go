package controller

import (
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fluxcd/pkg/apis/meta"
)

// referenceReads are the reads of what a revision's references are checked on: OSM's
// descriptors (the package lists), VIM accounts and project.
var referenceReads = []string{
	listNSDescriptorsRoute,
	http.MethodGet + " /osm/vnfpkgm/v1/vnf_packages_content",
	http.MethodGet + " /osm/admin/v1/vim_accounts",
	http.MethodGet + " /osm/admin/v1/projects/{id}",
}

// countReferenceReads counts the reads of referenceReads since the stats were reset.
func (tn *tenant) countReferenceReads() int64 {
	var n int64
	for _, route := range referenceReads {
		n += tn.countRequests(route)
	}
	return n
}

var _ = Describe("References", func() {
	// A new revision whose instances refer to what the applied one checked, with the same
	// packages, reads no descriptor, VIM account or project (status.inventory.referencesDigest):
	// the changed instance's records and the operations only. One that names another VIM
	// account or changes a package reads them, and so does the drift check.
	It("are read when they can have changed", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepoOf(map[string]string{"a": "1", "b": "1", "c": "1"})))
		tn.g.Expect(tn.get(d).Status.Inventory.ReferencesDigest).To(HavePrefix("sha256:"))
		tn.sim.ResetStats()

		tn.eventuallyApplied(d, tn.publish("gitops", demoRepoOf(map[string]string{"a": "1", "b": "2", "c": "1"})))
		tn.g.Expect(tn.kduValues("b")).To(Equal(map[string]any{"replicaCount": "2"}))
		tn.g.Expect(tn.countRequests(actionRoute)).To(BeEquivalentTo(1))
		tn.g.Expect(tn.countReferenceReads()).To(BeZero(), "a values-only revision\n%s", tn.describe(d))
		var requests []string
		for _, e := range tn.sim.Stats().Endpoints {
			requests = append(requests, e.Method+" "+e.Route+": "+strings.Repeat("*", int(e.Requests)))
		}
		GinkgoWriter.Printf("requests of a values-only revision:\n%s\n", strings.Join(requests, "\n"))

		// Another VIM account: checked, and unknown to OSM.
		tn.sim.ResetStats()
		files := demoRepoOf(map[string]string{"a": "1", "b": "3", "c": "1"})
		files["deploy/b.osmops.yaml"] = strings.Replace(files["deploy/b.osmops.yaml"], testVIMAccount, "site9", 1)
		tn.publish("gitops", files)
		tn.eventuallyCondition(d, meta.ReadyCondition, ContainSubstring(`vimAccountName "site9" is not a VIM account of OSM`))
		tn.g.Expect(tn.countRequests(listNSDescriptorsRoute)).To(BeNumerically(">=", 1))

		// A package changed: read, and uploaded.
		tn.sim.ResetStats()
		files = demoRepoOf(map[string]string{"a": "1", "b": "3", "c": "1"})
		files["osm-pkgs/openldap_knf/README.md"] = "The openldap KNF, again.\n"
		tn.eventuallyApplied(d, tn.publish("gitops", files))
		tn.g.Expect(tn.countRequests(listNSDescriptorsRoute)).To(BeNumerically(">=", 1), "a changed package")
		tn.g.Expect(tn.countRequests(http.MethodPut + " /osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}/package_content")).To(BeEquivalentTo(1))

		// The drift check of the applied revision reads them all.
		tn.sim.ResetStats()
		requestReconcile(tn, d, "drift-check")
		tn.g.Eventually(func() string { return tn.get(d).Status.LastHandledReconcileAt }).Should(Equal("drift-check"))
		tn.g.Expect(tn.countRequests(listNSDescriptorsRoute)).To(BeNumerically(">=", 1), "the drift check")
		tn.g.Expect(tn.mutatingRequests()).To(BeZero())
	})
})
