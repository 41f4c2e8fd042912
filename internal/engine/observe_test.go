package engine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
)

func TestScopeOf(t *testing.T) {
	rev := &gitops.Revision{NsInstances: []gitops.NsInstance{{Name: "b"}, {Name: "a"}}}
	for _, test := range []struct {
		name      string
		inventory gitopsv1alpha1.Inventory
		want      Scope
	}{
		{"a first revision reads the declared names, without live values", gitopsv1alpha1.Inventory{},
			Scope{Names: []string{"a", "b"}}},
		{"owned instances are read too, once, with their live values",
			gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{{Name: "c"}, {Name: "a"}}},
			Scope{Names: []string{"a", "b", "c"}, WithValues: true}},
	} {
		t.Run(test.name, func(t *testing.T) {
			if diff := cmp.Diff(test.want, ScopeOf(rev, test.inventory)); diff != "" {
				t.Errorf("ScopeOf (-want +got):\n%s", diff)
			}
		})
	}
}

// listingOSM answers the lists of an observation and records what they asked for.
type listingOSM struct {
	OSM
	instances           []osm.NSInstance
	askedNames, askedNS [][]string
}

func (l *listingOSM) ListNSDescriptors(context.Context) ([]osm.NSDescriptor, error) { return nil, nil }
func (l *listingOSM) ListVNFDescriptors(context.Context) ([]osm.VNFDescriptor, error) {
	return nil, nil
}
func (l *listingOSM) ListVIMAccounts(context.Context) ([]osm.VIMAccount, error) { return nil, nil }

func (l *listingOSM) ListNSInstances(_ context.Context, names ...string) ([]osm.NSInstance, error) {
	l.askedNames = append(l.askedNames, names)
	return l.instances, nil
}

func (l *listingOSM) ListVNFInstances(_ context.Context, ids ...string) ([]osm.VNFInstance, error) {
	l.askedNS = append(l.askedNS, ids)
	return []osm.VNFInstance{{NSInstanceID: "id-a", MemberVnfIndex: "vnf", KDURecords: []osm.KDURecord{{KDUName: "ldap", AdditionalParams: `{"x":1}`}}}}, nil
}

func TestObserveReadsOnlyItsScope(t *testing.T) {
	instances := []osm.NSInstance{{ID: "id-a", Name: "a"}}
	for _, test := range []struct {
		name                string
		scope               Scope
		wantNames, wantVNFs [][]string
		wantValues          bool
	}{
		{"nothing to read", Scope{WithValues: true}, nil, nil, false},
		{"names only", Scope{Names: []string{"a", "b"}}, [][]string{{"a", "b"}}, nil, false},
		{"the VNF records of the instances found", Scope{Names: []string{"a", "b"}, WithValues: true},
			[][]string{{"a", "b"}}, [][]string{{"id-a"}}, true},
	} {
		t.Run(test.name, func(t *testing.T) {
			nbi := &listingOSM{instances: instances}
			observed, err := Observe(t.Context(), nbi, test.scope)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(test.wantNames, nbi.askedNames); diff != "" {
				t.Errorf("NS instance names asked (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(test.wantVNFs, nbi.askedNS); diff != "" {
				t.Errorf("VNF records asked for NS instances (-want +got):\n%s", diff)
			}
			if got := observed.KDUValues["id-a"]["vnf"]["ldap"] == `{"x":1}`; got != test.wantValues {
				t.Errorf("live values observed: %v, want %v", got, test.wantValues)
			}
		})
	}
}
