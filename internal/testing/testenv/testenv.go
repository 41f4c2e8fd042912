// Package testenv finds what the envtest suites need: the kube-apiserver and etcd binaries
// (built or downloaded by hack/envtest.sh) and the CRD folders, wherever `go test` runs from.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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

// CRDPaths returns the folders of the CRDs the suites install: osmops' own and Flux's
// GitRepository.
func CRDPaths() []string {
	root := RepoRoot()
	return []string{
		filepath.Join(root, "config", "crd", "bases"),
		filepath.Join(root, "internal", "testing", "testenv", "testdata", "crds"),
	}
}
