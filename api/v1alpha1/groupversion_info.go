// Package v1alpha1 contains the API of the osmops operator, group gitops.osmops.io:
// OsmCluster (an OSM north-bound interface endpoint with its credentials) and OsmDeployment
// (a Flux source, GitRepository, OCIRepository or Bucket, applied to an OsmCluster).
//
// It imports no other osmops package, so that every package may import it; the CRDs and the
// DeepCopy methods are generated from it (make manifests generate).
//
// +kubebuilder:object:generate=true
// +groupName=gitops.osmops.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the osmops API.
	GroupVersion = schema.GroupVersion{Group: "gitops.osmops.io", Version: "v1alpha1"}

	// SchemeBuilder registers the osmops types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion} //nolint:staticcheck // as Kubebuilder scaffolds it; controller-runtime is already a dependency of this package

	// AddToScheme adds the osmops types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
