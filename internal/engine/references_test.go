package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// declaredWith is declared(name, replicas) with change made to it before it is sealed.
func declaredWith(name, replicas string, change func(*gitops.NsInstance)) gitops.NsInstance {
	ns := gitops.NsInstance{
		Name: name, NsdName: "openldap_ns", VnfName: "openldap", VimAccountName: "site1",
		KDU:    gitops.KDU{Name: "ldap", Params: map[string]any{"replicaCount": replicas}},
		Source: gitops.SourceRef{File: "deploy/" + name + ".osmops.yaml", Line: 1},
	}
	change(&ns)
	return ns.Sealed()
}

// appliedInventory is the inventory of a plan of rev made on a whole observation, with the
// instances Ready as OSM runs them (ns-<name>) and the packages as OSM accepted them.
func appliedInventory(t *testing.T, rev *gitops.Revision) Inventory {
	t.Helper()
	var instances []osm.NSInstance
	for _, ns := range rev.NsInstances {
		instances = append(instances, running("ns-"+ns.Name, ns.Name))
	}
	plan := Compute(Input{Revision: rev, Observed: observedWith(instances, nil), Owner: self, AdoptExisting: true})
	if len(plan.Problems) > 0 {
		t.Fatalf("plan of the applied revision: %v", plan.Problems)
	}
	inventory := plan.Inventory
	for i := range inventory.NsInstances {
		inventory.NsInstances[i].ID, inventory.NsInstances[i].State = "ns-"+inventory.NsInstances[i].Name, InstanceReady
	}
	for i := range inventory.Packages {
		inventory.Packages[i].ID = "pkg-" + inventory.Packages[i].Name
	}
	return inventory
}

// A new revision that refers to what the applied one did, with the same packages, reads no
// descriptor, VIM account or project: the changed instances are upgraded from their records
// alone, and the inventory keeps the digest. A reference it adds or changes, a package it
// changes, or an instance not Ready has them read.
func TestKnownReferencesAreNotReadAgain(t *testing.T) {
	a, b := declared("a", "1"), declared("b", "1")
	knf := func(digest string) gitops.Package {
		return gitops.Package{Source: "osm-pkgs/openldap_knf", Package: &osmpkg.Package{DescriptorPath: "openldap_vnfd.yaml",
			Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindVNF, ID: "openldap_knf", KDUs: []osmpkg.KDU{{Name: "ldap"}}}, Digest: digest}}
	}
	pkg := knf("sha256:pkg-1")
	applied := &gitops.Revision{NsInstances: []gitops.NsInstance{a, b}, Packages: []gitops.Package{pkg}}
	inventory := appliedInventory(t, applied)
	if inventory.ReferencesDigest != ReferencesDigest(applied) || inventory.ReferencesDigest == "" {
		t.Fatalf("the applied plan's inventory records references digest %q, want %q", inventory.ReferencesDigest, ReferencesDigest(applied))
	}
	valuesOnly := &gitops.Revision{NsInstances: []gitops.NsInstance{a, declared("b", "2")}, Packages: []gitops.Package{pkg}}
	otherPackage := knf("sha256:pkg-2")
	failed := inventory
	failed.NsInstances = []InstanceRecord{inventory.NsInstances[0], entry("b", "ns-b", b.Digest(), InstanceFailed)}
	for _, test := range []struct {
		name      string
		rev       *gitops.Revision
		inventory Inventory
		known     bool
	}{
		{"values changed only", valuesOnly, inventory, true},
		{"another VIM account", &gitops.Revision{NsInstances: []gitops.NsInstance{a,
			declaredWith("b", "2", func(ns *gitops.NsInstance) { ns.VimAccountName = "site2" })}, Packages: []gitops.Package{pkg}}, inventory, false},
		{"another NSD", &gitops.Revision{NsInstances: []gitops.NsInstance{a,
			declaredWith("b", "2", func(ns *gitops.NsInstance) { ns.NsdName = "other_ns" })}, Packages: []gitops.Package{pkg}}, inventory, false},
		{"another KDU", &gitops.Revision{NsInstances: []gitops.NsInstance{a,
			declaredWith("b", "2", func(ns *gitops.NsInstance) { ns.KDU.Name = "other" })}, Packages: []gitops.Package{pkg}}, inventory, false},
		{"a new instance", &gitops.Revision{NsInstances: []gitops.NsInstance{a, b, declared("c", "1")}, Packages: []gitops.Package{pkg}}, inventory, false},
		{"a package changed", &gitops.Revision{NsInstances: valuesOnly.NsInstances, Packages: []gitops.Package{otherPackage}}, inventory, false},
		{"a changed instance not Ready", valuesOnly, failed, false},
		{"an inventory of before the digest", valuesOnly, Inventory{NsInstances: inventory.NsInstances, Packages: inventory.Packages}, false},
	} {
		t.Run(test.name, func(t *testing.T) {
			scope := RevisionScope(test.rev, test.inventory, self)
			if scope.KnownReferences != test.known {
				t.Fatalf("KnownReferences = %v, want %v", scope.KnownReferences, test.known)
			}
			nbi := &listingOSM{named: []osm.NSInstance{running("ns-b", "b")}}
			if _, err := Observe(t.Context(), nbi, scope); err != nil {
				t.Fatal(err)
			}
			if read := nbi.askedReferences > 0 || nbi.askedProject > 0; read == test.known {
				t.Errorf("descriptor and VIM account lists %d, project reads %d, with KnownReferences %v", nbi.askedReferences, nbi.askedProject, test.known)
			}
		})
	}

	// The plan of the values-only revision upgrades b with what the records say, and keeps the
	// packages and the digest.
	observed := observedWith([]osm.NSInstance{running("ns-b", "b")}, map[string]string{"ns-b": `{"replicaCount": "1"}`})
	observed.NSDs, observed.VNFDs, observed.VIMAccounts = nil, nil, nil
	observed.settled, observed.knownReferences = map[string]bool{"a": true}, true
	plan := Compute(Input{Revision: valuesOnly, Observed: observed, Inventory: inventory, Owner: self})
	want := summary{Upgrades: []string{"b@ns-b: KDU ldap of VNF openldap: values changed in Git"},
		Inventory: []InstanceRecord{inventory.NsInstances[0], {Name: "b", ID: "ns-b", Digest: valuesOnly.NsInstances[1].Digest(), State: InstanceProgressing}}}
	if diff := cmp.Diff(want, summarise(plan)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if len(plan.Packages) > 0 || !cmp.Equal(plan.Inventory.Packages, inventory.Packages) || plan.Inventory.ReferencesDigest != inventory.ReferencesDigest {
		t.Errorf("packages %v, inventory packages %v and digest %q, want none, %v and %q", plan.Packages, plan.Inventory.Packages,
			plan.Inventory.ReferencesDigest, inventory.Packages, inventory.ReferencesDigest)
	}
}

// An instance of a scope of known references that OSM no longer has is created: its create
// needs the NSD's and VIM account's ids, and the quotas, which are read then.
func TestKnownReferencesAreReadForACreate(t *testing.T) {
	nbi := &listingOSM{}
	o, err := Observe(t.Context(), nbi, Scope{Names: []string{"b"}, Quotas: true, KnownReferences: true})
	if err != nil {
		t.Fatal(err)
	}
	if nbi.askedReferences != 3 || nbi.askedProject != 1 || o.knownReferences {
		t.Errorf("descriptor and VIM account lists %d, project reads %d, known %v; want 3, 1, false", nbi.askedReferences, nbi.askedProject, o.knownReferences)
	}
}
