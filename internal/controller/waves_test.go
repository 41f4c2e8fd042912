package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// waveClock is the clock of the suite's reconcilers (setupReconcilersWith): bake times pass when
// a spec steps it, never by themselves.
var waveClock = testingclock.NewFakePassiveClock(time.Now())

// site is one OSM of a rollout: a simulator, its OsmCluster, and the OsmDeployment that applies
// the repository to it.
type site struct {
	sim *nbisim.Server
	d   *gitopsv1alpha1.OsmDeployment
}

// newSite makes an OSM of its own (a simulator, and an OsmCluster named name) and the
// OsmDeployment name applying source to it, a wave after the sites named in after (revision
// Same, with bake).
func (tn *tenant) newSite(name, source string, bake time.Duration, after ...string) *site {
	tn.t.Helper()
	sim, server := tn.anotherNBI()
	cluster := tn.newCluster(name, server.URL, osmtenant.SecretName)
	tn.g.Expect(osmtenant.WaitClusterReady(tn.ctx, k8sClient, cluster, eventuallyTimeout)).To(Succeed())
	d := tn.deployment(name, source, func(d *gitopsv1alpha1.OsmDeployment) {
		d.Spec.ClusterRef.Name = name
		for _, dep := range after {
			ref := gitopsv1alpha1.DependencyReference{Name: dep, Revision: gitopsv1alpha1.DependencyRevisionSame}
			if bake > 0 {
				ref.BakeTime = &metav1.Duration{Duration: bake}
			}
			d.Spec.DependsOn = append(d.Spec.DependsOn, ref)
		}
	})
	return &site{sim: sim, d: d}
}

// replicaCount is what the site's OSM runs: the replicaCount of its NS instance ldap.
func (s *site) replicaCount() string {
	for _, ns := range s.sim.State().NSInstances {
		if ns.Name == "ldap" && len(ns.KDUs) > 0 {
			var values map[string]any
			if json.Unmarshal(ns.KDUs[0].Params, &values) == nil {
				return fmt.Sprint(values["replicaCount"])
			}
		}
	}
	return ""
}

// eventuallyHeld waits until the site holds revision back at its dependency in phase, with a
// Ready condition matching message.
func (tn *tenant) eventuallyHeld(s *site, reason string, phase gitopsv1alpha1.RolloutPhase, revision, dependency string, message OmegaMatcher) {
	tn.t.Helper()
	tn.eventuallyCondition(s.d, meta.ReadyCondition, And(HavePrefix("False "+reason+": "), message))
	tn.g.Expect(tn.get(s.d).Status.Rollout).To(PointTo(MatchFields(IgnoreExtras, Fields{
		"Revision": Equal(revision), "Dependency": Equal(dependency), "Phase": Equal(phase),
	})))
}

// eventuallyAttempted waits until the OsmDeployment sent revision to OSM.
func (tn *tenant) eventuallyAttempted(d *gitopsv1alpha1.OsmDeployment, revision string) {
	tn.t.Helper()
	tn.g.Eventually(func() string { return tn.get(d).Status.LastAttemptedRevision }).Should(Equal(revision), func() string { return tn.describe(d) })
}

var _ = Describe("Waves of a rollout (dependsOn with revision Same)", func() {
	// Every spec is one tenant: its namespace, and an OSM of its own for each site (newSite).
	var tn *tenant
	BeforeEach(func() {
		tn = newTenant(GinkgoTB())
	})

	Context("when a commit reaches the sites", func() {
		It("apply one commit wave after wave: lab, canary, then the regions", func() {
			By("applying the first commit at every site")
			first := tn.publish("gitops", demoRepo("1", "ldap"))
			lab := tn.newSite("lab", "gitops", 0)
			canary := tn.newSite("canary", "gitops", 0, "lab")
			regions := []*site{tn.newSite("region-a", "gitops", 0, "canary"), tn.newSite("region-b", "gitops", 0, "canary")}
			for _, s := range append([]*site{lab, canary}, regions...) {
				tn.eventuallyApplied(s.d, first)
				s.sim.ResetStats()
			}

			By("publishing a second commit while the lab's and the canary's OSM hold their operations")
			lab.sim.HoldOperations()
			canary.sim.HoldOperations()
			second := tn.publish("gitops", demoRepo("2", "ldap"))
			tn.eventuallyAttempted(lab.d, second)
			tn.eventuallyHeld(canary, gitopsv1alpha1.WaitingForWaveReason, gitopsv1alpha1.RolloutWaiting, second, "lab",
				ContainSubstring("waiting for OsmDeployment lab: revision "+gitopsv1alpha1.ShortRevision(second)+" not applied yet"))
			for _, s := range regions {
				tn.eventuallyHeld(s, gitopsv1alpha1.WaitingForWaveReason, gitopsv1alpha1.RolloutWaiting, second, "canary",
					ContainSubstring("waiting for OsmDeployment canary: revision "+gitopsv1alpha1.ShortRevision(second)+" not applied yet"))
			}
			tn.g.Expect(canary.sim.Stats().MutatingRequests).To(BeZero(), "the canary before the lab")

			By("letting the lab's operations end: the canary's wave starts, the regions' not yet")
			lab.sim.ReleaseOperations()
			tn.eventuallyApplied(lab.d, second)
			tn.eventuallyAttempted(canary.d, second)
			for _, s := range regions {
				tn.g.Expect(s.sim.Stats().MutatingRequests).To(BeZero(), "a region before the canary")
				tn.g.Expect(s.replicaCount()).To(Equal("1"))
			}
			By("letting the canary's operations end: the regions follow")
			canary.sim.ReleaseOperations()
			for _, s := range append([]*site{canary}, regions...) {
				got := tn.eventuallyApplied(s.d, second)
				tn.g.Expect(got.Status.Rollout).To(BeNil())
				tn.g.Expect(s.replicaCount()).To(Equal("2"))
			}
		})

		// A site whose wave passed says that it applies the revision, not the wait it left, while
		// its own OSM operations run (kubectl get: Progressing; osmops rollout: Applying, as
		// status.rollout is gone), and follows them to their end whatever its dependency does
		// meanwhile: the wave let the revision through once.
		It("shows the second site of three Progressing, not WaitingForWave, while its own operation runs", func() {
			first, lab, canary, region := tn.threeSitesApplied()

			lab.sim.HoldOperations()
			canary.sim.HoldOperations()
			second := tn.publish("gitops", demoRepo("2", "ldap"))
			short := gitopsv1alpha1.ShortRevision(second)
			tn.eventuallyHeld(canary, gitopsv1alpha1.WaitingForWaveReason, gitopsv1alpha1.RolloutWaiting, second, "lab",
				ContainSubstring("revision "+short+" not applied yet"))
			lab.sim.ReleaseOperations()
			tn.eventuallyApplied(lab.d, second)
			tn.eventuallyAttempted(canary.d, second)
			tn.eventuallyCondition(canary.d, meta.ReadyCondition,
				And(HavePrefix("Unknown "+meta.ProgressingReason+": "), ContainSubstring("OSM operation(s) of "+second)))
			tn.g.Expect(tn.condition(canary.d, meta.ReconcilingCondition)).To(HavePrefix("True " + meta.ProgressingReason + ": "))
			tn.g.Expect(tn.get(canary.d).Status.Rollout).To(BeNil(), tn.describe(canary.d))
			tn.eventuallyHeld(region, gitopsv1alpha1.WaitingForWaveReason, gitopsv1alpha1.RolloutWaiting, second, "canary",
				HaveSuffix("revision "+short+" not applied yet (it runs "+gitopsv1alpha1.ShortRevision(first)+"; Ready=Unknown Progressing)"))

			// Its dependency gone mid-apply: it still follows its operations (three more polls of
			// them, each a reconcile that judged no wave), then completes the revision.
			tn.g.Expect(k8sClient.Delete(tn.ctx, lab.d)).To(Succeed())
			tn.eventuallyGone(lab.d)
			polls := countAnswered(canary.sim, listOperationsRoute, 0)
			tn.g.Eventually(func() int64 { return countAnswered(canary.sim, listOperationsRoute, 0) }).Should(
				BeNumerically(">=", polls+3), func() string { return tn.describe(canary.d) })
			tn.g.Expect(tn.condition(canary.d, meta.ReadyCondition)).To(HavePrefix("Unknown " + meta.ProgressingReason + ": "))
			canary.sim.ReleaseOperations()
			tn.eventuallyApplied(canary.d, second)
			tn.eventuallyApplied(region.d, second)
			tn.g.Expect(region.replicaCount()).To(Equal("2"))
		})

		// Today's dependsOn (and Argo CD's progressive syncs, Flux's dependsOn) let a wave start on
		// a dependency still Ready on the previous commit: here the lab's source has not fetched
		// the new commit yet.
		It("never starts a wave on a dependency Ready on another revision", func() {
			first := tn.publish("gitops-lab", demoRepo("1", "ldap"))
			tn.publish("gitops-canary", demoRepo("1", "ldap"))
			lab := tn.newSite("lab", "gitops-lab", 0)
			canary := tn.newSite("canary", "gitops-canary", 0, "lab")
			tn.eventuallyApplied(lab.d, first)
			tn.eventuallyApplied(canary.d, first)
			canary.sim.ResetStats()

			second := tn.publish("gitops-canary", demoRepo("2", "ldap"))
			tn.eventuallyHeld(canary, gitopsv1alpha1.WaitingForWaveReason, gitopsv1alpha1.RolloutWaiting, second, "lab",
				ContainSubstring("not applied yet (it runs "+gitopsv1alpha1.ShortRevision(first)+"; Ready=True Applied)"))
			tn.g.Expect(canary.sim.Stats().MutatingRequests).To(BeZero(), tn.describe(canary.d))
			tn.g.Expect(canary.replicaCount()).To(Equal("1"))

			// The same commit, through another source object and another branch: the commit counts.
			labArtifact := artifacts.PublishFiles(tn.namespace+"/gitops-lab", demoRepo("2", "ldap"))
			labArtifact.Revision = "release@" + gitopsv1alpha1.RevisionDigest(second)
			tn.setArtifact("gitops-lab", labArtifact)
			tn.eventuallyApplied(lab.d, labArtifact.Revision)
			tn.eventuallyApplied(canary.d, second)
			tn.g.Expect(canary.replicaCount()).To(Equal("2"))
		})
	})

	Context("with a bake time", func() {
		It("waits for the bake time of the dependency on the revision", func() {
			// status.readySince is stored to the second.
			waveClock.SetTime(time.Now().Truncate(time.Second))
			first := tn.publish("gitops", demoRepo("1", "ldap"))
			lab := tn.newSite("lab", "gitops", 0)
			canary := tn.newSite("canary", "gitops", time.Hour, "lab")
			readySince := tn.eventuallyApplied(lab.d, first).Status.ReadySince
			tn.g.Expect(readySince).NotTo(BeNil())
			tn.eventuallyHeld(canary, gitopsv1alpha1.WaitingForWaveReason, gitopsv1alpha1.RolloutBaking, first, "lab",
				ContainSubstring("waiting for OsmDeployment lab: Ready on revision "+gitopsv1alpha1.ShortRevision(first)))
			tn.g.Expect(tn.condition(canary.d, meta.ReadyCondition)).To(HaveSuffix("bake time 1h0m0s: 1h0m0s left"))
			tn.g.Expect(tn.get(canary.d).Status.Rollout.BakedAt.Time).To(BeTemporally("==", readySince.Add(time.Hour)))
			tn.g.Expect(canary.sim.Stats().MutatingRequests).To(BeZero())

			By("stepping the clock to a minute before the bake's end")
			waveClock.SetTime(readySince.Add(59 * time.Minute))
			requestReconcile(tn, canary.d, "59m")
			tn.eventuallyCondition(canary.d, meta.ReadyCondition, HaveSuffix("bake time 1h0m0s: 1m0s left"))
			tn.g.Expect(canary.sim.Stats().MutatingRequests).To(BeZero())

			By("stepping the clock to the bake's end")
			waveClock.SetTime(readySince.Add(time.Hour))
			requestReconcile(tn, canary.d, "1h")
			tn.eventuallyApplied(canary.d, first)
		})
	})

	Context("when the canary fails or rejects the revision", func() {
		It("halts the regions on a revision the canary failed; the fix commit completes the rollout", func() {
			first := tn.publish("gitops", demoRepo("1", "ldap"))
			canary := tn.newSite("canary", "gitops", 0)
			regions := []*site{tn.newSite("region-a", "gitops", 0, "canary"), tn.newSite("region-b", "gitops", 0, "canary")}
			for _, s := range append([]*site{canary}, regions...) {
				tn.eventuallyApplied(s.d, first)
				s.sim.ResetStats()
			}

			By("failing the canary's upgrade of the second commit")
			tn.g.Expect(canary.sim.FailOperations(nbisim.OperationFailure{Operation: "upgrade", NSName: "ldap", Count: 1,
				Message: "helm upgrade: pods not ready"})).To(Succeed())
			second := tn.publish("gitops", demoRepo("2", "ldap"))
			tn.eventuallyCondition(canary.d, meta.StalledCondition, HavePrefix("True "+gitopsv1alpha1.OperationFailedReason))
			for _, s := range regions {
				halted := "rollout of " + gitopsv1alpha1.ShortRevision(second) + " halted by OsmDeployment canary: " +
					"it failed that revision (OperationFailed); it stays on revision " + gitopsv1alpha1.ShortRevision(first)
				tn.eventuallyHeld(s, gitopsv1alpha1.RolloutHaltedReason, gitopsv1alpha1.RolloutHalted, second, "canary", HaveSuffix(": "+halted))
				tn.g.Expect(tn.condition(s.d, meta.StalledCondition)).To(HavePrefix("True " + gitopsv1alpha1.RolloutHaltedReason))
				tn.g.Expect(recorder.of(s.d.Namespace, s.d.Name)).To(ContainElement(And(
					HaveField("Type", corev1.EventTypeWarning), HaveField("Reason", gitopsv1alpha1.RolloutHaltedReason),
					HaveField("Message", halted))))
				tn.g.Expect(s.sim.Stats().MutatingRequests).To(BeZero())
				tn.g.Expect(s.replicaCount()).To(Equal("1"))
			}

			By("publishing the fix commit")
			fix := tn.publish("gitops", demoRepo("3", "ldap"))
			for _, s := range append([]*site{canary}, regions...) {
				got := tn.eventuallyApplied(s.d, fix)
				tn.g.Expect(got.Status.Rollout).To(BeNil())
				tn.g.Expect(s.replicaCount()).To(Equal("3"))
			}
		})

		// A halt says who failed the revision and why in a few words, built once: the site before
		// names the one that failed it, never embeds its message (kubectl describe, osmops trace
		// show it), and says once what the halted site runs.
		It("halts three sites with messages that name the failed site once, unnested", func() {
			first, lab, canary, region := tn.threeSitesApplied()

			const osmSays = "helm upgrade: pods not ready"
			tn.g.Expect(lab.sim.FailOperations(nbisim.OperationFailure{Operation: "upgrade", NSName: "ldap", Count: 1,
				Message: osmSays})).To(Succeed())
			second := tn.publish("gitops", demoRepo("2", "ldap"))
			short, stays := gitopsv1alpha1.ShortRevision(second), "; it stays on revision "+gitopsv1alpha1.ShortRevision(first)
			tn.eventuallyCondition(lab.d, meta.StalledCondition, HavePrefix("True "+gitopsv1alpha1.OperationFailedReason))
			canaryHalt := "rollout of " + short + " halted by OsmDeployment lab: it failed that revision (OperationFailed)" + stays
			tn.eventuallyHeld(canary, gitopsv1alpha1.RolloutHaltedReason, gitopsv1alpha1.RolloutHalted, second, "lab", HaveSuffix(": "+canaryHalt))
			regionHalt := "rollout of " + short + " halted by OsmDeployment canary: it is halted on that revision, " +
				"which OsmDeployment lab failed (OperationFailed)" + stays
			tn.eventuallyHeld(region, gitopsv1alpha1.RolloutHaltedReason, gitopsv1alpha1.RolloutHalted, second, "canary", HaveSuffix(": "+regionHalt))
			got := tn.condition(region.d, meta.ReadyCondition)
			tn.g.Expect(strings.Count(got, "OsmDeployment lab")).To(Equal(1), got)
			tn.g.Expect(strings.Count(got, "rollout of")).To(Equal(1), got)
			tn.g.Expect(strings.Count(got, "it stays on")).To(Equal(1), got)
			tn.g.Expect(got).NotTo(ContainSubstring(osmSays))
			tn.g.Expect(recorder.of(region.d.Namespace, region.d.Name)).To(ContainElement(And(
				HaveField("Type", corev1.EventTypeWarning), HaveField("Reason", gitopsv1alpha1.RolloutHaltedReason),
				HaveField("Message", regionHalt))))
			tn.g.Expect(region.sim.Stats().MutatingRequests).To(BeZero())
		})

		// The canary's failed upgrade is remediated (retried, then put back to what it last ran):
		// while it retries the regions wait; once its remediation is exhausted they halt, and the
		// canary runs its previous values again, as the regions do.
		It("halts the regions while remediation puts the canary back", func() {
			first := tn.publish("gitops", demoRepo("1", "ldap"))
			canary := tn.newSite("canary", "gitops", 0)
			region := tn.newSite("region-a", "gitops", 0, "canary")
			tn.update(canary.d, func(d *gitopsv1alpha1.OsmDeployment) {
				d.Spec.Upgrade = &gitopsv1alpha1.Upgrade{Remediation: &gitopsv1alpha1.UpgradeRemediation{Retries: 1}}
			})
			for _, s := range []*site{canary, region} {
				tn.eventuallyApplied(s.d, first)
				s.sim.ResetStats()
			}

			// The upgrade and its retry fail; the rollback goes through.
			tn.g.Expect(canary.sim.FailOperations(nbisim.OperationFailure{Operation: "upgrade", NSName: "ldap", Count: 2,
				Message: "helm upgrade: pods not ready"})).To(Succeed())
			second := tn.publish("gitops", demoRepo("2", "ldap"))
			tn.eventuallyCondition(canary.d, meta.StalledCondition, HavePrefix("True "+gitopsv1alpha1.RemediationExhaustedReason))
			tn.g.Eventually(func() gitopsv1alpha1.NsInstanceEntry { return tn.entryOf(canary.d, "ldap") }).Should(
				HaveField("RolledBack", true), func() string { return tn.describe(canary.d) })
			tn.g.Eventually(canary.replicaCount).Should(Equal("1"), "the canary runs the values it last ran")
			tn.eventuallyHeld(region, gitopsv1alpha1.RolloutHaltedReason, gitopsv1alpha1.RolloutHalted, second, "canary", And(
				ContainSubstring("halted by OsmDeployment canary: it failed that revision ("+gitopsv1alpha1.RemediationExhaustedReason+")"),
				HaveSuffix("it stays on revision "+gitopsv1alpha1.ShortRevision(first))))
			tn.g.Expect(region.sim.Stats().MutatingRequests).To(BeZero())
			tn.g.Expect(region.replicaCount()).To(Equal("1"))

			By("publishing the fix commit")
			fix := tn.publish("gitops", demoRepo("3", "ldap"))
			for _, s := range []*site{canary, region} {
				got := tn.eventuallyApplied(s.d, fix)
				tn.g.Expect(got.Status.Rollout).To(BeNil())
				tn.g.Expect(s.replicaCount()).To(Equal("3"))
			}
		})

		// A health gate is part of the revision: the canary's smoke test not passing within
		// healthCheckTimeout fails the revision there, and the regions stay on the previous one.
		It("halts the regions on a revision whose health check timed out at the canary", func() {
			smoke := tn.smokeTest("passed")
			first := tn.publish("gitops", demoRepo("1", "ldap"))
			canary := tn.newSite("canary", "gitops", 0)
			tn.update(canary.d, func(d *gitopsv1alpha1.OsmDeployment) {
				gatedBySmokeTest(d)
				d.Spec.HealthCheckTimeout = &metav1.Duration{Duration: time.Millisecond}
			})
			regions := []*site{tn.newSite("region-a", "gitops", 0, "canary"), tn.newSite("region-b", "gitops", 0, "canary")}
			for _, s := range append([]*site{canary}, regions...) {
				tn.eventuallyApplied(s.d, first)
				s.sim.ResetStats()
			}

			// The smoke test of the new revision starts once OSM has it, and never passes.
			canary.sim.HoldOperations()
			second := tn.publish("gitops", demoRepo("2", "ldap"))
			tn.eventuallyAttempted(canary.d, second)
			tn.setResult(smoke, "running")
			canary.sim.ReleaseOperations()
			tn.eventuallyCondition(canary.d, meta.StalledCondition, HavePrefix("True "+gitopsv1alpha1.HealthCheckFailedReason))
			tn.g.Expect(tn.get(canary.d).Status.LastAppliedRevision).To(Equal(second))
			for _, s := range regions {
				tn.eventuallyHeld(s, gitopsv1alpha1.RolloutHaltedReason, gitopsv1alpha1.RolloutHalted, second, "canary", And(
					ContainSubstring("rollout of "+gitopsv1alpha1.ShortRevision(second)+" halted by OsmDeployment canary: "+
						"it failed that revision ("+gitopsv1alpha1.HealthCheckFailedReason+")"),
					HaveSuffix("it stays on revision "+gitopsv1alpha1.ShortRevision(first))))
				tn.g.Expect(s.sim.Stats().MutatingRequests).To(BeZero())
				tn.g.Expect(s.replicaCount()).To(Equal("1"))
			}
		})

		// An artifact the canary rejects (its digest does not match), or a revision it finds
		// invalid, is a revision it failed before anything reached OSM: the regions halt, they do
		// not wait for it forever.
		It("halts the regions on a revision whose artifact the canary rejected, or found invalid", func() {
			first := tn.publish("gitops", demoRepo("1", "ldap"))
			canary := tn.newSite("canary", "gitops", 0)
			region := tn.newSite("region-a", "gitops", 0, "canary")
			for _, s := range []*site{canary, region} {
				tn.eventuallyApplied(s.d, first)
				s.sim.ResetStats()
			}

			bad := artifacts.PublishFiles(tn.namespace+"/gitops", demoRepo("2", "ldap"))
			bad.Digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
			tn.setArtifact("gitops", bad)
			tn.eventuallyCondition(canary.d, meta.StalledCondition, HavePrefix("True "+gitopsv1alpha1.ArtifactFailedReason))
			tn.eventuallyHeld(region, gitopsv1alpha1.RolloutHaltedReason, gitopsv1alpha1.RolloutHalted, bad.Revision, "canary", And(
				ContainSubstring("rollout of "+gitopsv1alpha1.ShortRevision(bad.Revision)+" halted by OsmDeployment canary: "+
					"it failed that revision ("+gitopsv1alpha1.ArtifactFailedReason+")"),
				HaveSuffix("it stays on revision "+gitopsv1alpha1.ShortRevision(first))))
			tn.g.Expect(region.sim.Stats().MutatingRequests).To(BeZero())

			// So does a revision the canary found invalid.
			files := demoRepo("2", "ldap")
			files["deploy/broken.osmops.yaml"] = "kind: NsInstance\nname: broken\nnsdName: [openldap_ns]\n"
			invalid := tn.publish("gitops", files)
			tn.eventuallyCondition(canary.d, meta.StalledCondition, HavePrefix("True "+gitopsv1alpha1.ValidationFailedReason))
			tn.eventuallyHeld(region, gitopsv1alpha1.RolloutHaltedReason, gitopsv1alpha1.RolloutHalted, invalid, "canary",
				ContainSubstring("rollout of "+gitopsv1alpha1.ShortRevision(invalid)+" halted by OsmDeployment canary: "+
					"it failed that revision ("+gitopsv1alpha1.ValidationFailedReason+")"))
			tn.g.Expect(region.sim.Stats().MutatingRequests).To(BeZero())

			By("publishing the fix commit")
			fix := tn.publish("gitops", demoRepo("3", "ldap"))
			for _, s := range []*site{canary, region} {
				got := tn.eventuallyApplied(s.d, fix)
				tn.g.Expect(got.Status.Rollout).To(BeNil())
				tn.g.Expect(s.replicaCount()).To(Equal("3"))
			}
		})

		// A revision rejected while OSM operations of the previous one run does not take their
		// place: mended, it is sent to OSM, never marked applied by their end.
		It("applies a rejected revision once mended, though it was rejected while operations ran", func() {
			first := tn.publish("gitops", demoRepo("1", "ldap"))
			canary := tn.newSite("canary", "gitops", 0)
			region := tn.newSite("region-a", "gitops", 0, "canary")
			tn.eventuallyApplied(canary.d, first)

			canary.sim.HoldOperations()
			second := tn.publish("gitops", demoRepo("2", "ldap"))
			tn.eventuallyAttempted(canary.d, second)
			bad := artifacts.PublishFiles(tn.namespace+"/gitops", demoRepo("3", "ldap"))
			good := *bad
			bad.Digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
			tn.setArtifact("gitops", bad)
			tn.eventuallyCondition(canary.d, meta.StalledCondition, HavePrefix("True "+gitopsv1alpha1.ArtifactFailedReason))
			tn.g.Expect(tn.get(canary.d).Status.LastAttemptedRevision).To(Equal(second), "the operations in flight are the second revision's")
			canary.sim.ReleaseOperations()

			tn.setArtifact("gitops", &good)
			tn.eventuallyApplied(canary.d, good.Revision)
			tn.g.Expect(canary.replicaCount()).To(Equal("3"), tn.describe(canary.d))
			tn.eventuallyApplied(region.d, good.Revision)
			tn.g.Expect(region.replicaCount()).To(Equal("3"))
		})
	})

	Context("when a site is suspended or deleted", func() {
		// Suspended, a site waits for nothing: it reports no rollout wait (status.rollout, the
		// gauge) until it is resumed and judges the wave again.
		It("reports no rollout wait of a suspended site", func() {
			first := tn.publish("gitops", demoRepo("1", "ldap"))
			lab := tn.newSite("lab", "gitops", 0)
			canary := tn.newSite("canary", "gitops", 0, "lab")
			tn.eventuallyApplied(lab.d, first)
			tn.eventuallyApplied(canary.d, first)

			lab.sim.HoldOperations()
			second := tn.publish("gitops", demoRepo("2", "ldap"))
			tn.eventuallyAttempted(lab.d, second)
			waiting := ContainSubstring("waiting for OsmDeployment lab: revision " + gitopsv1alpha1.ShortRevision(second) + " not applied yet")
			tn.eventuallyHeld(canary, gitopsv1alpha1.WaitingForWaveReason, gitopsv1alpha1.RolloutWaiting, second, "lab", waiting)
			tn.g.Eventually(func() float64 { return rolloutHeld(canary.d, gitopsv1alpha1.RolloutWaiting) }).Should(Equal(1.0))

			By("suspending the waiting canary")
			tn.update(canary.d, func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = true })
			tn.eventuallyCondition(canary.d, meta.ReadyCondition, HavePrefix("False "+gitopsv1alpha1.SuspendedReason))
			tn.g.Expect(tn.get(canary.d).Status.Rollout).To(BeNil(), tn.describe(canary.d))
			tn.g.Eventually(func() float64 { return rolloutHeld(canary.d, gitopsv1alpha1.RolloutWaiting) }).Should(BeZero())

			By("resuming it")
			tn.update(canary.d, func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = false })
			tn.eventuallyHeld(canary, gitopsv1alpha1.WaitingForWaveReason, gitopsv1alpha1.RolloutWaiting, second, "lab", waiting)
			lab.sim.ReleaseOperations()
			tn.eventuallyApplied(canary.d, second)
		})

		It("lets the dependents of a site deleted mid-rollout wait for it", func() {
			first := tn.publish("gitops", demoRepo("1", "ldap"))
			lab := tn.newSite("lab", "gitops", 0)
			canary := tn.newSite("canary", "gitops", 0, "lab")
			tn.eventuallyApplied(lab.d, first)
			tn.eventuallyApplied(canary.d, first)
			canary.sim.ResetStats()

			lab.sim.HoldOperations()
			second := tn.publish("gitops", demoRepo("2", "ldap"))
			tn.eventuallyAttempted(lab.d, second)
			By("deleting the lab while its operations run")
			tn.g.Expect(k8sClient.Delete(tn.ctx, lab.d)).To(Succeed())
			lab.sim.ReleaseOperations()
			tn.eventuallyGone(lab.d)
			tn.eventuallyHeld(canary, gitopsv1alpha1.WaitingForWaveReason, gitopsv1alpha1.RolloutWaiting, second, "lab",
				HaveSuffix("waiting for OsmDeployment lab: not found"))
			tn.g.Expect(canary.sim.Stats().MutatingRequests).To(BeZero())

			By("making the lab again")
			lab.d = tn.deployment("lab", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = "lab" })
			tn.eventuallyApplied(lab.d, second)
			tn.eventuallyApplied(canary.d, second)
			tn.g.Expect(canary.replicaCount()).To(Equal("2"))
		})
	})
})

// A wave compares what a revision carries, whichever source object, branch or tag announced it.
func TestSameRevisionComparesTheCommitOrDigest(t *testing.T) {
	const commit, digest = "sha1:4b3b0dc2b1e4c2d0f8a1c3e5b7d9f0a2c4e6b8d0", "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		a, b string
		same bool
	}{
		{"main@" + commit, "main@" + commit, true},
		{"main@" + commit, "release@" + commit, true}, // another branch or GitRepository
		{"v1.2@" + digest, digest, true},              // an OCI tag, and the same artifact pinned by digest
		{digest, digest, true},                        // a Bucket
		{"main@" + commit, "main@sha1:9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b", false},
		{"v1.2@" + digest, "v1.2@sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210", false},
		{"", "", false}, // nothing applied yet
		{"main@" + commit, "", false},
	}
	for _, tc := range tests {
		if got := gitopsv1alpha1.SameRevision(tc.a, tc.b); got != tc.same {
			t.Errorf("gitopsv1alpha1.SameRevision(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

// rolloutHeld is the osmops_rollout_held gauge of the OsmDeployment in phase.
func rolloutHeld(d *gitopsv1alpha1.OsmDeployment, phase gitopsv1alpha1.RolloutPhase) float64 {
	var m dto.Metric
	if err := rollouts.WithLabelValues(d.Namespace, d.Name, string(phase)).Write(&m); err != nil {
		panic(err)
	}
	return m.GetGauge().GetValue()
}

// osmops_rollout_held tells a site held by a wave (Waiting, Baking) from one halted by a
// dependency (Halted), and both from a site that failed the revision itself, which no wave
// holds (all 0: its Ready reason says why).
func TestRolloutHeldGaugeTellsWaitingBakingHaltedAndFailedApart(t *testing.T) {
	held := func(name string, phase gitopsv1alpha1.RolloutPhase) *gitopsv1alpha1.OsmDeployment {
		obj := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "gauge", Name: name}}
		if phase != "" {
			obj.Status.Rollout = &gitopsv1alpha1.RolloutStatus{Revision: "main@sha1:1", Dependency: "canary", Phase: phase}
		}
		return obj
	}
	sites := map[string]gitopsv1alpha1.RolloutPhase{"waiting": gitopsv1alpha1.RolloutWaiting,
		"baking": gitopsv1alpha1.RolloutBaking, "halted": gitopsv1alpha1.RolloutHalted, "failed": ""}
	for name, phase := range sites {
		recordMetrics(held(name, phase), time.Now())
	}
	for name, phase := range sites {
		for _, p := range rolloutPhases {
			want := 0.0
			if p == phase {
				want = 1
			}
			if got := rolloutHeld(held(name, phase), p); got != want {
				t.Errorf("osmops_rollout_held{name=%q, phase=%q} = %v, want %v", name, p, got, want)
			}
		}
	}
}

// TestDependentsOfADependencyAreEnqueued: a dependency's status change reaches the OsmDeployments
// that depend on it, in its namespace or naming it from another, so that a wave starts when its
// dependency is Ready on the revision rather than a dependency interval later.
func TestDependentsOfADependencyAreEnqueued(t *testing.T) {
	g := NewWithT(t)
	deployment := func(namespace, name string, deps ...gitopsv1alpha1.DependencyReference) *gitopsv1alpha1.OsmDeployment {
		return &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: gitopsv1alpha1.OsmDeploymentSpec{DependsOn: deps}}
	}
	lab := deployment("telco", "lab")
	objects := []client.Object{lab,
		deployment("telco", "canary", gitopsv1alpha1.DependencyReference{Name: "lab", Revision: gitopsv1alpha1.DependencyRevisionSame}),
		deployment("region", "region-a", gitopsv1alpha1.DependencyReference{Name: "lab", Namespace: "telco"}),
		deployment("region", "lab", gitopsv1alpha1.DependencyReference{Name: "canary"}),
	}
	c := fake.NewClientBuilder().WithScheme(testScheme).WithIndex(&gitopsv1alpha1.OsmDeployment{}, dependsOnIndex, dependencyKeys).
		WithObjects(objects...).Build()
	r := &OsmDeploymentReconciler{Client: c}
	g.Expect(r.dependentsOf(context.Background(), lab)).To(ConsistOf(
		reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "telco", Name: "canary"}},
		reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "region", Name: "region-a"}}))
}

// TestRolloutStandingChangedPassesWhatMovesAWave: the status changes that let a dependent go on
// or halt it pass; the others (a message, the inventory) wake no dependent.
func TestRolloutStandingChangedPassesWhatMovesAWave(t *testing.T) {
	now := metav1.Now()
	base := func() *gitopsv1alpha1.OsmDeployment {
		d := &gitopsv1alpha1.OsmDeployment{}
		d.Status.LastAppliedRevision = "main@sha1:1"
		d.Status.LastAttemptedRevision = "main@sha1:1"
		d.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason, Message: "applied"}}
		return d
	}
	for name, tc := range map[string]struct {
		change func(*gitopsv1alpha1.OsmDeployment)
		passes bool
	}{
		"nothing":        {func(*gitopsv1alpha1.OsmDeployment) {}, false},
		"a message":      {func(d *gitopsv1alpha1.OsmDeployment) { d.Status.Conditions[0].Message = "still applied" }, false},
		"the NS summary": {func(d *gitopsv1alpha1.OsmDeployment) { d.Status.NsInstancesSummary = "1/1" }, false},
		"readiness":      {func(d *gitopsv1alpha1.OsmDeployment) { d.Status.Conditions[0].Status = metav1.ConditionFalse }, true},
		"Ready's reason": {func(d *gitopsv1alpha1.OsmDeployment) { d.Status.Conditions[0].Reason = "Progressing" }, true},
		"health": {func(d *gitopsv1alpha1.OsmDeployment) {
			conditions.MarkFalse(d, gitopsv1alpha1.HealthyCondition, "HealthCheckFailed", "")
		}, true},
		"the applied revision": {func(d *gitopsv1alpha1.OsmDeployment) { d.Status.LastAppliedRevision = "main@sha1:2" }, true},
		"the attempted one":    {func(d *gitopsv1alpha1.OsmDeployment) { d.Status.LastAttemptedRevision = "main@sha1:2" }, true},
		"readySince":           {func(d *gitopsv1alpha1.OsmDeployment) { d.Status.ReadySince = &now }, true},
		"its own rollout": {func(d *gitopsv1alpha1.OsmDeployment) {
			d.Status.Rollout = &gitopsv1alpha1.RolloutStatus{Phase: gitopsv1alpha1.RolloutHalted}
		}, true},
	} {
		t.Run(name, func(t *testing.T) {
			old, updated := base(), base()
			tc.change(updated)
			if got := (rolloutStandingChanged{}).Update(event.UpdateEvent{ObjectOld: old, ObjectNew: updated}); got != tc.passes {
				t.Errorf("passes %v, want %v", got, tc.passes)
			}
		})
	}
}

// TestBakeCountsOnlyTimeSteadyOnTheRevision: a bake counts only time the dependency was Ready
// and Healthy on the revision without a break. A spell of Healthy False while Ready stayed True
// (OSM reports an NS instance unhealthy at a drift check), over before the dependent looks
// again, restarts it: the dependent judges from status alone, so the spell leaves its mark in
// status.readySince.
func TestBakeCountsOnlyTimeSteadyOnTheRevision(t *testing.T) {
	const revision = "main@sha1:1"
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	dep := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	dep.Status.ObservedGeneration, dep.Status.LastAttemptedRevision, dep.Status.LastAppliedRevision = 1, revision, revision
	write := func(at time.Duration, healthy metav1.ConditionStatus) {
		conditions.MarkTrue(dep, meta.ReadyCondition, gitopsv1alpha1.AppliedReason, "Applied revision: %s", revision)
		conditions.Set(dep, &metav1.Condition{Type: gitopsv1alpha1.HealthyCondition, Status: healthy, Reason: "R", Message: "m"})
		markSteadySince(dep, start.Add(at))
	}
	judge := func(at time.Duration) gitopsv1alpha1.RolloutPhase {
		return judgeWave(dep, revision, time.Hour, start.Add(at)).phase
	}

	write(0, metav1.ConditionTrue)
	if phase := judge(30 * time.Minute); phase != gitopsv1alpha1.RolloutBaking {
		t.Fatalf("30 minutes into the bake: %q, want Baking", phase)
	}
	write(40*time.Minute, metav1.ConditionFalse)
	if phase := judge(41 * time.Minute); phase != gitopsv1alpha1.RolloutWaiting {
		t.Errorf("while not healthy: %q, want Waiting", phase)
	}
	write(50*time.Minute, metav1.ConditionTrue)
	if phase := judge(61 * time.Minute); phase != gitopsv1alpha1.RolloutBaking {
		t.Errorf("an hour after the first healthy write, with a spell of Healthy False in it: %q, want Baking still", phase)
	}
	if phase := judge(110 * time.Minute); phase != "" {
		t.Errorf("an hour after healthy again: %q, want passed", phase)
	}
	write(115*time.Minute, metav1.ConditionUnknown)
	if dep.Status.ReadySince != nil {
		t.Errorf("Healthy Unknown (health checks waited for): readySince %v, want none", dep.Status.ReadySince)
	}
}

// TestNotReadySaysWhy: what a wait says of an object that is not Ready: its own words, or, for
// one its controller has not looked at yet (a new OsmCluster at start), that, never "no reason".
func TestNotReadySaysWhy(t *testing.T) {
	fresh := &gitopsv1alpha1.OsmCluster{}
	if got := notReady(fresh); got != "not checked yet by its controller" {
		t.Errorf("a new object: %q", got)
	}
	failed := &gitopsv1alpha1.OsmCluster{}
	conditions.MarkFalse(failed, meta.ReadyCondition, gitopsv1alpha1.AuthenticationFailedReason, "OSM refused the login")
	if got := notReady(failed); got != "not Ready: OSM refused the login" {
		t.Errorf("a failed object: %q", got)
	}
}

// TestFailedSiteNamesTheSiteThatFailedTheRevision: a halt names the site at the start of the
// halted ones, relative to the halted OsmDeployment, with its Ready reason; a site gone names
// itself not found, and halts gone stale in a cycle end the walk.
func TestFailedSiteNamesTheSiteThatFailedTheRevision(t *testing.T) {
	const revision = "main@sha1:2"
	site := func(namespace, name, haltedBy string) *gitopsv1alpha1.OsmDeployment {
		d := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		if haltedBy != "" {
			d.Status.Rollout = &gitopsv1alpha1.RolloutStatus{Revision: revision, Dependency: haltedBy, Phase: gitopsv1alpha1.RolloutHalted}
			conditions.MarkFalse(d, meta.ReadyCondition, gitopsv1alpha1.RolloutHaltedReason, "halted")
		} else {
			conditions.MarkFalse(d, meta.ReadyCondition, gitopsv1alpha1.OperationFailedReason, "OSM's long message")
		}
		return d
	}
	region := site("telco", "region", "canary")
	objects := []client.Object{site("lab", "lab", ""), site("telco", "canary", "lab/lab"),
		site("telco", "edge", "gone"), site("telco", "a", "b"), site("telco", "b", "a")}
	r := &OsmDeploymentReconciler{Client: fake.NewClientBuilder().WithScheme(testScheme).WithObjects(objects...).Build()}
	for dep, want := range map[string]string{
		"canary": "OsmDeployment lab/lab failed (OperationFailed)",
		"edge":   "OsmDeployment gone failed (not found now)",
		"a":      "OsmDeployment b failed (RolloutHalted)",
	} {
		other := &gitopsv1alpha1.OsmDeployment{}
		if err := r.Get(context.Background(), types.NamespacedName{Namespace: "telco", Name: dep}, other); err != nil {
			t.Fatal(err)
		}
		if got, err := r.failedSite(context.Background(), region, other, revision); err != nil || got != want {
			t.Errorf("halted by %s: %q, %v; want %q", dep, got, err, want)
		}
	}
}

// threeSitesApplied makes the sites lab, canary after lab and region after canary, each of its
// own OSM, without bake times, and waits until each applied the first revision, whose
// counters it then resets.
func (tn *tenant) threeSitesApplied() (first string, lab, canary, region *site) {
	first = tn.publish("gitops", demoRepo("1", "ldap"))
	lab = tn.newSite("lab", "gitops", 0)
	canary = tn.newSite("canary", "gitops", 0, "lab")
	region = tn.newSite("region", "gitops", 0, "canary")
	for _, s := range []*site{lab, canary, region} {
		tn.eventuallyApplied(s.d, first)
		s.sim.ResetStats()
	}
	return first, lab, canary, region
}
