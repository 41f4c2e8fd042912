package controller

import (
	"context"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gstruct"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// otherSourceKinds are the source kinds besides GitRepository, with the revision format
// source-controller gives their artifacts: an OCIRepository's names the tag and the manifest
// digest, a Bucket's is the digest of its object listing (the artifact's digest stands for
// both here).
var otherSourceKinds = []struct {
	kind     string
	revision func(artifact *meta.Artifact) string
}{
	{sourcev1.OCIRepositoryKind, func(a *meta.Artifact) string { return "latest@" + a.Digest }},
	{sourcev1.BucketKind, func(a *meta.Artifact) string { return a.Digest }},
}

// publishTo makes the source of kind named name point at an artifact of files, with the
// revision format of that kind, and returns the revision.
func (tn *tenant) publishTo(kind, name string, revision func(*meta.Artifact) string, files map[string]string) string {
	tn.t.Helper()
	artifact := artifacts.PublishFiles(tn.namespace+"/"+kind+"/"+name, files)
	artifact.Revision = revision(artifact)
	tn.setSourceArtifact(kind, name, artifact)
	return artifact.Revision
}

var _ = Describe("OCIRepository and Bucket sources", func() {
	Context("other source kinds are followed like a git repository", func() {
		for _, source := range otherSourceKinds {
			It(source.kind, func() {
				t := GinkgoTB()
				tn := newTenant(t)
				// A GitRepository of the same name, with other values, must not be the one read,
				// nor its changes taken for the source's.
				tn.publish("gitops", demoRepo("9", "ldap"))
				revision := tn.publishTo(source.kind, "gitops", source.revision, demoRepo("1", "ldap"))
				d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.SourceRef.Kind = source.kind })

				tn.eventuallyApplied(d, revision)
				tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "1"}))

				// A new artifact of the source, and only of it, brings the upgrade: its watch
				// enqueues the OsmDeployment (the drift interval is minutes away).
				upgraded := tn.publishTo(source.kind, "gitops", source.revision, demoRepo("2", "ldap"))
				got := tn.eventuallyApplied(d, upgraded)
				tn.g.Expect(got.Status.LastAttemptedRevision).To(Equal(upgraded))
				tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "2"}))
				tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).To(And(
					ContainSubstring("revision "+revision+" applied"), ContainSubstring("revision "+upgraded+" applied")))
			})
		}
	})

	// A GitRepository of the name exists: the OsmDeployment waits for the OCIRepository it names.
	It("missing source is named with its kind", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		tn.publish("gitops", demoRepo("1", "ldap"))
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.SourceRef.Kind = sourcev1.OCIRepositoryKind })
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "+gitopsv1alpha1.SourceNotReadyReason+": "),
			ContainSubstring("waiting for "+sourcev1.OCIRepositoryKind+" gitops: not found")))
	})

	// A kind this operator does not know (a newer CRD's, applied before the operator is upgraded)
	// stalls the OsmDeployment before anything is read.
	It("unknown source kind stalls", func() {
		t := GinkgoTB()
		d := &gitopsv1alpha1.OsmDeployment{Spec: gitopsv1alpha1.OsmDeploymentSpec{
			SourceRef: gitopsv1alpha1.SourceReference{Kind: "ExternalArtifact", Name: "gitops"},
		}}
		artifact, out := (&OsmDeploymentReconciler{}).reconcileSource(context.Background(), d)
		g := NewWithT(t)
		g.Expect(out.err).NotTo(HaveOccurred())
		g.Expect(artifact).To(BeNil())
		g.Expect(conditionOf(d.Status.Conditions, meta.StalledCondition)).To(gstruct.PointTo(And(
			HaveField("Reason", gitopsv1alpha1.SourceNotReadyReason), HaveField("Message", ContainSubstring(`"ExternalArtifact"`)))))
	})
})
