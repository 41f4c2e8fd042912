package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWorkloadRevisions(t *testing.T) {
	tests := []struct {
		n                          int
		changed, pruned, remaining []string
	}{
		{n: 2, changed: []string{"w-0000"}, pruned: []string{"w-0001"}, remaining: []string{"w-0000"}},
		{n: 10, changed: []string{"w-0000"}, pruned: []string{"w-0009"},
			remaining: []string{"w-0000", "w-0001", "w-0002", "w-0003", "w-0004", "w-0005", "w-0006", "w-0007", "w-0008"}},
	}
	for _, tt := range tests {
		w := Workload{N: tt.n, Prefix: "w"}
		if diff := cmp.Diff(tt.changed, w.ChangedNames()); diff != "" {
			t.Errorf("N=%d: changed (-want +got):\n%s", tt.n, diff)
		}
		if diff := cmp.Diff(tt.pruned, w.PrunedNames()); diff != "" {
			t.Errorf("N=%d: pruned (-want +got):\n%s", tt.n, diff)
		}
		if diff := cmp.Diff(tt.remaining, names(w.Pruned())); diff != "" {
			t.Errorf("N=%d: left after D (-want +got):\n%s", tt.n, diff)
		}
		for _, instance := range w.WithChangedValues() {
			wantReplicas := "1"
			if instance.Name == tt.changed[0] {
				wantReplicas = "2"
			}
			if instance.ReplicaCount != wantReplicas {
				t.Errorf("N=%d: B gives %s replicaCount %q, want %q", tt.n, instance.Name, instance.ReplicaCount, wantReplicas)
			}
		}
	}
	if got := (Workload{N: 1000}).Changed(); got != 100 {
		t.Errorf("10%% of 1,000 is %d", got)
	}
}

// TestRepositoryFilesAreAValidRevision checks that the operator will accept the benchmark's
// repositories: the parser the operator uses reads the instances and both packages.
func TestRepositoryFilesAreAValidRevision(t *testing.T) {
	revision := parsedRevision(t, Workload{N: 3, Prefix: "ldap"}.WithChangedValues())
	var got []string
	for _, ns := range revision.NsInstances {
		got = append(got, ns.Name+" "+ns.ParamsJSON(ns.VnfName, ns.KDU))
	}
	want := []string{`ldap-0000 {"replicaCount":"2"}`, `ldap-0001 {"replicaCount":"1"}`, `ldap-0002 {"replicaCount":"1"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NS instances (-want +got):\n%s", diff)
	}
	var packages []string
	for _, pkg := range revision.Packages {
		packages = append(packages, pkg.Descriptor.ID)
	}
	if diff := cmp.Diff([]string{"openldap_knf", "openldap_ns"}, packages); diff != "" {
		t.Errorf("packages in upload order (-want +got):\n%s", diff)
	}
}
