//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/devstack"
	"github.com/osmops/osmops/internal/testing/openldap"
	"github.com/osmops/osmops/internal/testing/osmtenant"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// Bounds of the waits. A push reaches source-controller within sourceInterval; the operator
// then needs a few reconciles and the simulator's operation delay.
const (
	eventuallyTimeout = 90 * time.Second
	pollInterval      = 250 * time.Millisecond
	sourceInterval    = 3 * time.Second
	testTimeout       = 4 * time.Minute
)

// testContext returns a context for one test, cancelled when the test and its cleanups are
// done. t.Context is not used because it ends before the cleanups, which still need the API.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// firstGenerationDemo is the part of the demo repository the tests of one NS instance of one
// KDU start from: the NS instance ldap and its packages (the demo's NS of two KNFs has tests of
// its own).
func firstGenerationDemo(t testing.TB) map[string]string {
	t.Helper()
	files, err := openldap.PackageFiles(openldap.PackageNames...)
	if err != nil {
		t.Fatal(err)
	}
	files[ldapFile] = ldapInstance(ldapInstanceName, "1")
	return files
}

// demoRepoDir is the seeded demo repository of `make demo`, which the tests push too.
func demoRepoDir() string { return filepath.Join(testenv.RepoRoot(), "hack", "demo-repo") }

// revision is how source-controller and the operator name the commit sha of the default branch.
func revision(sha string) string { return devstack.DefaultBranch + "@sha1:" + sha }

// testTenant is one test's own corner of the stack: a namespace, a Git repository, an
// OsmCluster and an OsmDeployment (prune on), and the simulator its OsmCluster points at.
type testTenant struct {
	devstack.Tenant
	repo *devstack.Repo
	sim  *devstack.Simulator
	// seeded is the first commit: the demo repository.
	seeded string
}

var tenantSeq atomic.Int32

// newTenant sets up a tenant named after the test, its repository seeded with the demo
// repository's first-generation part first (source-controller backs off from an empty one). With ownSimulator its
// OsmCluster points at a simulator of its own, so that request counts and state are the test's
// alone; otherwise at the stack's. On failure the cleanup prints the tenant's objects and its
// simulator's request log; then it deletes the OsmDeployment and the GitRepository and waits
// until they are gone.
func newTenant(ctx context.Context, t testing.TB, ownSimulator bool) *testTenant {
	t.Helper()
	name := tenantName(t.Name(), tenantSeq.Add(1))
	sim := stack.Simulator()
	if ownSimulator {
		sim = startSimulator(ctx, t, name)
	}
	return newTenantOn(ctx, t, name, sim)
}

// startSimulator starts a simulator of the test's own, stopped when the test ends.
func startSimulator(ctx context.Context, t testing.TB, name string) *devstack.Simulator {
	t.Helper()
	sim, err := stack.StartSimulator(ctx, name, simulatorArgs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sim.Stop(); err != nil {
			t.Error(err)
		}
	})
	return sim
}

// newTenantOn is newTenant, named name, with its OsmCluster pointing at sim.
func newTenantOn(ctx context.Context, t testing.TB, name string, sim *devstack.Simulator) *testTenant {
	t.Helper()
	repo, err := stack.Git().CreateRepo(name)
	if err != nil {
		t.Fatal(err)
	}
	seeded, err := repo.Commit(firstGenerationDemo(t), "Seed from the demo repository's first-generation part")
	if err != nil {
		t.Fatal(err)
	}
	tenant := &testTenant{
		Tenant: devstack.Tenant{
			Namespace:      name,
			Repository:     name,
			NBIURL:         sim.URL(),
			Prune:          true,
			SourceInterval: sourceInterval,
		},
		repo:   repo,
		sim:    sim,
		seeded: seeded,
	}
	if err := stack.ApplyTenant(ctx, tenant.Tenant); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tenant.delete(ctx, t) })
	t.Cleanup(func() {
		if t.Failed() {
			tenant.dump(ctx, t)
		}
	})
	return tenant
}

var notDNSLabel = regexp.MustCompile(`[^a-z0-9]+`)

// tenantName makes a DNS label out of a test name and a sequence number.
func tenantName(testName string, seq int32) string {
	name := strings.Trim(notDNSLabel.ReplaceAllString(strings.ToLower(testName), "-"), "-")
	return fmt.Sprintf("%.40s-%d", name, seq)
}

func (tt *testTenant) key() client.ObjectKey {
	return client.ObjectKey{Namespace: tt.Namespace, Name: tt.Repository}
}

// deployment returns the tenant's OsmDeployment as the API server has it.
func (tt *testTenant) deployment(ctx context.Context) (*gitopsv1alpha1.OsmDeployment, error) {
	obj := &gitopsv1alpha1.OsmDeployment{}
	return obj, stack.Client().Get(ctx, tt.key(), obj)
}

// delete deletes the tenant's OsmDeployment (whose finalizer prunes OSM, while the simulator
// still runs) and GitRepository, and waits until both are gone.
func (tt *testTenant) delete(ctx context.Context, t testing.TB) {
	for _, obj := range []client.Object{&gitopsv1alpha1.OsmDeployment{}, &sourcev1.GitRepository{}} {
		obj.SetNamespace(tt.Namespace)
		obj.SetName(tt.Repository)
		deleteAndWait(ctx, t, obj)
	}
}

// deleteAndWait deletes obj (its namespace and name set) and waits until it is gone, its
// finalizers done (polled, bounded: the finalizer prunes OSM asynchronously).
func deleteAndWait(ctx context.Context, t testing.TB, obj client.Object) {
	c := stack.Client()
	if err := c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		t.Error(err)
		return
	}
	NewWithT(t).Eventually(func() error {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("%T %s/%s is still there (finalizers %v, err %v)",
			obj, obj.GetNamespace(), obj.GetName(), obj.GetFinalizers(), err)
	}).WithContext(ctx).WithTimeout(eventuallyTimeout).WithPolling(pollInterval).Should(Succeed())
}

// dump prints the tenant's objects, as `kubectl get -o yaml` would, and the request log of its
// simulator.
func (tt *testTenant) dump(ctx context.Context, t testing.TB) {
	for _, list := range []client.ObjectList{
		&gitopsv1alpha1.OsmClusterList{}, &gitopsv1alpha1.OsmDeploymentList{}, &sourcev1.GitRepositoryList{},
		&sourcev1.OCIRepositoryList{}, &sourcev1.BucketList{},
	} {
		if err := stack.Client().List(ctx, list, client.InNamespace(tt.Namespace)); err != nil {
			t.Logf("listing %T: %v", list, err)
			continue
		}
		_ = apimeta.EachListItem(list, func(obj runtime.Object) error {
			obj.(client.Object).SetManagedFields(nil)
			return nil
		})
		out, err := yaml.Marshal(list)
		if err != nil {
			t.Logf("rendering %T: %v", list, err)
			continue
		}
		t.Logf("%T in namespace %s:\n%s", list, tt.Namespace, out)
	}
	requests, err := tt.sim.RequestLog(ctx)
	if err != nil {
		t.Logf("request log of %s: %v", tt.sim.Name(), err)
		return
	}
	var lines strings.Builder
	for _, r := range requests {
		fmt.Fprintf(&lines, "%s %s %s -> %d (%s)\n", r.Time.Format(time.TimeOnly), r.Method, r.Path, r.Status, r.Duration)
	}
	t.Logf("request log of %s:\n%s", tt.sim.Name(), lines.String())
}

// expectArtifact waits (polls, bounded: source-controller fetches on its interval) until the
// tenant's GitRepository has an artifact of the commit sha.
func (tt *testTenant) expectArtifact(ctx context.Context, t testing.TB, sha string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		repo := &sourcev1.GitRepository{}
		g.Expect(stack.Client().Get(ctx, tt.key(), repo)).To(Succeed())
		g.Expect(repo.Status.Artifact).NotTo(BeNil(), "no artifact yet")
		g.Expect(repo.Status.Artifact.Revision).To(Equal(revision(sha)))
	}).WithContext(ctx).WithTimeout(eventuallyTimeout).WithPolling(pollInterval).Should(Succeed())
}

// eventually retries assertion until it passes, within the suite's bounds (eventuallyTimeout,
// polled every pollInterval). Every wait of the suite is one of these: the stack's controllers
// (source-controller, the operator, the simulator's operations) act asynchronously, in their
// own processes, so a test can only poll the API server or the simulator for what it expects.
func eventually(ctx context.Context, t testing.TB, assertion func(g Gomega)) {
	t.Helper()
	NewWithT(t).Eventually(assertion).WithContext(ctx).WithTimeout(eventuallyTimeout).WithPolling(pollInterval).Should(Succeed())
}

// patchObject gets obj (its namespace and name set), changes it with mutate and patches the
// difference, as `kubectl patch` would.
func patchObject[T client.Object](ctx context.Context, t testing.TB, obj T, mutate func(T)) {
	t.Helper()
	c := stack.Client()
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	before := obj.DeepCopyObject().(T)
	mutate(obj)
	if err := c.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// haveCondition matches a list of conditions that holds condType with status and one of
// reasons.
func haveCondition(condType string, status metav1.ConditionStatus, reasons ...string) types.GomegaMatcher {
	return ContainElement(And(HaveField("Type", condType), HaveField("Status", status), HaveField("Reason", BeElementOf(reasons))))
}

// kstatusOf computes the kstatus of obj (its namespace and name set) as the API server has it:
// what Flux's health checks wait on.
func kstatusOf(ctx context.Context, g Gomega, obj client.Object) kstatus.Status {
	c := stack.Client()
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	g.Expect(err).NotTo(HaveOccurred())
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), live)).To(Succeed())
	result, err := kstatus.Compute(live)
	g.Expect(err).NotTo(HaveOccurred())
	return result.Status
}

// cluster returns the tenant's OsmCluster as the API server has it.
func (tt *testTenant) cluster(ctx context.Context) (*gitopsv1alpha1.OsmCluster, error) {
	obj := &gitopsv1alpha1.OsmCluster{}
	return obj, stack.Client().Get(ctx, client.ObjectKey{Namespace: tt.Namespace, Name: osmtenant.ClusterName}, obj)
}

// expectClusterReady waits until the Ready condition of the tenant's OsmCluster has status and
// reason.
func (tt *testTenant) expectClusterReady(ctx context.Context, t testing.TB, status metav1.ConditionStatus, reason string) {
	t.Helper()
	eventually(ctx, t, func(g Gomega) {
		cluster, err := tt.cluster(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cluster.Status.Conditions).To(haveCondition(meta.ReadyCondition, status, reason))
	})
}
