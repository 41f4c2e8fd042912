package controller

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nameclaims"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/pipeline"
)

// The claims of NS instance names (internal/nameclaims): Leases in the manager's namespace that the API
// server creates once, so that no process memory guards a name.

// identity is the OSM identity of the tenant's OsmCluster, as claims go by it.
func (tn *tenant) identity() string {
	tn.t.Helper()
	cluster := &gitopsv1alpha1.OsmCluster{}
	tn.g.Expect(k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(tn.cluster), cluster)).To(Succeed())
	identity := nameclaims.ClusterIdentity(cluster)
	tn.g.Expect(identity).NotTo(BeEmpty())
	return identity
}

// claimOf returns the claim of the NS instance name on the tenant's OSM, nil when there is none.
func (tn *tenant) claimOf(name string) *coordinationv1.Lease {
	tn.t.Helper()
	lease := &coordinationv1.Lease{}
	err := k8sClient.Get(tn.ctx, types.NamespacedName{Namespace: operatorNamespace, Name: nameclaims.Name(tn.identity(), name)}, lease)
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
	tn.g.Expect(k8sClient.List(tn.ctx, &list, client.InNamespace(operatorNamespace), client.MatchingLabels{nameclaims.HolderLabel: string(d.UID)})).To(Succeed())
	names := make([]string, 0, len(list.Items))
	for _, lease := range list.Items {
		names = append(names, lease.Annotations[nameclaims.NsInstanceAnnotation])
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
				r := &nameclaims.Registry{Client: operator, APIReader: operator, Namespace: operatorNamespace}
				start.Wait()
				holders[i], errs[i] = r.Take(tn.ctx, d, identity, "ldap")
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
		tn.g.Expect(lease.Annotations[nameclaims.HolderAnnotation]).To(Equal(winners[0]))
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
				ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: nameclaims.Name(identity, name),
					Labels: map[string]string{nameclaims.HolderLabel: "gone"},
					Annotations: map[string]string{nameclaims.HolderAnnotation: tn.namespace + "/" + holder,
						nameclaims.OSMAnnotation: identity, nameclaims.NsInstanceAnnotation: name}},
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
			ObjectMeta: metav1.ObjectMeta{Namespace: other.namespace, Name: nameclaims.Name(tn.identity(), "ldap2"),
				Labels:      map[string]string{nameclaims.HolderLabel: "forged"},
				Annotations: map[string]string{nameclaims.HolderAnnotation: other.namespace + "/forger"}},
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
		preview, err := pipeline.PreviewPlan(tn.ctx, k8sClient, other.get(second), dir, testOwnerIdentity, operatorNamespace)
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
