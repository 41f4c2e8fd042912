//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/devstack"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// The Flux example (config/flux) applied as a cluster would be bootstrapped from Git: Flux's
// real kustomize-controller applies the platform layer (the operator from this repository's
// config/default) and the tenant layer (delivery.yaml: the tenant's objects from the fleet
// repository, with health checks on its OsmCluster and OsmDeployment), each pointed at the
// stack's Git server and the test's simulator.

// fluxTenantObjects are the objects config/flux/tenant/telco renders to, as "Kind namespace/name".
var fluxTenantObjects = []string{
	"Namespace /telco",
	"Secret telco/osm-credentials",
	"Secret telco/ldap-admin",
	"OsmCluster telco/osm",
	"GitRepository telco/osm-gitops",
	"OsmDeployment telco/ldap",
}

var _ = Describe("Flux's controllers around the operator", func() {
	It("is installed and health-checked by kustomize-controller as a Flux workload", func() {
		t := GinkgoTB()
		ctx := testContext(t)
		g := NewWithT(t)
		tenantObjects := renderKustomization(t, filepath.Join(testenv.RepoRoot(), "config", "flux", "tenant", "telco"))
		if diff := cmp.Diff(fluxTenantObjects, objectNames(tenantObjects)); diff != "" {
			t.Fatalf("config/flux/tenant/telco renders (-want +got):\n%s", diff)
		}
		byName := map[string]*unstructured.Unstructured{}
		for _, obj := range tenantObjects {
			byName[obj.GetName()] = obj
		}
		deployment, cluster := byName["ldap"], byName["osm"]

		// The simulator takes the tenant's credentials and project as they are rendered.
		name := tenantName(t.Name(), tenantSeq.Add(1))
		sim, err := stack.StartSimulator(ctx, name, slices.Concat(simulatorArgs, simulatorIdentity(t, byName["osm-credentials"], cluster))...)
		g.Expect(err).NotTo(HaveOccurred())
		t.Cleanup(func() {
			if err := sim.Stop(); err != nil {
				t.Error(err)
			}
		})

		// Three repositories on the stack's Git server: this repository's config/ (the platform
		// layer's source), the tenant's GitOps repository, and the fleet repository with the
		// tenant's objects under tenants/telco, as config/flux/README.md lays it out, plus an
		// overlay that points them at this test's simulator and repository.
		osmopsRepo := createRepo(t, name+"-osmops")
		_, err = osmopsRepo.SeedAt(filepath.Join(testenv.RepoRoot(), "config"), "config")
		g.Expect(err).NotTo(HaveOccurred())
		gitopsRepo := createRepo(t, name+"-gitops")
		seeded, err := gitopsRepo.Seed(demoRepoDir())
		g.Expect(err).NotTo(HaveOccurred())
		fleetRepo := createRepo(t, name+"-fleet")
		_, err = fleetRepo.SeedAt(filepath.Join(testenv.RepoRoot(), "config", "flux", "tenant", "telco"), "tenants/telco/base")
		g.Expect(err).NotTo(HaveOccurred())
		_, err = fleetRepo.Commit(map[string]string{"tenants/telco/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [base]
patches:
- target: {kind: OsmCluster, name: osm}
  patch: |
    - {op: replace, path: /spec/url, value: "` + sim.URL() + `"}
- target: {kind: GitRepository, name: osm-gitops}
  patch: |
    - {op: replace, path: /spec/url, value: "` + gitopsRepo.URL() + `"}
    - {op: replace, path: /spec/interval, value: ` + sourceInterval.String() + `}
`}, "Point the tenant at the test's simulator and repository")
		g.Expect(err).NotTo(HaveOccurred())

		// The two layers, as `kubectl apply -k config/flux/platform` and `... /tenant` install them,
		// with their sources on the stack's Git server.
		var layers []client.Object
		var tenantLayer client.Object
		for _, obj := range slices.Concat(renderKustomization(t, filepath.Join(testenv.RepoRoot(), "config", "flux", "platform")),
			renderKustomization(t, filepath.Join(testenv.RepoRoot(), "config", "flux", "tenant"))) {
			switch obj.GetName() {
			case "osmops":
				if obj.GetKind() == sourcev1.GitRepositoryKind {
					pointAt(t, obj, osmopsRepo)
					break
				}
				// The operator of the stack runs as a process: the Deployment of config/default
				// is applied but never runs (envtest has no kubelet), so the layer does not wait
				// for it. Nor does it prune: config/default's CRDs are those every test of the
				// suite uses.
				g.Expect(unstructured.SetNestedField(obj.Object, false, "spec", "wait")).To(Succeed())
				g.Expect(unstructured.SetNestedField(obj.Object, false, "spec", "prune")).To(Succeed())
			case "fleet":
				pointAt(t, obj, fleetRepo)
			case "telco-tenant":
				tenantLayer = obj
			}
			layers = append(layers, obj)
		}
		g.Expect(devstack.Apply(ctx, stack.Client(), layers...)).To(Succeed())
		g.Expect(tenantLayer).NotTo(BeNil(), "config/flux/tenant has no Kustomization telco-tenant")
		// The OsmDeployment first: its finalizer terminates the NS instances while the simulator
		// runs. Then the layers and their sources (the platform layer prunes nothing).
		t.Cleanup(func() {
			deleteAndWait(ctx, t, deployment)
			for _, obj := range slices.Backward(layers) {
				deleteAndWait(ctx, t, obj)
			}
		})

		// The tenant layer turns Ready only once its OsmDeployment is.
		var readyAt metav1.Time
		eventually(ctx, t, func(g Gomega) {
			layer := fluxConditions(ctx, g, tenantLayer)
			g.Expect(layer).To(haveCondition(meta.ReadyCondition, metav1.ConditionTrue, meta.ReconciliationSucceededReason))
			readyAt = apimeta.FindStatusCondition(layer, meta.ReadyCondition).LastTransitionTime
		})
		applied := &gitopsv1alpha1.OsmDeployment{}
		g.Expect(stack.Client().Get(ctx, client.ObjectKeyFromObject(deployment), applied)).To(Succeed())
		g.Expect(applied.Status.LastAppliedRevision).To(Equal(revision(seeded)))
		deploymentReady := apimeta.FindStatusCondition(applied.Status.Conditions, meta.ReadyCondition)
		g.Expect(deploymentReady).NotTo(BeNil())
		g.Expect(deploymentReady.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(deploymentReady.LastTransitionTime.Time).NotTo(BeTemporally(">", readyAt.Time),
			"the tenant layer was Ready before its OsmDeployment")
		state, err := sim.State(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nsStates(state)).To(Equal(map[string]string{ldapInstanceName: "READY", stackInstanceName: "READY"}))
		g.Expect(stackReleases(state)).To(Equal(stackReleasesOfTheDemo))
		// The platform layer sends the operator's events where Flux's go.
		manager := &appsv1.Deployment{}
		g.Expect(stack.Client().Get(ctx, client.ObjectKey{Namespace: "osmops-system", Name: "osmops-controller-manager"}, manager)).To(Succeed())
		g.Expect(manager.Spec.Template.Spec.Containers[0].Args).To(ContainElement(
			"--events-addr=http://notification-controller.flux-system.svc.cluster.local./"))

		// An invalid file stalls the OsmDeployment; the tenant layer's next reconcile (`flux
		// reconcile kustomization telco-tenant`) reports it through its health check.
		broken, err := gitopsRepo.Commit(map[string]string{"deploy/broken.osmops.yaml": "kind: NsInstance\nname: broken\n"}, "Add an invalid NS instance")
		g.Expect(err).NotTo(HaveOccurred())
		eventually(ctx, t, func(g Gomega) {
			g.Expect(stack.Client().Get(ctx, client.ObjectKeyFromObject(deployment), applied)).To(Succeed())
			g.Expect(applied.Status.LastAttemptedRevision).To(Equal(revision(broken)))
			g.Expect(applied.Status.Conditions).To(haveCondition(meta.StalledCondition, metav1.ConditionTrue, gitopsv1alpha1.ValidationFailedReason))
		})
		requestReconcile(ctx, t, tenantLayer)
		eventually(ctx, t, func(g Gomega) {
			layer := fluxConditions(ctx, g, tenantLayer)
			g.Expect(layer).To(haveCondition(meta.ReadyCondition, metav1.ConditionFalse, meta.HealthCheckFailedReason))
			g.Expect(apimeta.FindStatusCondition(layer, meta.ReadyCondition).Message).To(ContainSubstring("OsmDeployment/telco/ldap"))
		})
	})
})

// createRepo creates a repository of the stack's Git server.
func createRepo(t testing.TB, name string) *devstack.Repo {
	t.Helper()
	repo, err := stack.Git().CreateRepo(name)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// pointAt makes a rendered GitRepository fetch the branch of repo, often.
func pointAt(t testing.TB, source *unstructured.Unstructured, repo *devstack.Repo) {
	t.Helper()
	for field, value := range map[string]any{
		"url": repo.URL(), "ref": map[string]any{"branch": devstack.DefaultBranch}, "interval": sourceInterval.String(),
	} {
		if err := unstructured.SetNestedField(source.Object, value, "spec", field); err != nil {
			t.Fatal(err)
		}
	}
}

// fluxConditions returns the conditions of a Flux object (its kind, namespace and name set).
func fluxConditions(ctx context.Context, g Gomega, obj client.Object) []metav1.Condition {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	g.Expect(stack.Client().Get(ctx, client.ObjectKeyFromObject(obj), live)).To(Succeed())
	var status struct {
		Conditions []metav1.Condition `json:"conditions"`
	}
	content, _, err := unstructured.NestedMap(live.Object, "status")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(content, &status)).To(Succeed())
	return status.Conditions
}

// requestReconcile asks a Flux controller to reconcile obj now, as `flux reconcile` does.
func requestReconcile(ctx context.Context, t testing.TB, obj client.Object) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + meta.ReconcileRequestAnnotation + `":"` + time.Now().Format(time.RFC3339Nano) + `"}}}`)
	if err := stack.Client().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// renderKustomization builds the kustomization in dir with the kustomize library, as `kubectl
// kustomize` and Flux's kustomize-controller do, in order.
func renderKustomization(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var objects []*unstructured.Unstructured
	for _, resource := range resources.Resources() {
		content, err := resource.Map()
		if err != nil {
			t.Fatalf("kustomize build %s: %s: %v", dir, resource.CurId(), err)
		}
		objects = append(objects, &unstructured.Unstructured{Object: content})
	}
	return objects
}

// objectNames names objects as "Kind namespace/name".
func objectNames(objects []*unstructured.Unstructured) []string {
	names := make([]string, 0, len(objects))
	for _, obj := range objects {
		names = append(names, objectName(obj))
	}
	return names
}

func objectName(obj client.Object) string {
	return fmt.Sprintf("%s %s/%s", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetNamespace(), obj.GetName())
}

// simulatorIdentity returns the simulator flags that make it accept the rendered Secret's
// credentials in the rendered OsmCluster's project. The password goes through a file, which
// other users cannot read from the process list.
func simulatorIdentity(t testing.TB, secret, cluster *unstructured.Unstructured) []string {
	t.Helper()
	field := func(obj *unstructured.Unstructured, path ...string) string {
		value, found, err := unstructured.NestedString(obj.Object, path...)
		if err != nil || !found || value == "" {
			t.Fatalf("%s: no %v (err %v)", objectName(obj), path, err)
		}
		return value
	}
	passwordFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(passwordFile, []byte(field(secret, "stringData", gitopsv1alpha1.PasswordSecretKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{
		"--username=" + field(secret, "stringData", gitopsv1alpha1.UsernameSecretKey),
		"--password-file=" + passwordFile,
		"--project=" + field(cluster, "spec", "project"),
	}
}
