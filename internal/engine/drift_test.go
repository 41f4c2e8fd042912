package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
)

func TestRevisionScope(t *testing.T) {
	a, b, c := declared("a", "1"), declared("b", "1"), declared("c", "1")
	rev := &gitops.Revision{NsInstances: []gitops.NsInstance{a, b, c}}
	ready := InstanceReady
	for _, test := range []struct {
		name      string
		inventory []InstanceRecord
		want      Scope
	}{
		{"an empty inventory (a first revision, a lost status) is read whole", nil,
			Scope{Owner: self.Marker(), Names: []string{"a", "b", "c"}, WithValues: true, Quotas: true}},
		{"instances Ready with their declaration are settled; changed, new and undeclared ones are read, their operations by id",
			[]InstanceRecord{entry("a", "ns-a", a.Digest(), ready), entry("b", "ns-b", "sha256:old", ready), entry("d", "ns-d", "sha256:d", ready)},
			Scope{Names: []string{"b", "c", "d"}, WithValues: true, Quotas: true, Settled: map[string]bool{"a": true},
				IDs: []string{"ns-b", "ns-d"}}},
		{"instances not Ready are read, whatever their digest",
			[]InstanceRecord{entry("a", "ns-a", a.Digest(), InstanceFailed), entry("b", "ns-b", b.Digest(), InstanceProgressing),
				entry("c", "", c.Digest(), InstanceCreating)},
			Scope{Names: []string{"a", "b", "c"}, WithValues: true, Quotas: true, Settled: map[string]bool{}, IDs: []string{"ns-a", "ns-b"}}},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := RevisionScope(rev, Inventory{NsInstances: test.inventory}, self)
			if diff := cmp.Diff(test.want, got); diff != "" {
				t.Errorf("RevisionScope (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSettledInstancesKeepTheirEntryUnread(t *testing.T) {
	a, b := declared("a", "1"), declared("b", "2")
	inventory := []InstanceRecord{
		entry("a", "ns-a", a.Digest(), InstanceReady), entry("b", "ns-b", "sha256:old", InstanceReady)}
	// Only b was read: a is in no list of OSM's, which a plan of a whole scope takes for an
	// instance deleted in OSM.
	observed := observedWith([]osm.NSInstance{running("ns-b", "b")}, map[string]string{"ns-b": `{"replicaCount": "1"}`})
	observed.settled = map[string]bool{"a": true}
	plan := Compute(Input{Revision: &gitops.Revision{NsInstances: []gitops.NsInstance{a, b}}, Observed: observed,
		Inventory: Inventory{NsInstances: inventory}, Owner: self})
	want := summary{Upgrades: []string{"b@ns-b: KDU ldap of VNF openldap: values changed in Git"},
		Inventory: []InstanceRecord{inventory[0], entry("b", "ns-b", b.Digest(), InstanceProgressing)}}
	if diff := cmp.Diff(want, summarise(plan)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

func TestDriftPolicies(t *testing.T) {
	ldap := declared("ldap", "2")
	digest := ldap.Digest()
	ready := entry("ldap", "ns-1", digest, InstanceReady)
	drifted := func(reason string) InstanceRecord {
		e := ready
		e.State, e.Reason = InstanceDrifted, reason
		return e
	}
	const valuesChanged = "KDU ldap of VNF openldap: values changed in OSM outside Git"
	changedValues := observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "1"}`})
	for _, test := range []struct {
		name      string
		observed  *Observed
		inventory InstanceRecord
		policy    DriftPolicy
		want      summary
		drifts    []Drift
	}{
		{name: "correct: an instance deleted in OSM is created again", observed: observedWith(nil, nil), inventory: ready, policy: CorrectDrift,
			want: summary{Creates: []string{"ldap: deleted in OSM outside Git: recreating it"},
				Inventory: []InstanceRecord{entry("ldap", "", digest, InstanceCreating)}}},
		{name: "report: an instance deleted in OSM is Drifted", observed: observedWith(nil, nil), inventory: ready, policy: ReportDrift,
			want:   summary{Inventory: []InstanceRecord{drifted("deleted in OSM outside Git")}},
			drifts: []Drift{{Name: "ldap", What: "deleted in OSM outside Git"}}},
		{name: "ignore: an instance deleted in OSM keeps its entry", observed: observedWith(nil, nil), inventory: ready, policy: IgnoreDrift,
			want: summary{Inventory: []InstanceRecord{ready}}},
		{name: "correct: values changed in OSM are set back", observed: changedValues, inventory: ready, policy: CorrectDrift,
			want: summary{Upgrades: []string{"ldap@ns-1: " + valuesChanged + ": restoring what Git declares"},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceProgressing)}}},
		{name: "report: values changed in OSM are reported", observed: changedValues, inventory: ready, policy: ReportDrift,
			want: summary{Inventory: []InstanceRecord{drifted(valuesChanged)}}, drifts: []Drift{{Name: "ldap", What: valuesChanged}}},
		{name: "report: values changed by an operation found running are drift, not a change in Git", observed: changedValues, policy: ReportDrift,
			inventory: InstanceRecord{Name: "ldap", ID: "ns-1", Digest: digest, State: InstanceProgressing, Reason: reasonBusy},
			want:      summary{Inventory: []InstanceRecord{drifted(valuesChanged)}}, drifts: []Drift{{Name: "ldap", What: valuesChanged}}},
		{name: "report: a Drifted instance set back in OSM is Ready again",
			observed:  observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "2"}`}),
			inventory: drifted(valuesChanged), policy: ReportDrift, want: summary{Inventory: []InstanceRecord{ready}}},
		{name: "ignore: values changed in OSM are left", observed: changedValues, inventory: ready, policy: IgnoreDrift,
			want: summary{Inventory: []InstanceRecord{ready}}},
		{name: "report: values changed in Git are applied", observed: changedValues, policy: ReportDrift,
			inventory: entry("ldap", "ns-1", "sha256:old", InstanceReady),
			want: summary{Upgrades: []string{"ldap@ns-1: KDU ldap of VNF openldap: values changed in Git"},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceProgressing)}}},
		{name: "report: a Drifted instance changed in Git is upgraded", observed: changedValues, policy: ReportDrift,
			inventory: entry("ldap", "ns-1", "sha256:old", InstanceDrifted),
			want: summary{Upgrades: []string{"ldap@ns-1: KDU ldap of VNF openldap: values changed in Git"},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, InstanceProgressing)}}},
	} {
		t.Run(test.name, func(t *testing.T) {
			plan := Compute(Input{Revision: &gitops.Revision{NsInstances: []gitops.NsInstance{ldap}}, Observed: test.observed,
				Inventory: Inventory{NsInstances: []InstanceRecord{test.inventory}}, Owner: self, Drift: test.policy})
			if diff := cmp.Diff(test.want, summarise(plan)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(test.drifts, plan.Drifts); diff != "" {
				t.Errorf("drifts (-want +got):\n%s", diff)
			}
		})
	}
}
