//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/devstack"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// A rollout across three OSM sites through Flux, as config/samples/rollout lays it out: one
// GitRepository of NS instances, three simulators (three OSMs) with an OsmCluster each, and the
// three OsmDeployments that kustomize-controller generates from one template in a fleet
// repository, one Flux Kustomization per site: lab, then canary a wave after it, then region a
// wave after canary (dependsOn with revision Same and a bake time, on the real clock).

// rolloutSiteNames are the sites in wave order, each a wave after the one before.
var rolloutSiteNames = []string{"lab", "canary", "region"}

// rolloutBakeTime is each wave's bake time: short, as it passes on the real clock.
const rolloutBakeTime = 5 * time.Second

var _ = Describe("A rollout across three OSM sites", Serial, func() {
	It("walks each commit through the waves in order, halts at a failed canary and completes with the fix", func() {
		t := GinkgoTB()
		ctx := testContext(t)
		g := NewWithT(t)
		sites, repo, seeded := newRollout(ctx, t)
		// The first revision walks as every later one does.
		expectRolledOut(ctx, t, sites, seeded)
		expectWalkedInOrder(ctx, g, sites)

		// A commit: each site starts only once the site before has applied it and baked.
		resetStats(ctx, g, sites)
		walked := commitReplicas(t, repo, "2")
		expectRolledOut(ctx, t, sites, walked)
		expectWalkedInOrder(ctx, g, sites)
		for _, site := range sites {
			g.Expect(kduParams(site.state(ctx, g), ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "2"}), site.Repository)
		}

		// A commit the canary's OSM fails: the lab applies it, the canary fails it, and the
		// region halts on the commit before, naming the canary, and sends nothing to its OSM.
		lab, canary, region := sites[0], sites[1], sites[2]
		failure := nbisim.OperationFailure{
			Operation: "upgrade", NSName: ldapInstanceName, Message: "helm upgrade: UPGRADE FAILED: injected by e2e at the canary", Count: 1,
		}
		g.Expect(canary.sim.FailOperations(ctx, failure)).To(Succeed())
		resetStats(ctx, g, sites)
		failing := commitReplicas(t, repo, "3")
		lab.expectApplied(ctx, t, failing)
		// Polled: the canary applies once the lab baked, then OSM fails the upgrade.
		eventually(ctx, t, func(g Gomega) {
			deployment, err := canary.deployment(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(deployment.Status.LastAttemptedRevision).To(Equal(revision(failing)))
			g.Expect(deployment.Status.Conditions).To(haveCondition(meta.ReadyCondition, metav1.ConditionFalse, gitopsv1alpha1.OperationFailedReason))
			g.Expect(deployment.Status.LastAppliedRevision).To(Equal(revision(walked)))
		})
		// Polled: the canary's failure wakes the region (the operator watches dependencies).
		eventually(ctx, t, func(g Gomega) {
			deployment, err := region.deployment(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(deployment.Status.Conditions).To(haveCondition(meta.StalledCondition, metav1.ConditionTrue, gitopsv1alpha1.RolloutHaltedReason))
			g.Expect(apimeta.FindStatusCondition(deployment.Status.Conditions, meta.ReadyCondition).Message).To(And(
				ContainSubstring("halted by OsmDeployment canary"), ContainSubstring("it failed that revision (OperationFailed)"),
				Not(ContainSubstring(failure.Message))))
			g.Expect(deployment.Status.Rollout).To(PointTo(MatchFields(IgnoreExtras, Fields{
				"Revision": Equal(revision(failing)), "Dependency": Equal("canary"), "Phase": Equal(gitopsv1alpha1.RolloutHalted),
			})))
			g.Expect(deployment.Status.LastAppliedRevision).To(Equal(revision(walked)))
			g.Expect(region.events(ctx, g)).To(ContainElement(And(
				HaveField("Type", corev1.EventTypeWarning),
				HaveField("Reason", gitopsv1alpha1.RolloutHaltedReason),
				HaveField("Message", ContainSubstring("canary")))))
		})
		g.Expect(changes(region.stats(ctx, g))).To(BeZero(), "the halted region must not touch its OSM")
		g.Expect(kduParams(region.state(ctx, g), ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "2"}))

		// The fix starts again at the lab and completes the rollout.
		resetStats(ctx, g, sites)
		fixed := commitReplicas(t, repo, "4")
		expectRolledOut(ctx, t, sites, fixed)
		expectWalkedInOrder(ctx, g, sites)
		for _, site := range sites {
			g.Expect(kduParams(site.state(ctx, g), ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "4"}), site.Repository)
		}
		upgrades := upgradeOperations(canary.state(ctx, g), ldapInstanceName)
		g.Expect(upgrades).To(HaveLen(3))
		g.Expect(upgrades[1:]).To(Equal([]nbisim.OperationState{
			{Type: "action", Primitive: "upgrade", State: "FAILED", ErrorMessage: failure.Message},
			{Type: "action", Primitive: "upgrade", State: "COMPLETED"},
		}))
	})
})

// newRollout sets up the rollout's namespace: a simulator per site, the Git repository of NS
// instances (seeded with the demo repository's first-generation part) and its GitRepository,
// the fleet repository of the OsmDeployments' template and its GitRepository, the credentials
// and values Secrets, an OsmCluster per site and a Flux Kustomization per site. It returns the
// sites in wave order, each a testTenant whose Repository names its OsmDeployment, the Git
// repository and its first commit. The cleanup deletes the Kustomizations (they prune nothing),
// then the OsmDeployments, whose finalizers prune OSM while the simulators still run.
func newRollout(ctx context.Context, t testing.TB) ([]*testTenant, *devstack.Repo, string) {
	t.Helper()
	namespace := tenantName(t.Name(), tenantSeq.Add(1))
	repo := createRepo(t, namespace)
	seeded, err := repo.Commit(firstGenerationDemo(t), "Seed from the demo repository's first-generation part")
	if err != nil {
		t.Fatal(err)
	}
	fleet := createRepo(t, namespace+"-fleet")
	if _, err := fleet.Commit(map[string]string{"sites/osmdeployment.yaml": fmt.Sprintf(`apiVersion: gitops.osmops.io/v1alpha1
kind: OsmDeployment
metadata: {name: "${site}", namespace: %s}
spec:
  sourceRef: {kind: GitRepository, name: %s}
  clusterRef: {name: "${site}"}
  prune: true
`, namespace, repo.Name())}, "The OsmDeployment of every site"); err != nil {
		t.Fatal(err)
	}

	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		osmtenant.CredentialsSecret(namespace, devstack.SimulatorUsername, devstack.SimulatorPassword),
		osmtenant.ValuesSecret(namespace, devstack.DemoValuesSecret, map[string]string{devstack.DemoValuesKey: devstack.DemoAdminPassword}),
	}
	for _, source := range []*devstack.Repo{repo, fleet} {
		objects = append(objects, &sourcev1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: source.Name()},
			Spec: sourcev1.GitRepositorySpec{
				URL:       source.URL(),
				Interval:  metav1.Duration{Duration: sourceInterval},
				Reference: &sourcev1.GitRepositoryRef{Branch: devstack.DefaultBranch},
			},
		})
	}
	var sites []*testTenant
	var kustomizations []client.Object
	for i, name := range rolloutSiteNames {
		sim := startSimulator(ctx, t, namespace+"-"+name)
		cluster := osmtenant.Cluster(namespace, sim.URL())
		cluster.Name = name
		objects = append(objects, cluster)
		sites = append(sites, &testTenant{Tenant: devstack.Tenant{Namespace: namespace, Repository: name}, repo: repo, sim: sim, seeded: seeded})
		kustomizations = append(kustomizations, siteKustomization(t, namespace, fleet.Name(), name, rolloutSiteNames[:i]))
	}
	if err := devstack.Apply(ctx, stack.Client(), append(objects, kustomizations...)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, obj := range kustomizations {
			deleteAndWait(ctx, t, obj)
		}
		for _, site := range sites {
			deleteAndWait(ctx, t, &gitopsv1alpha1.OsmDeployment{ObjectMeta: site.objectMeta(site.Repository)})
		}
		for _, source := range []*devstack.Repo{repo, fleet} {
			deleteAndWait(ctx, t, &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: source.Name()}})
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			for _, site := range sites {
				site.dump(ctx, t)
			}
		}
	})
	return sites, repo, seeded
}

// siteKustomization is the Flux Kustomization that generates the OsmDeployment of site from the
// fleet repository's template: its name substituted, and, after the first wave, a dependsOn on
// the site before it with revision Same and the bake time (config/samples/rollout's patch).
func siteKustomization(t testing.TB, namespace, fleet, site string, before []string) client.Object {
	t.Helper()
	patches := ""
	if len(before) > 0 {
		patches = fmt.Sprintf(`  patches:
  - target: {kind: OsmDeployment}
    patch: |
      - op: add
        path: /spec/dependsOn
        value: [{name: %s, revision: Same, bakeTime: %s}]
`, before[len(before)-1], rolloutBakeTime)
	}
	objects := objectsFromYAML(t, fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: site-%s, namespace: %s}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: %s}
  path: ./sites
  prune: false
  postBuild:
    substitute: {site: %s}
%s`, site, namespace, fleet, site, patches))
	return objects[0]
}

// commitReplicas commits the NS instance ldap with replicaCount replicas.
func commitReplicas(t testing.TB, repo *devstack.Repo, replicas string) string {
	t.Helper()
	sha, err := repo.Commit(map[string]string{ldapFile: ldapInstance(ldapInstanceName, replicas)}, "Scale LDAP to "+replicas)
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

// expectRolledOut waits until every site has applied the commit sha and is Ready, in wave order:
// each wait is bounded on its own, as each site starts only after the one before.
func expectRolledOut(ctx context.Context, t testing.TB, sites []*testTenant, sha string) {
	t.Helper()
	for _, site := range sites {
		site.expectApplied(ctx, t, sha)
	}
}

// resetStats empties every site's request log and counters.
func resetStats(ctx context.Context, g *WithT, sites []*testTenant) {
	for _, site := range sites {
		g.Expect(site.sim.ResetStats(ctx)).To(Succeed())
	}
}

// expectWalkedInOrder checks, from what each site's OSM received since its request log was last
// emptied, that the last revision walked through the sites in wave order: each site's first
// change to its OSM came after the one of the site before, and no sooner than the bake time
// after that site became Ready on the revision (status.readySince, which is written in whole
// seconds, rounded down).
func expectWalkedInOrder(ctx context.Context, g *WithT, sites []*testTenant) {
	var before time.Time
	for i, site := range sites {
		first := firstChange(ctx, g, site.sim)
		g.Expect(first).To(BeTemporally(">", before), "%s changed its OSM before %s did", site.Repository, sites[max(i-1, 0)].Repository)
		if i > 0 {
			previous, err := sites[i-1].deployment(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(previous.Status.ReadySince).NotTo(BeNil(), "%s has no readySince", previous.Name)
			g.Expect(first).To(BeTemporally(">=", previous.Status.ReadySince.Add(rolloutBakeTime)),
				"%s changed its OSM before %s baked", site.Repository, previous.Name)
		}
		before = first
	}
}

// firstChange returns when the simulator received its first request that changes OSM (less
// logging in and out) since its request log was last emptied.
func firstChange(ctx context.Context, g *WithT, sim *devstack.Simulator) time.Time {
	requests, err := sim.RequestLog(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	for _, r := range requests {
		if r.Method != http.MethodGet && !strings.HasPrefix(r.Route, tokensRoute) {
			return r.Time
		}
	}
	g.Expect(requests).To(BeEmpty(), "%s received no change", sim.Name())
	return time.Time{}
}
