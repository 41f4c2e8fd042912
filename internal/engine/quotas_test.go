package engine

import (
	"strings"
	"testing"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// OSM refuses (422) each create beyond one of the project's quotas: a revision that would take
// the project past one is refused whole before anything is sent, naming the quota and the
// counts, rather than applied half-way.
func TestComputeRefusesWhatExceedsAQuota(t *testing.T) {
	quota := func(name string, n float64) *osm.Project {
		q := osm.Number(n)
		return &osm.Project{ID: "project-1", Name: "admin", Quotas: map[string]*osm.Number{name: &q}}
	}
	running2 := []osm.NSInstance{running("ns-1", "a"), running("ns-2", "b")}
	inventory := []InstanceRecord{
		entry("a", "ns-1", declared("a", "1").Digest(), InstanceReady),
		entry("b", "ns-2", declared("b", "1").Digest(), InstanceReady),
	}
	four := []gitops.NsInstance{declared("a", "1"), declared("b", "1"), declared("c", "1"), declared("d", "1")}
	newVNFPackage := gitops.Package{Source: "osm-pkgs/other_knf", Package: &osmpkg.Package{DescriptorPath: "other_vnfd.yaml",
		Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindVNF, ID: "other_knf", IDLine: 3}, Digest: "sha256:other"}}
	for _, test := range []struct {
		name      string
		project   *osm.Project
		instances []gitops.NsInstance
		packages  []gitops.Package
		// want is what the problem says, "" for none.
		want    []string
		creates int
	}{
		{name: "creates within the quota", project: quota(osm.QuotaNSInstances, 4), instances: four, creates: 2},
		{name: "creates beyond the quota", project: quota(osm.QuotaNSInstances, 3), instances: four,
			want: []string{"deploy/d.osmops.yaml:1", `quota ns_instances of project "admin" is 3`, "holds 2 NS instances", "creates 2 more"}},
		{name: "no create, whatever the count", project: quota(osm.QuotaNSInstances, 1), instances: four[:2]},
		{name: "OSM's default quota when the project sets none", project: &osm.Project{ID: "project-1", Name: "admin"}, instances: four, creates: 2},
		{name: "a VNF package beyond its quota", project: quota(osm.QuotaVNFDs, 1), instances: four[:2], packages: []gitops.Package{newVNFPackage},
			want: []string{"osm-pkgs/other_knf/other_vnfd.yaml:3", `quota vnfds of project "admin" is 1`, "holds 1 VNF packages", "creates 1 more"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			observed := observedWith(running2, nil)
			observed.Project = test.project
			plan := Compute(Input{Revision: &gitops.Revision{NsInstances: test.instances, Packages: test.packages}, Observed: observed,
				Inventory: Inventory{NsInstances: inventory}, Owner: self, Prune: true})
			if test.want == nil {
				if len(plan.Problems) > 0 || len(plan.Creates) != test.creates {
					t.Fatalf("problems %+v, %d creates; want none and %d", plan.Problems, len(plan.Creates), test.creates)
				}
				return
			}
			if plan.Mutations() != 0 || len(plan.Problems) != 1 || plan.Problems[0].Kind != Limit {
				t.Fatalf("%d mutations, problems %+v; want none and one Limit", plan.Mutations(), plan.Problems)
			}
			said := plan.Problems[0].String()
			for _, want := range test.want {
				if !strings.Contains(said, want) {
					t.Errorf("problem %q does not say %q", said, want)
				}
			}
		})
	}
}
