package controller

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// eventsWith returns the object's events of one type and reason, as "Type Reason: Message".
func eventsWith(namespace, name, eventType, reason string) []string {
	var out []string
	for _, e := range recorder.of(namespace, name) {
		if e.Type == eventType && e.Reason == reason {
			out = append(out, e.Type+" "+e.Reason+": "+e.Message)
		}
	}
	return out
}

// reconciles returns how many reconciles of the OsmDeployment ended, from the
// osmops_reconcile_duration_seconds histogram.
func (tn *tenant) reconciles(d *gitopsv1alpha1.OsmDeployment) uint64 {
	families, err := ctrlmetrics.Registry.Gather()
	tn.g.Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "osmops_reconcile_duration_seconds" {
			continue
		}
		for _, m := range f.Metric {
			if l := metricLabels(m); l["namespace"] == d.Namespace && l["name"] == d.Name {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}

var _ = Describe("What kubectl shows", func() {
	It("suspended deployment says so and resumes", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.appliedDeployment([]string{"ldap"})
		revision := tn.get(d).Status.LastAppliedRevision

		tn.update(d, func(o *gitopsv1alpha1.OsmDeployment) { o.Spec.Suspend = true })
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("True "+gitopsv1alpha1.SuspendedReason+": reconciliation suspended"),
			ContainSubstring("last observation: Applied revision: "+revision)))
		got := tn.get(d)
		tn.g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation), "kstatus must not see it in progress")
		tn.g.Expect(conditionList(got)).NotTo(ContainElement(HavePrefix(meta.ReconcilingCondition)))
		tn.g.Expect(kstatusOf(tn, d)).To(Equal(status.CurrentStatus))
		tn.g.Expect(eventsWith(d.Namespace, d.Name, corev1.EventTypeNormal, gitopsv1alpha1.SuspendedReason)).To(HaveLen(1))

		// Another spec change while suspended: one event, whatever the reconciles.
		tn.update(d, func(o *gitopsv1alpha1.OsmDeployment) { o.Spec.Prune = false })
		tn.g.Eventually(func() int64 { g := tn.get(d); return g.Generation - g.Status.ObservedGeneration }).Should(BeZero())
		tn.g.Expect(eventsWith(d.Namespace, d.Name, corev1.EventTypeNormal, gitopsv1alpha1.SuspendedReason)).To(HaveLen(1))

		tn.update(d, func(o *gitopsv1alpha1.OsmDeployment) { o.Spec.Suspend = false })
		tn.g.Eventually(func() []string {
			return eventsWith(d.Namespace, d.Name, corev1.EventTypeNormal, gitopsv1alpha1.ResumedReason)
		}).Should(HaveLen(1))
		tn.eventuallyCondition(d, meta.ReadyCondition, Equal("True "+gitopsv1alpha1.AppliedReason+": Applied revision: "+revision))
		tn.g.Expect(tn.get(d).Status.LastAppliedRevisionShort).To(Equal(gitopsv1alpha1.ShortRevision(revision)))
	})

	// A suspended OsmDeployment that is not Ready will not become so: kstatus reads it Failed
	// (Stalled, reason Suspended), not in progress, until it is resumed.
	It("suspended while not ready is not in progress", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = true })
		tn.eventuallyCondition(d, meta.ReadyCondition, HavePrefix("Unknown "+gitopsv1alpha1.SuspendedReason+": "))
		tn.g.Expect(tn.condition(d, meta.StalledCondition)).To(HavePrefix("True " + gitopsv1alpha1.SuspendedReason + ": "))
		tn.g.Expect(kstatusOf(tn, d)).To(Equal(status.FailedStatus))

		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		tn.update(d, func(o *gitopsv1alpha1.OsmDeployment) { o.Spec.Suspend = false })
		tn.eventuallyApplied(d, revision)
		tn.g.Expect(tn.condition(d, meta.StalledCondition)).To(BeEmpty())
		tn.g.Expect(kstatusOf(tn, d)).To(Equal(status.CurrentStatus))
	})

	// Every Waiting reason reads "waiting for <kind> <name>: <why>", in the condition and in one
	// Warning event, which is not emitted again while the wait is the same.
	It("waiting reasons read alike with one event each", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		fast := func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.RetryInterval = &metav1.Duration{Duration: 20 * time.Millisecond}
		}
		noCluster := tn.deployment("no-cluster", "gitops", fast, func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = "missing" })
		noSource := tn.deployment("no-source", "missing", fast)
		for _, c := range []struct {
			d      *gitopsv1alpha1.OsmDeployment
			reason string
			want   string
		}{
			{noCluster, gitopsv1alpha1.ClusterNotReadyReason, "waiting for OsmCluster missing: not found"},
			{noSource, gitopsv1alpha1.SourceNotReadyReason, "waiting for GitRepository missing: not found"},
		} {
			tn.eventuallyCondition(c.d, meta.ReadyCondition, Equal(fmt.Sprintf("False %s: %s", c.reason, c.want)))
			tn.eventuallyCondition(c.d, meta.ReconcilingCondition, Equal(fmt.Sprintf("True %s: %s", c.reason, c.want)))
			seen := tn.reconciles(c.d)
			tn.g.Eventually(func() uint64 { return tn.reconciles(c.d) }).Should(BeNumerically(">=", seen+5))
			tn.g.Expect(eventsWith(c.d.Namespace, c.d.Name, corev1.EventTypeWarning, c.reason)).To(Equal([]string{
				fmt.Sprintf("Warning %s: %s", c.reason, c.want)}))
		}

		// A new wait is a new event.
		tn.update(noCluster, func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = tn.cluster.Name })
		tn.g.Eventually(func() []string {
			return eventsWith(noCluster.Namespace, noCluster.Name, corev1.EventTypeWarning, gitopsv1alpha1.SourceNotReadyReason)
		}).Should(Equal([]string{"Warning SourceNotReady: waiting for GitRepository gitops: not found"}))
	})

	// A new OsmDeployment waits, at first, for its OsmCluster to be checked and for its source's
	// first artifact: waits that end by themselves, told in Normal events (Flux's
	// DependencyNotReady), never with an empty reason; a Warning is for what a person must mend.
	It("a new deployment's first waits are Normal", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		// The new OsmCluster's NBI answers once the gate opens: until then it is being checked.
		gate := make(chan struct{})
		var opened sync.Once
		open := func() { opened.Do(func() { close(gate) }) }
		gated := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-gate
			tn.sim.ServeHTTP(w, r)
		}))
		DeferCleanup(gated.Close)
		DeferCleanup(open)
		late := osmtenant.Cluster(tn.namespace, gated.URL)
		late.Name = "late"
		tn.g.Expect(k8sClient.Create(tn.ctx, late)).To(Succeed())
		tn.setArtifact("gitops", nil)
		d := tn.deployment("newcomer", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = late.Name })

		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False ClusterNotReady: waiting for OsmCluster late: "),
			Or(HavePrefix("False ClusterNotReady: waiting for OsmCluster late: not Ready: "), HaveSuffix("not checked yet by its controller")),
			Not(HaveSuffix(": "))))
		open()
		tn.eventuallyCondition(d, meta.ReadyCondition, Equal("False SourceNotReady: waiting for GitRepository gitops: no artifact yet"))
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		tn.g.Expect(eventsWith(d.Namespace, d.Name, corev1.EventTypeNormal, gitopsv1alpha1.SourceNotReadyReason)).To(Equal([]string{
			"Normal SourceNotReady: waiting for GitRepository gitops: no artifact yet"}))
		tn.g.Expect(eventsWith(d.Namespace, d.Name, corev1.EventTypeNormal, gitopsv1alpha1.ClusterNotReadyReason)).NotTo(BeEmpty())
		var warnings []recordedEvent
		for _, e := range recorder.of(d.Namespace, d.Name) {
			if e.Type == corev1.EventTypeWarning {
				warnings = append(warnings, e)
			}
		}
		tn.g.Expect(warnings).To(BeEmpty())
	})

	// An OsmCluster whose deletion waits names the OsmDeployments that hold it, a few of them.
	It("cluster deletion names its holders", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		for i := 1; i <= maxEventNames+2; i++ {
			tn.deployment(fmt.Sprintf("user-%02d", i), "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = true })
		}
		tn.g.Eventually(func() int32 {
			got := &gitopsv1alpha1.OsmCluster{}
			_ = k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(tn.cluster), got)
			return got.Status.Deployments
		}).Should(BeEquivalentTo(maxEventNames + 2))

		tn.g.Expect(k8sClient.Delete(tn.ctx, tn.cluster)).To(Succeed())
		want := "deletion waiting for OsmDeployment user-01, user-02, user-03, user-04, user-05, user-06, user-07, user-08, " +
			"user-09, user-10 and 2 more: 12 OsmDeployment(s) still use this OsmCluster"
		tn.g.Expect(tn.clusterReason(tn.cluster, metav1.ConditionFalse, gitopsv1alpha1.InUseReason)).To(Equal(want))
		tn.g.Eventually(func() []recordedEvent { return recorder.of(tn.namespace, tn.cluster.Name) }).Should(
			ContainElement(recordedEvent{Namespace: tn.namespace, Name: tn.cluster.Name, Type: corev1.EventTypeWarning,
				Reason: gitopsv1alpha1.InUseReason, Message: want}))
	})
})
