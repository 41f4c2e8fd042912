package devstack

import (
	"context"
	"fmt"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// DefaultSourceInterval is how often source-controller polls a tenant's repository: short, so
// that a push shows up within seconds.
const DefaultSourceInterval = 10 * time.Second

// fieldOwner is the server-side apply field manager of the objects the stack applies.
const fieldOwner = "osmops-devstack"

// The Secret of Helm values that hack/demo-repo's NS instance reads (valuesFrom), which every
// tenant seeded from it needs: the demo's and the end-to-end tests'.
const (
	DemoValuesSecret  = "ldap-admin"
	DemoValuesKey     = "password"
	DemoAdminPassword = "demo-admin-password"
)

// Tenant is one team's setup in its own namespace, as the demo and each end-to-end test make
// it: a credentials Secret and an OsmCluster (those of osmtenant) for an NBI, a GitRepository
// for a repository (or an OCIRepository, or a Bucket), and an OsmDeployment applying the one to the other
// (both named after the repository).
type Tenant struct {
	// Namespace holds every object of the tenant; it is created when missing.
	Namespace string
	// Repository names the GitRepository and the OsmDeployment.
	Repository string
	// GitURL is the repository's clone URL.
	GitURL string
	// OCIURL, when set, makes the source an OCIRepository of this oci:// URL instead, following
	// DefaultOCITag over plain HTTP (an OCIRegistry's): GitURL is then not used.
	OCIURL string
	// BucketEndpoint, when set, makes the source a Bucket (provider generic, named Repository,
	// no credentials, plain HTTP) of this S3 endpoint instead (an S3Server's): GitURL is then
	// not used.
	BucketEndpoint string
	// NBIURL is the OsmCluster's URL.
	NBIURL string
	// Username and Password are the NBI credentials, kept in the Secret.
	Username, Password string
	// Path is the OsmDeployment's spec.path.
	Path string
	// Prune is the OsmDeployment's spec.prune.
	Prune bool
	// SourceInterval is the source's interval; DefaultSourceInterval when zero.
	SourceInterval time.Duration
}

// Objects returns the tenant's objects, the namespace first, ready to apply, and the Secret of
// DemoValuesSecret last.
func (t Tenant) Objects() []client.Object {
	interval := t.SourceInterval
	if interval == 0 {
		interval = DefaultSourceInterval
	}
	deployment := osmtenant.Deployment(t.Namespace, t.Repository, t.Repository)
	deployment.Spec.Path, deployment.Spec.Prune = t.Path, t.Prune
	objectMeta := metav1.ObjectMeta{Name: t.Repository, Namespace: t.Namespace}
	var source client.Object = &sourcev1.GitRepository{
		ObjectMeta: objectMeta,
		Spec: sourcev1.GitRepositorySpec{
			URL:       t.GitURL,
			Interval:  metav1.Duration{Duration: interval},
			Reference: &sourcev1.GitRepositoryRef{Branch: DefaultBranch},
		},
	}
	switch {
	case t.OCIURL != "":
		source = &sourcev1.OCIRepository{
			ObjectMeta: objectMeta,
			Spec: sourcev1.OCIRepositorySpec{
				URL:       t.OCIURL,
				Interval:  metav1.Duration{Duration: interval},
				Reference: &sourcev1.OCIRepositoryRef{Tag: DefaultOCITag},
				Insecure:  true,
			},
		}
		deployment.Spec.SourceRef.Kind = sourcev1.OCIRepositoryKind
	case t.BucketEndpoint != "":
		source = &sourcev1.Bucket{
			ObjectMeta: objectMeta,
			Spec: sourcev1.BucketSpec{
				Provider:   sourcev1.BucketProviderGeneric,
				BucketName: t.Repository,
				Endpoint:   t.BucketEndpoint,
				Interval:   metav1.Duration{Duration: interval},
				Insecure:   true,
			},
		}
		deployment.Spec.SourceRef.Kind = sourcev1.BucketKind
	}
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: t.Namespace}},
		osmtenant.CredentialsSecret(t.Namespace, t.Username, t.Password),
		osmtenant.Cluster(t.Namespace, t.NBIURL),
		source,
		deployment,
		osmtenant.ValuesSecret(t.Namespace, DemoValuesSecret, map[string]string{DemoValuesKey: DemoAdminPassword}),
	}
}

// Apply creates or updates objects with server-side apply, in order.
func Apply(ctx context.Context, c client.Client, objects ...client.Object) error {
	for _, obj := range objects {
		applied, err := applyConfiguration(obj, c.Scheme())
		if err != nil {
			return err
		}
		err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied), client.FieldOwner(fieldOwner), client.ForceOwnership)
		if err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", applied.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return nil
}

// applyConfiguration turns a typed object into what server-side apply takes: the object
// without status (a subresource) and without the creation timestamp the typed zero value
// carries.
func applyConfiguration(obj client.Object, scheme *runtime.Scheme) (*unstructured.Unstructured, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, err
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	applied := &unstructured.Unstructured{Object: content}
	unstructured.RemoveNestedField(applied.Object, "status")
	unstructured.RemoveNestedField(applied.Object, "metadata", "creationTimestamp")
	applied.SetGroupVersionKind(gvk)
	return applied, nil
}
