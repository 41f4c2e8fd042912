package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// fakeOSM records the requests of an apply and how many were in flight at once.
type fakeOSM struct {
	OSM         // the calls an apply does not make panic
	mu          sync.Mutex
	inFlight    int
	maxInFlight int
	requests    []string
	entered     chan struct{}
	release     chan struct{}
	refuse      map[string]error
}

func (f *fakeOSM) enter(request string) error {
	f.mu.Lock()
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	f.requests = append(f.requests, request)
	err := f.refuse[request]
	f.mu.Unlock()
	if f.release != nil {
		f.entered <- struct{}{}
		<-f.release
	}
	f.mu.Lock()
	f.inFlight--
	f.mu.Unlock()
	return err
}

func (f *fakeOSM) CreatePackage(_ context.Context, pkg *osmpkg.Package) (string, error) {
	return "id-" + pkg.Descriptor.ID, f.enter("create package " + pkg.Descriptor.ID)
}

func (f *fakeOSM) UpdatePackage(_ context.Context, id string, pkg *osmpkg.Package) error {
	return f.enter("update package " + pkg.Descriptor.ID)
}

func (f *fakeOSM) SetPackageUserData(_ context.Context, _ osmpkg.Kind, id string, data map[string]string) error {
	return f.enter(fmt.Sprintf("mark package %s revision %s", id, data[PackageRevisionParam]))
}

func (f *fakeOSM) CreateNSInstance(_ context.Context, create osm.NSInstanceCreate) (*osm.NSInstanceCreated, error) {
	if err := f.enter(fmt.Sprintf("create %s nsd=%s vim=%s", create.Name, create.NsdID, create.VIMAccountID)); err != nil {
		return nil, err
	}
	return &osm.NSInstanceCreated{ID: "ns-" + create.Name, OperationID: "op-" + create.Name}, nil
}

func (f *fakeOSM) UpgradeKDU(_ context.Context, id string, _ osm.KDUUpgrade) (string, error) {
	return "op-up-" + id, f.enter("upgrade " + id)
}

func (f *fakeOSM) ChangeVNFPackage(_ context.Context, id string, change osm.VNFPackageChange) (string, error) {
	return "op-move-" + id, f.enter("move " + id + " vnf=" + change.VNFInstanceID + " vnfd=" + change.VnfdID)
}

func (f *fakeOSM) DeleteNSInstance(_ context.Context, id string, _ bool) (string, error) {
	return "op-del-" + id, f.enter("delete " + id)
}

func TestApplyBoundsParallelism(t *testing.T) {
	fake := &fakeOSM{entered: make(chan struct{}), release: make(chan struct{})}
	plan := &Plan{}
	for i := range 20 {
		plan.Creates = append(plan.Creates, NsAction{Name: fmt.Sprintf("ns%02d", i), Instance: declared(fmt.Sprintf("ns%02d", i), "1")})
	}
	done := make(chan *Result)
	go func() { done <- Apply(context.Background(), fake, plan, observedWith(nil, nil), 3) }()
	// Three requests get in before any is answered; each answer lets one more in.
	for range 3 {
		<-fake.entered
	}
	for range 17 {
		fake.release <- struct{}{}
		<-fake.entered
	}
	for range 3 {
		fake.release <- struct{}{}
	}
	result := <-done
	if fake.maxInFlight != 3 {
		t.Errorf("at most %d requests were in flight, want 3", fake.maxInFlight)
	}
	if len(result.Operations) != 20 || len(result.NsInstanceIDs) != 20 || len(result.Errors) != 0 {
		t.Errorf("result = %d operations, %d ids, errors %v", len(result.Operations), len(result.NsInstanceIDs), result.Errors)
	}
}

func TestApplyUsesPackagesCreatedBefore(t *testing.T) {
	fake := &fakeOSM{}
	nsPkg := gitops.Package{Package: &osmpkg.Package{Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindNS, ID: "new_ns"}}}
	ns := declared("ldap", "1")
	ns.NsdName = "new_ns"
	plan := &Plan{Packages: []PackageAction{{Package: nsPkg, Revision: 1}}, Creates: []NsAction{{Name: "ldap", Instance: ns}}}
	result := Apply(context.Background(), fake, plan, observedWith(nil, nil), 2)
	want := []string{"create package new_ns", "mark package id-new_ns revision 1", "create ldap nsd=id-new_ns vim=vim-1"}
	if diff := cmp.Diff(want, fake.requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if result.Packages["new_ns"] != "id-new_ns" {
		t.Errorf("package ids = %v", result.Packages)
	}
}

func TestApplyStopsAfterAFailedPackageButNotAfterAFailedInstance(t *testing.T) {
	refused := &osm.APIError{StatusCode: 422, Code: "UNPROCESSABLE_ENTITY", Detail: "bad"}
	fake := &fakeOSM{refuse: map[string]error{"create package bad": refused}}
	bad := gitops.Package{Package: &osmpkg.Package{Descriptor: osmpkg.Descriptor{Kind: osmpkg.KindVNF, ID: "bad"}}}
	plan := &Plan{Packages: []PackageAction{{Package: bad}}, Creates: []NsAction{{Name: "ldap", Instance: declared("ldap", "1")}}}
	result := Apply(context.Background(), fake, plan, observedWith(nil, nil), 2)
	if len(fake.requests) != 1 || len(result.Errors) != 1 || !errors.Is(result.Errors[0], refused) {
		t.Fatalf("requests %v, errors %v", fake.requests, result.Errors)
	}

	fake = &fakeOSM{refuse: map[string]error{"upgrade ns-a": refused}}
	plan = &Plan{Upgrades: []NsAction{{Name: "a", ID: "ns-a", Instance: declared("a", "1")}, {Name: "b", ID: "ns-b", Instance: declared("b", "1")}}}
	result = Apply(context.Background(), fake, plan, observedWith(nil, nil), 1)
	if len(result.Errors) != 1 || len(result.Operations) != 1 || result.Operations[0].NsInstance != "b" {
		t.Errorf("errors %v, operations %v", result.Errors, result.Operations)
	}
}

func TestClassifyOperations(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	pending := []OperationRecord{
		{ID: "op-done", Type: osm.OperationTypeInstantiate, NsInstance: "a", State: "PROCESSING", StartTime: start},
		{ID: "op-running", Type: osm.OperationTypeAction, NsInstance: "b", State: "PROCESSING", StartTime: start},
		{ID: "op-failed", Type: osm.OperationTypeAction, NsInstance: "c", State: "PROCESSING", StartTime: start},
		{ID: "op-temp", Type: osm.OperationTypeInstantiate, NsInstance: "d", State: "PROCESSING", StartTime: start},
		{ID: "op-listed-done", Type: osm.OperationTypeAction, NsInstance: "e", State: "PROCESSING", StartTime: start},
		{ID: "op-backwards", Type: osm.OperationTypeAction, NsInstance: "f", State: "PROCESSING", StartTime: start},
	}
	unfinished := []osm.Operation{
		{ID: "op-running", OperationState: "PROCESSING"},
		{ID: "op-failed", OperationState: "FAILED", ErrorMessage: "helm upgrade failed: timed out", StartTime: 1_700_000_000, StatusEnteredTime: 1_700_000_001.5},
		{ID: "op-temp", OperationState: "FAILED_TEMP", DetailedStatus: "K8s cluster unreachable"},
		{ID: "op-listed-done", OperationState: "COMPLETED", StartTime: 1_700_000_000, StatusEnteredTime: 1_700_000_004},
		// A hostile NBI's times out of order tell nothing.
		{ID: "op-backwards", OperationState: "COMPLETED", StartTime: 1_700_000_009, StatusEnteredTime: 1_700_000_004},
		{ID: "op-of-someone-else", OperationState: "FAILED"},
	}
	running, finished := ClassifyOperations(pending, unfinished)
	if len(running) != 1 || running[0].ID != "op-running" {
		t.Errorf("running = %v", running)
	}
	var got []string
	for _, o := range finished {
		got = append(got, fmt.Sprintf("%s %s failed=%v took=%s %s", o.Operation.ID, o.Operation.State, o.Failed, o.Took, o.Message))
	}
	want := []string{
		"op-done COMPLETED failed=false took=0s ",
		"op-failed FAILED failed=true took=1.5s helm upgrade failed: timed out",
		"op-temp FAILED_TEMP failed=true took=0s K8s cluster unreachable",
		"op-listed-done COMPLETED failed=false took=4s ",
		"op-backwards COMPLETED failed=false took=0s ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("finished (-want +got):\n%s", diff)
	}
}

func TestRequestsCarryTheKDUValues(t *testing.T) {
	ns := declared("ldap", "3")
	ns.Description = "Demo LDAP"
	create := CreateRequest(ns, "nsd-1", "vim-1", self)
	want := osm.NSInstanceCreate{
		Name: "ldap", NsdID: "nsd-1", VIMAccountID: "vim-1", Description: "Demo LDAP",
		AdditionalParamsForNs: map[string]any{OwnerParam: "cluster-a.telco.osm-gitops"},
		AdditionalParamsForVnf: []osm.VnfParams{{MemberVnfIndex: "openldap", AdditionalParamsForKdu: []osm.KDUParams{{
			KDUName: "ldap", AdditionalParams: map[string]any{"replicaCount": "3"}}}}},
	}
	if diff := cmp.Diff(want, create); diff != "" {
		t.Errorf("create request (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(osm.KDUUpgrade{MemberVnfIndex: "openldap", KDUName: "ldap", Params: map[string]any{"replicaCount": "3"}}, UpgradeRequest(ns.VnfName, ns.KDU, "")); diff != "" {
		t.Errorf("upgrade request (-want +got):\n%s", diff)
	}
}

// Every action has its own words (a refused package move once read as a PANIC in Ready), and no
// value, even one outside the enumeration, makes String panic.
func TestEveryActionHasItsWords(t *testing.T) {
	seen := map[string]Action{}
	for a := range actionCount {
		words := a.String()
		if words == "" || strings.Contains(words, "%!") {
			t.Errorf("action %d has no words: %q", int(a), words)
		}
		if other, dup := seen[words]; dup {
			t.Errorf("actions %d and %d share the words %q", int(other), int(a), words)
		}
		seen[words] = a
	}
	// A package move OSM refuses reads in words, as Ready and the event show it.
	refused := &osm.APIError{StatusCode: 422, Code: "UNPROCESSABLE_ENTITY", Detail: "bad"}
	fake := &fakeOSM{refuse: map[string]error{"move ns-a vnf=vnf-1 vnfd=vnfd-1": refused}}
	plan := &Plan{PackageMoves: []NsAction{{Name: "a", ID: "ns-a", Change: osm.VNFPackageChange{VNFInstanceID: "vnf-1", VnfdID: "vnfd-1"}}}}
	result := Apply(context.Background(), fake, plan, observedWith(nil, nil), 1)
	if len(result.Errors) != 1 || !strings.HasPrefix(result.Errors[0].Error(), "move VNF package a: ") {
		t.Errorf("errors %v", result.Errors)
	}
	for _, a := range []Action{-1, actionCount, actionCount + 7} {
		if got := fmt.Sprint(a); strings.Contains(got, "PANIC") || got == "" {
			t.Errorf("Action(%d) = %q", int(a), got)
		}
	}
}
