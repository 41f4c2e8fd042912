// Package osmtenant makes the objects that connect a namespace to an OSM, alike for the
// controller tests, the bench, the demo and the end-to-end tests: the credentials Secret, the
// OsmCluster that uses it, OsmDeployments of a GitRepository on that OsmCluster, and, where no
// source-controller runs, the artifact of a source (GitRepository, OCIRepository or Bucket).
// Each user sets the other fields its own way.
//
// Test harness: no product package may import it.
package osmtenant

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// Names of a tenant's credentials Secret and OsmCluster.
const (
	ClusterName = "osm"
	SecretName  = "osm-credentials"
)

// readyPollInterval is the pause between two reads of an OsmCluster waited on.
const readyPollInterval = 50 * time.Millisecond

// CredentialsSecret is the Secret of the NBI credentials, under the keys the OsmCluster reads.
func CredentialsSecret(namespace, username, password string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretName, Namespace: namespace},
		Data: map[string][]byte{
			gitopsv1alpha1.UsernameSecretKey: []byte(username),
			gitopsv1alpha1.PasswordSecretKey: []byte(password),
		},
	}
}

// ValuesSecret is a Secret of Helm values that a KDU's valuesFrom (or an OsmDeployment's
// substituteFrom) reads, labelled reconcile.fluxcd.io/watch: Enabled so that a change of it
// reaches the OsmDeployments that read it at once.
func ValuesSecret(namespace, name string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Labels: map[string]string{meta.LabelKeyWatch: meta.LabelValueWatchEnabled}},
		StringData: data,
	}
}

// Cluster is the OsmCluster of the NBI at nbiURL with the credentials of CredentialsSecret.
func Cluster(namespace, nbiURL string) *gitopsv1alpha1.OsmCluster {
	return &gitopsv1alpha1.OsmCluster{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterName, Namespace: namespace},
		Spec: gitopsv1alpha1.OsmClusterSpec{
			URL:                  nbiURL,
			CredentialsSecretRef: meta.LocalObjectReference{Name: SecretName},
		},
	}
}

// Deployment is the OsmDeployment name of the GitRepository gitRepository on the OsmCluster
// of Cluster.
func Deployment(namespace, name, gitRepository string) *gitopsv1alpha1.OsmDeployment {
	return &gitopsv1alpha1.OsmDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: gitopsv1alpha1.OsmDeploymentSpec{
			SourceRef: gitopsv1alpha1.SourceReference{
				APIVersion: sourcev1.GroupVersion.String(),
				Kind:       sourcev1.GitRepositoryKind,
				Name:       gitRepository,
			},
			ClusterRef: meta.LocalObjectReference{Name: ClusterName},
		},
	}
}

// WaitClusterReady reads cluster (its namespace and name set) until it is Ready, for at most
// within; cluster holds the last copy read.
func WaitClusterReady(ctx context.Context, c client.Reader, cluster *gitopsv1alpha1.OsmCluster, within time.Duration) error {
	key := client.ObjectKeyFromObject(cluster)
	err := wait.PollUntilContextTimeout(ctx, readyPollInterval, within, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, key, cluster) == nil && conditions.IsReady(cluster), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for OsmCluster %s to be Ready (its Ready condition: %q): %w",
			key, conditions.GetMessage(cluster, meta.ReadyCondition), err)
	}
	return nil
}

// SetArtifact makes the source of kind (GitRepository, OCIRepository or Bucket) named name
// point at artifact, as source-controller does for a new commit, and creates the source the
// first time: where no source-controller runs, this is how a revision is published.
func SetArtifact(ctx context.Context, c client.Client, kind, namespace, name string, artifact *meta.Artifact) error {
	source, artifactField, err := placeholderSource(kind, namespace, name)
	if err != nil {
		return err
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(source), source); err != nil {
		if err := c.Create(ctx, source); err != nil {
			return err
		}
	}
	*artifactField = artifact
	return c.Status().Update(ctx, source)
}

// placeholderSource returns a valid source of kind whose spec nothing reads (no
// source-controller runs), and the field of its status that holds the artifact.
func placeholderSource(kind, namespace, name string) (client.Object, **meta.Artifact, error) {
	objectMeta := metav1.ObjectMeta{Name: name, Namespace: namespace}
	interval := metav1.Duration{Duration: time.Hour}
	switch kind {
	case sourcev1.GitRepositoryKind:
		repo := &sourcev1.GitRepository{ObjectMeta: objectMeta,
			Spec: sourcev1.GitRepositorySpec{URL: "https://git.example.com/" + name + ".git", Interval: interval}}
		return repo, &repo.Status.Artifact, nil
	case sourcev1.OCIRepositoryKind:
		repo := &sourcev1.OCIRepository{ObjectMeta: objectMeta,
			Spec: sourcev1.OCIRepositorySpec{URL: "oci://registry.example.com/" + name, Interval: interval}}
		return repo, &repo.Status.Artifact, nil
	case sourcev1.BucketKind:
		bucket := &sourcev1.Bucket{ObjectMeta: objectMeta,
			Spec: sourcev1.BucketSpec{BucketName: name, Endpoint: "s3.example.com", Interval: interval}}
		return bucket, &bucket.Status.Artifact, nil
	}
	return nil, nil, fmt.Errorf("no source kind %q", kind)
}
