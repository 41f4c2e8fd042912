package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("A chart named without a version", func() {
	// The demo's KDU ldap names its chart without a version (stable/openldap), so LCM installed the
	// newest of the repository. An upgrade without a version would install the newest again: a
	// chart published since would reach OSM on a values change that Git did not mean to move it.
	// The upgrade names the version OSM reports the release runs (its objects' helm.sh/chart).
	It("a values change keeps the version of a chart named without one", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.expectConverged(d, tn.publish("gitops", demoRepo("1", "ldap")), map[string]string{"ldap": "1"})
		tn.g.Expect(tn.instances("ldap")[0].KDUs[0].ChartVersion).To(Equal("1.2.8"))

		tn.g.Expect(tn.sim.PublishChart("stable/openldap:1.2.9")).To(Succeed())
		tn.expectConverged(d, tn.publish("gitops", demoRepo("2", "ldap")), map[string]string{"ldap": "2"})
		kdu := tn.instances("ldap")[0].KDUs[0]
		tn.g.Expect(kdu.ChartVersion).To(Equal("1.2.8"), "the chart moved on a values change")
		tn.g.Expect(kdu.Model).To(Equal("stable/openldap:1.2.8"))
	})
})
