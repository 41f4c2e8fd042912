package controller

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// OSM removes a terminated NS record a moment after its terminate completed (autoremove: the NBI
// does it when LCM's message reaches it, about 2 s later on OSM 19). Until then the record says
// NOT_INSTANTIATED, as one never instantiated does; a deletion or a replace that took it for one
// sent a forced DELETE of each instance it had just terminated. They wait for OSM instead.
var _ = Describe("Instances terminated with autoremove", func() {
	It("are left to OSM by the deletion, which ends with its terminates and sends no second DELETE", func() {
		tn := newTenant(GinkgoTB())
		d := tn.appliedDeployment([]string{"ldap", "ldap2"}, func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Prune = false
			d.Spec.DeletionPolicy = gitopsv1alpha1.DeletionPolicyDelete
		})
		tn.sim.SetAutoremoveDelay(time.Hour)
		tn.deleteAll(d)
		tn.eventuallyTerminatedNotRemoved("ldap", "ldap2")
		// Its terminates completed with autoremove: nothing is left for it to do.
		tn.eventuallyGone(d)
		tn.g.Expect(tn.acceptedRequests()[deleteNSRoute]).To(BeEquivalentTo(2), "DELETEs while OSM had not yet removed the terminated records")
		tn.g.Expect(warnings(d)).To(BeEmpty())

		tn.sim.CompleteOperations() // the autoremove
		tn.g.Expect(tn.sim.State().NSInstances).To(BeEmpty())
	})

	It("are left to OSM by a replace, which creates the new instance once the old one is gone", func() {
		tn := newTenant(GinkgoTB())
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Force = true })
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		tn.sim.SetAutoremoveDelay(time.Hour)
		revision := tn.publish("gitops", withSecondNSD(demoRepo("1", "ldap"), "ldap"))
		tn.eventuallyTerminatedNotRemoved("ldap")
		tn.eventuallyReconciledSinceNow(listNSDescriptorsRoute)
		tn.g.Expect(tn.acceptedRequests()[deleteNSRoute]).To(BeEquivalentTo(1), "DELETEs while OSM had not yet removed the terminated record")

		tn.sim.CompleteOperations()
		tn.eventuallyApplied(d, revision)
		tn.g.Expect(tn.instances("ldap")).To(ConsistOf(HaveField("NsdID", "openldap2_ns")))
		tn.g.Expect(tn.acceptedRequests()[deleteNSRoute]).To(BeEquivalentTo(1))
		tn.g.Expect(tn.acceptedRequests()[createNSRoute]).To(BeEquivalentTo(2))
	})
})

// eventuallyTerminatedNotRemoved waits until OSM's records of the names are terminated, still
// there for OSM's autoremove.
func (tn *tenant) eventuallyTerminatedNotRemoved(names ...string) {
	tn.t.Helper()
	for _, name := range names {
		// The deletion's terminates complete after the simulator's operation delay.
		tn.g.Eventually(func() []string {
			var states []string
			for _, ns := range tn.instances(name) {
				states = append(states, ns.NSState)
			}
			return states
		}).Should(ConsistOf("NOT_INSTANTIATED"), "the record of %s", name)
	}
}
