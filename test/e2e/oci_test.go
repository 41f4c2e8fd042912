//go:build e2e

package e2e

import (
	"testing"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/devstack"
)

// TestOCIRepositorySource applies the demo repository pushed as a Flux OCI artifact (as `flux
// push artifact` lays it out) to a registry on loopback, through a real OCIRepository of
// source-controller, as TestBootstrap and TestChangeKDUValue do through a GitRepository.
func TestOCIRepositorySource(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	g := NewWithT(t)
	name := tenantName(t.Name(), tenantSeq.Add(1))
	registry, err := stack.StartOCIRegistry(name + "-oci-registry")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(registry.Close) // last: source-controller may pull until its OCIRepository is gone
	pushed, err := registry.PushArtifact(ctx, name, devstack.DefaultOCITag, firstGenerationDemo(t))
	g.Expect(err).NotTo(HaveOccurred())

	tenant := &testTenant{
		Tenant: devstack.Tenant{Namespace: name, Repository: name, OCIURL: registry.URL(name), Prune: true, SourceInterval: sourceInterval},
		sim:    startSimulator(ctx, t, name),
	}
	tenant.NBIURL = tenant.sim.URL()
	g.Expect(stack.ApplyTenant(ctx, tenant.Tenant)).To(Succeed())
	t.Cleanup(func() {
		for _, obj := range []client.Object{&gitopsv1alpha1.OsmDeployment{}, &sourcev1.OCIRepository{}} {
			obj.SetNamespace(name)
			obj.SetName(name)
			deleteAndWait(ctx, t, obj)
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			tenant.dump(ctx, t)
		}
	})

	tenant.expectRevisionApplied(ctx, t, pushed)
	state := tenant.state(ctx, g)
	g.Expect(nsStates(state)).To(Equal(map[string]string{ldapInstanceName: "READY"}))
	g.Expect(kduParams(state, ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "1"}))
	source := &sourcev1.OCIRepository{}
	g.Expect(stack.Client().Get(ctx, client.ObjectKey{Namespace: name, Name: name}, source)).To(Succeed())
	g.Expect(source.Status.Artifact.Revision).To(Equal(pushed), "the revision source-controller reports")

	upgraded := firstGenerationDemo(t)
	upgraded[ldapFile] = ldapInstance(ldapInstanceName, "2")
	pushedAgain, err := registry.PushArtifact(ctx, name, devstack.DefaultOCITag, upgraded)
	g.Expect(err).NotTo(HaveOccurred())
	tenant.expectRevisionApplied(ctx, t, pushedAgain)
	state = tenant.state(ctx, g)
	g.Expect(kduParams(state, ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "2"}))
	g.Expect(upgrades(state, ldapInstanceName)).To(Equal(1))
	eventually(ctx, t, func(g Gomega) {
		g.Expect(tenant.events(ctx, g)).To(ContainElement(And(
			HaveField("Reason", gitopsv1alpha1.AppliedReason), HaveField("Message", HavePrefix("revision "+pushedAgain+" applied")))))
	})
}
