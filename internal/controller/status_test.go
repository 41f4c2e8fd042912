package controller

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

func kstatusOf(tn *tenant, d *gitopsv1alpha1.OsmDeployment) status.Status {
	return kstatusAsIs(tn, tn.get(d))
}

// kstatusAsIs is what kstatus reads of obj as it is, not read again.
func kstatusAsIs(tn *tenant, obj client.Object) status.Status {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	tn.g.Expect(err).NotTo(HaveOccurred())
	result, err := status.Compute(&unstructured.Unstructured{Object: u})
	tn.g.Expect(err).NotTo(HaveOccurred())
	return result.Status
}

var _ = Describe("Status, kstatus and metrics", func() {
	It("status is kstatus compatible", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		tn.sim.HoldOperations()
		d := tn.deployment("ldap", "gitops")
		// As the API server answered the create, before the manager can have written anything:
		// in progress (observedGeneration -1), so that a Flux Kustomization waiting on it does
		// not pass it (without a status kstatus reads Current). The same for an OsmCluster.
		tn.g.Expect(d.Status.ObservedGeneration).To(Equal(int64(-1)))
		tn.g.Expect(kstatusAsIs(tn, d)).To(Equal(status.InProgressStatus))
		cluster := osmtenant.Cluster(tn.namespace, tn.cluster.Spec.URL)
		cluster.Name += "-new"
		cluster.Labels = tn.labels()
		cluster.Spec.CredentialsSecretRef.Name = "absent" // no log in: only its status is of interest
		tn.g.Expect(k8sClient.Create(tn.ctx, cluster)).To(Succeed())
		tn.g.Expect(kstatusAsIs(tn, cluster)).To(Equal(status.InProgressStatus))

		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		tn.g.Eventually(func() []gitopsv1alpha1.OperationEntry { return tn.get(d).Status.Operations }).ShouldNot(BeEmpty())
		tn.g.Expect(kstatusOf(tn, d)).To(Equal(status.InProgressStatus))

		tn.sim.ReleaseOperations()
		tn.eventuallyApplied(d, revision)
		tn.g.Expect(kstatusOf(tn, d)).To(Equal(status.CurrentStatus))

		files := demoRepo("1", "ldap")
		files["deploy/broken.osmops.yaml"] = "kind: Nope\n"
		tn.publish("gitops", files)
		tn.g.Eventually(func() status.Status { return kstatusOf(tn, d) }).Should(Equal(status.FailedStatus))
	})

	// This spec reads the table the API server prints for `kubectl get osmd`.
	It("kubectl get shows columns", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		revision := tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap"))).Status.LastAppliedRevision

		restClient, err := restClientFor(testScheme)
		tn.g.Expect(err).NotTo(HaveOccurred())
		body, err := restClient.Get().AbsPath("/apis/gitops.osmops.io/v1alpha1/namespaces", tn.namespace, "osmdeployments").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
		tn.g.Expect(err).NotTo(HaveOccurred())
		var table metav1.Table
		tn.g.Expect(json.Unmarshal(body, &table)).To(Succeed())
		var columns []string
		for _, c := range table.ColumnDefinitions {
			columns = append(columns, c.Name)
		}
		tn.g.Expect(columns).To(Equal([]string{"Name", "Ready", "Status", "Revision", "NS", "Age", "Cluster", "Attempted", "Suspended"}))
		tn.g.Expect(table.Rows).To(HaveLen(1))
		cells := table.Rows[0].Cells
		short := gitopsv1alpha1.ShortRevision(revision)
		tn.g.Expect(cells[:5]).To(Equal([]any{"ldap", "True", gitopsv1alpha1.AppliedReason, short, "1/1"}))
		tn.g.Expect(cells[6:]).To(Equal([]any{tn.cluster.Name, short, false}))
	})

	It("password never leaks", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))

		for _, obj := range []any{tn.get(d), tn.cluster} {
			data, err := json.Marshal(obj)
			tn.g.Expect(err).NotTo(HaveOccurred())
			tn.g.Expect(string(data)).NotTo(ContainSubstring(testPassword))
		}
		tn.g.Expect(recorder.messagesOf(tn.namespace, "ldap") + recorder.messagesOf(tn.namespace, "osm")).NotTo(ContainSubstring(testPassword))
		families, err := ctrlmetrics.Registry.Gather()
		tn.g.Expect(err).NotTo(HaveOccurred())
		for _, f := range families {
			tn.g.Expect(f.String()).NotTo(ContainSubstring(testPassword))
		}
		events := &corev1.EventList{}
		tn.g.Expect(k8sClient.List(tn.ctx, events)).To(Succeed())
		for _, e := range events.Items {
			tn.g.Expect(e.Message).NotTo(ContainSubstring(testPassword))
		}
	})

	It("metrics report instances and operations", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		// The reconcile records its metrics once its status is written: the test may see the
		// status first.
		tn.g.Eventually(func(g Gomega) {
			families, err := ctrlmetrics.Registry.Gather()
			g.Expect(err).NotTo(HaveOccurred())
			found := map[string]bool{}
			for _, f := range families {
				for _, m := range f.Metric {
					if f.GetName() == "osmops_ns_instances" && metricLabels(m)["namespace"] == tn.namespace && metricLabels(m)["state"] == "Ready" &&
						m.GetGauge().GetValue() == 1 {
						found[f.GetName()] = true
					}
					if f.GetName() == "osmops_operations_total" && metricLabels(m)["type"] == "instantiate" && metricLabels(m)["outcome"] == "completed" {
						found[f.GetName()] = true
					}
					if f.GetName() == "osmops_reconcile_duration_seconds" && metricLabels(m)["namespace"] == tn.namespace {
						found[f.GetName()] = true
					}
				}
			}
			g.Expect(found).To(HaveLen(3), "metrics found: %v", found)
		}).Should(Succeed())
	})

	It("cuts bounded messages on a rune boundary", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		conds := []metav1.Condition{{Message: strings.Repeat("é", maxConditionMessage)}, {Message: "short"}}
		boundMessages(conds)
		g.Expect(len(conds[0].Message)).To(BeNumerically("<=", maxConditionMessage))
		g.Expect(conds[0].Message).To(HaveSuffix("é…"))
		g.Expect(conds[1].Message).To(Equal("short"))
	})

	// An OSM that fails an operation with a huge message gets a bounded condition, not one of
	// 32 KiB (the API server's limit) that every kubectl describe would show.
	It("a huge OSM message is bounded", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "instantiate", NSName: "ldap",
			Message: strings.Repeat("helm failed; ", 10_000)})).To(Succeed())
		d := tn.deployment("ldap", "gitops")
		tn.publish("gitops", demoRepo("1", "ldap"))
		tn.eventuallyCondition(d, "Ready", HavePrefix("False "+gitopsv1alpha1.OperationFailedReason+": NS instance ldap: instantiate operation FAILED: helm failed;"))
		tn.g.Expect(len(tn.condition(d, "Ready"))).To(BeNumerically("<=", maxConditionMessage+100))
	})
})

func metricLabels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
