package controller

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/openldap"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// testPassword is the OSM password of every test tenant: tests assert it never leaks.
const testPassword = "s3cr3t-Pa55w0rd-osmops"

// testVIMAccount is the VIM account of every tenant's simulator.
const testVIMAccount = "site1"

// tenant is one test's world: a namespace with an OsmCluster whose NBI is a simulator of its own.
type tenant struct {
	t         testing.TB
	g         *WithT
	ctx       context.Context
	namespace string
	sim       *nbisim.Server
	nbi       *httptest.Server
	cluster   *gitopsv1alpha1.OsmCluster
	// shard, when set, labels the tenant's OsmCluster and OsmDeployments for the managers the
	// test starts itself (startManager); the suite's manager does not see them.
	shard string
}

// newTenant makes a namespace, a simulator with the VIM account "site1", the credentials Secret
// and a Ready OsmCluster.
func newTenant(t testing.TB) *tenant {
	t.Helper()
	return newTenantWithin(t, eventuallyTimeout)
}

// newTenantWithin is newTenant, with a bound on the wait for the OsmCluster to be Ready.
func newTenantWithin(t testing.TB, readyWithin time.Duration) *tenant {
	t.Helper()
	return makeTenant(t, readyWithin, "")
}

// newTenantInShard is newTenant for the managers of shard that the test starts: one with the
// OsmCluster reconciler must run.
func newTenantInShard(t testing.TB, shard string) *tenant {
	t.Helper()
	return makeTenant(t, eventuallyTimeout, shard)
}

// makeTenant makes a tenant whose objects are in shard ("": the suite manager's).
func makeTenant(t testing.TB, readyWithin time.Duration, shard string) *tenant {
	t.Helper()
	if k8sClient == nil {
		t.Fatal("no API server: envtest tests are Ginkgo specs of the suite (It with GinkgoTB()), which BeforeSuite serves")
	}
	g := NewWithT(t)
	// Every Eventually of a tenant is bounded by these: the reconcilers run in the suite's
	// manager, asynchronously, so a test can only poll the API server and the simulator for
	// what it expects (never sleep).
	g.SetDefaultEventuallyTimeout(eventuallyTimeout)
	g.SetDefaultEventuallyPollingInterval(eventuallyPollInterval)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
	g.Expect(k8sClient.Create(ctx, ns)).To(Succeed())

	sim := nbisim.New(nbisim.Config{
		Username: "operator", Password: testPassword, Project: "admin",
		OperationDelay: testOperationDelay, VIMAccounts: []nbisim.VIMAccount{{Name: testVIMAccount}},
		// LCM starts an operation queued behind another within this of its end (10 s in OSM).
		QueuePollInterval: testOperationDelay,
	})
	server := newNBIServer(t, sim)
	tn := &tenant{t: t, g: g, ctx: ctx, namespace: ns.Name, sim: sim, nbi: server, shard: shard}
	t.Cleanup(tn.retire)

	g.Expect(k8sClient.Create(ctx, osmtenant.CredentialsSecret(ns.Name, "operator", testPassword))).To(Succeed())
	tn.cluster = osmtenant.Cluster(ns.Name, server.URL)
	tn.cluster.Labels = tn.labels()
	g.Expect(k8sClient.Create(ctx, tn.cluster)).To(Succeed())
	g.Expect(osmtenant.WaitClusterReady(ctx, k8sClient, tn.cluster, readyWithin)).To(Succeed())
	return tn
}

// nbiPorts are the ports the tenants' simulators had so far. The manager's login budget keeps
// the failed logins of a user at a URL until a login there succeeds, and the specs that log in
// with a wrong password leave theirs when their simulator stops: a later simulator at the same
// port would inherit them, its OsmCluster's login held back (LoginHeldBack).
var nbiPorts = struct {
	sync.Mutex
	used map[int]bool
}{used: map[int]bool{}}

// newNBIServer serves handler at a port of 127.0.0.1 that no earlier tenant's simulator had, so
// that no spec shares the login budget of another's URL.
func newNBIServer(t testing.TB, handler http.Handler) *httptest.Server {
	t.Helper()
	nbiPorts.Lock()
	defer nbiPorts.Unlock()
	var refused []net.Listener
	defer func() {
		for _, listener := range refused {
			_ = listener.Close()
		}
	}()
	for {
		server := httptest.NewUnstartedServer(handler)
		port := server.Listener.Addr().(*net.TCPAddr).Port
		if !nbiPorts.used[port] {
			nbiPorts.used[port] = true
			server.Start()
			t.Cleanup(server.Close)
			return server
		}
		// Held until a new port is found, so that the kernel does not offer this one again.
		refused = append(refused, server.Listener)
	}
}

// publish makes (or moves) the GitRepository name point at an artifact of files, as
// source-controller does for a new commit, and returns the revision.
func (tn *tenant) publish(name string, files map[string]string) string {
	tn.t.Helper()
	artifact := artifacts.PublishFiles(tn.namespace+"/"+name, files)
	tn.setArtifact(name, artifact)
	return artifact.Revision
}

// setArtifact writes the GitRepository's artifact, creating the GitRepository when needed.
func (tn *tenant) setArtifact(name string, artifact *meta.Artifact) {
	tn.t.Helper()
	tn.setSourceArtifact(sourcev1.GitRepositoryKind, name, artifact)
}

// setSourceArtifact writes the artifact of the source of kind, creating the source when needed.
func (tn *tenant) setSourceArtifact(kind, name string, artifact *meta.Artifact) {
	tn.t.Helper()
	tn.g.Expect(osmtenant.SetArtifact(tn.ctx, k8sClient, kind, tn.namespace, name, artifact)).To(Succeed())
}

// deployment returns an OsmDeployment of the GitRepository source on the tenant's OsmCluster.
func (tn *tenant) deployment(name, source string, edit ...func(*gitopsv1alpha1.OsmDeployment)) *gitopsv1alpha1.OsmDeployment {
	d := osmtenant.Deployment(tn.namespace, name, source)
	d.Labels = tn.labels()
	d.Spec.Prune = true
	for _, e := range edit {
		e(d)
	}
	tn.g.Expect(k8sClient.Create(tn.ctx, d)).To(Succeed())
	return d
}

// labels are the labels of the tenant's OsmClusters and OsmDeployments: its shard's, if any.
func (tn *tenant) labels() map[string]string {
	if tn.shard == "" {
		return nil
	}
	return map[string]string{shardLabel: tn.shard}
}

// get reads an OsmDeployment again.
func (tn *tenant) get(d *gitopsv1alpha1.OsmDeployment) *gitopsv1alpha1.OsmDeployment {
	out := &gitopsv1alpha1.OsmDeployment{}
	tn.g.Expect(k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(d), out)).To(Succeed())
	return out
}

// eventuallyApplied waits until the OsmDeployment is Ready with revision applied.
func (tn *tenant) eventuallyApplied(d *gitopsv1alpha1.OsmDeployment, revision string) *gitopsv1alpha1.OsmDeployment {
	tn.t.Helper()
	var got *gitopsv1alpha1.OsmDeployment
	tn.g.Eventually(func() string {
		got = tn.get(d)
		return fmt.Sprintf("%s %s", readyStatus(got.Status.Conditions), got.Status.LastAppliedRevision)
	}).Should(Equal("True "+revision), func() string { return tn.describe(d) })
	return got
}

// describe dumps what a failing assertion needs: the status, the events and the simulator's log.
func (tn *tenant) describe(d *gitopsv1alpha1.OsmDeployment) string {
	got := tn.get(d)
	var b strings.Builder
	fmt.Fprintf(&b, "conditions:\n")
	for _, c := range got.Status.Conditions {
		fmt.Fprintf(&b, "  %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	fmt.Fprintf(&b, "lastApplied=%s lastAttempted=%s operations=%v inventory=%+v\n", got.Status.LastAppliedRevision,
		got.Status.LastAttemptedRevision, got.Status.Operations, got.Status.Inventory)
	fmt.Fprintf(&b, "events:\n%s\nNBI requests:\n", recorder.messagesOf(d.Namespace, d.Name))
	for _, r := range tn.sim.RequestLog() {
		fmt.Fprintf(&b, "  %s %s %d\n", r.Method, r.Path, r.Status)
	}
	return b.String()
}

// instances returns the simulator's NS instances named name.
func (tn *tenant) instances(name string) []nbisim.NSInstanceState {
	var out []nbisim.NSInstanceState
	for _, ns := range tn.sim.State().NSInstances {
		if ns.Name == name {
			out = append(out, ns)
		}
	}
	return out
}

// mutatingRequests counts the requests that may have changed OSM (not the token requests).
func (tn *tenant) mutatingRequests() int64 {
	return tn.sim.Stats().MutatingRequests
}

// condition returns "Status Reason: Message" of a condition of the OsmDeployment, or "".
func (tn *tenant) condition(d *gitopsv1alpha1.OsmDeployment, conditionType string) string {
	c := conditionOf(tn.get(d).Status.Conditions, conditionType)
	if c == nil {
		return ""
	}
	return string(c.Status) + " " + c.Reason + ": " + c.Message
}

func readyStatus(conds []metav1.Condition) metav1.ConditionStatus {
	for _, c := range conds {
		if c.Type == meta.ReadyCondition {
			return c.Status
		}
	}
	return ""
}

func conditionOf(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// demoRepo is the OpenLDAP example of the repository format: both package sources and one
// NS instance per name given.
func demoRepo(replicaCount string, names ...string) map[string]string {
	files := packageFiles(openldap.PackageNames...)
	for _, name := range names {
		files["deploy/"+name+".osmops.yaml"] = nsInstanceFile(name, replicaCount)
	}
	return files
}

// publishTarball makes the GitRepository name point at tarball as its artifact, announced with
// digest (the tarball's own when empty), and returns the revision.
func (tn *tenant) publishTarball(name string, tarball []byte, digest string) string {
	tn.t.Helper()
	artifact := artifacts.Publish(fmt.Sprintf("%s/%s/hostile.tar.gz", tn.namespace, name), tarball)
	if digest != "" {
		artifact.Digest = digest
	}
	tn.setArtifact(name, artifact)
	return artifact.Revision
}

// in returns the tenant as seen from the subtest t: assertions fail t.
func (tn *tenant) in(t testing.TB) *tenant {
	sub := *tn
	sub.t = t
	sub.g = NewWithT(t)
	sub.g.SetDefaultEventuallyTimeout(eventuallyTimeout)
	sub.g.SetDefaultEventuallyPollingInterval(eventuallyPollInterval)
	return &sub
}

// retire keeps the tenant's objects, which the suite never deletes, away from later tests: the
// ports of closed httptest servers are reused, and an OsmCluster still pointing at its test's
// simulator would find another test's there, for its OsmDeployments to change. The
// OsmDeployments are suspended and the OsmClusters pointed at a port nothing listens on.
func (tn *tenant) retire() {
	var deployments gitopsv1alpha1.OsmDeploymentList
	var clusters gitopsv1alpha1.OsmClusterList
	tn.g.Expect(k8sClient.List(tn.ctx, &deployments, client.InNamespace(tn.namespace))).To(Succeed())
	tn.g.Expect(k8sClient.List(tn.ctx, &clusters, client.InNamespace(tn.namespace))).To(Succeed())
	for i := range deployments.Items {
		tn.update(&deployments.Items[i], func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = true })
	}
	for i := range clusters.Items {
		cluster := &clusters.Items[i]
		tn.g.Eventually(func() error {
			if err := k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
				return client.IgnoreNotFound(err)
			}
			cluster.Spec.URL = "https://127.0.0.1:1"
			return k8sClient.Update(tn.ctx, cluster)
		}).Should(Succeed())
	}
}
