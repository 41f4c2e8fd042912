package controller

import (
	"net/http"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
)

var _ = Describe("Shards", func() {
	// Two operator processes with different shards on one API server and one OSM (startManager: a
	// manager with its own memory, for the objects labelled with its shard): two
	// OsmDeployments, one in each shard, declare one NS instance at the same moment. Neither
	// process holds the other's claims in memory; OSM gets one create, one OsmDeployment owns the
	// instance, the other reports the Conflict, and neither touches the other's instance.
	It("two shards never create one instance twice", Label("slow"), func() {
		t := GinkgoTB()
		tn := newTenant(t)
		shards := []string{"one", "two"}
		for _, shard := range shards {
			startManager(t, shard, true)
			cluster := tn.newCluster("osm-"+shard, tn.nbi.URL, "osm-credentials", func(c *gitopsv1alpha1.OsmCluster) {
				c.Labels = map[string]string{shardLabel: shard}
			})
			tn.clusterReason(cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		}
		// The packages come first, from an OsmDeployment of no shard, so that the two only race
		// for the NS instance; both read OSM's NS instances in the same window, as if at once.
		tn.eventuallyApplied(tn.deployment("packages", "packages"), tn.publish("packages", demoRepo("1")))
		tn.addFault(nbisim.Fault{Method: http.MethodGet, PathPrefix: "/osm/nslcm/v1/ns_instances_content", Latency: 500 * time.Millisecond, Count: 4})
		files := demoRepo("1", "ldap")
		for name := range files {
			if strings.HasPrefix(name, "osm-pkgs/") {
				delete(files, name)
			}
		}
		revision := tn.publish("gitops", files)
		var deployments []*gitopsv1alpha1.OsmDeployment
		for _, shard := range shards {
			deployments = append(deployments, tn.deployment("ldap-"+shard, "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
				d.Labels = map[string]string{shardLabel: shard}
				d.Spec.ClusterRef.Name = "osm-" + shard
				d.Spec.RetryInterval = &metav1.Duration{Duration: time.Second}
			}))
		}

		outcome := func() []string {
			var out []string
			for _, d := range deployments {
				got := tn.get(d)
				ready := conditionOf(got.Status.Conditions, meta.ReadyCondition)
				if ready == nil {
					out = append(out, "none")
					continue
				}
				out = append(out, string(ready.Status)+" "+ready.Reason+" "+got.Status.LastAppliedRevision)
			}
			return out
		}
		tn.g.Eventually(outcome).Should(ConsistOf("True "+gitopsv1alpha1.AppliedReason+" "+revision,
			"False "+gitopsv1alpha1.ConflictReason+" "), func() string { return tn.describe(deployments[0]) + tn.describe(deployments[1]) })
		tn.g.Expect(tn.countRequests("POST /osm/nslcm/v1/ns_instances_content")).To(BeEquivalentTo(1))
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
	})

	// A tenant moves its OsmDeployment to another shard, then its OsmCluster: the shard it left
	// drops it at once (it still reads it, past its label-filtered cache, when the cache drops it),
	// neither applying the new revision nor looking at OSM for it again; the shard it joins applies it.
	It("an OsmDeployment relabelled out of its shard is applied by the shard it joins", Label("slow"), func() {
		t := GinkgoTB()
		left := startManager(t, "relabel-left", true)
		startManager(t, "relabel-joined", true)
		tn := newTenantInShard(t, "relabel-left")
		d := tn.appliedDeployment([]string{"ldap"}, func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.RetryInterval = &metav1.Duration{Duration: time.Second}
		})
		before := left.nsRequests()

		tn.update(d, func(d *gitopsv1alpha1.OsmDeployment) { d.Labels[shardLabel] = "relabel-joined" })
		revision := tn.publish("gitops", demoRepo("2", "ldap", "ldap2"))
		// The shard it joined has it, and waits for the OsmCluster to join too.
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "+gitopsv1alpha1.ClusterNotReadyReason), ContainSubstring("not found")))
		tn.updateCluster(func(c *gitopsv1alpha1.OsmCluster) { c.Labels[shardLabel] = "relabel-joined" })
		tn.expectConverged(d, revision, map[string]string{"ldap": "2", "ldap2": "2"})
		tn.g.Expect(left.nsRequests()).To(Equal(before), "the shard it left read or changed its NS instances")
	})
})

// nsRequests counts the requests the manager's NBI clients sent on NS instances and their
// operations.
func (m *testManager) nsRequests() float64 {
	families, err := m.nbiRequests.Gather()
	if err != nil {
		m.t.Fatal(err)
	}
	var sent float64
	for _, f := range families {
		if f.GetName() != "osmops_nbi_requests_total" {
			continue
		}
		for _, metric := range f.Metric {
			if strings.HasPrefix(metricLabels(metric)["route"], "/nslcm/") {
				sent += metric.GetCounter().GetValue()
			}
		}
	}
	return sent
}
