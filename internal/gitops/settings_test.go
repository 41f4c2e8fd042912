package gitops

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// The items of fileExtensions are checked as the CRD checks the spec's, in the settings file
// too: a list item holding two suffixes (which fmt prints like two items), a separator or a
// space is refused, naming the file and line.
func TestFileExtensionsAreSuffixes(t *testing.T) {
	for _, tc := range []struct {
		extensions string
		want       string // "" when accepted
	}{
		{extensions: "[.ops.yaml, .ops.yml, .ns_1+x-y]"},
		{extensions: `[".ns .osm"]`, want: `osm_ops_config.yaml:1: field "fileExtensions": ".ns .osm" is not a file name suffix`},
		{extensions: "[ops.yaml]", want: `"ops.yaml" is not a file name suffix`},
		{extensions: "[.ops/x.yaml]", want: `".ops/x.yaml" is not a file name suffix`},
		{extensions: `[".ops\\x.yaml"]`, want: `is not a file name suffix`},
		{extensions: `[".ops\tyaml"]`, want: `".ops\tyaml" is not a file name suffix`},
		{extensions: "[." + strings.Repeat("y", 64) + "]", want: "at most 63 letters"},
		{extensions: "[" + strings.Repeat(".a, ", 16) + ".a]", want: "lists 17 suffixes, more than the limit of 16"},
	} {
		fsys := fstest.MapFS{ConfigFileName: {Data: []byte("fileExtensions: " + tc.extensions + "\n")}}
		config, _, problems, err := readRepoConfig(fsys)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.want == "" && (len(problems) > 0 || config.fileExtensions == nil):
			t.Errorf("%s: refused: %v", tc.extensions, problems)
		case tc.want != "" && (len(problems) != 1 || !strings.HasPrefix(problems[0].String(), ConfigFileName+":1:") ||
			!strings.Contains(problems[0].String(), tc.want)):
			t.Errorf("%s: problems %v, want one naming %s:1 with %q", tc.extensions, problems, ConfigFileName, tc.want)
		}
	}
	// The spec's items are checked alike (osmops validate reads a spec the CRD did not check).
	_, problems := resolveSettings(Options{FileExtensions: []string{".ns .osm"}}, repoConfig{})
	if len(problems) != 1 || !strings.Contains(problems[0].String(), `spec.fileExtensions: ".ns .osm" is not a file name suffix`) {
		t.Errorf("spec: %v", problems)
	}
}

// A revision declaring more NS instances than an OsmDeployment's status can list is refused,
// naming the cap and the count; the cap itself is accepted.
func TestRevisionOverTheInstanceCapIsRefused(t *testing.T) {
	files := map[string]string{}
	for i := range MaxNsInstances {
		files[fmt.Sprintf("deploy/ns-%d.osmops.yaml", i)] = deployment(fmt.Sprintf("ns-%d", i))
	}
	if rev, err := Load(writeTree(t, files), Options{Path: "deploy"}); err != nil || len(rev.NsInstances) != MaxNsInstances {
		t.Fatalf("%d NS instances: %v", MaxNsInstances, err)
	}
	files["deploy/one-more.osmops.yaml"] = deployment("one-more")
	_, err := Load(writeTree(t, files), Options{Path: "deploy"})
	var invalid *ValidationError
	if !errors.As(err, &invalid) || len(invalid.Problems) != 1 {
		t.Fatalf("%d NS instances: %v, want one problem", MaxNsInstances+1, err)
	}
	want := fmt.Sprintf("deploy: declares %d NS instances, more than the limit of %d per OsmDeployment", MaxNsInstances+1, MaxNsInstances)
	if got := invalid.Problems[0].String(); !strings.HasPrefix(got, want) {
		t.Errorf("problem %q, want %q", got, want)
	}
}
