package engine

import (
	"fmt"
	"testing"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
)

// BenchmarkCompute10000Instances plans a revision of 10,000 NS instances that OSM runs and the
// OsmDeployment owns, with their live values observed, 10% of them changed in Git: the plan of
// every revision and drift check of a large repository.
func BenchmarkCompute10000Instances(b *testing.B) {
	const n, changedEvery = 10_000, 10
	declaredInstances := make([]gitops.NsInstance, n)
	instances := make([]osm.NSInstance, n)
	live := make(map[string]string, n)
	owned := make([]InstanceRecord, n)
	for i := range n {
		name, id := fmt.Sprintf("ldap-%05d", i), fmt.Sprintf("ns-%05d", i)
		applied := declared(name, "1")
		declaredInstances[i] = applied
		if i%changedEvery == 0 {
			declaredInstances[i] = declared(name, "2")
		}
		instances[i] = running(id, name)
		live[id] = `{"replicaCount": "1"}`
		owned[i] = entry(name, id, applied.Digest(), InstanceReady)
	}
	input := Input{
		Revision: &gitops.Revision{NsInstances: declaredInstances}, Observed: observedWith(instances, live),
		Inventory: Inventory{NsInstances: owned}, Prune: true, Owner: self,
	}
	b.ReportAllocs()
	for b.Loop() {
		plan := Compute(input)
		if len(plan.Upgrades) != n/changedEvery || len(plan.Problems) > 0 {
			b.Fatalf("%d upgrades, problems %v", len(plan.Upgrades), plan.Problems)
		}
	}
}
