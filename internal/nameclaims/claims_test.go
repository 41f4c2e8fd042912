package nameclaims

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// leaseReadsRefused is an API server reader that answers everything but Leases.
type leaseReadsRefused struct {
	client.Reader
	refused int
}

func (r *leaseReadsRefused) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*coordinationv1.Lease); ok {
		r.refused++
		return errors.New("a Lease read reached the API server")
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (r *leaseReadsRefused) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*coordinationv1.LeaseList); ok {
		r.refused++
		return errors.New("a Lease list reached the API server")
	}
	return r.Reader.List(ctx, list, opts...)
}

// TestAPlanReadsClaimsFromTheCache: the claims a plan checks (its own, looked up by their
// holder's index, and those of the names it declares) come from the manager's cache, as it holds
// them (cachedClaim); only the holder of another's claim is asked of the API server, which a
// cache that has not seen it yet would get wrong.
func TestAPlanReadsClaimsFromTheCache(t *testing.T) {
	const identity = "osm-identity"
	mine := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "mine", UID: "uid-mine"}}
	other := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-b", Name: "other", UID: "uid-other"}}
	r := &Registry{Namespace: "osmops-system"}
	cache := fake.NewClientBuilder().WithScheme(testenv.NewScheme()).WithObjects(mine, other).
		WithIndex(&coordinationv1.Lease{}, HolderIndex, HolderUID).Build() // as SetupIndexes
	for _, claim := range []*coordinationv1.Lease{r.newClaim(mine, identity, "held"), r.newClaim(other, identity, "taken")} {
		cached, err := cachedClaim(claim) // as the manager's cache holds it
		if err != nil {
			t.Fatal(err)
		}
		cachedLease := cached.(*coordinationv1.Lease)
		cachedLease.ResourceVersion = ""
		if err := cache.Create(context.Background(), cachedLease); err != nil {
			t.Fatal(err)
		}
	}
	apiServer := &leaseReadsRefused{Reader: cache}
	r.Client, r.APIReader = cache, apiServer
	rev := &gitops.Revision{NsInstances: []gitops.NsInstance{{Name: "held"}, {Name: "taken"}, {Name: "free"}}}

	claimed, err := r.Held(context.Background(), mine, rev, identity)
	if err != nil || apiServer.refused > 0 {
		t.Fatalf("Held read %d Lease(s) from the API server: %v", apiServer.refused, err)
	}
	if want := map[string]string{"taken": "tenant-b/other"}; !maps.Equal(claimed, want) {
		t.Fatalf("Held = %v, want %v", claimed, want)
	}
}

// TestAPlanTakesItsClaimsAtOnce: each Lease create waits until a second one is in flight, so
// claims taken one at a time never get past the first (the deadline only bounds a failure).
func TestAPlanTakesItsClaimsAtOnce(t *testing.T) {
	obj := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "mine", UID: "uid-mine"}}
	var inFlight atomic.Int32
	second := make(chan struct{})
	var once sync.Once
	api := interceptor.NewClient(fake.NewClientBuilder().WithScheme(testenv.NewScheme()).WithObjects(obj).Build(), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			if inFlight.Add(1) >= 2 {
				once.Do(func() { close(second) })
			}
			select {
			case <-second:
			case <-ctx.Done():
				return errors.New("claims taken one at a time: no second create came while the first waited")
			}
			return c.Create(ctx, o, opts...)
		},
	})
	r := &Registry{Namespace: "osmops-system", Client: api, APIReader: api}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inventory := gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	contested, err := r.Hold(ctx, obj, "osm-identity", inventory)
	if err != nil || len(contested) > 0 {
		t.Fatalf("Hold = %v, %v; want no contested name", contested, err)
	}
	if mine, err := r.ownClaims(ctx, obj); err != nil || len(mine) != 3 {
		t.Fatalf("claims held: %d (%v), want 3", len(mine), err)
	}
}

// TestAnEndedTerminationReleasesFromTheCache: once the operations that terminated an instance
// end, its claim is released as the manager's cache shows it, without a List of every claim
// from the API server; the claims of the names still listed stay.
func TestAnEndedTerminationReleasesFromTheCache(t *testing.T) {
	const identity = "osm-identity"
	cluster := &gitopsv1alpha1.OsmCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "osm", Generation: 1},
		Status: gitopsv1alpha1.OsmClusterStatus{OSMIdentity: identity}}
	conditions.MarkTrue(cluster, meta.ReadyCondition, meta.SucceededReason, "logged in")
	obj := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "mine", UID: "uid-mine"},
		Spec: gitopsv1alpha1.OsmDeploymentSpec{ClusterRef: meta.LocalObjectReference{Name: "osm"}},
		Status: gitopsv1alpha1.OsmDeploymentStatus{Inventory: &gitopsv1alpha1.Inventory{
			NsInstances: []gitopsv1alpha1.NsInstanceEntry{{Name: "kept"}}}}}
	r := &Registry{Namespace: "osmops-system"}
	cache := fake.NewClientBuilder().WithScheme(testenv.NewScheme()).WithObjects(cluster, obj).
		WithIndex(&coordinationv1.Lease{}, HolderIndex, HolderUID).Build() // as SetupIndexes
	for _, name := range []string{"kept", "terminated"} {
		cached, err := cachedClaim(r.newClaim(obj, identity, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := cache.Create(context.Background(), cached.(*coordinationv1.Lease)); err != nil {
			t.Fatal(err)
		}
	}
	apiServer := &leaseReadsRefused{Reader: cache}
	r.Client, r.APIReader = cache, apiServer

	if err := r.ReleaseEnded(context.Background(), obj); err != nil || apiServer.refused > 0 {
		t.Fatalf("ReleaseEnded read %d Lease(s) from the API server: %v", apiServer.refused, err)
	}
	left, err := r.ownCachedClaims(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, kept := left[Name(identity, "kept")]; !kept || len(left) != 1 {
		t.Errorf("claims left: %v, want kept's alone", slices.Collect(maps.Keys(left)))
	}
}
