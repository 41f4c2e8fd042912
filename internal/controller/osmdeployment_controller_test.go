package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// kduValues returns the live values of the first KDU of the only NS instance named name.
func (tn *tenant) kduValues(name string) map[string]any {
	tn.t.Helper()
	instances := tn.instances(name)
	tn.g.Expect(instances).To(HaveLen(1), "NS instances named %s", name)
	var values map[string]any
	tn.g.Expect(json.Unmarshal(instances[0].KDUs[0].Params, &values)).To(Succeed())
	return values
}

// nbiClient is a client of the tenant's simulator, for changes made "outside Git".
func (tn *tenant) nbiClient() *osm.Client {
	c, err := osm.NewClient(tn.nbi.URL, osm.Credentials{Username: "operator", Password: testPassword, Project: "admin"})
	tn.g.Expect(err).NotTo(HaveOccurred())
	return c
}

func (tn *tenant) update(d *gitopsv1alpha1.OsmDeployment, edit func(*gitopsv1alpha1.OsmDeployment)) {
	tn.g.Eventually(func() error {
		got := tn.get(d)
		edit(got)
		return k8sClient.Update(tn.ctx, got)
	}).Should(Succeed())
}

var _ = Describe("The OsmDeployment reconciler", func() {
	It("bootstrap creates packages and instance", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		d := tn.deployment("ldap", "gitops")

		got := tn.eventuallyApplied(d, revision)
		tn.g.Expect(got.Status.NsInstancesSummary).To(Equal("1/1"))
		tn.g.Expect(got.Status.Inventory.Packages).To(HaveLen(2))
		tn.g.Expect(got.Status.Operations).To(BeEmpty())
		tn.g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		tn.g.Expect(got.Finalizers).To(ContainElement(gitopsv1alpha1.OsmDeploymentFinalizer))

		instances := tn.instances("ldap")
		tn.g.Expect(instances).To(HaveLen(1))
		tn.g.Expect(instances[0].NSState).To(Equal("READY"))
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "1"}))
		tn.g.Expect(recorder.of(d.Namespace, d.Name)).To(ContainElement(And(
			HaveField("Message", ContainSubstring("revision "+revision+" applied")),
			HaveField("Metadata", Equal(map[string]string{
				"gitops.osmops.io/revision": revision, "gitops.osmops.io/token": fmt.Sprint(got.Generation)})))))
	})

	It("new revision upgrades only what changed", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		first := tn.publish("gitops", demoRepo("1", "ldap", "ldap2"))
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, first)
		tn.sim.ResetStats()

		files := demoRepo("1", "ldap", "ldap2")
		files["deploy/ldap.osmops.yaml"] = nsInstanceFile("ldap", "3")
		second := tn.publish("gitops", files)
		tn.eventuallyApplied(d, second)

		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "3"}))
		tn.g.Expect(tn.kduValues("ldap2")).To(Equal(map[string]any{"replicaCount": "1"}))
		tn.g.Expect(tn.mutatingRequests()).To(BeEquivalentTo(1), tn.describe(d))
	})

	It("revert restores earlier values", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		first := tn.publish("gitops", demoRepo("1", "ldap"))
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, first)
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("4", "ldap")))
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "4"}))

		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "1"}))
	})

	It("unchanged revision sends no mutating request", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, revision)
		tn.sim.ResetStats()

		requestReconcile(tn, d, "first")
		tn.g.Eventually(func() string { return tn.get(d).Status.LastHandledReconcileAt }).Should(Equal("first"))
		tn.eventuallyApplied(d, revision)
		tn.g.Expect(tn.mutatingRequests()).To(BeZero(), tn.describe(d))
		tn.g.Expect(tn.sim.Stats().Requests).To(BeNumerically("<=", 8))
	})

	It("package change updates only that package", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		first := tn.publish("gitops", demoRepo("1", "ldap"))
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, first)
		tn.sim.ResetStats()

		files := demoRepo("1", "ldap")
		files["osm-pkgs/openldap_knf/README.md"] = "The openldap KNF.\n"
		tn.eventuallyApplied(d, tn.publish("gitops", files))

		// The upload, and the mark of what it uploaded.
		tn.g.Expect(tn.sim.Stats().Endpoints).To(ContainElement(HaveField("Route", "/osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}")), tn.describe(d))
		tn.g.Expect(tn.mutatingRequests()).To(BeEquivalentTo(2), tn.describe(d))
		var revisions []string
		for _, p := range tn.sim.State().Packages {
			revisions = append(revisions, p.DescriptorID+":"+string(rune('0'+p.Revision)))
		}
		tn.g.Expect(revisions).To(ConsistOf("openldap_knf:2", "openldap_ns:1"))
	})

	It("applies a package and its instance in one commit", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, revision) // packages and the instance that uses them, in one revision
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
	})

	It("invalid revision is rejected whole", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		files := demoRepo("1", "ldap")
		files["deploy/broken.osmops.yaml"] = "kind: NsInstance\nname: broken\nnsdName: [openldap_ns]\n"
		revision := tn.publish("gitops", files)
		d := tn.deployment("ldap", "gitops")

		// The status is written in one request: the condition and the revision come together.
		var got *gitopsv1alpha1.OsmDeployment
		tn.g.Eventually(func() string {
			got = tn.get(d)
			stalled := conditionOf(got.Status.Conditions, meta.StalledCondition)
			if stalled == nil {
				return ""
			}
			return stalled.Reason + " @ " + got.Status.LastAttemptedRevision
		}).Should(Equal(gitopsv1alpha1.ValidationFailedReason + " @ " + revision))
		ready := conditionOf(got.Status.Conditions, meta.ReadyCondition)
		tn.g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		tn.g.Expect(ready.Message).To(ContainSubstring("deploy/broken.osmops.yaml:3"))
		tn.g.Expect(got.Status.LastAttemptedRevision).To(Equal(revision))
		tn.g.Expect(got.Status.LastAppliedRevision).To(BeEmpty())
		tn.g.Expect(tn.mutatingRequests()).To(BeZero())

		fixed := tn.publish("gitops", demoRepo("1", "ldap"))
		tn.eventuallyApplied(d, fixed)
	})

	// Issue 29: a parse problem anywhere hid every reference problem of the revision.
	It("invalid revision lists every problem at once", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		files := merge(stackRepo(stackDefaults), demoRepo("1"))
		delete(files, "deploy/stack.osmops.yaml")
		files["deploy/ldap-stack.osmops.yaml"] = strings.Replace(openldap.StackInstanceFile("ldap-stack", testVIMAccount, stackDefaults),
			"        params:", "        parms:", 1)
		files["deploy/ldap.osmops.yaml"] = strings.Replace(nsInstanceFile("ldap", "1"), "vnfName: openldap", "vnfName: openldapx", 1)
		// Only OSM can tell this one: the revision holds no VIM account.
		files["deploy/other.osmops.yaml"] = strings.Replace(nsInstanceFile("other", "1"), testVIMAccount, "nowhere", 1)
		revision := tn.publish("gitops", files)
		d := tn.deployment("ldap", "gitops")

		tn.eventuallyCondition(d, meta.StalledCondition, HavePrefix("True "+gitopsv1alpha1.ValidationFailedReason))
		got := tn.get(d)
		tn.g.Expect(got.Status.LastAttemptedRevision).To(Equal(revision))
		tn.g.Expect(conditionOf(got.Status.Conditions, meta.ReadyCondition).Message).To(Equal("revision " + revision + " rejected, nothing applied: invalid revision, 3 problems: " +
			`deploy/ldap-stack.osmops.yaml:14: unknown field "vnfs[0].kdus[0].parms"; ` +
			`deploy/ldap.osmops.yaml:5: vnfName "openldapx" is not a vnf-profile of NSD "openldap_ns" (valid: "openldap"); ` +
			`deploy/other.osmops.yaml:6: vimAccountName "nowhere" is not a VIM account of OSM (known: "` + testVIMAccount + `")`))
		tn.g.Expect(tn.mutatingRequests()).To(BeZero())
	})

	It("unknown reference is rejected before OSM is touched", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		files := demoRepo("1", "ldap")
		files["deploy/ldap.osmops.yaml"] = strings.Replace(nsInstanceFile("ldap", "1"), "name: ldap\n  params", "name: ldapx\n  params", 1)
		tn.publish("gitops", files)
		d := tn.deployment("ldap", "gitops")
		tn.g.Eventually(func() string { return tn.condition(d, meta.ReadyCondition) }).Should(ContainSubstring("ldapx"))
		tn.g.Expect(tn.instances("ldap")).To(BeEmpty())
	})

	It("artifact with wrong digest stalls", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		artifact := artifacts.PublishFiles(tn.namespace+"/bad", demoRepo("1", "ldap"))
		artifact.Digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
		tn.setArtifact("gitops", artifact)
		d := tn.deployment("ldap", "gitops")
		tn.g.Eventually(func() string { return tn.condition(d, meta.StalledCondition) }).Should(And(HavePrefix("True "+gitopsv1alpha1.ArtifactFailedReason), ContainSubstring("digest")))
		tn.g.Expect(tn.mutatingRequests()).To(BeZero())
	})

	It("prune deletes what git no longer declares", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap", "ldap2")))
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		tn.g.Eventually(func() int { return len(tn.instances("ldap2")) }).Should(BeZero())
		tn.g.Expect(tn.get(d).Status.Inventory.NsInstances).To(HaveLen(1))
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
	})

	It("without prune instances are left and reported", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Prune = false })
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap", "ldap2")))
		got := tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		tn.g.Expect(tn.instances("ldap2")).To(HaveLen(1))
		tn.g.Expect(got.Status.Inventory.NsInstances).To(ContainElement(HaveField("State", gitopsv1alpha1.NsInstanceOrphaned)))
		tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).To(ContainSubstring("left running, as prune is off: ldap2"))
	})

	It("drift is corrected", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Interval = &metav1.Duration{Duration: time.Second}
		})
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		nbi := tn.nbiClient()
		ctx := context.Background()

		// Values changed in OSM outside Git are changed back.
		id := tn.instances("ldap")[0].ID
		_, err := nbi.UpgradeKDU(ctx, id, osm.KDUUpgrade{MemberVnfIndex: "openldap", KDUName: "ldap", Params: map[string]any{"replicaCount": "9"}})
		tn.g.Expect(err).NotTo(HaveOccurred())
		tn.g.Eventually(func() map[string]any { return tn.kduValues("ldap") }).Should(Equal(map[string]any{"replicaCount": "1"}))
		tn.g.Eventually(func() string { return recorder.messagesOf(d.Namespace, d.Name) }).Should(ContainSubstring("changed in OSM outside Git"))

		// An instance deleted in OSM is recreated.
		_, err = nbi.DeleteNSInstance(ctx, id, true)
		tn.g.Expect(err).NotTo(HaveOccurred())
		tn.g.Eventually(func() []nbisim.NSInstanceState { return tn.instances("ldap") }).Should(
			ConsistOf(And(HaveField("NSState", "READY"), Not(HaveField("ID", id)))))
		tn.g.Eventually(func() string { return recorder.messagesOf(d.Namespace, d.Name) }).Should(ContainSubstring("deleted in OSM outside Git"))
	})

	It("pending create is never sent twice", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = true })
		// As if the operator died after OSM created the instance and before it wrote the id.
		packages := tn.publish("packages", merge(packageFiles("openldap_knf"), packageFiles("openldap_ns")))
		tn.eventuallyApplied(tn.deployment("packages", "packages"), packages)
		nsd := findPackage(tn, "openldap_ns")
		vim := tn.sim.State().VIMAccounts[0].ID
		owner := engine.Owner{Manager: testOwnerIdentity, Namespace: d.Namespace, Name: d.Name}
		_, err := tn.nbiClient().CreateNSInstance(context.Background(), osm.NSInstanceCreate{Name: "ldap", NsdID: nsd, VIMAccountID: vim,
			AdditionalParamsForNs: map[string]any{engine.OwnerParam: owner.Marker()}})
		tn.g.Expect(err).NotTo(HaveOccurred())
		tn.g.Eventually(func() error {
			got := tn.get(d)
			got.Status.Inventory = &gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{
				{Name: "ldap", State: gitopsv1alpha1.NsInstanceCreating}}}
			return k8sClient.Status().Update(tn.ctx, got)
		}).Should(Succeed())

		tn.update(d, func(o *gitopsv1alpha1.OsmDeployment) { o.Spec.Suspend = false })
		got := tn.eventuallyApplied(d, revision)
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
		tn.g.Expect(got.Status.Inventory.NsInstances[0].ID).To(Equal(tn.instances("ldap")[0].ID))
	})

	It("two deployments of one instance conflict", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		first := tn.deployment("first", "gitops")
		tn.eventuallyApplied(first, revision)
		second := tn.deployment("second", "gitops")
		tn.g.Eventually(func() string { return tn.condition(second, meta.ReadyCondition) }).Should(And(HavePrefix("False "+gitopsv1alpha1.ConflictReason), ContainSubstring(tn.namespace+"/first")))
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
		tn.g.Expect(conditionList(tn.get(first))).To(ContainElement("Ready=True"))
	})

	It("failed operation is reported with OSM's message", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "upgrade", NSName: "ldap",
			Message: "helm upgrade failed: timed out waiting for the condition", Count: 1})).To(Succeed())

		tn.publish("gitops", demoRepo("2", "ldap"))
		tn.g.Eventually(func() string { return tn.condition(d, meta.ReadyCondition) }).Should(And(HavePrefix("False "+gitopsv1alpha1.OperationFailedReason), ContainSubstring("ldap"),
			ContainSubstring("helm upgrade failed: timed out waiting for the condition")), tn.describe(d))

		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("3", "ldap")))
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "3"}))
	})

	It("suspended deployment sends nothing", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = true })
		// The reconcile that found it suspended adds the finalizer in its last write: once the
		// finalizer shows, that reconcile has sent all it would, and nothing requeues it.
		tn.g.Eventually(func() []string { return tn.get(d).Finalizers }).Should(ContainElement(gitopsv1alpha1.OsmDeploymentFinalizer))
		tn.g.Expect(tn.mutatingRequests()).To(BeZero(), tn.describe(d))
		tn.update(d, func(o *gitopsv1alpha1.OsmDeployment) { o.Spec.Suspend = false })
		tn.eventuallyApplied(d, revision)
	})

	It("dependsOn waits for the dependency", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.DependsOn = []gitopsv1alpha1.DependencyReference{{Name: "base"}}
		})
		tn.g.Eventually(func() string { return tn.condition(d, meta.ReadyCondition) }).Should(Equal("False " + gitopsv1alpha1.DependencyNotReadyReason + ": waiting for OsmDeployment base: not found"))
		tn.g.Expect(tn.mutatingRequests()).To(BeZero())

		tn.eventuallyApplied(tn.deployment("base", "gitops", func(o *gitopsv1alpha1.OsmDeployment) { o.Spec.Path = "osm-pkgs" }), revision)
		tn.eventuallyApplied(d, revision)
	})

	// Past timeout an operation is no longer waited for: it is reported with its id, and a later
	// revision is planned (an instance OSM is still busy with gets nothing new until it is done).
	It("timeout is reported and the next revision planned", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		tn.sim.HoldOperations()
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Timeout = &metav1.Duration{Duration: 500 * time.Millisecond}
			d.Spec.RetryInterval = &metav1.Duration{Duration: 200 * time.Millisecond}
		})
		tn.publish("gitops", demoRepo("1", "ldap"))
		opID := func() string {
			for _, ns := range tn.sim.State().NSInstances {
				for _, op := range ns.Operations {
					return op.ID
				}
			}
			return ""
		}
		tn.g.Eventually(opID).ShouldNot(BeEmpty())
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "+gitopsv1alpha1.TimeoutReason), ContainSubstring(opID())))
		tn.g.Expect(tn.get(d).Status.Operations).To(BeEmpty())

		second := tn.publish("gitops", demoRepo("2", "ldap"))
		tn.g.Eventually(func() string { return tn.get(d).Status.LastAttemptedRevision }).Should(Equal(second))
		tn.g.Expect(tn.countRequests(http.MethodPost+" /osm/nslcm/v1/ns_instances/{nsInstanceId}/action")).To(BeZero(), "an upgrade of a busy instance")
		tn.sim.ReleaseOperations()
		tn.eventuallyApplied(d, second)
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "2"}))
	})

	// A reconcile request that arrives while OSM operations run is honoured once they end: it
	// retries the failed upgrade it was made for.
	It("reconcile request waits for running operations", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepoOf(map[string]string{"ldap": "1", "ldap2": "1"})))
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "upgrade", NSName: "ldap", Count: 1})).To(Succeed())
		tn.publish("gitops", demoRepoOf(map[string]string{"ldap": "2", "ldap2": "2"}))
		tn.eventuallyCondition(d, meta.ReadyCondition, HavePrefix("False "+gitopsv1alpha1.OperationFailedReason))

		tn.sim.HoldOperations()
		third := tn.publish("gitops", demoRepoOf(map[string]string{"ldap": "2", "ldap2": "3"}))
		tn.g.Eventually(func() []gitopsv1alpha1.OperationEntry { return tn.get(d).Status.Operations }).Should(HaveLen(1))
		requestReconcile(tn, d, "retry")
		// The condition said so before the request too: the polls show reconciles that saw it.
		tn.eventuallyReconciledSinceNow(listOperationsRoute)
		tn.g.Expect(tn.condition(d, meta.ReconcilingCondition)).To(ContainSubstring("waiting for 1 OSM operation"))
		tn.g.Expect(tn.get(d).Status.LastHandledReconcileAt).To(BeEmpty(), "a request handled while operations run")

		tn.sim.ReleaseOperations()
		got := tn.eventuallyApplied(d, third)
		tn.g.Expect(got.Status.LastHandledReconcileAt).To(Equal("retry"))
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "2"}))
	})

	// A revision that names something OSM lacks is checked again at retryInterval: creating it in
	// OSM is enough, with no new revision and no reconcile request.
	It("missing in OSM is checked again", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.RetryInterval = &metav1.Duration{Duration: 200 * time.Millisecond}
		})
		revision := tn.publish("gitops", map[string]string{"deploy/ldap.osmops.yaml": nsInstanceFile("ldap", "1")})
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "+gitopsv1alpha1.ValidationFailedReason), ContainSubstring("openldap_ns")))

		packages := tn.deployment("packages", "packages")
		tn.eventuallyApplied(packages, tn.publish("packages", merge(packageFiles("openldap_knf"), packageFiles("openldap_ns"))))
		tn.eventuallyApplied(d, revision)
	})

	It("cross namespace source is denied", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		for _, kind := range []string{sourcev1.GitRepositoryKind, sourcev1.OCIRepositoryKind, sourcev1.BucketKind} {
			d := tn.deployment(strings.ToLower(kind), "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
				d.Spec.SourceRef.Kind, d.Spec.SourceRef.Namespace = kind, "flux-system"
			})
			tn.g.Eventually(func() string { return tn.condition(d, meta.StalledCondition) }).Should(
				HavePrefix("True "+gitopsv1alpha1.AccessDeniedReason+": cross-namespace reference to "+kind+" flux-system/gitops"), kind)
		}
	})

	It("deletion with prune terminates owned instances", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap", "ldap2")))
		tn.g.Expect(k8sClient.Delete(tn.ctx, d)).To(Succeed())
		tn.eventuallyGone(d)
		tn.g.Expect(tn.sim.State().NSInstances).To(BeEmpty())
	})

	It("deletion without prune orphans instances", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Prune = false })
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		tn.g.Expect(k8sClient.Delete(tn.ctx, d)).To(Succeed())
		tn.eventuallyGone(d)
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
	})

	// A prune is followed to its end: a terminate that fails in OSM is reported, and the DELETE,
	// which OSM accepted, is not sent again.
	It("a failed prune is reported and not repeated", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Prune = true
			d.Spec.Interval = &metav1.Duration{Duration: time.Second}
		})
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap", "ldap2")))
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "terminate", NSName: "ldap2",
			Message: "helm uninstall failed"})).To(Succeed())
		tn.publish("gitops", demoRepo("1", "ldap"))
		tn.eventuallyCondition(d, meta.ReadyCondition, And(
			HavePrefix("False "+gitopsv1alpha1.OperationFailedReason), ContainSubstring("ldap2"), ContainSubstring("helm uninstall failed")))
		tn.g.Expect(tn.countRequests(deleteNSRoute)).To(BeEquivalentTo(1))
	})

	// After an upgrade the VNF record still holds the instantiation values (OSM's LCM does not
	// rewrite them): drift checks read the values from the completed upgrade, and upgrade nothing.
	It("an upgrade is not repeated by drift checks", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Interval = &metav1.Duration{Duration: 100 * time.Millisecond}
		})
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("2", "ldap")))
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "2"}))
		tn.g.Expect(tn.countRequests(actionRoute)).To(BeEquivalentTo(1))

		tn.expectNoUpgradeInThreeDriftChecks()
	})

	// A package update OSM refuses is not recorded as applied: it is reported, with a warning
	// before it is sent, and sent again on a reconcile request; a new software-version passes.
	It("a refused package update is retried", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		applied := tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		packagesBefore := applied.Status.Inventory.Packages

		vnfd := "osm-pkgs/openldap_knf/openldap_vnfd.yaml"
		files := demoRepo("1", "ldap")
		files[vnfd] = strings.Replace(files[vnfd], "description: KNF with", "description: A KNF with", 1)
		revision := tn.publish("gitops", files)
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "+gitopsv1alpha1.OSMRequestFailedReason),
			ContainSubstring("cannot be modified, there are disallowed changes in the vnf descriptor")))
		tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).To(ContainSubstring(
			vnfd + ":2: VNF package openldap_knf is used by NS instances and its software-version stays 1.0"))
		got := tn.get(d)
		tn.g.Expect(got.Status.LastAttemptedRevision).To(Equal(revision))
		tn.g.Expect(got.Status.Inventory.Packages).To(Equal(packagesBefore), "the inventory keeps what OSM holds")

		putRoute := http.MethodPut + " /osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}/package_content"
		tn.g.Expect(tn.countRequests(putRoute)).To(BeEquivalentTo(1))
		requestReconcile(tn, d, "retry")
		tn.g.Eventually(func() int64 { return tn.countRequests(putRoute) }).Should(BeEquivalentTo(2))

		files[vnfd] = strings.Replace(files[vnfd], `version: "1.0"`, "version: \"1.0\"\n  software-version: \"1.1\"", 1)
		tn.eventuallyApplied(d, tn.publish("gitops", files))
	})
})

func requestReconcile(tn *tenant, d *gitopsv1alpha1.OsmDeployment, value string) {
	tn.update(d, func(o *gitopsv1alpha1.OsmDeployment) {
		if o.Annotations == nil {
			o.Annotations = map[string]string{}
		}
		o.Annotations[meta.ReconcileRequestAnnotation] = value
	})
}

// eventuallyGone waits until the object is deleted (its finalizer released).
func (tn *tenant) eventuallyGone(obj client.Object) {
	tn.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(obj), obj))
	}).Should(BeTrue())
}

func findPackage(tn *tenant, descriptorID string) string {
	for _, p := range tn.sim.State().Packages {
		if p.DescriptorID == descriptorID {
			return p.ID
		}
	}
	tn.t.Fatalf("no package %s in OSM", descriptorID)
	return ""
}

func conditionList(d *gitopsv1alpha1.OsmDeployment) []string {
	var out []string
	for _, c := range d.Status.Conditions {
		out = append(out, c.Type+"="+string(c.Status))
	}
	return out
}

// countRequests counts the requests the tenant's NBI received for "METHOD route", whatever
// their answer.
func (tn *tenant) countRequests(methodRoute string) int64 {
	return countAnswered(tn.sim, methodRoute, 0)
}

// countAnswered counts the requests of methodRoute ("GET /osm/...") that sim answered with
// status, or with any status when it is 0, from its exact counters by route.
func countAnswered(sim *nbisim.Server, methodRoute string, status int) int64 {
	var n int64
	for _, e := range sim.Stats().Endpoints {
		if e.Method+" "+e.Route == methodRoute && (status == 0 || e.Status == status) {
			n += e.Requests
		}
	}
	return n
}

// expectNoUpgradeInThreeDriftChecks waits for three drift checks, each of which reads the
// completed actions once, and checks that the one KDU upgrade sent before stays the only one.
func (tn *tenant) expectNoUpgradeInThreeDriftChecks() {
	tn.t.Helper()
	actionsRead := func() int64 {
		n := int64(0)
		for _, r := range tn.sim.RequestLog() {
			if r.Route == "/osm/nslcm/v1/ns_lcm_op_occs" && strings.Contains(r.Path, "lcmOperationType=action") {
				n++
			}
		}
		return n
	}
	seen := actionsRead()
	tn.g.Eventually(actionsRead).Should(BeNumerically(">=", seen+3))
	tn.g.Expect(tn.countRequests(actionRoute)).To(BeEquivalentTo(1), "KDU upgrades after three drift checks")
}
