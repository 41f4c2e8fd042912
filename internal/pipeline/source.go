package pipeline

import (
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ArtifactSource is a Flux source: its artifact (url, digest, revision) has the same contract
// whatever the kind, so fetching it is the same; its conditions say whether it is Ready.
type ArtifactSource interface {
	client.Object
	conditions.Getter
	GetArtifact() *meta.Artifact
}

// sourceKinds are the kinds spec.sourceRef.kind accepts (its enum), with their types.
var sourceKinds = []struct {
	name string
	new  func() ArtifactSource
}{
	{sourcev1.GitRepositoryKind, func() ArtifactSource { return &sourcev1.GitRepository{} }},
	{sourcev1.OCIRepositoryKind, func() ArtifactSource { return &sourcev1.OCIRepository{} }},
	{sourcev1.BucketKind, func() ArtifactSource { return &sourcev1.Bucket{} }},
}

// SourceKinds are the kinds spec.sourceRef.kind accepts.
func SourceKinds() []string {
	kinds := make([]string, len(sourceKinds))
	for i, k := range sourceKinds {
		kinds[i] = k.name
	}
	return kinds
}

// NewSource returns an empty source of kind, or false for a kind the API does not accept (the
// osmops command line tool reads sources with it too).
func NewSource(kind string) (ArtifactSource, bool) {
	for _, k := range sourceKinds {
		if k.name == kind {
			return k.new(), true
		}
	}
	return nil, false
}
