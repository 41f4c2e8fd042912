//go:build e2e

package e2e

import (
	"fmt"
	"maps"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// The demo repository's NS instance of two KNFs.
const (
	stackInstanceName = "ldap-stack"
	stackFile         = "deploy/ldap-stack.osmops.yaml"
)

var (
	stackOfTheDemo = openldap.StackOfTheDemo
	// stackReleasesOfTheDemo is what the KDUs of the demo's ldap-stack run.
	stackReleasesOfTheDemo = map[string]string{
		"directory/ldap": `stable/openldap:1.2.7 map[replicaCount:1]`,
		"web/admin":      `cetic/phpldapadmin:0.1.2 map[service:map[type:ClusterIP]]`,
		"web/metrics":    `prometheus-community/prometheus-openldap-exporter:0.1.0 map[interval:30s]`,
	}
)

// stackReleases maps "member/KDU" of the NS instance ldap-stack to the chart and values its
// Helm release runs.
func stackReleases(state nbisim.State) map[string]string {
	releases := map[string]string{}
	for _, ns := range state.NSInstances {
		if ns.Name != stackInstanceName {
			continue
		}
		for _, kdu := range ns.KDUs {
			releases[kdu.MemberVnfIndex+"/"+kdu.Name] = fmt.Sprintf("%s %v", kdu.Model, releaseValues(kdu))
		}
	}
	return releases
}

var _ = Describe("An NS instance of several KNFs", func() {
	// An NS of two KNFs and three KDUs, pushed to Git: a change of one KDU's values upgrades that
	// KDU alone, with one request; a new chart version runs that chart.
	It("upgrades only the KDU whose values changed, and runs a new chart version", func() {
		t := GinkgoTB()
		ctx, tenant, g := bootstrap(t)
		files, err := openldap.PackageFiles(openldap.StackPackageNames...)
		g.Expect(err).NotTo(HaveOccurred())
		files[stackFile] = openldap.StackInstanceFile(stackInstanceName, vimAccount, stackOfTheDemo)
		tenant.commitAndExpectApplied(ctx, t, files)
		g.Expect(stackReleases(tenant.state(ctx, g))).To(Equal(stackReleasesOfTheDemo))
		g.Expect(tenant.sim.ResetStats(ctx)).To(Succeed())

		changed := stackOfTheDemo
		changed.MetricsInterval = "10s"
		tenant.commitAndExpectApplied(ctx, t, map[string]string{stackFile: openldap.StackInstanceFile(stackInstanceName, vimAccount, changed)})
		want := map[string]string{}
		maps.Copy(want, stackReleasesOfTheDemo)
		want["web/metrics"] = `prometheus-community/prometheus-openldap-exporter:0.1.0 map[interval:10s]`
		g.Expect(stackReleases(tenant.state(ctx, g))).To(Equal(want))
		stats := tenant.stats(ctx, g)
		g.Expect(requestsTo(stats, http.MethodPost, nsActionRoute)).To(BeEquivalentTo(1), "one KDU upgrade")
		g.Expect(changes(stats)).To(BeEquivalentTo(1), "nothing but the upgrade")

		changed.LDAPModel = "stable/openldap:1.2.8"
		tenant.commitAndExpectApplied(ctx, t, map[string]string{stackFile: openldap.StackInstanceFile(stackInstanceName, vimAccount, changed)})
		want["directory/ldap"] = `stable/openldap:1.2.8 map[replicaCount:1]`
		g.Expect(stackReleases(tenant.state(ctx, g))).To(Equal(want))
		g.Expect(requestsTo(tenant.stats(ctx, g), http.MethodPost, nsActionRoute)).To(BeEquivalentTo(2), "one more KDU upgrade")
	})
})
