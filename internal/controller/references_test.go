package controller

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osmconn"
)

// The references of what parsed of an invalid revision are checked against OSM, and against
// the revision's own packages when OSM does not answer; the revision cache's error is left as
// it was.
func TestInvalidRevisionReferences(t *testing.T) {
	files := demoRepo("1")
	files["deploy/ldap.osmops.yaml"] = strings.Replace(strings.Replace(nsInstanceFile("ldap", "1"),
		"vnfName: openldap", "vnfName: openldapx", 1), "  params:", "  parms:", 1)
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := gitops.Load(dir, gitops.Options{})
	var invalid *gitops.ValidationError
	if !errors.As(err, &invalid) {
		t.Fatalf("Load: %v, want a ValidationError", err)
	}
	parseProblem := `deploy/ldap.osmops.yaml:9: unknown field "kdu.parms"`
	wrongProfile := `deploy/ldap.osmops.yaml:5: vnfName "openldapx" is not a vnf-profile of NSD "openldap_ns" (valid: "openldap")`
	unknownVIM := `deploy/ldap.osmops.yaml:6: vimAccountName "` + testVIMAccount + `" is not a VIM account of OSM (known: none)`
	r := &OsmDeploymentReconciler{}
	obj := &gitopsv1alpha1.OsmDeployment{}
	for _, test := range []struct {
		name string
		osm  *readOnlyOSM
		want []string
	}{
		{"against OSM", &readOnlyOSM{}, []string{wrongProfile, unknownVIM, parseProblem}},
		{"OSM does not answer: the revision's own packages", &readOnlyOSM{err: errors.New("connection refused")}, []string{wrongProfile, parseProblem}},
	} {
		got := r.invalidWithReferences(context.Background(), obj, &osmconn.Connection{NBI: test.osm}, invalid)
		var lines []string
		for _, problem := range got.Problems {
			lines = append(lines, problem.String())
		}
		if diff := cmp.Diff(test.want, lines); diff != "" {
			t.Errorf("%s (-want +got):\n%s", test.name, diff)
		}
		if invalid.Count() != 1 {
			t.Errorf("%s: the revision's own error changed: %v", test.name, invalid)
		}
	}
}
