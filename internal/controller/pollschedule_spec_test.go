package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Operation poll schedule", func() {
	// The poll interval here is longer than any wait of the spec: an operation's end is seen
	// in time only when its first poll comes when operations of its type usually end on that
	// OSM, learnt from those seen end before (the simulator runs each in testOperationDelay).
	// The first operation of each type, with nothing learnt, is seen end by a reconcile request.
	It("polls an operation when operations of its type usually end on that OSM", func() {
		t := GinkgoTB()
		const shard = "poll-schedule"
		startManagerWith(t, shard, true, managerOptions(shardLabel+"="+shard), func(r *OsmDeploymentReconciler) {
			r.OperationPollInterval, r.OperationPollMinInterval = 3*eventuallyTimeout, testPollInterval
		})
		tn := newTenantInShard(t, shard)
		d := tn.deployment("ldap", "gitops")
		seenEndByRequest := func(replicas string) {
			revision := tn.publish("gitops", demoRepo(replicas, "ldap"))
			tn.g.Eventually(func() bool {
				return len(tn.get(d).Status.Operations) > 0 && tn.sim.State().PendingOperations == 0
			}).Should(BeTrue(), "the operation of %s recorded and ended in OSM", revision)
			requestReconcile(tn, d, "replicas-"+replicas)
			tn.expectConverged(d, revision, map[string]string{"ldap": replicas})
		}
		seenEndByRequest("1") // instantiate
		seenEndByRequest("2") // action (upgrade)

		// The next upgrade's end is seen on the schedule alone.
		tn.expectConverged(d, tn.publish("gitops", demoRepo("3", "ldap")), map[string]string{"ldap": "3"})
	})
})
