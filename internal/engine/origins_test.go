package engine

import (
	"testing"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
)

// An upgrade says where the change of its declaration came from: the origins whose
// fingerprints the inventory did not record when the instance last ran its declaration in
// full; the inventory keeps those fingerprints until the instance is in step again.
func TestComputeSaysWhereAChangeCameFrom(t *testing.T) {
	ldap := declared("ldap", "2")
	ldap.Origins = []gitops.Origin{{Name: "Git", Fingerprint: "g2"}, {Name: "ConfigMap ldap-values", Fingerprint: "c2"},
		{Name: "Secret ldap-admin", Fingerprint: "s2"}, {Name: "variable DOMAIN", Fingerprint: "v2"}}
	outOfStep := observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "1"}`})
	for _, tc := range []struct {
		name     string
		last     InstanceRecord
		observed *Observed
		want     string
		origins  string
	}{
		{name: "a Secret of valuesFrom", last: applied("g2 c2 s1 v2"),
			want: "KDU ldap of VNF openldap: values changed in Secret ldap-admin", origins: "g2 c2 s1 v2"},
		{name: "a ConfigMap of valuesFrom", last: applied("g2 c1 s2 v2"),
			want: "KDU ldap of VNF openldap: values changed in ConfigMap ldap-values", origins: "g2 c1 s2 v2"},
		{name: "a variable of spec.postBuild", last: applied("g2 c2 s2 v1"),
			want: "KDU ldap of VNF openldap: values changed in variable DOMAIN", origins: "g2 c2 s2 v1"},
		{name: "the file in Git", last: applied("g1 c2 s2 v2"),
			want: "KDU ldap of VNF openldap: values changed in Git", origins: "g1 c2 s2 v2"},
		{name: "several at once", last: applied("g1 c2 s1 v1"),
			want: "KDU ldap of VNF openldap: values changed in Git, Secret ldap-admin and variable DOMAIN", origins: "g1 c2 s1 v1"},
		{name: "an entry that recorded no origins", last: applied(""),
			want: "KDU ldap of VNF openldap: values changed in Git"},
		{name: "a reconcile request after a failure", last: InstanceRecord{Name: "ldap", ID: "ns-1", State: InstanceFailed, Origins: "g2 c2 s2 v2"},
			want: "KDU ldap of VNF openldap: values differ: sent again on a reconcile request", origins: "g2 c2 s2 v2"},
		{name: "in step, the current origins are recorded", last: applied("g1 c1 s1 v1"),
			observed: observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "2"}`}), origins: "g2 c2 s2 v2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			observed := outOfStep
			if tc.observed != nil {
				observed = tc.observed
			}
			plan := Compute(Input{Revision: &gitops.Revision{NsInstances: []gitops.NsInstance{ldap}}, Observed: observed,
				Inventory: Inventory{NsInstances: []InstanceRecord{tc.last}}, Owner: self})
			var got string
			if len(plan.Upgrades) == 1 {
				got = plan.Upgrades[0].Reason
			}
			if got != tc.want || len(plan.Upgrades) > 1 {
				t.Errorf("upgrades %v, want one saying %q", summarise(plan).Upgrades, tc.want)
			}
			if origins := plan.Inventory.NsInstances[0].Origins; origins != tc.origins {
				t.Errorf("the inventory records origins %q, want %q", origins, tc.origins)
			}
		})
	}
}

// applied is the entry of an instance that ran, in full, an older declaration of the origins
// whose fingerprints are given.
func applied(origins string) InstanceRecord {
	e := entry("ldap", "ns-1", "sha256:old", InstanceReady)
	e.Origins = origins
	return e
}
