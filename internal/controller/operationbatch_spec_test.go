package controller

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

var _ = Describe("Operation poll batch", func() {
	// Six OsmDeployments of one OsmCluster wait for instantiations OSM holds. Each reconcile
	// checks the operations of its OsmDeployment; their polls come on the ticks of the
	// OsmCluster's connection (nothing is learnt: every fourth tick, the poll interval), and one
	// request at a tick answers every OsmDeployment due at it.
	// Before, each check was a request of its own.
	It("asks OSM once per tick for the operations of every OsmDeployment of an OsmCluster", func() {
		t := GinkgoTB()
		const shard, sites = "poll-batch", 6
		startManagerWith(t, shard, true, managerOptions(shardLabel+"="+shard), func(r *OsmDeploymentReconciler) {
			r.OperationPollInterval, r.OperationPollMinInterval = 4*testPollInterval, testPollInterval
			// Every worker: the checks of a tick are not put back in the queue by the namespace's
			// share, to come a second later, off the tick (then answered by the request of their
			// tick, they need one of their own at their next poll a quarter of the time).
			r.Share = NewNamespaceShare(testWorkers)
		})
		tn := newTenantInShard(t, shard)
		tn.eventuallyApplied(tn.deployment("packages", "packages"), tn.publish("packages", demoRepo("1")))

		tn.sim.HoldOperations()
		DeferCleanup(tn.sim.ReleaseOperations)
		deployments := make([]*gitopsv1alpha1.OsmDeployment, sites)
		for i := range deployments {
			name := fmt.Sprintf("site-%d", i)
			tn.publish(name, map[string]string{"deploy/" + name + ".osmops.yaml": nsInstanceFile(name, "1")})
			deployments[i] = tn.deployment(name, name)
		}
		for _, d := range deployments {
			tn.g.Eventually(func() []gitopsv1alpha1.OperationEntry { return tn.get(d).Status.Operations }).
				ShouldNot(BeEmpty(), func() string { return tn.describe(d) })
		}

		// The reconciles of the OsmDeployments, each of which checks their operations once.
		checks := func() int64 {
			var n int64
			for _, d := range deployments {
				var m dto.Metric
				tn.g.Expect(reconcileDuration.WithLabelValues(d.Namespace, d.Name).(prometheus.Metric).Write(&m)).To(Succeed())
				n += int64(m.GetHistogram().GetSampleCount())
			}
			return n
		}
		checked, requested := checks(), tn.countRequests(listOperationsRoute)
		tn.g.Eventually(checks).Should(BeNumerically(">=", checked+10*sites))
		checked = checks() - checked
		requested = tn.countRequests(listOperationsRoute) - requested
		fmt.Fprintf(GinkgoWriter, "%d requests for the operations of %d checks\n", requested, checked)
		tn.g.Expect(tn.sim.State().PendingOperations).To(Equal(sites), "the operations still held")
		tn.g.Expect(requested*3).To(BeNumerically("<=", checked),
			"%d requests for the operations of %d checks of %d OsmDeployments", requested, checked, sites)
	})
})
