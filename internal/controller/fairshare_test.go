package controller

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// hangingNBI serves the tenant's simulator but never answers the requests for which hang is
// true: it accepts them and holds them until the test ends.
func (tn *tenant) hangingNBI(hang func(*http.Request) bool) *httptest.Server {
	released := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang(r) {
			<-released
			return
		}
		tn.sim.ServeHTTP(w, r)
	}))
	tn.t.Cleanup(func() {
		close(released)
		server.Close()
	})
	return server
}

var _ = Describe("The fair share of workers between tenants", func() {
	// Tenants' unanswering OSMs cannot starve another tenant: their OsmClusters and OsmDeployments
	// hold at most their namespace's share of the workers, so another tenant's OsmCluster gets
	// Ready, and its revision applied, well within one NBI request timeout.
	// Serial: its tenants hold suite workers on purpose, and the bound on the other tenant's
	// wait assumes that no other spec's reconciles compete for the rest.
	It("one tenant cannot starve another", Serial, func() {
		t := GinkgoTB()

		// OSMs that pass the health check, then never answer a list of NS descriptors.
		stuck := newTenant(t)
		mute := stuck.hangingNBI(func(r *http.Request) bool { return r.URL.Path == "/osm/nsd/v1/ns_descriptors" })
		muteCluster := stuck.newCluster("mute", mute.URL, "osm-credentials")
		stuck.clusterReason(muteCluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		stuck.publish("gitops", demoRepo("1", "ldap"))
		for i := range 2 * testWorkers {
			stuck.deployment(fmt.Sprintf("stuck-%d", i), "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
				d.Spec.ClusterRef.Name = muteCluster.Name
			})
		}
		// OSMs that accept connections and never answer anything.
		silent := newTenant(t)
		server := silent.hangingNBI(func(*http.Request) bool { return true })
		for i := range 2 * testWorkers {
			silent.newCluster(fmt.Sprintf("silent-%d", i), server.URL, "osm-credentials", func(c *gitopsv1alpha1.OsmCluster) {
				c.Spec.Timeout = &metav1.Duration{Duration: 5 * time.Minute}
			})
		}

		within := testMaxRequestTimeout / 2
		started := time.Now()
		other := newTenantWithin(t, within)
		d := other.deployment("ldap", "gitops")
		revision := other.publish("gitops", demoRepo("1", "ldap"))
		other.g.Eventually(func() string {
			got := other.get(d)
			return fmt.Sprintf("%s %s", readyStatus(got.Status.Conditions), got.Status.LastAppliedRevision)
		}, within).Should(Equal("True "+revision), func() string { return other.describe(d) })
		t.Logf("the other tenant was served in %v", time.Since(started))
	})
})
