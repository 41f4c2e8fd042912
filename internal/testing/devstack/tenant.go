package devstack

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// Names of a tenant's objects other than those named after its repository.
const (
	TenantClusterName = "osm"
	TenantSecretName  = "osm-credentials"
)

// DefaultSourceInterval is how often source-controller polls a tenant's repository: short, so
// that a push shows up within seconds.
const DefaultSourceInterval = 10 * time.Second

// fieldOwner is the server-side apply field manager of the objects the stack applies.
const fieldOwner = "osmops-devstack"

// Tenant is one team's setup in its own namespace, as the demo and each end-to-end test make
// it: a credentials Secret and an OsmCluster (both named by the constants above) for an NBI, a
// GitRepository for a repository, and an OsmDeployment applying the one to the other (both
// named after the repository).
type Tenant struct {
	// Namespace holds every object of the tenant; it is created when missing.
	Namespace string
	// Repository names the GitRepository and the OsmDeployment.
	Repository string
	// GitURL is the repository's clone URL.
	GitURL string
	// NBIURL is the OsmCluster's URL.
	NBIURL string
	// Username and Password are the NBI credentials, kept in the Secret.
	Username, Password string
	// Path is the OsmDeployment's spec.path.
	Path string
	// Prune is the OsmDeployment's spec.prune.
	Prune bool
	// SourceInterval is the GitRepository's interval; DefaultSourceInterval when zero.
	SourceInterval time.Duration
}

// Objects returns the tenant's objects, the namespace first, ready to apply.
func (t Tenant) Objects() []client.Object {
	interval := t.SourceInterval
	if interval == 0 {
		interval = DefaultSourceInterval
	}
	objectMeta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: t.Namespace}
	}
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: t.Namespace}},
		&corev1.Secret{
			ObjectMeta: objectMeta(TenantSecretName),
			Data: map[string][]byte{
				gitopsv1alpha1.UsernameSecretKey: []byte(t.Username),
				gitopsv1alpha1.PasswordSecretKey: []byte(t.Password),
			},
		},
		&gitopsv1alpha1.OsmCluster{
			ObjectMeta: objectMeta(TenantClusterName),
			Spec: gitopsv1alpha1.OsmClusterSpec{
				URL:                  t.NBIURL,
				CredentialsSecretRef: meta.LocalObjectReference{Name: TenantSecretName},
			},
		},
		&sourcev1.GitRepository{
			ObjectMeta: objectMeta(t.Repository),
			Spec: sourcev1.GitRepositorySpec{
				URL:       t.GitURL,
				Interval:  metav1.Duration{Duration: interval},
				Reference: &sourcev1.GitRepositoryRef{Branch: DefaultBranch},
			},
		},
		&gitopsv1alpha1.OsmDeployment{
			ObjectMeta: objectMeta(t.Repository),
			Spec: gitopsv1alpha1.OsmDeploymentSpec{
				SourceRef: gitopsv1alpha1.SourceReference{
					APIVersion: sourcev1.GroupVersion.String(),
					Kind:       sourcev1.GitRepositoryKind,
					Name:       t.Repository,
				},
				ClusterRef: meta.LocalObjectReference{Name: TenantClusterName},
				Path:       t.Path,
				Prune:      t.Prune,
			},
		},
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
