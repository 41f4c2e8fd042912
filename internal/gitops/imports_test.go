package gitops

import (
	"go/build"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Reading Git needs no NBI client (docs/architecture.md): internal/gitops reaches neither
// internal/osm nor the API types, directly or through another package of the module.
func TestGitopsNeedsNoNBIClient(t *testing.T) {
	const module = "github.com/osmops/osmops/"
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	forbidden := map[string]bool{module + "internal/osm": true, module + "api/v1alpha1": true}
	seen := map[string]string{}
	var walk func(path, from string)
	walk = func(path, from string) {
		if _, done := seen[path]; done || !strings.HasPrefix(path, module) {
			return
		}
		seen[path] = from
		if forbidden[path] {
			t.Errorf("internal/gitops imports %s (through %s)", path, from)
			return
		}
		pkg, err := build.Import(path, root, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imported := range pkg.Imports {
			walk(imported, path)
		}
	}
	walk(module+"internal/gitops", "")
}
