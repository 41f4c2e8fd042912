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
// (as `make test` does), else the cache of hack/envtest.sh, so that `go test` works on its own
// once `make envtest` has run.
func BinaryAssetsDir() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	dir := filepath.Join(RepoRoot(), "bin", "k8s", K8sVersion)
	if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
		return "", fmt.Errorf("no envtest binaries in %s: run `make envtest` (or `make test`) first", dir)
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
