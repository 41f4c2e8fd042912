//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/devstack"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// The tenant's objects of the Flux example (config/flux/tenant/telco), as a Flux Kustomization
// of the fleet repository would apply them, pointed at the test's simulator and repository.

// fluxTenantObjects are the objects config/flux/tenant/telco renders to, as "Kind namespace/name".
var fluxTenantObjects = []string{
	"Namespace /telco",
	"Secret telco/osm-credentials",
	"Secret telco/ldap-admin",
	"OsmCluster telco/osm",
	"GitRepository telco/osm-gitops",
	"OsmDeployment telco/ldap",
}

func TestFluxTenantInstall(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	g := NewWithT(t)
	objects := renderKustomization(t, filepath.Join(testenv.RepoRoot(), "config", "flux", "tenant", "telco"))
	if diff := cmp.Diff(fluxTenantObjects, objectNames(objects)); diff != "" {
		t.Fatalf("config/flux/tenant/telco renders (-want +got):\n%s", diff)
	}
	byKind := map[string]*unstructured.Unstructured{}
	toApply := make([]client.Object, 0, len(objects))
	for _, obj := range objects {
		if obj.GetKind() != "Secret" || obj.GetName() == "osm-credentials" { // not the values Secret
			byKind[obj.GetKind()] = obj
		}
		toApply = append(toApply, obj)
	}
	secret, cluster, source, deployment := byKind["Secret"], byKind[gitopsv1alpha1.OsmClusterKind],
		byKind[sourcev1.GitRepositoryKind], byKind[gitopsv1alpha1.OsmDeploymentKind]

	// The simulator takes the tenant's credentials and project as they are rendered.
	name := tenantName(t.Name(), tenantSeq.Add(1))
	sim, err := stack.StartSimulator(ctx, name, slices.Concat(simulatorArgs, simulatorIdentity(t, secret, cluster))...)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if err := sim.Stop(); err != nil {
			t.Error(err)
		}
	})
	repo, err := stack.Git().CreateRepo(name)
	g.Expect(err).NotTo(HaveOccurred())
	seeded, err := repo.Seed(demoRepoDir())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(unstructured.SetNestedField(cluster.Object, sim.URL(), "spec", "url")).To(Succeed())
	g.Expect(unstructured.SetNestedField(source.Object, repo.URL(), "spec", "url")).To(Succeed())

	g.Expect(devstack.Apply(ctx, stack.Client(), toApply...)).To(Succeed())
	// The OsmDeployment first: its finalizer terminates the NS instance while the simulator runs.
	t.Cleanup(func() {
		deleteAndWait(ctx, t, deployment)
		deleteAndWait(ctx, t, source)
	})
	t.Cleanup(func() {
		if t.Failed() {
			(&testTenant{Tenant: devstack.Tenant{Namespace: deployment.GetNamespace()}, sim: sim}).dump(ctx, t)
		}
	})

	eventually(ctx, t, func(g Gomega) {
		applied := &gitopsv1alpha1.OsmDeployment{}
		g.Expect(stack.Client().Get(ctx, client.ObjectKeyFromObject(deployment), applied)).To(Succeed())
		g.Expect(applied.Status.Conditions).To(haveCondition(meta.ReadyCondition, metav1.ConditionTrue, gitopsv1alpha1.AppliedReason))
		g.Expect(applied.Status.LastAppliedRevision).To(Equal(revision(seeded)))
		// What a Flux Kustomization with health checks waits for: every object Current.
		for _, obj := range objects {
			g.Expect(kstatusOf(ctx, g, obj)).To(Equal(kstatus.CurrentStatus), "%s", objectName(obj))
		}
	})
	state, err := sim.State(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nsStates(state)).To(Equal(map[string]string{ldapInstanceName: "READY", stackInstanceName: "READY"}))
	g.Expect(stackReleases(state)).To(Equal(stackReleasesOfTheDemo))
}

// renderKustomization builds the kustomization in dir with the kustomize library, as `kubectl
// kustomize` and Flux's kustomize-controller do, in order.
func renderKustomization(t *testing.T, dir string) []*unstructured.Unstructured {
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
func simulatorIdentity(t *testing.T, secret, cluster *unstructured.Unstructured) []string {
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
