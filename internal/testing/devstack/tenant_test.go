package devstack

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/testenv"
)

func TestTenantObjects(t *testing.T) {
	tenant := Tenant{
		Namespace:  "telco",
		Repository: "osm-gitops",
		GitURL:     "http://127.0.0.1:1/osm-gitops.git",
		NBIURL:     "http://127.0.0.1:2",
		Username:   "user",
		Password:   "secret",
		Path:       "deploy",
		Prune:      true,
	}
	objectMeta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "telco"} }
	want := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "telco"}},
		&corev1.Secret{
			ObjectMeta: objectMeta("osm-credentials"),
			Data:       map[string][]byte{"username": []byte("user"), "password": []byte("secret")},
		},
		&gitopsv1alpha1.OsmCluster{
			ObjectMeta: objectMeta("osm"),
			Spec: gitopsv1alpha1.OsmClusterSpec{
				URL:                  "http://127.0.0.1:2",
				CredentialsSecretRef: meta.LocalObjectReference{Name: "osm-credentials"},
			},
		},
		&sourcev1.GitRepository{
			ObjectMeta: objectMeta("osm-gitops"),
			Spec: sourcev1.GitRepositorySpec{
				URL:       "http://127.0.0.1:1/osm-gitops.git",
				Interval:  metav1.Duration{Duration: 10 * time.Second},
				Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			},
		},
		&gitopsv1alpha1.OsmDeployment{
			ObjectMeta: objectMeta("osm-gitops"),
			Spec: gitopsv1alpha1.OsmDeploymentSpec{
				SourceRef: gitopsv1alpha1.SourceReference{
					APIVersion: "source.toolkit.fluxcd.io/v1", Kind: "GitRepository", Name: "osm-gitops",
				},
				ClusterRef: meta.LocalObjectReference{Name: "osm"},
				Path:       "deploy",
				Prune:      true,
			},
		},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "ldap-admin", Namespace: "telco", Labels: map[string]string{"reconcile.fluxcd.io/watch": "Enabled"}},
			StringData: map[string]string{"password": "demo-admin-password"},
		},
	}
	if diff := cmp.Diff(want, tenant.Objects()); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}

	tenant.SourceInterval = time.Second
	repo := tenant.Objects()[3].(*sourcev1.GitRepository)
	if repo.Spec.Interval.Duration != time.Second {
		t.Errorf("GitRepository interval = %s, want the tenant's 1s", repo.Spec.Interval.Duration)
	}
}

func TestTenantOfOtherSourceKinds(t *testing.T) {
	objectMeta := metav1.ObjectMeta{Name: "osm-gitops", Namespace: "telco"}
	interval := metav1.Duration{Duration: 10 * time.Second}
	for _, tc := range []struct {
		kind       string
		tenant     Tenant
		wantSource client.Object
	}{
		{
			kind:   sourcev1.OCIRepositoryKind,
			tenant: Tenant{OCIURL: "oci://127.0.0.1:1/osm-gitops"},
			wantSource: &sourcev1.OCIRepository{ObjectMeta: objectMeta, Spec: sourcev1.OCIRepositorySpec{
				URL: "oci://127.0.0.1:1/osm-gitops", Interval: interval, Reference: &sourcev1.OCIRepositoryRef{Tag: "latest"}, Insecure: true,
			}},
		},
		{
			kind:   sourcev1.BucketKind,
			tenant: Tenant{BucketEndpoint: "127.0.0.1:1"},
			wantSource: &sourcev1.Bucket{ObjectMeta: objectMeta, Spec: sourcev1.BucketSpec{
				Provider: "generic", BucketName: "osm-gitops", Endpoint: "127.0.0.1:1", Interval: interval, Insecure: true,
			}},
		},
	} {
		tc.tenant.Namespace, tc.tenant.Repository, tc.tenant.NBIURL = "telco", "osm-gitops", "http://127.0.0.1:2"
		objects := tc.tenant.Objects()
		if diff := cmp.Diff(tc.wantSource, objects[3]); diff != "" {
			t.Errorf("%s: source (-want +got):\n%s", tc.kind, diff)
		}
		wantRef := gitopsv1alpha1.SourceReference{APIVersion: "source.toolkit.fluxcd.io/v1", Kind: tc.kind, Name: "osm-gitops"}
		if diff := cmp.Diff(wantRef, objects[4].(*gitopsv1alpha1.OsmDeployment).Spec.SourceRef); diff != "" {
			t.Errorf("%s: sourceRef (-want +got):\n%s", tc.kind, diff)
		}
	}
}

func TestApplyConfigurationOfTypedObjects(t *testing.T) {
	scheme := testenv.NewScheme()
	tests := []struct {
		obj                 client.Object
		apiVersion, kind    string
		wantSpecOrDataField string
	}{
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"k": nil}}, "v1", "Secret", "data"},
		{&gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, "gitops.osmops.io/v1alpha1", "OsmDeployment", "spec"},
		{&sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, "source.toolkit.fluxcd.io/v1", "GitRepository", "spec"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			applied, err := applyConfiguration(tt.obj, scheme)
			if err != nil {
				t.Fatal(err)
			}
			if applied.GetAPIVersion() != tt.apiVersion || applied.GetKind() != tt.kind {
				t.Errorf("apiVersion/kind = %s/%s, want %s/%s", applied.GetAPIVersion(), applied.GetKind(), tt.apiVersion, tt.kind)
			}
			if _, has := applied.Object["status"]; has {
				t.Error("status is applied; it is a subresource")
			}
			if _, has := applied.Object["metadata"].(map[string]any)["creationTimestamp"]; has {
				t.Error("metadata.creationTimestamp is applied")
			}
			if _, has := applied.Object[tt.wantSpecOrDataField]; !has {
				t.Errorf("%s is missing", tt.wantSpecOrDataField)
			}
		})
	}
}
