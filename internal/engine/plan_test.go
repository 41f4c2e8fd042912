package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// declared is an NS instance as gitops.Load returns it.
func declared(name, replicas string) gitops.NsInstance {
	return gitops.NsInstance{
		Name: name, NsdName: "openldap_ns", VnfName: "openldap", VimAccountName: "site1",
		KDU:    gitops.KDU{Name: "ldap", Params: map[string]any{"replicaCount": replicas}},
		Source: gitops.SourceRef{File: "deploy/" + name + ".osmops.yaml", Line: 1},
	}.Sealed()
}

// self is the OsmDeployment the plans of these tests are computed for.
var self = Owner{Manager: "cluster-a", Namespace: "telco", Name: "osm-gitops"}

// running is an NS instance that self created.
func running(id, name string) osm.NSInstance {
	return ownedBy(self, unmarked(id, name))
}

// unmarked is an NS instance that no operator created (the osm CLI, the UI, or an operator of
// before ownership markers).
func unmarked(id, name string) osm.NSInstance {
	return osm.NSInstance{ID: id, Name: name, NSState: "READY", CurrentOperation: "IDLE", NsdRef: "openldap_ns",
		InstantiateParams: osm.NSInstantiateParams{VIMAccountID: "vim-1"}}
}

func ownedBy(owner Owner, ns osm.NSInstance) osm.NSInstance {
	ns.AdditionalParamsForNs = map[string]osm.LooseString{OwnerParam: osm.LooseString(owner.Marker())}
	return ns
}

func observedWith(instances []osm.NSInstance, values map[string]string) *Observed {
	var vnfs []osm.VNFInstance
	for id, v := range values {
		vnfs = append(vnfs, osm.VNFInstance{NSInstanceID: id, MemberVnfIndex: "openldap",
			KDURecords: []osm.KDURecord{{KDUName: "ldap", AdditionalParams: osm.LooseString(v)}}})
	}
	o := newObserved(
		[]osm.NSDescriptor{{ID: "nsd-1", DescriptorID: "openldap_ns", VnfdIDs: []string{"openldap_knf"},
			DeploymentFlavours: []osm.NSDeploymentFlavour{{VnfProfiles: []osm.NSVnfProfile{{ID: "openldap", VnfdID: "openldap_knf"}}}}}},
		[]osm.VNFDescriptor{{ID: "vnfd-1", DescriptorID: "openldap_knf", KDUs: []osm.DescriptorKDU{{Name: "ldap"}}}},
		[]osm.VIMAccount{{ID: "vim-1", Name: "site1"}},
		instances)
	if values != nil {
		if err := o.setVNFRecords(vnfs, nil); err != nil {
			panic(err)
		}
	}
	return o
}

func entry(name, id, digest string, state InstanceState) InstanceRecord {
	return InstanceRecord{Name: name, ID: id, Digest: digest, State: state}
}

// summary is the comparable shape of a plan.
type summary struct {
	Creates, Upgrades, Deletes, Orphans []string
	Problems                            []string
	Inventory                           []InstanceRecord
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
		forced := ""
		if a.Force {
			forced = " (forced)"
		}
		s.Deletes = append(s.Deletes, a.Name+"@"+a.ID+forced)
	}
	s.Orphans = p.Orphans
	for _, problem := range p.Problems {
		s.Problems = append(s.Problems, problem.String())
	}
	s.Inventory = p.Inventory.NsInstances
	return s
}

// Owners other than self: tenant2 and elsewhere exist, gone does not.
var (
	tenant2    = Owner{Manager: "cluster-a", Namespace: "tenant2", Name: "other"}
	elsewhere  = Owner{Manager: "cluster-b", Namespace: "telco", Name: "osm-gitops"}
	gone       = Owner{Manager: "cluster-a", Namespace: "tenant3", Name: "deleted"}
	liveOwners = map[string]bool{tenant2.Marker(): true, elsewhere.Marker(): true}
)

func TestComputeNsInstances(t *testing.T) {
	ldap := declared("ldap", "2")
	digest := ldap.Digest()
	tests := []struct {
		name      string
		declared  []gitops.NsInstance
		observed  *Observed
		inventory []InstanceRecord
		claims    map[string]string
		prune     bool
		adopt     bool
		want      summary
	}{
		{
			name: "a new instance is created", declared: []gitops.NsInstance{ldap},
			observed: observedWith(nil, nil),
			want: summary{Creates: []string{"ldap: declared in Git"},
				Inventory: []InstanceRecord{entry("ldap", "", digest, InstanceCreating)}},
		},
		{
			name: "an unchanged instance is left alone", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "2"}`}),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)}},
		},
		{
			name: "values changed in Git are upgraded", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "1"}`}),
			inventory: []InstanceRecord{entry("ldap", "ns-1", "sha256:old", InstanceReady)},
			want: summary{Upgrades: []string{"ldap@ns-1: KDU ldap of VNF openldap: values changed in Git"},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceProgressing)}},
		},
		{
			name: "values changed in OSM are restored", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "5"}`}),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want: summary{Upgrades: []string{"ldap@ns-1: KDU ldap of VNF openldap: values changed in OSM outside Git: restoring what Git declares"},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceProgressing)}},
		},
		{
			name: "without live values the digest decides", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, nil),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)}},
		},
		{
			name: "an instance deleted in OSM is recreated", declared: []gitops.NsInstance{ldap},
			observed:  observedWith(nil, map[string]string{}),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want: summary{Creates: []string{"ldap: deleted in OSM outside Git: recreating it"},
				Inventory: []InstanceRecord{entry("ldap", "", digest, InstanceCreating)}},
		},
		{
			name: "a create interrupted after OSM made the instance is not sent again", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-9", "ldap")}, map[string]string{"ns-9": `{"replicaCount": "2"}`}),
			inventory: []InstanceRecord{entry("ldap", "", digest, InstanceCreating)},
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-9", digest, InstanceReady)}},
		},
		{
			name: "a create interrupted before OSM answered is sent again", declared: []gitops.NsInstance{ldap},
			observed:  observedWith(nil, nil),
			inventory: []InstanceRecord{entry("ldap", "", digest, InstanceCreating)},
			want: summary{Creates: []string{"ldap: its creation was interrupted before OSM answered"},
				Inventory: []InstanceRecord{entry("ldap", "", digest, InstanceCreating)}},
		},
		{
			name: "an instance that is not owned is a conflict", declared: []gitops.NsInstance{ldap},
			observed: observedWith([]osm.NSInstance{unmarked("ns-1", "ldap")}, nil),
			want:     summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" (id ns-1) already exists in OSM and no OsmDeployment owns it: set spec.adoptExisting to take it over`}},
		},
		{
			name: "an instance that is not owned is adopted when asked", declared: []gitops.NsInstance{ldap}, adopt: true,
			observed: observedWith([]osm.NSInstance{unmarked("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "2"}`}),
			want:     summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)}},
		},
		{
			name: "an adopted instance stays owned through the inventory, as OSM cannot mark it", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{unmarked("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "2"}`}),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)}},
		},
		{
			name: "an instance another OsmDeployment claims is a conflict naming it", declared: []gitops.NsInstance{ldap},
			observed: observedWith(nil, nil), claims: map[string]string{"ldap": "tenant1/first"},
			want: summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" is already managed by OsmDeployment tenant1/first on this OSM`}},
		},
		{
			name: "an instance carrying its own marker is its own, whatever another inventory claims", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "2"}`}),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			claims:    map[string]string{"ldap": "tenant1/first"},
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)}},
		},
		{
			name: "an unmarked instance another OsmDeployment claims is a conflict, even with adoptExisting", declared: []gitops.NsInstance{ldap}, adopt: true,
			observed: observedWith([]osm.NSInstance{unmarked("ns-1", "ldap")}, nil), claims: map[string]string{"ldap": "tenant1/first"},
			want: summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" is already managed by OsmDeployment tenant1/first on this OSM`}},
		},
		{
			name: "an instance a live OsmDeployment marked is a conflict, even with adoptExisting", declared: []gitops.NsInstance{ldap}, adopt: true,
			observed: observedWith([]osm.NSInstance{ownedBy(tenant2, unmarked("ns-1", "ldap"))}, nil),
			want:     summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" (id ns-1) belongs to OsmDeployment tenant2/other`}},
		},
		{
			name: "an instance another operator installation marked is a conflict naming it", declared: []gitops.NsInstance{ldap}, adopt: true,
			observed: observedWith([]osm.NSInstance{ownedBy(elsewhere, unmarked("ns-1", "ldap"))}, nil),
			want:     summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" (id ns-1) belongs to OsmDeployment telco/osm-gitops of the operator installation "cluster-b"`}},
		},
		{
			name: "an instance whose marked owner no longer exists is a conflict without adoptExisting", declared: []gitops.NsInstance{ldap},
			observed: observedWith([]osm.NSInstance{ownedBy(gone, unmarked("ns-1", "ldap"))}, nil),
			want:     summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" (id ns-1) already exists in OSM and OsmDeployment tenant3/deleted, which made it, no longer exists: set spec.adoptExisting to take it over`}},
		},
		{
			name: "an instance whose marked owner no longer exists is adopted when asked", declared: []gitops.NsInstance{ldap}, adopt: true,
			observed: observedWith([]osm.NSInstance{ownedBy(gone, unmarked("ns-1", "ldap"))}, map[string]string{"ns-1": `{"replicaCount": "2"}`}),
			want:     summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)}},
		},
		{
			name: "an adopted instance whose marked owner is back is given back", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{ownedBy(tenant2, unmarked("ns-1", "ldap"))}, nil),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want: summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" (id ns-1) belongs to OsmDeployment tenant2/other`},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)}},
		},
		{
			name: "an owned instance replaced in OSM by one nobody owns is a conflict, not a second instance", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{unmarked("ns-2", "ldap")}, nil),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want: summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" (id ns-2) already exists in OSM and no OsmDeployment owns it: set spec.adoptExisting to take it over`},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)}},
		},
		{
			name: "an owned instance recreated in OSM under another id is taken back by its marker", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-2", "ldap")}, map[string]string{"ns-2": `{"replicaCount": "2"}`}),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-2", digest, InstanceReady)}},
		},
		{
			name: "a lost status is rebuilt from the markers: no conflict, no upgrade", declared: []gitops.NsInstance{ldap},
			observed: observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "2"}`}),
			want:     summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)}},
		},
		{
			name: "a lost status is rebuilt from the markers: what Git no longer declares is pruned", prune: true,
			observed: observedWith([]osm.NSInstance{running("ns-1", "old")}, map[string]string{"ns-1": `{}`}),
			want: summary{Deletes: []string{"old@ns-1"},
				Inventory: []InstanceRecord{entry("old", "ns-1", "", InstanceDeleting)}},
		},
		{
			name: "an instance a live owner marked is never pruned, even if the inventory lists it", prune: true,
			observed:  observedWith([]osm.NSInstance{ownedBy(tenant2, unmarked("ns-1", "ldap"))}, nil),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want:      summary{},
		},
		{
			name: "two instances made by this OsmDeployment with the declared name are a problem", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap"), running("ns-2", "ldap")}, nil),
			inventory: []InstanceRecord{entry("ldap", "", digest, InstanceCreating)},
			want: summary{Problems: []string{`deploy/ldap.osmops.yaml:1: OSM has 2 NS instances named "ldap" made by this OsmDeployment (ids [ns-1 ns-2]): delete the extra ones in OSM`},
				Inventory: []InstanceRecord{entry("ldap", "", digest, InstanceCreating)}},
		},
		{
			name: "two instances of others with the declared name are a problem", declared: []gitops.NsInstance{ldap}, adopt: true,
			observed: observedWith([]osm.NSInstance{unmarked("ns-1", "ldap"), unmarked("ns-2", "ldap")}, nil),
			want:     summary{Problems: []string{`deploy/ldap.osmops.yaml:1: OSM has 2 NS instances named "ldap" (ids [ns-1 ns-2]) and none is this OsmDeployment's: delete the extra ones in OSM`}},
		},
		{
			name: "an instance no longer declared is deleted with prune", prune: true,
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, nil),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want: summary{Deletes: []string{"ldap@ns-1"},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceDeleting)}},
		},
		{
			name: "an instance OSM never instantiated is deleted with force, as the NBI keeps it otherwise", prune: true,
			observed: observedWith([]osm.NSInstance{func() osm.NSInstance {
				ns := running("ns-1", "ldap")
				ns.NSState, ns.Admin.NSState = "BROKEN", osm.NSStateNotInstantiated
				return ns
			}()}, nil),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceFailed)},
			want: summary{Deletes: []string{"ldap@ns-1 (forced)"},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceDeleting)}},
		},
		{
			name:      "an instance no longer declared is orphaned without prune",
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, nil),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want: summary{Orphans: []string{"ldap"},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceOrphaned)}},
		},
		{
			name: "an instance that OSM already removed leaves the inventory", prune: true,
			observed:  observedWith(nil, nil),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceDeleting)},
			want:      summary{},
		},
		{
			name: "a busy instance is not touched", declared: []gitops.NsInstance{ldap},
			observed: func() *Observed {
				busy := running("ns-1", "ldap")
				busy.NSState = "BUILDING"
				return observedWith([]osm.NSInstance{busy}, map[string]string{"ns-1": `{"replicaCount": "1"}`})
			}(),
			inventory: []InstanceRecord{entry("ldap", "ns-1", "sha256:old", InstanceProgressing)},
			want: summary{Inventory: []InstanceRecord{{Name: "ldap", ID: "ns-1", Digest: "sha256:old",
				State: InstanceProgressing, Reason: "OSM runs an operation on it"}}},
		},
		{
			// The NBI accepted an operation that LCM has queued or not taken up yet: the NS record
			// looks idle, only OSM's operations list shows it. Nothing is sent to the instance.
			name: "an instance with an operation OSM queued is not upgraded", declared: []gitops.NsInstance{ldap},
			observed:  queued(observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "1"}`}), "ns-1"),
			inventory: []InstanceRecord{entry("ldap", "ns-1", "sha256:old", InstanceReady)},
			want: summary{Inventory: []InstanceRecord{{Name: "ldap", ID: "ns-1", Digest: "sha256:old",
				State: InstanceProgressing, Reason: "OSM runs an operation on it"}}},
		},
		{
			name: "an instance whose terminate OSM queued is not deleted again", prune: true,
			observed:  queued(observedWith([]osm.NSInstance{running("ns-1", "ldap")}, nil), "ns-1"),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceDeleting)},
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceDeleting)}},
		},
		{
			// Right after a create the NBI shows the record NOT_INSTANTIATED until LCM starts the
			// instantiate: a forced delete then would remove it under LCM's feet.
			name: "an instance whose instantiate OSM has not started is not pruned", prune: true,
			observed: queued(observedWith([]osm.NSInstance{func() osm.NSInstance {
				ns := running("ns-1", "ldap")
				ns.NSState, ns.Admin.NSState = osm.NSStateNotInstantiated, osm.NSStateNotInstantiated
				return ns
			}()}, nil), "ns-1"),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceProgressing)},
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceDeleting)}},
		},
		{
			name: "a failed intent is not sent again", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "1"}`}),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceFailed)},
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceFailed)}},
		},
		{
			name: "a failed intent that OSM carried out after all is Ready", declared: []gitops.NsInstance{ldap},
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "2"}`}),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceFailed)},
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)}},
		},
		{
			name: "a reference OSM lacks is the only problem, and nothing is planned", declared: []gitops.NsInstance{func() gitops.NsInstance {
				ns := declared("ldap", "2")
				ns.VimAccountName = "elsewhere"
				return ns.Sealed()
			}()},
			observed:  observedWith([]osm.NSInstance{unmarked("ns-1", "ldap")}, nil),
			inventory: []InstanceRecord{entry("ldap", "ns-9", digest, InstanceReady)},
			want: summary{Problems: []string{`deploy/ldap.osmops.yaml:1: vimAccountName "elsewhere" is not a VIM account of OSM (known: "site1")`},
				Inventory: []InstanceRecord{entry("ldap", "ns-9", digest, InstanceReady)}},
		},
		{
			name: "changing the NSD of an instance is refused", declared: []gitops.NsInstance{ldap},
			observed: func() *Observed {
				other := running("ns-1", "ldap")
				other.NsdRef = "other_ns"
				return observedWith([]osm.NSInstance{other}, nil)
			}(),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want: summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" runs NSD "other_ns": OSM cannot change the NSD of an instance; give the instance a new name, delete it first, or set spec.force to replace it`},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Compute(Input{
				Revision: &gitops.Revision{NsInstances: tt.declared}, Observed: tt.observed,
				Inventory: Inventory{NsInstances: tt.inventory}, Claims: tt.claims,
				Prune: tt.prune, AdoptExisting: tt.adopt, Owner: self, LiveOwners: liveOwners,
			})
			if diff := cmp.Diff(tt.want, summarise(plan)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeReplacesWithForce(t *testing.T) {
	ldap := declared("ldap", "2")
	digest := ldap.Digest()
	// onOldNSD is the instance as OSM runs it, made from NSD old_ns, in state.
	onOldNSD := func(owner Owner, state, operation string) osm.NSInstance {
		ns := ownedBy(owner, unmarked("ns-1", "ldap"))
		ns.NsdRef, ns.NSState, ns.CurrentOperation = "old_ns", state, osm.LooseString(operation)
		ns.Admin.NSState = "INSTANTIATED"
		return ns
	}
	const why = "NSD changed from old_ns to openldap_ns"
	replacing := func(id string) InstanceRecord {
		e := entry("ldap", id, digest, InstanceReplacing)
		e.Reason = why
		return e
	}
	failed := replacing("ns-1")
	failed.State = InstanceFailed
	tests := []struct {
		name      string
		observed  *Observed
		inventory []InstanceRecord
		prune     bool
		declared  []gitops.NsInstance
		want      summary
	}{
		{
			name:      "a new NSD terminates the old instance, and creates nothing yet",
			observed:  observedWith([]osm.NSInstance{onOldNSD(self, "READY", "IDLE")}, nil),
			inventory: []InstanceRecord{entry("ldap", "ns-1", "sha256:old", InstanceReady)},
			want: summary{Deletes: []string{"ldap@ns-1"},
				Inventory: []InstanceRecord{replacing("ns-1")}},
		},
		{
			name:      "the delete is not sent again while OSM terminates",
			observed:  observedWith([]osm.NSInstance{onOldNSD(self, "TERMINATING", "TERMINATING")}, nil),
			inventory: []InstanceRecord{replacing("ns-1")},
			want:      summary{Inventory: []InstanceRecord{replacing("ns-1")}},
		},
		{
			name:      "once OSM removed the old instance, the new one is created, once",
			observed:  observedWith(nil, map[string]string{}),
			inventory: []InstanceRecord{replacing("ns-1")},
			want: summary{Creates: []string{"ldap: replacing it (NSD changed from old_ns to openldap_ns): the old instance is gone"},
				Inventory: []InstanceRecord{replacing("")}},
		},
		{
			name:      "a create OSM refused is sent again, and nothing is deleted",
			observed:  observedWith(nil, map[string]string{}),
			inventory: []InstanceRecord{replacing("")},
			want: summary{Creates: []string{"ldap: replacing it (NSD changed from old_ns to openldap_ns): the old instance is gone"},
				Inventory: []InstanceRecord{replacing("")}},
		},
		{
			name:      "the new instance, once created, is the declared one",
			observed:  observedWith([]osm.NSInstance{running("ns-2", "ldap")}, map[string]string{"ns-2": `{"replicaCount": "2"}`}),
			inventory: []InstanceRecord{replacing("")},
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-2", digest, InstanceReady)}},
		},
		{
			name: "an instance OSM never instantiated is deleted with FORCE",
			observed: func() *Observed {
				ns := onOldNSD(self, "NOT_INSTANTIATED", "IDLE")
				ns.Admin.NSState = "NOT_INSTANTIATED"
				return observedWith([]osm.NSInstance{ns}, nil)
			}(),
			inventory: []InstanceRecord{entry("ldap", "ns-1", "sha256:old", InstanceReady)},
			want: summary{Deletes: []string{"ldap@ns-1 (forced)"},
				Inventory: []InstanceRecord{replacing("ns-1")}},
		},
		{
			name:      "a terminate that failed is not sent again for the same declaration",
			observed:  observedWith([]osm.NSInstance{onOldNSD(self, "BROKEN", "IDLE")}, nil),
			inventory: []InstanceRecord{failed},
			want:      summary{Inventory: []InstanceRecord{failed}},
		},
		{
			name: "another VIM account replaces the instance too",
			observed: func() *Observed {
				ns := running("ns-1", "ldap")
				ns.InstantiateParams.VIMAccountID = "vim-0"
				return observedWith([]osm.NSInstance{ns}, nil)
			}(),
			inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceReady)},
			want: summary{Deletes: []string{"ldap@ns-1"},
				Inventory: []InstanceRecord{func() InstanceRecord {
					e := entry("ldap", "ns-1", digest, InstanceReplacing)
					e.Reason = "VIM account changed to site1"
					return e
				}()}},
		},
		{
			name:     "an instance another live owner marked is never replaced",
			observed: observedWith([]osm.NSInstance{onOldNSD(tenant2, "READY", "IDLE")}, nil),
			want:     summary{Problems: []string{`deploy/ldap.osmops.yaml:1: NS instance "ldap" (id ns-1) belongs to OsmDeployment tenant2/other`}},
		},
		{
			name: "an instance being replaced that Git drops is pruned as any other, and not deleted twice", prune: true, declared: []gitops.NsInstance{},
			observed:  observedWith([]osm.NSInstance{onOldNSD(self, "TERMINATING", "TERMINATING")}, nil),
			inventory: []InstanceRecord{replacing("ns-1")},
			want: summary{Inventory: []InstanceRecord{func() InstanceRecord {
				e := replacing("ns-1")
				e.State = InstanceDeleting
				return e
			}()}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			declared := tt.declared
			if declared == nil {
				declared = []gitops.NsInstance{ldap}
			}
			plan := Compute(Input{
				Revision: &gitops.Revision{NsInstances: declared}, Observed: tt.observed,
				Inventory: Inventory{NsInstances: tt.inventory},
				Prune:     tt.prune, Force: true, Owner: self, LiveOwners: liveOwners,
			})
			if diff := cmp.Diff(tt.want, summarise(plan)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputePackages(t *testing.T) {
	knf := gitops.Package{Source: "osm-pkgs/openldap_knf", Package: &osmpkg.Package{DescriptorPath: "openldap_vnfd.yaml",
		Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindVNF, ID: "openldap_knf", IDLine: 2}, Digest: "sha256:knf"}}
	ns := gitops.Package{Source: "osm-pkgs/openldap_ns", Package: &osmpkg.Package{
		Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindNS, ID: "openldap_ns", VnfdIDs: []string{"openldap_knf"}}, Digest: "sha256:ns"}}
	// admin is a package's _admin at OSM's revision, marked when owner is not zero.
	admin := func(revision int, owner Owner, digest string, markedRevision int) osm.DescriptorAdmin {
		a := osm.DescriptorAdmin{Revision: osm.Number(revision)}
		if owner != (Owner{}) {
			a.UserDefinedData = map[string]osm.LooseString{}
			for k, v := range PackageUserData(owner, digest, markedRevision) {
				a.UserDefinedData[k] = osm.LooseString(v)
			}
		}
		return a
	}
	// observed has openldap_knf (vnfd-1) as knfAdmin says, and openldap_ns (nsd-1) marked by self.
	observed := func(knfAdmin osm.DescriptorAdmin) *Observed {
		return newObserved([]osm.NSDescriptor{{ID: "nsd-1", DescriptorID: "openldap_ns", Admin: admin(1, self, "sha256:ns", 1)}},
			[]osm.VNFDescriptor{{ID: "vnfd-1", DescriptorID: "openldap_knf", Admin: knfAdmin}}, nil, nil)
	}
	known := []PackageRecord{{Name: "openldap_knf", ID: "vnfd-1", Digest: "sha256:knf"}, {Name: "openldap_ns", ID: "nsd-1", Digest: "sha256:ns"}}
	tests := []struct {
		name      string
		observed  *Observed
		inventory []PackageRecord
		drift     DriftPolicy
		want      []string
		problems  []string
		drifts    []Drift
	}{
		{name: "missing packages are created, VNF first", observed: newObserved(nil, nil, nil, nil),
			want: []string{"create openldap_knf at revision 1: new in Git", "create openldap_ns at revision 1: new in Git"}},
		{name: "packages OSM holds as this OsmDeployment uploaded them are not sent, whatever the status remembers",
			observed: observed(admin(1, self, "sha256:knf", 1))},
		{name: "a package changed in Git is updated alone", observed: observed(admin(1, self, "sha256:old", 1)), inventory: known,
			want: []string{"update openldap_knf vnfd-1 to revision 2: changed in Git"}},
		{name: "a package uploaded again outside Git is restored", observed: observed(admin(2, self, "sha256:knf", 1)), inventory: known,
			want: []string{"update openldap_knf vnfd-1 to revision 3: changed in OSM outside Git: restoring it"}},
		{name: "a package uploaded again outside Git is reported with ReportDrift", observed: observed(admin(2, self, "sha256:knf", 1)), inventory: known,
			drift: ReportDrift, drifts: []Drift{{Name: "openldap_knf", What: "package uploaded again in OSM outside Git"}}},
		{name: "a package uploaded again outside Git is left with IgnoreDrift", observed: observed(admin(2, self, "sha256:knf", 1)), inventory: known,
			drift: IgnoreDrift},
		{name: "a package uploaded before markers is marked, not uploaded again", observed: observed(admin(4, Owner{}, "", 0)), inventory: known,
			want: []string{"mark openldap_knf vnfd-1 at revision 4: uploaded before: marked as this OsmDeployment's"}},
		{name: "a mark that failed after this OsmDeployment's update is written again", observed: observed(admin(2, self, "sha256:old", 1)), inventory: known,
			want: []string{"mark openldap_knf vnfd-1 at revision 2: uploaded before: marked as this OsmDeployment's"}},
		{name: "an unmarked package OSM has and this OsmDeployment never uploaded is updated", observed: observed(admin(1, Owner{}, "", 0)),
			want: []string{"update openldap_knf vnfd-1 to revision 2: changed in Git"}},
		{name: "identical content of a live owner is shared: nothing is sent", observed: observed(admin(1, tenant2, "sha256:knf", 1))},
		{name: "other content of a live owner is a conflict", observed: observed(admin(1, tenant2, "sha256:theirs", 1)),
			problems: []string{"osm-pkgs/openldap_knf/openldap_vnfd.yaml:2: package openldap_knf belongs to OsmDeployment tenant2/other, which uploaded other content of it: give the package another id, or make both sources agree"}},
		{name: "a live owner's package of this content, uploaded again since, is its owner's to restore: nothing is sent",
			observed: observed(admin(2, tenant2, "sha256:knf", 1))},
		{name: "the package of an owner gone is marked as this OsmDeployment's", observed: observed(admin(1, gone, "sha256:knf", 1)),
			want: []string{"mark openldap_knf vnfd-1 at revision 1: uploaded before: marked as this OsmDeployment's"}},
		{name: "other content of an owner gone is taken over", observed: observed(admin(1, gone, "sha256:theirs", 1)),
			want: []string{"update openldap_knf vnfd-1 to revision 2: changed in Git"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Compute(Input{Revision: &gitops.Revision{Packages: []gitops.Package{knf, ns}}, Observed: tt.observed,
				Inventory: Inventory{Packages: tt.inventory}, Owner: self, LiveOwners: liveOwners, Drift: tt.drift})
			var got, problems []string
			for _, a := range plan.Packages {
				switch {
				case a.ID == "":
					got = append(got, fmt.Sprintf("create %s at revision %d: %s", a.Package.Descriptor.ID, a.Revision, a.Reason))
				case a.MarkOnly:
					got = append(got, fmt.Sprintf("mark %s %s at revision %d: %s", a.Package.Descriptor.ID, a.ID, a.Revision, a.Reason))
				default:
					got = append(got, fmt.Sprintf("update %s %s to revision %d: %s", a.Package.Descriptor.ID, a.ID, a.Revision, a.Reason))
				}
			}
			for _, problem := range plan.Problems {
				problems = append(problems, problem.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("package actions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.problems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.drifts, plan.Drifts); diff != "" {
				t.Errorf("drifts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeWarnsOfUpdatesOSMMayRefuse(t *testing.T) {
	vnf := func(softwareVersion string, line int) gitops.Package {
		return gitops.Package{Source: "osm-pkgs/openldap_knf", Package: &osmpkg.Package{DescriptorPath: "openldap_vnfd.yaml",
			Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindVNF, ID: "openldap_knf", IDLine: 2,
				SoftwareVersion: softwareVersion, SoftwareVersionLine: line}, Digest: "sha256:new"}}
	}
	ns := gitops.Package{Source: "osm-pkgs/openldap_ns", Package: &osmpkg.Package{DescriptorPath: "openldap_nsd.yaml",
		Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindNS, ID: "openldap_ns", IDLine: 3}, Digest: "sha256:new"}}
	observed := func(usage, softwareVersion string) *Observed {
		admin := osm.DescriptorAdmin{UsageState: usage}
		return newObserved([]osm.NSDescriptor{{ID: "nsd-1", DescriptorID: "openldap_ns", Admin: admin}},
			[]osm.VNFDescriptor{{ID: "vnfd-1", DescriptorID: "openldap_knf", Admin: admin, SoftwareVersion: osm.LooseString(softwareVersion)}},
			nil, nil)
	}
	for _, test := range []struct {
		name     string
		pkg      gitops.Package
		observed *Observed
		want     []string
	}{
		{"a VNFD not in use", vnf("", 0), observed("NOT_IN_USE", ""), nil},
		{"a VNFD in use whose software-version changes", vnf("2.0", 5), observed("IN_USE", "1.0"), nil},
		{"a VNFD in use without software-version, as OSM's default", vnf("", 0), observed("IN_USE", ""),
			[]string{"osm-pkgs/openldap_knf/openldap_vnfd.yaml:2: VNF package openldap_knf is used by NS instances and its software-version stays 1.0: " +
				"OSM refuses changes to its descriptor but day-1/2 primitives and scaling policies unless software-version changes"}},
		{"a VNFD in use whose software-version stays", vnf("1.0", 5), observed("IN_USE", "1.0"),
			[]string{"osm-pkgs/openldap_knf/openldap_vnfd.yaml:5: VNF package openldap_knf is used by NS instances and its software-version stays 1.0: " +
				"OSM refuses changes to its descriptor but day-1/2 primitives and scaling policies unless software-version changes"}},
		{"an NSD not in use", ns, observed("NOT_IN_USE", ""), nil},
		{"an NSD in use", ns, observed("IN_USE", ""),
			[]string{"osm-pkgs/openldap_ns/openldap_nsd.yaml:3: NS package openldap_ns is used by NS instances: " +
				"OSM refuses any change to its descriptor but day-1/2 primitives (delete the instances, or give the package a new id)"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			plan := Compute(Input{Revision: &gitops.Revision{Packages: []gitops.Package{test.pkg}}, Observed: test.observed})
			if len(plan.Packages) != 1 || plan.Packages[0].ID == "" {
				t.Fatalf("planned %+v, want one update", plan.Packages)
			}
			var got []string
			for _, w := range plan.Warnings {
				got = append(got, w.String())
			}
			if diff := cmp.Diff(test.want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// movablePackage is the VNF package openldap_knf of the observations, as Git holds it: with
// a vdu list, which OSM's LCM reads when it moves a VNF to a new revision of its package.
func movablePackage() gitops.Package {
	return gitops.Package{Source: "osm-pkgs/openldap_knf", Package: &osmpkg.Package{DescriptorPath: "openldap_vnfd.yaml",
		Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindVNF, ID: "openldap_knf", IDLine: 2, KDUs: []osmpkg.KDU{{Name: "ldap"}}, HasVDUList: true},
		Digest:     "sha256:knf"}}
}

func TestComputeMovesInstancesToTheirPackageRevision(t *testing.T) {
	ldap, ldap2 := declared("ldap", "2"), declared("ldap2", "2")
	knf := movablePackage()
	// at is the observation of the instances, with the KNF package at revision packageRevision
	// (uploaded by self with digest), each instance's VNF record at its revision.
	at := func(packageRevision int, digest string, instances []osm.NSInstance, vnfRevisions ...int) *Observed {
		o := observedWith(instances, nil)
		vnfd := o.VNFDs["openldap_knf"]
		vnfd.Admin = osm.DescriptorAdmin{Revision: osm.Number(packageRevision), UserDefinedData: map[string]osm.LooseString{}}
		for k, v := range PackageUserData(self, digest, packageRevision) {
			vnfd.Admin.UserDefinedData[k] = osm.LooseString(v)
		}
		o.VNFDs["openldap_knf"] = vnfd
		vnfs := make([]osm.VNFInstance, len(instances))
		for i, ns := range instances {
			vnfs[i] = osm.VNFInstance{ID: "vnf-" + ns.ID, NSInstanceID: ns.ID, MemberVnfIndex: "openldap",
				VnfdRef: "openldap_knf", VnfdID: "vnfd-1", Revision: osm.Number(vnfRevisions[i])}
		}
		if err := o.setVNFRecords(vnfs, nil); err != nil {
			panic(err)
		}
		return o
	}
	both := []osm.NSInstance{running("ns-1", "ldap"), running("ns-2", "ldap2")}
	ready := func(name, id string) InstanceRecord {
		return entry(name, id, declared(name, "2").Digest(), InstanceReady)
	}
	with := func(e InstanceRecord, state InstanceState, reason string) InstanceRecord {
		e.State, e.Reason = state, reason
		return e
	}
	const moving = "moving VNF openldap to revision 3 of package openldap_knf"
	inventory := []InstanceRecord{ready("ldap", "ns-1"), ready("ldap2", "ns-2")}
	tests := []struct {
		name      string
		observed  *Observed
		declared  []gitops.NsInstance
		inventory []InstanceRecord
		off       bool
		want      []string
		entries   []InstanceRecord
	}{
		{name: "instances behind the package's revision are moved, each once", observed: at(3, "sha256:knf", both, 1, 3), inventory: inventory,
			want:    []string{"ldap@ns-1 vnf-ns-1 vnfd-1: " + moving},
			entries: []InstanceRecord{with(ready("ldap", "ns-1"), InstanceProgressing, moving), ready("ldap2", "ns-2")}},
		{name: "a record without a revision is at revision 1", observed: at(2, "sha256:knf", both[:1], 0), inventory: inventory[:1],
			declared: []gitops.NsInstance{ldap},
			want:     []string{"ldap@ns-1 vnf-ns-1 vnfd-1: moving VNF openldap to revision 2 of package openldap_knf"},
			entries:  []InstanceRecord{with(ready("ldap", "ns-1"), InstanceProgressing, "moving VNF openldap to revision 2 of package openldap_knf")}},
		{name: "instances at the package's revision are not moved again", observed: at(3, "sha256:knf", both, 3, 3), inventory: inventory,
			entries: inventory},
		{name: "nothing is moved before the package's upload is done", observed: at(3, "sha256:old", both, 1, 3), inventory: inventory,
			entries: []InstanceRecord{
				with(ready("ldap", "ns-1"), InstanceProgressing, "waiting for the upload of VNF package openldap_knf"),
				with(ready("ldap2", "ns-2"), InstanceProgressing, "waiting for the upload of VNF package openldap_knf")}},
		{name: "a move that failed is not sent again for the same package revision", observed: at(3, "sha256:knf", both, 1, 3),
			inventory: []InstanceRecord{with(ready("ldap", "ns-1"), InstanceFailed, moving), ready("ldap2", "ns-2")},
			entries:   []InstanceRecord{with(ready("ldap", "ns-1"), InstanceFailed, moving), ready("ldap2", "ns-2")}},
		{name: "a move that failed is tried again for a newer package revision", observed: at(4, "sha256:knf", both, 1, 4),
			inventory: []InstanceRecord{with(ready("ldap", "ns-1"), InstanceFailed, moving), ready("ldap2", "ns-2")},
			want:      []string{"ldap@ns-1 vnf-ns-1 vnfd-1: moving VNF openldap to revision 4 of package openldap_knf"},
			entries: []InstanceRecord{
				with(ready("ldap", "ns-1"), InstanceProgressing, "moving VNF openldap to revision 4 of package openldap_knf"), ready("ldap2", "ns-2")}},
		{name: "only instances this OsmDeployment owns are moved", declared: []gitops.NsInstance{ldap},
			observed:  at(3, "sha256:knf", []osm.NSInstance{running("ns-1", "ldap"), ownedBy(tenant2, unmarked("ns-2", "ldap2"))}, 3, 1),
			inventory: inventory[:1], entries: inventory[:1]},
		{name: "without instancesFollowPackages nothing is moved", observed: at(3, "sha256:knf", both, 1, 1), inventory: inventory, off: true,
			entries: inventory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := tt.declared
			if ns == nil {
				ns = []gitops.NsInstance{ldap, ldap2}
			}
			plan := Compute(Input{
				Revision: &gitops.Revision{NsInstances: ns, Packages: []gitops.Package{knf}}, Observed: tt.observed,
				Inventory: Inventory{NsInstances: tt.inventory}, Owner: self, LiveOwners: liveOwners,
				FollowPackages: !tt.off,
			})
			var moves []string
			for _, m := range plan.PackageMoves {
				moves = append(moves, fmt.Sprintf("%s@%s %s %s: %s", m.Name, m.ID, m.Change.VNFInstanceID, m.Change.VnfdID, m.Reason))
			}
			if diff := cmp.Diff(tt.want, moves); diff != "" {
				t.Errorf("package moves (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.entries, plan.Inventory.NsInstances); diff != "" {
				t.Errorf("inventory (-want +got):\n%s", diff)
			}
			if len(plan.Upgrades)+len(plan.Creates)+len(plan.Deletes) != 0 || len(plan.Problems) != 0 {
				t.Errorf("unexpected actions or problems: %+v", summarise(plan))
			}
		})
	}
}

// queued marks an operation on the instance id as PROCESSING in OSM's operations list.
func queued(o *Observed, id string) *Observed {
	o.Running = map[string][]string{id: {"op-queued"}}
	return o
}

// OSM 19's LCM fails CHANGE_VNFPKG on a KNF (KDUs, no vdu) after it moved the VNF record's
// revision: following such a package is refused before anything is sent, the package upload
// included, naming the instance and the package.
func TestComputeRefusesToMoveKNFs(t *testing.T) {
	ldap := declared("ldap", "2")
	knf := movablePackage()
	knf.Package = &osmpkg.Package{DescriptorPath: knf.DescriptorPath, Descriptor: knf.Descriptor, Digest: "sha256:knf-2"}
	knf.Descriptor.HasVDUList = false
	observed := func(packageRevision int, digest string) *Observed {
		o := observedWith([]osm.NSInstance{running("ns-1", "ldap")}, nil)
		vnfd := o.VNFDs["openldap_knf"]
		vnfd.Admin = osm.DescriptorAdmin{Revision: osm.Number(packageRevision), UserDefinedData: map[string]osm.LooseString{}}
		for k, v := range PackageUserData(self, digest, packageRevision) {
			vnfd.Admin.UserDefinedData[k] = osm.LooseString(v)
		}
		o.VNFDs["openldap_knf"] = vnfd
		if err := o.setVNFRecords([]osm.VNFInstance{{ID: "vnf-ns-1", NSInstanceID: "ns-1", MemberVnfIndex: "openldap",
			VnfdRef: "openldap_knf", VnfdID: "vnfd-1", Revision: 1}}, nil); err != nil {
			panic(err)
		}
		return o
	}
	inventory := Inventory{NsInstances: []InstanceRecord{
		entry("ldap", "ns-1", ldap.Digest(), InstanceReady)}}
	for _, test := range []struct {
		name     string
		observed *Observed
	}{
		{"before the new revision's upload", observed(1, "sha256:knf-1")},
		{"after an upload made without instancesFollowPackages", observed(2, "sha256:knf-2")},
	} {
		t.Run(test.name, func(t *testing.T) {
			plan := Compute(Input{Revision: &gitops.Revision{NsInstances: []gitops.NsInstance{ldap}, Packages: []gitops.Package{knf}},
				Observed: test.observed, Inventory: inventory, Owner: self, LiveOwners: liveOwners, FollowPackages: true})
			if plan.Mutations() != 0 {
				t.Errorf("%d mutations, want none: %+v", plan.Mutations(), summarise(plan))
			}
			if len(plan.Problems) != 1 || plan.Problems[0].Kind != Limit {
				t.Fatalf("problems %+v, want one Limit", plan.Problems)
			}
			for _, want := range []string{`NS instance "ldap"`, "VNF package openldap_knf", "a KNF", "Error updating VNF 'vdu'", "instancesFollowPackages off"} {
				if !strings.Contains(plan.Problems[0].Message, want) {
					t.Errorf("problem %q does not say %q", plan.Problems[0].Message, want)
				}
			}
			if plan.Problems[0].File != ldap.Source.File {
				t.Errorf("problem in %s, want %s", plan.Problems[0].File, ldap.Source.File)
			}
		})
	}
	// Without instancesFollowPackages the package is uploaded and the instance stays.
	plan := Compute(Input{Revision: &gitops.Revision{NsInstances: []gitops.NsInstance{ldap}, Packages: []gitops.Package{knf}},
		Observed: observed(1, "sha256:knf-1"), Inventory: inventory, Owner: self, LiveOwners: liveOwners})
	if len(plan.Problems) != 0 || len(plan.Packages) != 1 || len(plan.PackageMoves) != 0 {
		t.Errorf("without instancesFollowPackages: %+v, packages %d, moves %d", plan.Problems, len(plan.Packages), len(plan.PackageMoves))
	}
}
