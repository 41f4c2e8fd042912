//go:build e2e

package e2e

import (
	"context"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/devstack"
)

// The source kinds besides GitRepository, each served by a real store on loopback and read by
// a real source-controller: the OsmDeployment applies them as the specs of
// engine_test.go apply a GitRepository.

var _ = Describe("OCI and Bucket sources", func() {
	// This spec pushes the demo's first part as a Flux OCI artifact (as `flux push
	// artifact` lays it out) to a registry on loopback, then an upgrade.
	It("applies an OCIRepository source", func() {
		t := GinkgoTB()
		ctx := testContext(t)
		name := tenantName(t.Name(), tenantSeq.Add(1))
		registry, err := stack.StartOCIRegistry(name + "-oci-registry")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(registry.Close) // last: source-controller pulls until its OCIRepository is gone
		push := func(files map[string]string) string {
			pushed, err := registry.PushArtifact(ctx, name, devstack.DefaultOCITag, files)
			if err != nil {
				t.Fatal(err)
			}
			return pushed
		}
		tenant := devstack.Tenant{Namespace: name, Repository: name, OCIURL: registry.URL(name)}
		revisions := applyThroughSource(ctx, t, tenant, &sourcev1.OCIRepository{}, push)
		NewWithT(t).Expect(revisions).To(HaveEach(MatchRegexp(`^` + devstack.DefaultOCITag + `@sha256:[0-9a-f]{64}$`)))
	})

	// This spec uploads the demo's first part to a bucket of an S3 server on loopback, then
	// an upgrade.
	It("applies a Bucket source", func() {
		t := GinkgoTB()
		ctx := testContext(t)
		name := tenantName(t.Name(), tenantSeq.Add(1))
		s3, err := stack.StartS3Server(name + "-s3")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s3.Close) // last: source-controller reads until its Bucket is gone
		upload := func(files map[string]string) string {
			if err := s3.Upload(ctx, name, files); err != nil {
				t.Fatal(err)
			}
			return "" // the digest of the bucket's listing, which source-controller computes
		}
		tenant := devstack.Tenant{Namespace: name, Repository: name, BucketEndpoint: s3.Endpoint()}
		revisions := applyThroughSource(ctx, t, tenant, &sourcev1.Bucket{}, upload)
		NewWithT(t).Expect(revisions).To(HaveEach(MatchRegexp(`^sha256:[0-9a-f]{64}$`)))
	})
})

// artifactSource is a Flux source, whatever its kind.
type artifactSource interface {
	client.Object
	GetArtifact() *meta.Artifact
}

// applyThroughSource sets up tenant (whose source is source's kind) with a simulator of its
// own, publishes the demo's first part with publish, then an upgrade of its NS instance, and
// checks that each is applied to OSM with the revision source-controller gave it. publish
// returns the revision source-controller will give, "" when it cannot be known beforehand.
// It returns the two revisions.
func applyThroughSource(ctx context.Context, t testing.TB, tenant devstack.Tenant, source artifactSource,
	publish func(files map[string]string) string) []string {
	t.Helper()
	g := NewWithT(t)
	tt := &testTenant{Tenant: tenant, sim: startSimulator(ctx, t, tenant.Namespace)}
	tt.NBIURL, tt.Prune, tt.SourceInterval = tt.sim.URL(), true, sourceInterval
	source.SetNamespace(tt.Namespace)
	source.SetName(tt.Repository)
	// revisionAfter waits until the source has an artifact other than previous and returns its
	// revision, which must be expected unless that is "".
	revisionAfter := func(previous, expected string) string {
		var revision string
		eventually(ctx, t, func(g Gomega) {
			g.Expect(stack.Client().Get(ctx, client.ObjectKeyFromObject(source), source)).To(Succeed())
			g.Expect(source.GetArtifact()).NotTo(BeNil(), "no artifact yet")
			revision = source.GetArtifact().Revision
			g.Expect(revision).NotTo(Equal(previous), "no new artifact yet")
			if expected != "" {
				g.Expect(revision).To(Equal(expected))
			}
		})
		return revision
	}

	published := publish(firstGenerationDemo(t))
	g.Expect(stack.ApplyTenant(ctx, tt.Tenant)).To(Succeed())
	t.Cleanup(func() {
		for _, obj := range []client.Object{&gitopsv1alpha1.OsmDeployment{}, source} {
			obj.SetNamespace(tt.Namespace)
			obj.SetName(tt.Repository)
			deleteAndWait(ctx, t, obj)
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			tt.dump(ctx, t)
		}
	})
	first := revisionAfter("", published)
	tt.expectRevisionApplied(ctx, t, first)
	state := tt.state(ctx, g)
	g.Expect(nsStates(state)).To(Equal(map[string]string{ldapInstanceName: "READY"}))
	g.Expect(kduParams(state, ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "1"}))

	upgrade := firstGenerationDemo(t)
	upgrade[ldapFile] = ldapInstance(ldapInstanceName, "2")
	second := revisionAfter(first, publish(upgrade))
	tt.expectRevisionApplied(ctx, t, second)
	state = tt.state(ctx, g)
	g.Expect(kduParams(state, ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "2"}))
	g.Expect(upgrades(state, ldapInstanceName)).To(Equal(1))
	eventually(ctx, t, func(g Gomega) {
		g.Expect(tt.events(ctx, g)).To(ContainElement(And(
			HaveField("Reason", gitopsv1alpha1.AppliedReason), HaveField("Message", HavePrefix("revision "+second+" applied")))))
	})
	return []string{first, second}
}
