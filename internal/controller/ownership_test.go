package controller

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// Ownership is recorded in OSM (engine.OwnerParam) and spans every OsmCluster, namespace and
// operator process that drives one OSM project. These tests are the ways a hostile or careless
// tenant could duplicate, take or prune NS instances when ownership lived in status only: a
// lost status, a restore, a second namespace, OsmCluster or operator process.

// neighbour is another tenant, in a namespace of its own, whose OsmCluster points at the same
// OSM (the same simulator, URL and project) as tn's.
func (tn *tenant) neighbour() *tenant {
	tn.t.Helper()
	return tn.neighbourAt(tn.nbi.URL)
}

// neighbourAt is neighbour, with its OsmCluster pointing at url: tn's OSM written another way.
func (tn *tenant) neighbourAt(url string) *tenant {
	tn.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
	tn.g.Expect(k8sClient.Create(tn.ctx, ns)).To(Succeed())
	other := *tn
	other.namespace = ns.Name
	tn.t.Cleanup(other.retire)
	tn.g.Expect(k8sClient.Create(tn.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "osm-credentials", Namespace: ns.Name},
		StringData: map[string]string{"username": "operator", "password": testPassword},
	})).To(Succeed())
	other.cluster = other.newCluster("osm", url, "osm-credentials")
	tn.clusterReason(other.cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
	return &other
}

// eventuallyConflict waits until d is Stalled on a Conflict whose message contains what.
func (tn *tenant) eventuallyConflict(d *gitopsv1alpha1.OsmDeployment, what string) {
	tn.t.Helper()
	tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "+gitopsv1alpha1.ConflictReason), ContainSubstring(what)))
}

var _ = Describe("Ownership of what is in OSM", func() {
	It("two namespaces on one OSM never make two instances", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		first := tn.deployment("first", "gitops")
		tn.eventuallyApplied(first, tn.publish("gitops", demoRepo("1", "ldap")))

		other := tn.neighbour()
		second := other.deployment("second", "gitops")
		other.publish("gitops", demoRepo("1", "ldap"))
		other.eventuallyConflict(second, "OsmDeployment "+tn.namespace+"/first")
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
	})

	// Two namespaces reach one OSM as 127.0.0.1 and as localhost, and declare one NS instance at
	// the same moment: the identity is the project id OSM returns at login, not the URL, so that
	// one claims the name and the other is a Conflict; OSM gets one create.
	It("two spellings of one OSM are one OSM", Label("slow"), func() {
		t := GinkgoTB()
		tn := newTenant(t)
		tn.eventuallyApplied(tn.deployment("packages", "packages"), tn.publish("packages", demoRepo("1")))
		other := tn.neighbourAt(strings.Replace(tn.nbi.URL, "127.0.0.1", "localhost", 1))
		identity := func(c *gitopsv1alpha1.OsmCluster) string {
			got := &gitopsv1alpha1.OsmCluster{}
			tn.g.Expect(k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(c), got)).To(Succeed())
			return got.Status.OSMIdentity
		}
		tn.g.Expect(identity(other.cluster)).To(Equal(tn.sim.State().ProjectID))
		tn.g.Expect(identity(tn.cluster)).To(Equal(tn.sim.State().ProjectID))

		// Both read OSM's NS instances in the same window, and find no ldap.
		tn.addFault(nbisim.Fault{Method: http.MethodGet, PathPrefix: "/osm/nslcm/v1/ns_instances_content", Latency: 500 * time.Millisecond, Count: 4})
		files := demoRepo("1", "ldap")
		for name := range files {
			if strings.HasPrefix(name, "osm-pkgs/") {
				delete(files, name)
			}
		}
		tn.publish("gitops", files)
		other.publish("gitops", files)
		deployments := []*gitopsv1alpha1.OsmDeployment{tn.deployment("ldap", "gitops"), other.deployment("ldap", "gitops")}
		outcome := func() []string {
			var out []string
			for _, d := range deployments {
				ready := conditionOf(tn.get(d).Status.Conditions, meta.ReadyCondition)
				if ready == nil {
					out = append(out, "none")
					continue
				}
				out = append(out, string(ready.Status)+" "+ready.Reason)
			}
			return out
		}
		tn.g.Eventually(outcome).Should(ConsistOf("True "+gitopsv1alpha1.AppliedReason, "False "+gitopsv1alpha1.ConflictReason),
			func() string { return tn.describe(deployments[0]) + tn.describe(deployments[1]) })
		tn.g.Expect(tn.countRequests("POST /osm/nslcm/v1/ns_instances_content")).To(BeEquivalentTo(1))
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
	})

	// A tenant applies the victim's NS instance names on an NBI of its own, then points its
	// OsmCluster at the victim's OSM with credentials OSM refuses: its inventory claims nothing
	// there (it never logged in to that OSM), and the victim's instances carry the victim's
	// markers, so that every revision of the victim is applied.
	It("an inventory of another OSM claims nothing", Label("slow"), func() {
		t := GinkgoTB()
		victim := newTenant(t)
		d := victim.deployment("ldap", "gitops")
		victim.eventuallyApplied(d, victim.publish("gitops", demoRepo("1", "ldap")))

		attacker := newTenant(t)
		attacker.eventuallyApplied(attacker.deployment("ldap", "gitops"), attacker.publish("gitops", demoRepo("1", "ldap")))
		attacker.g.Expect(k8sClient.Create(attacker.ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "guess", Namespace: attacker.namespace},
			StringData: map[string]string{"username": "operator", "password": "a-guess"},
		})).To(Succeed())
		attacker.updateCluster(func(c *gitopsv1alpha1.OsmCluster) {
			c.Spec.URL = victim.nbi.URL
			c.Spec.CredentialsSecretRef.Name = "guess"
		})
		attacker.clusterReason(attacker.cluster, metav1.ConditionFalse, gitopsv1alpha1.AuthenticationFailedReason)

		victim.expectConverged(d, victim.publish("gitops", demoRepo("2", "ldap")), map[string]string{"ldap": "2"})
		victim.expectConverged(d, victim.publish("gitops", demoRepo("3", "ldap")), map[string]string{"ldap": "3"})
	})

	// A tenant's own endpoint says, at login, the victim's OSM project id: the claims of its
	// NS instance names go by that identity, but the victim's OSM holds no sign of them (no
	// marker of the attacker, not its VIM accounts), so the victim's creates are not held back.
	It("an endpoint that says another OSM's identity holds back no creates there", func() {
		t := GinkgoTB()
		victim := newTenant(t)
		forged := nbisim.New(nbisim.Config{Username: "operator", Password: testPassword, Project: "admin",
			ProjectID: victim.sim.State().ProjectID, OperationDelay: testOperationDelay,
			VIMAccounts: []nbisim.VIMAccount{{Name: testVIMAccount}}})
		server := httptest.NewServer(forged)
		t.Cleanup(server.Close)
		attacker := victim.neighbourAt(server.URL)
		attacker.eventuallyApplied(attacker.deployment("ldap", "gitops"), attacker.publish("gitops", demoRepo("1", "ldap")))

		d := victim.deployment("ldap", "gitops")
		victim.eventuallyApplied(d, victim.publish("gitops", demoRepo("1", "ldap")))
		victim.g.Expect(victim.instances("ldap")).To(HaveLen(1))
	})

	It("two OsmClusters of one OSM in one namespace never make two instances", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		first := tn.deployment("first", "gitops")
		tn.eventuallyApplied(first, tn.publish("gitops", demoRepo("1", "ldap")))

		// The same OSM, written another way: the identity is the project id OSM returns at login.
		alias := tn.newCluster("osm-alias", tn.nbi.URL+"/osm/", "osm-credentials")
		tn.clusterReason(alias, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		second := tn.deployment("second", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = "osm-alias" })
		tn.eventuallyConflict(second, tn.namespace+"/first")
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
	})

	It("adoption never takes the instance of a live owner", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		first := tn.deployment("first", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Prune = false })
		tn.eventuallyApplied(first, tn.publish("gitops", demoRepo("1", "ldap")))

		other := tn.neighbour()
		adopter := other.deployment("adopter", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.AdoptExisting = true })
		other.publish("gitops", demoRepo("7", "ldap"))
		other.eventuallyConflict(adopter, "OsmDeployment "+tn.namespace+"/first")
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "1"}), "the adopter changed nothing")

		// Once its owner is gone (deleted without prune), the instance may be adopted.
		tn.g.Expect(k8sClient.Delete(tn.ctx, first)).To(Succeed())
		tn.eventuallyGone(first)
		requestReconcile(other, adopter, "owner-gone")
		got := other.eventuallyApplied(adopter, other.get(adopter).Status.LastAttemptedRevision)
		tn.g.Expect(got.Status.Inventory.NsInstances).To(HaveLen(1))
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "7"}))
	})

	It("an instance replaced by hand is a conflict not a second instance", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		tn.eventuallyApplied(d, revision)

		// Someone deletes the instance and makes another of the same name with the osm client.
		tn.forceDelete("ldap")
		tn.g.Eventually(func() []string { return instanceIDs(tn, "ldap") }).Should(BeEmpty())
		nsd := findPackage(tn, "openldap_ns")
		_, err := tn.nbiClient().CreateNSInstance(tn.ctx, osm.NSInstanceCreate{Name: "ldap", NsdID: nsd, VIMAccountID: tn.sim.State().VIMAccounts[0].ID})
		tn.g.Expect(err).NotTo(HaveOccurred())

		requestReconcile(tn, d, "drift")
		tn.eventuallyConflict(d, "no OsmDeployment owns it")
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
	})

	It("a lost status is rebuilt from OSM", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		revision := tn.publish("gitops", demoRepo("1", "ldap", "ldap2"))
		before := tn.eventuallyApplied(d, revision).Status.Inventory.NsInstances

		// A restore from a backup without status.
		tn.g.Eventually(func() error {
			got := tn.get(d)
			got.Status = gitopsv1alpha1.OsmDeploymentStatus{}
			return k8sClient.Status().Update(tn.ctx, got)
		}).Should(Succeed())
		tn.sim.ResetStats()
		requestReconcile(tn, d, "restored")
		got := tn.eventuallyApplied(d, revision)
		tn.g.Expect(got.Status.Inventory.NsInstances).To(Equal(before))
		tn.g.Expect(tn.mutatingRequests()).To(BeZero(), tn.describe(d))

		// What the status forgot is still pruned.
		tn.g.Eventually(func() error {
			got := tn.get(d)
			got.Status = gitopsv1alpha1.OsmDeploymentStatus{}
			return k8sClient.Status().Update(tn.ctx, got)
		}).Should(Succeed())
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		tn.g.Eventually(func() []string { return instanceIDs(tn, "ldap2") }).Should(BeEmpty())
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
	})

	It("an OsmDeployment recreated from its manifest keeps its instances", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		id := tn.eventuallyApplied(d, revision).Status.Inventory.NsInstances[0].ID

		// The object goes without its finalizer running (removed by hand), and comes back.
		tn.g.Eventually(func() error {
			got := tn.get(d)
			controllerutil.RemoveFinalizer(got, gitopsv1alpha1.OsmDeploymentFinalizer)
			return k8sClient.Update(tn.ctx, got)
		}).Should(Succeed())
		tn.g.Expect(k8sClient.Delete(tn.ctx, d)).To(Succeed())
		tn.eventuallyGone(d)
		tn.sim.ResetStats()
		recreated := tn.deployment("ldap", "gitops")
		got := tn.eventuallyApplied(recreated, revision)
		tn.g.Expect(got.Status.Inventory.NsInstances).To(HaveLen(1))
		tn.g.Expect(got.Status.Inventory.NsInstances[0].ID).To(Equal(id))
		tn.g.Expect(tn.mutatingRequests()).To(BeZero(), tn.describe(recreated))
	})

	It("a package of another owner is never replaced", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		first := tn.deployment("first", "gitops")
		tn.eventuallyApplied(first, tn.publish("gitops", demoRepo("1", "ldap")))

		other := tn.neighbour()
		theirs := merge(packageFiles("openldap_knf"), map[string]string{"osm-pkgs/openldap_knf/README.md": "their copy\n"})
		second := other.deployment("second", "gitops")
		other.publish("gitops", theirs)
		other.eventuallyConflict(second, "package openldap_knf belongs to OsmDeployment "+tn.namespace+"/first")
		tn.g.Expect(tn.packageRevision("openldap_knf")).To(Equal(1), "the first OsmDeployment's upload stays")
		tn.g.Expect(conditionList(tn.get(first))).To(ContainElement("Ready=True"))
	})

	It("identical packages are shared without an upload", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		first := tn.deployment("first", "gitops")
		tn.eventuallyApplied(first, tn.publish("gitops", demoRepo("1")))

		other := tn.neighbour()
		tn.sim.ResetStats()
		second := other.deployment("second", "gitops")
		other.eventuallyApplied(second, other.publish("gitops", demoRepo("1")))
		tn.g.Expect(tn.mutatingRequests()).To(BeZero(), other.describe(second))
		tn.g.Expect(other.get(second).Status.Inventory.Packages).To(HaveLen(2))
	})

	It("a package changed outside git is restored", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Prune = false })
		revision := tn.publish("gitops", demoRepo("1"))
		tn.eventuallyApplied(d, revision)

		tn.changeKNFByHand()
		tn.g.Expect(tn.packageRevision("openldap_knf")).To(Equal(2))

		requestReconcile(tn, d, "drift") // as the drift interval does
		tn.g.Eventually(func() int { return tn.packageRevision("openldap_knf") }).Should(Equal(3), tn.describe(d))
		tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).To(ContainSubstring("upload package(s) openldap_knf"))
		tn.eventuallyApplied(d, revision)
	})
})

func instanceIDs(tn *tenant, name string) []string {
	var ids []string
	for _, ns := range tn.instances(name) {
		ids = append(ids, ns.ID)
	}
	return ids
}

// packageRevision returns OSM's revision of the package with the descriptor id.
func (tn *tenant) packageRevision(descriptorID string) int {
	return tn.packageState(descriptorID).Revision
}

// packageState returns the tenant's OSM's package descriptorID (zero when it has none).
func (tn *tenant) packageState(descriptorID string) nbisim.PackageState {
	for _, p := range tn.sim.State().Packages {
		if p.DescriptorID == descriptorID {
			return p
		}
	}
	return nbisim.PackageState{}
}

// changeKNFByHand uploads another copy of the KNF package to the tenant's OSM, as someone
// with the osm client does (osm nfpkg-update).
func (tn *tenant) changeKNFByHand() {
	tn.t.Helper()
	dir := filepath.Join(tn.t.TempDir(), "openldap_knf")
	tn.g.Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	for name, content := range merge(packageFiles("openldap_knf"), map[string]string{"osm-pkgs/openldap_knf/README.md": "by hand\n"}) {
		tn.g.Expect(os.WriteFile(filepath.Join(dir, filepath.Base(name)), []byte(content), 0o644)).To(Succeed())
	}
	byHand, err := osmpkg.Build(dir)
	tn.g.Expect(err).NotTo(HaveOccurred())
	tn.g.Expect(tn.nbiClient().UpdatePackage(tn.ctx, findPackage(tn, "openldap_knf"), byHand)).To(Succeed())
}
