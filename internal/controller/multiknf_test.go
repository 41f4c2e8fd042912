package controller

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// stackRepo is a repository of the example's NS of two KNFs, instance "stack".
func stackRepo(s openldap.Stack) map[string]string {
	files := packageFiles(openldap.StackPackageNames...)
	files["deploy/stack.osmops.yaml"] = openldap.StackInstanceFile("stack", testVIMAccount, s)
	return files
}

var stackDefaults = openldap.Stack{LDAPModel: "stable/openldap:1.2.7", LDAPReplicas: "1", AdminServiceType: "ClusterIP", MetricsInterval: "30s"}

// stackReleases returns, by "member/KDU", the chart and values each KDU's Helm release runs
// in the only instance named stack, with its release revision.
func (tn *tenant) stackReleases() map[string]string {
	tn.t.Helper()
	instances := tn.instances("stack")
	tn.g.Expect(instances).To(HaveLen(1))
	releases := map[string]string{}
	for _, kdu := range instances[0].KDUs {
		releases[kdu.MemberVnfIndex+"/"+kdu.Name] = kdu.Model + " " + string(kdu.Params) + " r" + strconv.Itoa(kdu.Revision)
	}
	return releases
}

// appliedStack makes an OsmDeployment of stackRepo(stackDefaults), waits until it is applied,
// and resets the simulator's counters.
func (tn *tenant) appliedStack() *gitopsv1alpha1.OsmDeployment {
	tn.t.Helper()
	d := tn.deployment("stack", "gitops")
	tn.eventuallyApplied(d, tn.publish("gitops", stackRepo(stackDefaults)))
	tn.sim.ResetStats()
	return d
}

const actionRoute = http.MethodPost + " /osm/nslcm/v1/ns_instances/{nsInstanceId}/action"

var _ = Describe("NS instances of several KNFs", func() {
	// A change of one KDU's values of three upgrades that KDU only, with one action.
	It("upgrades one KDU of three", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("stack", "gitops")
		got := tn.eventuallyApplied(d, tn.publish("gitops", stackRepo(stackDefaults)))
		tn.g.Expect(got.Status.NsInstancesSummary).To(Equal("1/1"))
		before := tn.stackReleases()
		tn.g.Expect(before).To(Equal(map[string]string{
			"directory/ldap": `stable/openldap:1.2.7 {"replicaCount":"1"} r1`,
			"web/admin":      `cetic/phpldapadmin {"service":{"type":"ClusterIP"}} r1`,
			"web/metrics":    `prometheus-community/prometheus-openldap-exporter {"interval":"30s"} r1`,
		}))
		tn.sim.ResetStats()

		changed := stackDefaults
		changed.MetricsInterval = "10s"
		tn.eventuallyApplied(d, tn.publish("gitops", stackRepo(changed)))
		after := tn.stackReleases()
		// The upgrade names the version the release runs (its chart names none: OSM reports it
		// in the release's labels), so that LCM does not take the repository's newest.
		tn.g.Expect(after["web/metrics"]).To(Equal(`prometheus-community/prometheus-openldap-exporter:0.1.0 {"interval":"10s"} r2`))
		tn.g.Expect(after["directory/ldap"]).To(Equal(before["directory/ldap"]))
		tn.g.Expect(after["web/admin"]).To(Equal(before["web/admin"]))
		tn.g.Expect(tn.countRequests(actionRoute)).To(BeEquivalentTo(1), tn.describe(d))
		tn.g.Expect(tn.mutatingRequests()).To(BeEquivalentTo(1), tn.describe(d))
		tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).To(ContainSubstring("KDU metrics of VNF web: values changed in Git"))
	})

	// Two KDUs changed in one commit are upgraded one after the other (OSM runs one operation per
	// instance), each once, and the revision is applied only when both are.
	It("two KDUs of one instance are upgraded in turn", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.appliedStack()

		changed := stackDefaults
		changed.LDAPReplicas, changed.AdminServiceType = "2", "NodePort"
		tn.eventuallyApplied(d, tn.publish("gitops", stackRepo(changed)))
		after := tn.stackReleases()
		tn.g.Expect(after["directory/ldap"]).To(Equal(`stable/openldap:1.2.7 {"replicaCount":"2"} r2`))
		tn.g.Expect(after["web/admin"]).To(Equal(`cetic/phpldapadmin:0.1.2 {"service":{"type":"NodePort"}} r2`))
		tn.g.Expect(tn.countRequests(actionRoute)).To(BeEquivalentTo(2), tn.describe(d))
		events := recorder.messagesOf(d.Namespace, d.Name)
		tn.g.Expect(events).To(ContainSubstring("KDU ldap of VNF directory: values changed in Git"))
		tn.g.Expect(events).To(ContainSubstring("KDU admin of VNF web: values changed in Git"))
		tn.g.Expect(events).NotTo(ContainSubstring("outside Git"))
	})

	// A new chart version upgrades the KDU to it; the VNF record keeps naming the first chart, and
	// later drift checks send nothing.
	It("runs a new chart version", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("stack", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Interval = &metav1.Duration{Duration: 100 * time.Millisecond}
		})
		tn.eventuallyApplied(d, tn.publish("gitops", stackRepo(stackDefaults)))

		changed := stackDefaults
		changed.LDAPModel = "stable/openldap:1.2.8"
		tn.eventuallyApplied(d, tn.publish("gitops", stackRepo(changed)))
		kdu := func() nbisim.KDUState {
			for _, k := range tn.instances("stack")[0].KDUs {
				if k.Name == "ldap" {
					return k
				}
			}
			return nbisim.KDUState{}
		}
		tn.g.Expect(kdu().Model).To(Equal("stable/openldap:1.2.8"))
		tn.g.Expect(kdu().RecordModel).To(Equal("stable/openldap:1.2.7"), "OSM leaves the VNF record as it was")
		tn.g.Expect(string(kdu().Params)).To(Equal(`{"replicaCount":"1"}`))
		tn.g.Expect(tn.countRequests(actionRoute)).To(BeEquivalentTo(1))
		tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).To(ContainSubstring("KDU ldap of VNF directory: chart changed in Git"))
		tn.expectNoUpgradeInThreeDriftChecks()
	})

	// NS-level settings OSM reads only at creation stall the revision, naming the file and line.
	It("NS params change is a conflict", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.appliedStack()

		files := stackRepo(stackDefaults)
		files["deploy/stack.osmops.yaml"] = strings.Replace(files["deploy/stack.osmops.yaml"], "k8sNamespace: ldap-stack", "k8sNamespace: ldap-stack2", 1)
		tn.publish("gitops", files)
		tn.g.Eventually(func() string { return tn.condition(d, "Stalled") }).Should(ContainSubstring(
			`deploy/stack.osmops.yaml:7: NS instance "stack": k8sNamespace "ldap-stack2" differs from the one it was created with ("ldap-stack")`))
		tn.g.Expect(tn.mutatingRequests()).To(BeZero())
	})

	// A values change of a KDU that declares no model keeps the chart version the KDU runs: without
	// kdu_model OSM's LCM drops the deployed chart's version and installs the newest of the
	// repository (on OSM 19, 1.2.7 became 1.2.8 on a replicaCount change). Here the instance was
	// created with a model (OSM's VNFD schema admits no version in helm-chart), which a later
	// revision no longer declares.
	It("keeps the chart version on a values change", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		files := demoRepo("1", "ldap")
		files["deploy/ldap.osmops.yaml"] = strings.Replace(files["deploy/ldap.osmops.yaml"], "  name: ldap\n", "  name: ldap\n  model: stable/openldap:1.2.7\n", 1)
		tn.eventuallyApplied(d, tn.publish("gitops", files))
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("2", "ldap")))
		kdu := tn.instances("ldap")[0].KDUs[0]
		tn.g.Expect(kdu.Model + " " + kdu.ChartVersion + " " + string(kdu.Params)).To(Equal(`stable/openldap:1.2.7 1.2.7 {"replicaCount":"2"}`))
	})
})
