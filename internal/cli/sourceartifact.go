package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/artifact"
	"github.com/osmops/osmops/internal/pipeline"
)

// artifactTimeout bounds the download of a source's artifact.
const artifactTimeout = 2 * time.Minute

// sourceCheckout is the current artifact of an OsmDeployment's source, unpacked.
type sourceCheckout struct {
	// Dir holds the unpacked artifact; remove it when done.
	Dir string
	// Name says what it is, for the diff's header: "GitRepository telco/gitops at main@sha1:…".
	Name string
}

// fetchSourceArtifact downloads, verifies and unpacks the artifact the source of obj holds
// now, as the operator does (artifact.Fetch, its digest checked, within the operator's
// default limits): what the cluster would apply. Outside the cluster, source-controller's
// in-cluster address is reached through the API server's service proxy (serviceProxyURL).
func fetchSourceArtifact(ctx context.Context, kube *genericclioptions.ConfigFlags, c client.Client, obj *gitopsv1alpha1.OsmDeployment) (*sourceCheckout, error) {
	config, err := kube.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	kind := obj.Spec.SourceRef.Kind
	source, known := pipeline.NewSource(kind)
	if !known {
		return nil, fmt.Errorf("source kind %q is not supported", kind)
	}
	key := types.NamespacedName{Namespace: obj.GetSourceNamespace(), Name: obj.Spec.SourceRef.Name}
	if err := c.Get(ctx, key, source); err != nil {
		return nil, fmt.Errorf("%s %s: %w", kind, key, err)
	}
	a := source.GetArtifact()
	if a == nil {
		return nil, fmt.Errorf("%s %s has no artifact yet: give the folder of a checkout to plan it", kind, key)
	}
	httpClient := &http.Client{Timeout: artifactTimeout}
	artifactURL := a.URL
	if proxied, ok := serviceProxyURL(config.Host, a.URL); ok {
		transport, err := rest.TransportFor(config)
		if err != nil {
			return nil, fmt.Errorf("reaching source-controller through the API server: %w", err)
		}
		httpClient.Transport, artifactURL = transport, proxied
	}
	dir, err := os.MkdirTemp("", "osmops-diff-")
	if err != nil {
		return nil, err
	}
	if err := artifact.Fetch(ctx, httpClient, artifactURL, a.Digest, dir, artifact.Limits{}); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("fetching the artifact of %s %s (revision %s): %w", kind, key, a.Revision, err)
	}
	return &sourceCheckout{Dir: dir, Name: fmt.Sprintf("%s %s at %s", kind, key, a.Revision)}, nil
}

// serviceProxyURL is the address, through the API server at host, of an artifact URL whose
// host is a Service's in-cluster name (source-controller.flux-system.svc.cluster.local.):
// the API server's proxy to that Service (/api/v1/namespaces/NS/services/SCHEME:NAME:PORT/proxy/…),
// as kubectl proxy reaches it. It is false for any other URL, fetched as it is.
func serviceProxyURL(host, artifactURL string) (string, bool) {
	u, err := url.Parse(artifactURL)
	if err != nil || host == "" {
		return "", false
	}
	name := strings.TrimSuffix(u.Hostname(), ".")
	name = strings.TrimSuffix(name, ".cluster.local")
	service, namespace, found := strings.Cut(strings.TrimSuffix(name, ".svc"), ".")
	if !found || !strings.HasSuffix(name, ".svc") || service == "" || namespace == "" || strings.Contains(namespace, ".") {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	base, err := url.Parse(host)
	if err != nil {
		return "", false
	}
	base.Path = strings.TrimSuffix(base.Path, "/") + fmt.Sprintf("/api/v1/namespaces/%s/services/%s:%s:%s/proxy%s",
		namespace, u.Scheme, service, port, u.Path)
	base.RawPath = ""
	base.RawQuery = u.RawQuery
	return base.String(), true
}
