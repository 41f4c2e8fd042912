package docstest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryReasonIsDocumented: each reason api/v1alpha1 spells (conditions and events alike)
// is named in docs/operations.md, so that a reason added to the API, or a literal made a
// constant, cannot reach users unexplained. Reasons taken from Flux's meta package are Flux's
// to document.
func TestEveryReasonIsDocumented(t *testing.T) {
	root := repoRoot(t)
	docs, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "api", "v1alpha1", "condition_types.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range spec.Names {
			if i >= len(spec.Values) || !strings.HasSuffix(name.Name, "Reason") {
				continue
			}
			lit, isLiteral := spec.Values[i].(*ast.BasicLit)
			if !isLiteral {
				continue
			}
			found++
			reason, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(docs), "`"+reason+"`") {
				t.Errorf("%s (%q) is not named in docs/operations.md", name.Name, reason)
			}
		}
		return false
	})
	if found == 0 {
		t.Fatal("no reasons in api/v1alpha1/condition_types.go")
	}
}
