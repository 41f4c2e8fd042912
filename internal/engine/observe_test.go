package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
)

func TestScopeOf(t *testing.T) {
	rev := &gitops.Revision{NsInstances: []gitops.NsInstance{{Name: "b"}, {Name: "a"}}}
	for _, test := range []struct {
		name      string
		inventory Inventory
		want      Scope
	}{
		{"a first revision reads the owner's instances and the declared names", Inventory{},
			Scope{Owner: "cluster-a.telco.osm-gitops", Names: []string{"a", "b"}, WithValues: true, Quotas: true}},
		{"the inventory's names are read too, once",
			Inventory{NsInstances: []InstanceRecord{{Name: "c"}, {Name: "a"}}},
			Scope{Owner: "cluster-a.telco.osm-gitops", Names: []string{"a", "b", "c"}, WithValues: true, Quotas: true}},
		{"the operations of the instances OSM made for the inventory are read by id",
			Inventory{NsInstances: []InstanceRecord{{Name: "c", ID: "id-c"}, {Name: "a", ID: "id-a"}, {Name: "d"}}},
			Scope{Owner: "cluster-a.telco.osm-gitops", Names: []string{"a", "b", "c", "d"}, WithValues: true, Quotas: true,
				IDs: []string{"id-a", "id-c"}}},
	} {
		t.Run(test.name, func(t *testing.T) {
			if diff := cmp.Diff(test.want, ScopeOf(rev, test.inventory, self)); diff != "" {
				t.Errorf("ScopeOf (-want +got):\n%s", diff)
			}
		})
	}
}

// listingOSM answers the lists of an observation and records what they asked for.
type listingOSM struct {
	OSM
	owned, named                      []osm.NSInstance
	askedOwner                        []string
	askedNames, askedNS, askedActions [][]string
	askedRunning                      [][]string
	running, terminates               []osm.Operation
	askedTerminates                   [][]string
	askedProject                      int
	// askedReferences counts the lists of descriptors and VIM accounts.
	askedReferences int
}

func (l *listingOSM) ListCompletedTerminates(_ context.Context, ids ...string) ([]osm.Operation, error) {
	l.askedTerminates = append(l.askedTerminates, ids)
	return l.terminates, nil
}

func (l *listingOSM) GetProject(context.Context) (*osm.Project, error) {
	l.askedProject++
	return &osm.Project{ID: "project-id", Name: "admin"}, nil
}

// The project's quotas are read by the observations of plans that may create, and by no other.
func TestObserveReadsTheProjectForPlansThatCreate(t *testing.T) {
	for _, scope := range []Scope{ScopeOf(&gitops.Revision{}, Inventory{}, self), {WithValues: true}} {
		nbi := &listingOSM{}
		o, err := Observe(t.Context(), nbi, scope)
		if err != nil {
			t.Fatal(err)
		}
		if nbi.askedProject != 1 && scope.Quotas || nbi.askedProject != 0 && !scope.Quotas || (o.Project != nil) != scope.Quotas {
			t.Errorf("scope %+v: the project read %d times, observed %v", scope, nbi.askedProject, o.Project)
		}
	}
}
func (l *listingOSM) ListNSDescriptors(context.Context) ([]osm.NSDescriptor, error) {
	l.askedReferences++
	return nil, nil
}
func (l *listingOSM) ListVNFDescriptors(context.Context) ([]osm.VNFDescriptor, error) {
	l.askedReferences++
	return nil, nil
}
func (l *listingOSM) ListVIMAccounts(context.Context) ([]osm.VIMAccount, error) {
	l.askedReferences++
	return nil, nil
}

func (l *listingOSM) ListNSInstancesByParam(_ context.Context, key, value string) ([]osm.NSInstance, error) {
	l.askedOwner = append(l.askedOwner, key+"="+value)
	return l.owned, nil
}

func (l *listingOSM) ListNSInstances(_ context.Context, names ...string) ([]osm.NSInstance, error) {
	l.askedNames = append(l.askedNames, names)
	return l.named, nil
}

func (l *listingOSM) ListVNFInstances(_ context.Context, ids ...string) ([]osm.VNFInstance, error) {
	l.askedNS = append(l.askedNS, ids)
	return []osm.VNFInstance{{NSInstanceID: "id-a", MemberVnfIndex: "vnf", KDURecords: []osm.KDURecord{{KDUName: "ldap", AdditionalParams: `{"x":1}`}}}}, nil
}

func (l *listingOSM) ListCompletedActions(_ context.Context, ids ...string) ([]osm.Operation, error) {
	l.askedActions = append(l.askedActions, ids)
	return nil, nil
}

func (l *listingOSM) ListRunningOperations(_ context.Context, ids ...string) ([]osm.Operation, error) {
	l.askedRunning = append(l.askedRunning, ids)
	return l.running, nil
}

// An operation the NBI accepted and LCM has not started (queued behind another, or not yet
// taken up) shows only in OSM's operations list: the observation reads it, with one request
// for all the instances, and the instance is busy.
func TestObserveFindsOperationsTheNSRecordDoesNotShow(t *testing.T) {
	l := &listingOSM{
		owned:   []osm.NSInstance{{ID: "id-a", Name: "a"}, {ID: "id-b", Name: "b"}},
		running: []osm.Operation{{ID: "op-1", NSInstanceID: "id-a", OperationState: osm.OperationProcessing}},
	}
	o, err := Observe(context.Background(), l, Scope{Owner: self.Marker()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"id-a", "id-b"}}, l.askedRunning); diff != "" {
		t.Errorf("running operations asked (-want +got):\n%s", diff)
	}
	if !o.Busy("id-a") || o.Busy("id-b") {
		t.Errorf("busy: a %v, b %v; want a only", o.Busy("id-a"), o.Busy("id-b"))
	}
}

// interleavingOSM is OSM running an operation that ends between two of an observation's
// requests: the answers after the first one show it ended (the record terminated, nothing
// running), as LCM writes the record before the operation's state.
type interleavingOSM struct {
	listingOSM
	requests int
}

func (l *interleavingOSM) answer() {
	if l.requests++; l.requests == 2 {
		l.owned, l.running = []osm.NSInstance{{ID: "id-a", Name: "a", NSState: osm.NSStateNotInstantiated,
			OperationalStatus: osm.OperationalStatusTerminated}}, nil
	}
}

func (l *interleavingOSM) ListNSInstancesByParam(ctx context.Context, key, value string) ([]osm.NSInstance, error) {
	l.answer()
	return l.listingOSM.ListNSInstancesByParam(ctx, key, value)
}

func (l *interleavingOSM) ListRunningOperations(ctx context.Context, ids ...string) ([]osm.Operation, error) {
	l.answer()
	return l.listingOSM.ListRunningOperations(ctx, ids...)
}

// An operation that starts and ends between the list of NS records and that of the running
// operations would pair a record from before it (READY) with no operation: an idle instance,
// to which a deletion would send its terminate again. The operations of the instances the
// inventory knows are read first: a terminate still running when they are read keeps the
// instance busy, and its end is in the record read after.
func TestObserveReadsOperationsBeforeTheRecordsTheyChange(t *testing.T) {
	l := &interleavingOSM{listingOSM: listingOSM{
		owned:   []osm.NSInstance{{ID: "id-a", Name: "a", NSState: "READY"}},
		running: []osm.Operation{{ID: "op-1", NSInstanceID: "id-a", LCMOperationType: "terminate", OperationState: osm.OperationProcessing}},
	}}
	inventory := Inventory{NsInstances: []InstanceRecord{{Name: "a", ID: "id-a", State: InstanceReady}}}
	scope := ScopeOf(&gitops.Revision{}, inventory, self)
	scope.WithValues, scope.Quotas = false, false
	o, err := Observe(t.Context(), l, scope)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Busy("id-a") {
		t.Errorf("the instance looks idle: record %+v, running %v", o.NSInstances["id-a"], o.Running)
	}
	if diff := cmp.Diff([][]string{{"id-a"}}, l.askedRunning); diff != "" {
		t.Errorf("running operations asked (-want +got):\n%s", diff)
	}
}

// The instances the inventory does not know have their operations read after their records,
// with one request: those it knows were read before.
func TestObserveReadsTheOperationsOfInstancesTheInventoryLacks(t *testing.T) {
	l := &listingOSM{owned: []osm.NSInstance{{ID: "id-a", Name: "a"}, {ID: "id-b", Name: "b"}},
		running: []osm.Operation{{ID: "op-1", NSInstanceID: "id-b", OperationState: osm.OperationProcessing}}}
	o, err := Observe(t.Context(), l, Scope{Owner: self.Marker(), IDs: []string{"id-a", "id-gone"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"id-a", "id-gone"}, {"id-b"}}, l.askedRunning); diff != "" {
		t.Errorf("running operations asked (-want +got):\n%s", diff)
	}
	if o.Busy("id-a") || !o.Busy("id-b") {
		t.Errorf("busy: a %v, b %v; want b only", o.Busy("id-a"), o.Busy("id-b"))
	}
}

// A terminate with autoremove that completed leaves the record, NOT_INSTANTIATED, until OSM
// removes it a moment later (about 2 s on OSM 19): it is busy, and a prune or a deletion sends
// nothing to it. One terminated without autoremove stays: it is deleted, forced, once.
func TestObserveWaitsForOSMsAutoremove(t *testing.T) {
	terminated := func(id, name string) osm.NSInstance {
		ns := osm.NSInstance{ID: id, Name: name, NSState: osm.NSStateNotInstantiated, CurrentOperation: osm.CurrentOperationIdle,
			OperationalStatus: osm.OperationalStatusTerminated}
		ns.Admin.NSState = osm.NSStateNotInstantiated
		return ownedBy(self, ns)
	}
	neverInstantiated := terminated("id-d", "d")
	neverInstantiated.OperationalStatus = "init"
	l := &listingOSM{
		// d is not instantiated yet (its instantiate not started), e's terminate is gone with it
		// (removed between the two reads).
		owned: []osm.NSInstance{terminated("id-a", "a"), terminated("id-b", "b"), {ID: "id-c", Name: "c"}, neverInstantiated, terminated("id-e", "e")},
		terminates: []osm.Operation{
			{ID: "op-a", NSInstanceID: "id-a", OperationState: osm.OperationCompleted, OperationParams: map[string]any{"autoremove": true}},
			{ID: "op-b", NSInstanceID: "id-b", OperationState: osm.OperationCompleted, OperationParams: map[string]any{}},
		},
	}
	o, err := Observe(context.Background(), l, Scope{Owner: self.Marker()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"id-a", "id-b", "id-e"}}, l.askedTerminates); diff != "" {
		t.Errorf("completed terminates asked (-want +got):\n%s", diff)
	}
	plan := Compute(Input{Revision: &gitops.Revision{}, Observed: o, Owner: self, Prune: true, Inventory: Inventory{
		NsInstances: []InstanceRecord{entry("a", "id-a", "d", InstanceDeleting), entry("b", "id-b", "d", InstanceDeleting),
			entry("d", "id-d", "d", InstanceDeleting), entry("e", "id-e", "d", InstanceDeleting)}}})
	if diff := cmp.Diff([]string{"b@id-b (forced)", "d@id-d (forced)"}, summarise(plan).Deletes); diff != "" {
		t.Errorf("deletes (-want +got):\n%s", diff)
	}

	// Once their terminate completed, the inventory no longer lists them: they are not listed again.
	plan = Compute(Input{Revision: &gitops.Revision{}, Observed: o, Owner: self, Prune: true})
	if got := summarise(plan).Inventory; len(got) != 2 || got[0].Name != "b" || got[1].Name != "d" {
		t.Errorf("inventory rebuilt from the markers: %v, want b and d only", got)
	}

	l = &listingOSM{owned: []osm.NSInstance{{ID: "id-c", Name: "c"}}}
	if _, err := Observe(context.Background(), l, Scope{Owner: self.Marker()}); err != nil || l.askedTerminates != nil {
		t.Errorf("with no terminated record: %v, terminates asked %v", err, l.askedTerminates)
	}
}

func TestObserveReadsOnlyItsScope(t *testing.T) {
	a, c := osm.NSInstance{ID: "id-a", Name: "a"}, osm.NSInstance{ID: "id-c", Name: "c"}
	marker := self.Marker()
	for _, test := range []struct {
		name                string
		scope               Scope
		owned, named        []osm.NSInstance
		wantOwner           []string
		wantNames, wantVNFs [][]string
		wantValues          bool
	}{
		{"nothing to read", Scope{WithValues: true}, nil, nil, nil, nil, nil, false},
		{"names only", Scope{Names: []string{"a", "b"}}, nil, []osm.NSInstance{a}, nil, [][]string{{"a", "b"}}, nil, false},
		{"the VNF records and completed actions of the instances found", Scope{Names: []string{"a", "b"}, WithValues: true},
			nil, []osm.NSInstance{a}, nil, [][]string{{"a", "b"}}, [][]string{{"id-a"}}, true},
		{"the owner's instances first, then by name only the names they lack",
			Scope{Owner: marker, Names: []string{"a", "b"}, WithValues: true}, []osm.NSInstance{a, c}, nil,
			[]string{OwnerParam + "=" + marker}, [][]string{{"b"}}, [][]string{{"id-a", "id-c"}}, true},
		{"no list by name when the owner's instances have every name",
			Scope{Owner: marker, Names: []string{"a"}}, []osm.NSInstance{a}, nil,
			[]string{OwnerParam + "=" + marker}, nil, nil, false},
	} {
		t.Run(test.name, func(t *testing.T) {
			nbi := &listingOSM{owned: test.owned, named: test.named}
			observed, err := Observe(t.Context(), nbi, test.scope)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(test.wantOwner, nbi.askedOwner); diff != "" {
				t.Errorf("NS instances asked by owner (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(test.wantNames, nbi.askedNames); diff != "" {
				t.Errorf("NS instance names asked (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(test.wantVNFs, nbi.askedNS); diff != "" {
				t.Errorf("VNF records asked for NS instances (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(test.wantVNFs, nbi.askedActions); diff != "" {
				t.Errorf("completed actions asked for NS instances (-want +got):\n%s", diff)
			}
			if got := observed.KDUValues["id-a"]["vnf"]["ldap"] == `{"x":1}`; got != test.wantValues {
				t.Errorf("live values observed: %v, want %v", got, test.wantValues)
			}
		})
	}
}

// upgrade is a completed KDU action as the NBI records it: a non-empty primitive_params as a
// JSON string.
func upgrade(ns, kdu, primitive string, start float64, params string) osm.Operation {
	operationParams := map[string]any{"member_vnf_index": "vnf", "kdu_name": kdu, "primitive": primitive,
		"primitive_params": map[string]any{}}
	if params != "" {
		operationParams["primitive_params"] = params
	}
	return osm.Operation{ID: fmt.Sprint(start), NSInstanceID: ns, LCMOperationType: "action", OperationState: "COMPLETED",
		StartTime: osm.Number(start), OperationParams: operationParams}
}

func TestKDUValuesReplayTheCompletedUpgrades(t *testing.T) {
	vnfs := []osm.VNFInstance{{NSInstanceID: "ns-1", MemberVnfIndex: "vnf", KDURecords: []osm.KDURecord{
		{KDUName: "ldap", AdditionalParams: `{"replicaCount": "2", "image": {"tag": "1"}}`},
		{KDUName: "other", AdditionalParams: `{"a": 1}`},
	}}}
	for _, test := range []struct {
		name       string
		operations []osm.Operation
		want       map[string]any
	}{
		{"no upgrade: the instantiation values", nil, map[string]any{"replicaCount": "2", "image": map[string]any{"tag": "1"}}},
		{"an upgrade that resets values runs its values alone, without LCM's options",
			[]osm.Operation{upgrade("ns-1", "ldap", "upgrade", 10, `{"replicaCount": "3", "kdu_reset_values": "true", "kdu_model": "repo/ldap"}`)},
			map[string]any{"replicaCount": "3"}},
		{"LCM's default reuses values: a shallow update of the instantiation values, merged into the release's",
			[]osm.Operation{
				upgrade("ns-1", "ldap", "upgrade", 10, `{"replicaCount": "3", "extra": "x", "kdu_reset_values": "true"}`),
				upgrade("ns-1", "ldap", "upgrade", 20, `{"image": {"pullPolicy": "Always"}}`),
			},
			map[string]any{"replicaCount": "2", "extra": "x", "image": map[string]any{"pullPolicy": "Always"}}},
		{"the newest upgrade wins, whatever the answer's order",
			[]osm.Operation{
				upgrade("ns-1", "ldap", "upgrade", 30, `{"replicaCount": "5", "kdu_reset_values": "yes"}`),
				upgrade("ns-1", "ldap", "upgrade", 10, `{"replicaCount": "3", "kdu_reset_values": "true"}`),
			},
			map[string]any{"replicaCount": "5"}},
		{"a rollback returns to the values before the last upgrade",
			[]osm.Operation{
				upgrade("ns-1", "ldap", "upgrade", 10, `{"replicaCount": "3", "kdu_reset_values": "true"}`),
				upgrade("ns-1", "ldap", "upgrade", 20, `{"replicaCount": "4", "kdu_reset_values": "true"}`),
				upgrade("ns-1", "ldap", "rollback", 30, ""),
			},
			map[string]any{"replicaCount": "3"}},
		{"a second rollback returns to the values the first one left (Helm's revisions)",
			[]osm.Operation{
				upgrade("ns-1", "ldap", "upgrade", 10, `{"replicaCount": "3", "kdu_reset_values": "true"}`),
				upgrade("ns-1", "ldap", "rollback", 20, ""),
				upgrade("ns-1", "ldap", "rollback", 30, ""),
			},
			map[string]any{"replicaCount": "3"}},
		{"a null in reused values removes the key",
			[]osm.Operation{upgrade("ns-1", "ldap", "upgrade", 10, `{"image": null}`)},
			map[string]any{"replicaCount": "2"}},
		{"other KDUs, other instances and other primitives change nothing",
			[]osm.Operation{
				upgrade("ns-1", "other", "upgrade", 10, `{"a": 2, "kdu_reset_values": "true"}`),
				upgrade("ns-2", "ldap", "upgrade", 10, `{"a": 2, "kdu_reset_values": "true"}`),
				upgrade("ns-1", "ldap", "status", 20, ""),
			},
			map[string]any{"replicaCount": "2", "image": map[string]any{"tag": "1"}}},
	} {
		t.Run(test.name, func(t *testing.T) {
			values, _, err := kduReleases(vnfs, test.operations)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(values["ns-1"]["vnf"]["ldap"]), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(test.want, got); diff != "" {
				t.Errorf("values of ldap (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKDUValuesRefuseMalformedParams(t *testing.T) {
	vnfs := []osm.VNFInstance{{NSInstanceID: "ns-1", MemberVnfIndex: "vnf", KDURecords: []osm.KDURecord{{KDUName: "ldap"}}}}
	if _, _, err := kduReleases(vnfs, []osm.Operation{upgrade("ns-1", "ldap", "upgrade", 1, `[1`)}); err == nil {
		t.Error("a malformed primitive_params was read as values")
	}
}
