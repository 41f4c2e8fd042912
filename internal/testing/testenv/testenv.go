// Package testenv is what every envtest user of the harness starts from: the kube-apiserver
// and etcd binaries (built or downloaded by hack/envtest.sh), the CRD folders, the scheme of
// the objects the suites handle, and an envtest.Environment of them, wherever `go test` runs
// from.
//
// Test harness: no product package may import it.
package testenv

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// K8sVersion is the Kubernetes version of the envtest binaries; keep it in step with
// ENVTEST_K8S_VERSION in the Makefile and hack/envtest.sh.
const K8sVersion = "1.36.3"

// RepoRoot returns the repository's root folder.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// BinaryAssetsDir returns the folder of kube-apiserver and etcd: KUBEBUILDER_ASSETS when set
// (as `make test` does), else the folder hack/envtest.sh puts them in, so that `go test` works
// on its own once `make envtest` has run: ENVTEST_BIN_DIR/<version> when that is set, else the
// per-user cache of hack/toolcache.sh, OSMOPS_CACHE_DIR or XDG_CACHE_HOME/osmops or
// ~/.cache/osmops, then k8s/<version>-<GOOS>-<GOARCH>. Keep it in step with those scripts
// (os.UserCacheDir is not used: on macOS it differs from what the scripts compute).
func BinaryAssetsDir() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	var dir string
	if bin := os.Getenv("ENVTEST_BIN_DIR"); bin != "" {
		dir = filepath.Join(bin, K8sVersion)
	} else {
		cache := os.Getenv("OSMOPS_CACHE_DIR")
		if cache == "" {
			base := os.Getenv("XDG_CACHE_HOME")
			if base == "" {
				home, err := os.UserHomeDir()
				if err != nil {
					return "", fmt.Errorf("finding the envtest binaries: %w; set KUBEBUILDER_ASSETS", err)
				}
				base = filepath.Join(home, ".cache")
			}
			cache = filepath.Join(base, "osmops")
		}
		dir = filepath.Join(cache, "k8s", K8sVersion+"-"+runtime.GOOS+"-"+runtime.GOARCH)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("no envtest binaries in %s: run `make envtest` (or `make test`) first", dir)
		}
	}
	return dir, nil
}

// CRDPaths returns the folders of the CRDs the suites install: osmops' own and those of the
// Flux sources an OsmDeployment accepts.
func CRDPaths() []string {
	return []string{OsmopsCRDPath(), filepath.Join(RepoRoot(), "internal", "testing", "testenv", "testdata", "crds")}
}

// OsmopsCRDPath returns the folder of osmops' own CRDs.
func OsmopsCRDPath() string {
	return filepath.Join(RepoRoot(), "config", "crd", "bases")
}

// NewScheme returns a scheme with Kubernetes' built-in types, Flux's source types and the
// osmops types: everything the suites' objects are made of.
func NewScheme() *k8sruntime.Scheme {
	scheme := k8sruntime.NewScheme()
	for _, add := range []func(*k8sruntime.Scheme) error{
		clientgoscheme.AddToScheme, sourcev1.AddToScheme, gitopsv1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			panic(err) // only a type registered twice under two names fails, a programming error
		}
	}
	return scheme
}

// NewEnvironment returns an envtest environment that runs the binaries of BinaryAssetsDir
// and installs the CRDs of CRDPaths; a caller may change its fields before Start.
func NewEnvironment() (*envtest.Environment, error) {
	assets, err := BinaryAssetsDir()
	if err != nil {
		return nil, err
	}
	return &envtest.Environment{CRDDirectoryPaths: CRDPaths(), ErrorIfCRDPathMissing: true, BinaryAssetsDirectory: assets}, nil
}

// InstanceStateEnum is the enum of an OsmDeployment's status.inventory.nsInstances[].state in
// the CRD: what the tests of every mapping of the state hold their lists to.
func InstanceStateEnum(t testing.TB) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(OsmopsCRDPath(), "gitops.osmops.io_osmdeployments.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	var enum []string
	for _, version := range crd.Spec.Versions {
		if version.Name != gitopsv1alpha1.GroupVersion.Version {
			continue
		}
		state := version.Schema.OpenAPIV3Schema.Properties["status"].Properties["inventory"].Properties["nsInstances"].Items.Schema.Properties["state"]
		for _, value := range state.Enum {
			var s string
			if err := json.Unmarshal(value.Raw, &s); err != nil {
				t.Fatal(err)
			}
			enum = append(enum, s)
		}
	}
	if len(enum) == 0 {
		t.Fatal("no enum of the NS instance state in the CRD")
	}
	return enum
}
