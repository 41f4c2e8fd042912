package controller

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// The claims of NS instance names (claims.go): Leases in the manager's namespace that the API
// server creates once, so that no process memory guards a name.

// identity is the OSM identity of the tenant's OsmCluster, as claims go by it.
func (tn *tenant) identity() string {
	tn.t.Helper()
	cluster := &gitopsv1alpha1.OsmCluster{}
	tn.g.Expect(k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(tn.cluster), cluster)).To(Succeed())
	identity := clusterIdentity(cluster)
	tn.g.Expect(identity).NotTo(BeEmpty())
	return identity
}

// claimOf returns the claim of the NS instance name on the tenant's OSM, nil when there is none.
func (tn *tenant) claimOf(name string) *coordinationv1.Lease {
	tn.t.Helper()
	lease := &coordinationv1.Lease{}
	err := k8sClient.Get(tn.ctx, types.NamespacedName{Namespace: operatorNamespace, Name: claimName(tn.identity(), name)}, lease)
	if apierrors.IsNotFound(err) {
		return nil
	}
	tn.g.Expect(err).NotTo(HaveOccurred())
	return lease
}

// claimHolderUID is the UID that holds the claim of name, "" when no claim exists.
func (tn *tenant) claimHolderUID(name string) string {
	if lease := tn.claimOf(name); lease != nil && lease.Spec.HolderIdentity != nil {
		return *lease.Spec.HolderIdentity
	}
	return ""
}

// claimsHeldBy lists the NS instance names the OsmDeployment d claims, on any OSM.
func (tn *tenant) claimsHeldBy(d *gitopsv1alpha1.OsmDeployment) []string {
	var list coordinationv1.LeaseList
	tn.g.Expect(k8sClient.List(tn.ctx, &list, client.InNamespace(operatorNamespace), client.MatchingLabels{claimHolderLabel: string(d.UID)})).To(Succeed())
	names := make([]string, 0, len(list.Items))
	for _, lease := range list.Items {
		names = append(names, lease.Annotations[claimNsInstanceAnnotation])
	}
	return names
}

var _ = Describe("Claims of NS instance names", func() {
	// Eight OsmDeployments, each through a reconciler of its own (no memory shared, as eight
	// processes), claim one name at once with the operator's permissions: the API server lets one
	// of them have it, and the others are told which one.
	It("one claim wins a race", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		operator, err := client.New(testOperatorConfig, client.Options{Scheme: testScheme})
		tn.g.Expect(err).NotTo(HaveOccurred())
		identity := tn.identity()
		const racers = 8
		deployments := make([]*gitopsv1alpha1.OsmDeployment, racers)
		for i := range deployments {
			deployments[i] = tn.deployment("racer-"+string(rune('a'+i)), "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = true })
		}
		holders := make([]string, racers)
		errs := make([]error, racers)
		var start, done sync.WaitGroup
		start.Add(1)
		for i, d := range deployments {
			done.Go(func() {
				r := &OsmDeploymentReconciler{Client: operator, APIReader: operator, ClaimsNamespace: operatorNamespace}
				start.Wait()
				holders[i], errs[i] = r.takeClaim(tn.ctx, d, identity, "ldap")
			})
		}
		start.Done()
		done.Wait()

		var winners []string
		for i, d := range deployments {
			tn.g.Expect(errs[i]).NotTo(HaveOccurred())
			if holders[i] == "" {
				winners = append(winners, client.ObjectKeyFromObject(d).String())
			}
		}
		tn.g.Expect(winners).To(HaveLen(1))
		for _, holder := range holders {
			tn.g.Expect(holder).To(BeElementOf("", winners[0]))
		}
		lease := tn.claimOf("ldap")
		tn.g.Expect(lease.Annotations[claimHolderAnnotation]).To(Equal(winners[0]))
	})

	// An OsmDeployment adopts an NS instance made by hand (OSM cannot mark it: only its claim says
	// it is taken); its manager stops and a restore loses its status. Another manager, with no
	// memory of it, reconciles a second OsmDeployment that would adopt the instance too: the claim
	// refuses it. A new manager of the first one's shard takes the instance back.
	It("a claim outlives its manager and a lost status", func() {
		t := GinkgoTB()
		const shard = "claims-restart"
		first := startManager(t, shard, true)
		tn := newTenantInShard(t, shard)
		tn.eventuallyApplied(tn.deployment("packages", "packages"), tn.publish("packages", demoRepo("1")))
		created, err := tn.nbiClient().CreateNSInstance(tn.ctx, osm.NSInstanceCreate{Name: "ldap",
			NsdID: findPackage(tn, "openldap_ns"), VIMAccountID: tn.sim.State().VIMAccounts[0].ID})
		tn.g.Expect(err).NotTo(HaveOccurred())
		files := demoRepo("1", "ldap")
		for name := range files {
			if strings.HasPrefix(name, "osm-pkgs/") {
				delete(files, name)
			}
		}
		revision := tn.publish("gitops", files)
		adopter := func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.AdoptExisting = true }
		owner := tn.deployment("owner", "gitops", adopter)
		got := tn.eventuallyApplied(owner, revision)
		tn.g.Expect(got.Status.Inventory.NsInstances).To(ConsistOf(HaveField("ID", created.ID)))
		tn.g.Expect(tn.claimHolderUID("ldap")).To(Equal(string(got.UID)))

		first.stop()
		tn.g.Eventually(func() error {
			got := tn.get(owner)
			got.Status = gitopsv1alpha1.OsmDeploymentStatus{}
			return k8sClient.Status().Update(tn.ctx, got)
		}).Should(Succeed())

		// The suite's manager, which never reconciled the first, reconciles the second.
		unsharded := func(labels *map[string]string) { *labels = nil }
		suiteCluster := tn.newCluster("osm-suite", tn.nbi.URL, "osm-credentials", func(c *gitopsv1alpha1.OsmCluster) { unsharded(&c.Labels) })
		tn.clusterReason(suiteCluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		second := tn.deployment("second", "gitops", adopter, func(d *gitopsv1alpha1.OsmDeployment) {
			unsharded(&d.Labels)
			d.Spec.ClusterRef.Name = suiteCluster.Name
		})
		tn.eventuallyConflict(second, "OsmDeployment "+tn.namespace+"/owner")

		startManager(t, shard, true)
		got = tn.eventuallyApplied(owner, revision)
		tn.g.Expect(got.Status.Inventory.NsInstances).To(ConsistOf(HaveField("ID", created.ID)))
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
		tn.g.Expect(tn.get(second).Status.Inventory).To(Or(BeNil(), HaveField("NsInstances", BeEmpty())))
	})

	// A claim whose holder is gone (its OsmDeployment deleted without its finalizer, or recreated
	// with another UID) blocks nothing: the next OsmDeployment that wants the name takes it over.
	It("a stale claim is taken over", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		identity := tn.identity()
		for name, holder := range map[string]string{"ldap": "ghost", "ldap2": "owner"} {
			stale := &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: claimName(identity, name),
					Labels: map[string]string{claimHolderLabel: "gone"},
					Annotations: map[string]string{claimHolderAnnotation: tn.namespace + "/" + holder,
						claimOSMAnnotation: identity, claimNsInstanceAnnotation: name}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: new("gone")},
			}
			tn.g.Expect(k8sClient.Create(tn.ctx, stale)).To(Succeed())
		}
		// owner exists, with a UID other than the one the claim holds: a later one of that name.
		owner := tn.deployment("owner", "gitops")
		revision := tn.publish("gitops", demoRepo("1", "ldap", "ldap2"))
		got := tn.eventuallyApplied(owner, revision)
		tn.g.Expect(got.Status.Inventory.NsInstances).To(HaveLen(2))
		tn.g.Expect(tn.claimHolderUID("ldap")).To(Equal(string(got.UID)))
		tn.g.Expect(tn.claimHolderUID("ldap2")).To(Equal(string(got.UID)))
		tn.g.Expect(tn.claimsHeldBy(got)).To(ConsistOf("ldap", "ldap2"))
	})

	// A tenant, admin of its own namespace, can neither free, take nor read another tenant's claim,
	// which lives in the manager's namespace; a claim it forges in its own namespace, where it has
	// the rights, claims nothing.
	It("a tenant cannot free another tenants claim", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.get(tn.appliedDeployment([]string{"ldap"}))
		claim := tn.claimOf("ldap")
		tn.g.Expect(claim).NotTo(BeNil())

		other := tn.neighbour()
		tenant := other.asTenantAdmin()
		forbidden := func(err error) bool { return apierrors.IsForbidden(err) }
		tn.g.Expect(tenant.Delete(tn.ctx, claim.DeepCopy())).To(Satisfy(forbidden))
		taken := claim.DeepCopy()
		taken.Spec.HolderIdentity = new("thief")
		tn.g.Expect(tenant.Update(tn.ctx, taken)).To(Satisfy(forbidden))
		tn.g.Expect(tenant.Get(tn.ctx, client.ObjectKeyFromObject(claim), &coordinationv1.Lease{})).To(Satisfy(forbidden))
		tn.g.Expect(tenant.DeleteAllOf(tn.ctx, &coordinationv1.Lease{}, client.InNamespace(operatorNamespace))).To(Satisfy(forbidden))
		tn.g.Expect(tn.claimHolderUID("ldap")).To(Equal(string(d.UID)))

		// The other tenant forges, in its own namespace, a claim of a name the first declares next.
		forged := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: other.namespace, Name: claimName(tn.identity(), "ldap2"),
				Labels:      map[string]string{claimHolderLabel: "forged"},
				Annotations: map[string]string{claimHolderAnnotation: other.namespace + "/forger"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: new("forged")},
		}
		err := tenant.Create(tn.ctx, forged)
		tn.g.Expect(err == nil || apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		tn.expectConverged(d, tn.publish("gitops", demoRepo("1", "ldap", "ldap2")), map[string]string{"ldap": "1", "ldap2": "1"})
		tn.g.Expect(tn.claimHolderUID("ldap2")).To(Equal(string(d.UID)))
	})

	// The preview sees claims: a plan of a name another OsmDeployment holds is a Conflict, before
	// that one's status lists it.
	It("the preview sees claims", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		tn.appliedDeployment([]string{"ldap"})
		other := tn.neighbour()
		second := other.deployment("second", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = true })
		other.publish("gitops", demoRepo("1", "ldap"))
		dir := t.TempDir()
		for name, content := range demoRepo("1", "ldap") {
			file := filepath.Join(dir, filepath.FromSlash(name))
			tn.g.Expect(os.MkdirAll(filepath.Dir(file), 0o755)).To(Succeed())
			tn.g.Expect(os.WriteFile(file, []byte(content), 0o644)).To(Succeed())
		}
		preview, err := PreviewPlan(tn.ctx, k8sClient, other.get(second), dir, testOwnerIdentity, operatorNamespace)
		tn.g.Expect(err).NotTo(HaveOccurred())
		tn.g.Expect(preview.Plan.Problems).To(ContainElement(HaveField("Message", ContainSubstring("OsmDeployment "+tn.namespace+"/ldap"))))
	})

	Context("once the instances are gone", func() {
		It("releases them with deletionPolicy MirrorPrune", func() {
			claimsAreReleasedWithTheirInstances(GinkgoTB(), gitopsv1alpha1.DeletionPolicyMirrorPrune)
		})
		It("releases them with deletionPolicy Orphan", func() {
			claimsAreReleasedWithTheirInstances(GinkgoTB(), gitopsv1alpha1.DeletionPolicyOrphan)
		})
	})
})

// A name is released once the inventory no longer lists it (pruned and gone from OSM), and all
// of them once the OsmDeployment is gone, whatever its deletionPolicy.
func claimsAreReleasedWithTheirInstances(t testing.TB, policy gitopsv1alpha1.DeletionPolicy) {
	tn := newTenant(t)
	d := tn.appliedDeployment([]string{"ldap", "ldap2"}, func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.DeletionPolicy = policy })
	d = tn.get(d)
	tn.g.Expect(tn.claimsHeldBy(d)).To(ConsistOf("ldap", "ldap2"))

	tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
	tn.g.Expect(instanceIDs(tn, "ldap2")).To(BeEmpty())
	tn.g.Expect(tn.claimsHeldBy(d)).To(ConsistOf("ldap"))

	tn.deleteAll(d)
	tn.eventuallyGone(d)
	tn.g.Expect(tn.claimsHeldBy(d)).To(BeEmpty())
	tn.g.Expect(tn.claimOf("ldap")).To(BeNil())
}

// asTenantAdmin returns a client of a user with the built-in admin role in the tenant's
// namespace: all a tenant may do there.
func (tn *tenant) asTenantAdmin() client.Client {
	tn.t.Helper()
	user := "tenant-admin-of-" + tn.namespace
	tn.g.Expect(k8sClient.Create(tn.ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-admin", Namespace: tn.namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
	cfg := rest.CopyConfig(testRESTConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: testScheme})
	tn.g.Expect(err).NotTo(HaveOccurred())
	return c
}

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
	r := &OsmDeploymentReconciler{ClaimsNamespace: "osmops-system"}
	cache := fake.NewClientBuilder().WithScheme(testenv.NewScheme()).WithObjects(mine, other).
		WithIndex(&coordinationv1.Lease{}, claimHolderIndex, claimHolderUID).Build() // as SetupIndexes
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

	claimed, err := r.claims(context.Background(), mine, rev, identity)
	if err != nil || apiServer.refused > 0 {
		t.Fatalf("claims read %d Lease(s) from the API server: %v", apiServer.refused, err)
	}
	if want := map[string]string{"taken": "tenant-b/other"}; !maps.Equal(claimed, want) {
		t.Fatalf("claims = %v, want %v", claimed, want)
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
	r := &OsmDeploymentReconciler{ClaimsNamespace: "osmops-system", Client: api, APIReader: api}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inventory := gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	contested, err := r.holdClaims(ctx, obj, "osm-identity", inventory)
	if err != nil || len(contested) > 0 {
		t.Fatalf("holdClaims = %v, %v; want no contested name", contested, err)
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
	r := &OsmDeploymentReconciler{ClaimsNamespace: "osmops-system"}
	cache := fake.NewClientBuilder().WithScheme(testenv.NewScheme()).WithObjects(cluster, obj).
		WithIndex(&coordinationv1.Lease{}, claimHolderIndex, claimHolderUID).Build() // as SetupIndexes
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

	if err := r.releaseEnded(context.Background(), obj); err != nil || apiServer.refused > 0 {
		t.Fatalf("releaseEnded read %d Lease(s) from the API server: %v", apiServer.refused, err)
	}
	left, err := r.ownCachedClaims(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, kept := left[claimName(identity, "kept")]; !kept || len(left) != 1 {
		t.Errorf("claims left: %v, want kept's alone", slices.Collect(maps.Keys(left)))
	}
}
