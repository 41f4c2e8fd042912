package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osm/osmpkg"
)

// declared is an NS instance as gitops.Load returns it.
func declared(name, replicas string) gitops.NsInstance {
	return gitops.NsInstance{
		Name: name, NsdName: "openldap_ns", VnfName: "openldap", VimAccountName: "site1",
		KDU:    gitops.KDU{Name: "ldap", Params: map[string]any{"replicaCount": replicas}},
		Source: gitops.SourceRef{File: "deploy/" + name + ".osmops.yaml", Line: 1},
	}.Sealed()
}

func running(id, name string) osm.NSInstance {
	return osm.NSInstance{ID: id, Name: name, NSState: "READY", CurrentOperation: "IDLE", NsdRef: "openldap_ns",
		InstantiateParams: osm.NSInstantiateParams{VIMAccountID: "vim-1"}}
}

func observedWith(instances []osm.NSInstance, values map[string]string) *Observed {
	var vnfs []osm.VNFInstance
	for id, v := range values {
		vnfs = append(vnfs, osm.VNFInstance{NSInstanceID: id, MemberVnfIndex: "openldap",
			KDURecords: []osm.KDURecord{{KDUName: "ldap", AdditionalParams: osm.LooseString(v)}}})
	}
	return newObserved(
		[]osm.NSDescriptor{{ID: "nsd-1", DescriptorID: "openldap_ns"}},
		[]osm.VNFDescriptor{{ID: "vnfd-1", DescriptorID: "openldap_knf"}},
		[]osm.VIMAccount{{ID: "vim-1", Name: "site1"}},
		instances, vnfs, values != nil)
}

func entry(name, id, digest string, state gitopsv1alpha1.NsInstanceState) gitopsv1alpha1.NsInstanceEntry {
	return gitopsv1alpha1.NsInstanceEntry{Name: name, ID: id, Digest: digest, State: state}
}

// summary is the comparable shape of a plan.
type summary struct {
	Creates, Upgrades, Deletes, Orphans []string
	Problems                            []string
	Inventory                           []gitopsv1alpha1.NsInstanceEntry
}

func summarise(p Plan) summary {
	var s summary
	for _, a := range p.Creates {
		s.Creates = append(s.Creates, a.Name+": "+a.Reason)
	}
	for _, a := range p.Upgrades {
		s.Upgrades = append(s.Upgrades, a.Name+"@"+a.ID+": "+a.Reason)
	}
	for _, a := range p.Deletes {
		s.Deletes = append(s.Deletes, a.Name+"@"+a.ID)
	}
	s.Orphans = p.Orphans
	for _, problem := range p.Problems {
		s.Problems = append(s.Problems, problem.String())
	}
	s.Inventory = p.Inventory.NsInstances
	return s
}

func TestComputeNsInstances(t *testing.T) {
	ldap := declared("ldap", "2")
	digest := ldap.Digest()
	tests := []struct {
		name      string
		declared  []gitops.NsInstance
		observed  *Observed
		inventory []gitopsv1alpha1.NsInstanceEntry
		claims    map[string]string
		prune     bool
		adopt     bool
		want      summary
	}{
		{
			name: "a new instance is created", declared: []gitops.NsInstance{ldap},
			observed: observedWith(nil, nil),
			want: summary{Creates: []string{"ldap: declared in Git"},
				Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "", digest, gitopsv1alpha1.NsInstanceCreating)}},
		},
		{
			name: "an unchanged instance is left alone", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "2"}`}),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceReady)},
			want:      summary{Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceReady)}},
		},
		{
			name: "values changed in Git are upgraded", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "1"}`}),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", "sha256:old", gitopsv1alpha1.NsInstanceReady)},
			want: summary{Upgrades: []string{"ldap@ns-1: KDU values changed in Git"},
				Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceProgressing)}},
		},
		{
			name: "values changed in OSM are restored", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "5"}`}),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceReady)},
			want: summary{Upgrades: []string{"ldap@ns-1: KDU values changed in OSM outside Git: restoring them"},
				Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceProgressing)}},
		},
		{
			name: "without live values the digest decides", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, nil),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceReady)},
			want:      summary{Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceReady)}},
		},
		{
			name: "an instance deleted in OSM is recreated", declared: []gitops.NsInstance{ldap},
			observed:  observedWith(nil, map[string]string{}),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceReady)},
			want: summary{Creates: []string{"ldap: deleted in OSM outside Git: recreating it"},
				Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "", digest, gitopsv1alpha1.NsInstanceCreating)}},
		},
		{
			name: "a create interrupted after OSM made the instance is not sent again", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-9", "ldap")}, map[string]string{"ns-9": `{"replicaCount": "2"}`}),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "", digest, gitopsv1alpha1.NsInstanceCreating)},
			want:      summary{Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-9", digest, gitopsv1alpha1.NsInstanceReady)}},
		},
		{
			name: "a create interrupted before OSM answered is sent again", declared: []gitops.NsInstance{ldap},
			observed:  observedWith(nil, nil),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "", digest, gitopsv1alpha1.NsInstanceCreating)},
			want: summary{Creates: []string{"ldap: its creation was interrupted before OSM answered"},
				Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "", digest, gitopsv1alpha1.NsInstanceCreating)}},
		},
		{
			name: "an instance that is not owned is a conflict", declared: []gitops.NsInstance{ldap},
			observed: observedWith([]osm.NSInstance{running("ns-1", "ldap")}, nil),
			want:     summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" (id ns-1) already exists in OSM and this OsmDeployment does not own it: set spec.adoptExisting to take it over`}},
		},
		{
			name: "an instance that is not owned is adopted when asked", declared: []gitops.NsInstance{ldap}, adopt: true,
			observed: observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "2"}`}),
			want:     summary{Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceReady)}},
		},
		{
			name: "an instance another OsmDeployment owns is a conflict naming it", declared: []gitops.NsInstance{ldap},
			observed: observedWith(nil, nil), claims: map[string]string{"ldap": "tenant1/first"},
			want: summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" is already managed by OsmDeployment tenant1/first on this OsmCluster`}},
		},
		{
			name: "two instances with the declared name are a problem", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap"), running("ns-2", "ldap")}, nil),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "", digest, gitopsv1alpha1.NsInstanceCreating)},
			want: summary{Problems: []string{`deploy/ldap.osmops.yaml:1: OSM has 2 NS instances named "ldap" (ids [ns-1 ns-2]): delete the extra ones in OSM`},
				Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "", digest, gitopsv1alpha1.NsInstanceCreating)}},
		},
		{
			name: "an instance no longer declared is deleted with prune", prune: true,
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, nil),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceReady)},
			want: summary{Deletes: []string{"ldap@ns-1"},
				Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceDeleting)}},
		},
		{
			name:      "an instance no longer declared is orphaned without prune",
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, nil),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceReady)},
			want: summary{Orphans: []string{"ldap"},
				Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceOrphaned)}},
		},
		{
			name: "an instance that OSM already removed leaves the inventory", prune: true,
			observed:  observedWith(nil, nil),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceDeleting)},
			want:      summary{},
		},
		{
			name: "a busy instance is not touched", declared: []gitops.NsInstance{ldap},
			observed: func() *Observed {
				busy := running("ns-1", "ldap")
				busy.NSState = "BUILDING"
				return observedWith([]osm.NSInstance{busy}, map[string]string{"ns-1": `{"replicaCount": "1"}`})
			}(),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", "sha256:old", gitopsv1alpha1.NsInstanceProgressing)},
			want:      summary{Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", "sha256:old", gitopsv1alpha1.NsInstanceProgressing)}},
		},
		{
			name: "a failed intent is not sent again", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "1"}`}),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceFailed)},
			want:      summary{Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceFailed)}},
		},
		{
			name: "changing the NSD of an instance is refused", declared: []gitops.NsInstance{ldap},
			observed: func() *Observed {
				other := running("ns-1", "ldap")
				other.NsdRef = "other_ns"
				return observedWith([]osm.NSInstance{other}, nil)
			}(),
			inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceReady)},
			want: summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" runs NSD "other_ns": OSM cannot change the NSD of an instance; give the instance a new name, or delete it first`},
				Inventory: []gitopsv1alpha1.NsInstanceEntry{entry("ldap", "ns-1", digest, gitopsv1alpha1.NsInstanceReady)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Compute(Input{
				Revision: &gitops.Revision{NsInstances: tt.declared}, Observed: tt.observed,
				Inventory: gitopsv1alpha1.Inventory{NsInstances: tt.inventory}, Claims: tt.claims,
				Prune: tt.prune, AdoptExisting: tt.adopt,
			})
			if diff := cmp.Diff(tt.want, summarise(plan)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputePackages(t *testing.T) {
	knf := gitops.Package{Source: "osm-pkgs/openldap_knf", Package: &osmpkg.Package{
		Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindVNF, ID: "openldap_knf"}, Digest: "sha256:knf"}}
	ns := gitops.Package{Source: "osm-pkgs/openldap_ns", Package: &osmpkg.Package{
		Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindNS, ID: "openldap_ns", VnfdIDs: []string{"openldap_knf"}}, Digest: "sha256:ns"}}
	observed := observedWith(nil, nil) // OSM has openldap_ns (nsd-1) and openldap_knf (vnfd-1)
	empty := newObserved(nil, nil, nil, nil, nil, false)
	tests := []struct {
		name      string
		observed  *Observed
		inventory []gitopsv1alpha1.PackageEntry
		want      []string
	}{
		{name: "missing packages are created, VNF first", observed: empty, want: []string{"create openldap_knf", "create openldap_ns"}},
		{name: "unchanged packages are not sent", observed: observed,
			inventory: []gitopsv1alpha1.PackageEntry{{Name: "openldap_knf", ID: "vnfd-1", Digest: "sha256:knf"}, {Name: "openldap_ns", ID: "nsd-1", Digest: "sha256:ns"}}},
		{name: "a changed package is updated alone", observed: observed,
			inventory: []gitopsv1alpha1.PackageEntry{{Name: "openldap_knf", ID: "vnfd-1", Digest: "sha256:old"}, {Name: "openldap_ns", ID: "nsd-1", Digest: "sha256:ns"}},
			want:      []string{"update openldap_knf vnfd-1"}},
		{name: "packages OSM has but this OsmDeployment never uploaded are updated", observed: observed,
			want: []string{"update openldap_knf vnfd-1", "update openldap_ns nsd-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Compute(Input{Revision: &gitops.Revision{Packages: []gitops.Package{knf, ns}}, Observed: tt.observed,
				Inventory: gitopsv1alpha1.Inventory{Packages: tt.inventory}})
			var got []string
			for _, a := range plan.Packages {
				if a.ID == "" {
					got = append(got, "create "+a.Package.Descriptor.ID)
				} else {
					got = append(got, "update "+a.Package.Descriptor.ID+" "+a.ID)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("package actions (-want +got):\n%s", diff)
			}
		})
	}
}
