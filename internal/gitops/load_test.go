package gitops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreDerived leaves the field lines out of NsInstance comparisons;
// TestFieldLines checks them.
// ignoreDerived leaves out of comparisons what Load derives from the declared fields.
var ignoreDerived = cmp.Options{cmpopts.IgnoreFields(SourceRef{}, "FieldLines"), cmpopts.IgnoreFields(NsInstance{}, "Origins"), cmpopts.IgnoreUnexported(NsInstance{})}

// packageSummary is what the tests compare of a package.
type packageSummary struct {
	Source, ID string
	Kind       string
}

func summarise(packages []Package) []packageSummary {
	var summaries []packageSummary
	for _, pkg := range packages {
		summaries = append(summaries, packageSummary{pkg.Source, pkg.Descriptor.ID, string(pkg.Descriptor.Kind)})
	}
	return summaries
}

func TestLoadFirstGenerationRepository(t *testing.T) {
	revision, err := Load("testdata/firstgen", Options{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	wantInstances := []NsInstance{{
		Name:           "ldap",
		Description:    "Demo LDAP NS",
		NsdName:        "openldap_ns",
		VnfName:        "openldap",
		VimAccountName: "mylocation1",
		KDU:            KDU{Name: "ldap", Params: map[string]any{"replicaCount": "2"}},
		Source:         SourceRef{File: "_deployment_/ldap.ops.yaml", Line: 1},
	}}
	if diff := cmp.Diff(wantInstances, revision.NsInstances, ignoreDerived); diff != "" {
		t.Errorf("NsInstances (-want +got):\n%s", diff)
	}
	for _, instance := range revision.NsInstances {
		unsealed := instance
		unsealed.sealed = nil
		if instance.sealed == nil || instance.Digest() != unsealed.Digest() || instance.ParamsJSON(instance.VnfName, instance.KDU) != unsealed.ParamsJSON(unsealed.VnfName, unsealed.KDU) {
			t.Errorf("%s: Load did not seal the digest and params of the instance it read", instance.Name)
		}
	}
	wantPackages := []packageSummary{
		{"_deployment_/osm-pkgs/openldap_knf", "openldap_knf", "vnf"},
		{"_deployment_/osm-pkgs/openldap_ns", "openldap_ns", "ns"},
	}
	if diff := cmp.Diff(wantPackages, summarise(revision.Packages)); diff != "" {
		t.Errorf("Packages (-want +got):\n%s", diff)
	}
	wantSettings := Settings{Path: "_deployment_", FileExtensions: []string{".ops.yaml"}, PackagesPath: "osm-pkgs"}
	if diff := cmp.Diff(wantSettings, revision.Settings); diff != "" {
		t.Errorf("Settings (-want +got):\n%s", diff)
	}
	wantWarnings := []string{"osm_ops_config.yaml:3: connectionFile is ignored: the OSM connection comes from the OsmCluster"}
	if diff := cmp.Diff(wantWarnings, revision.Warnings); diff != "" {
		t.Errorf("Warnings (-want +got):\n%s", diff)
	}
	if first := revision.NsInstances[0]; first.ParamsJSON(first.VnfName, first.KDU) != `{"replicaCount":"2"}` {
		t.Errorf("ParamsJSON = %s", first.ParamsJSON(first.VnfName, first.KDU))
	}
}

func TestLoadValidForms(t *testing.T) {
	ldap := func(name, file string, line int) NsInstance {
		return NsInstance{
			Name: name, NsdName: "openldap_ns", VnfName: "openldap", VimAccountName: "mylocation1",
			KDU: KDU{Name: "ldap"}, Source: SourceRef{File: file, Line: line},
		}
	}
	defaults := Settings{Path: ".", FileExtensions: []string{".osmops.yaml", ".osmops.yml"}, PackagesPath: "osm-pkgs"}
	tests := []struct {
		name          string
		files         map[string]string
		opts          Options
		wantInstances []NsInstance
		wantSettings  Settings
		wantWarnings  []string
	}{
		{
			name: "defaults: the whole artifact, both extensions in any case, sorted by name",
			files: map[string]string{
				"b/zeta.osmops.yaml":            deployment("zeta"),
				"a/deep/er/alpha.OSMOPS.YML":    deployment("alpha"),
				"notes.yaml":                    "not: a deployment file",
				"osm-pkgs/x.osmops.yaml":        "inside the packages folder: not read",
				"c/template.osmops.yaml.backup": "wrong suffix",
			},
			wantInstances: []NsInstance{
				ldap("alpha", "a/deep/er/alpha.OSMOPS.YML", 1),
				ldap("zeta", "b/zeta.osmops.yaml", 1),
			},
			wantSettings: defaults,
		},
		{
			name: "optional fields, comments, document marker, scalars read as strings, nested params",
			files: map[string]string{"full.osmops.yaml": `# an LDAP service
---
kind: NsInstance
name: 2024
description: Demo LDAP NS
nsdName: openldap_ns
vnfName: 1
vimAccountName: mylocation1
kdu:
  name: ldap
  params:
    replicaCount: 2
    ratio: 0.5
    enabled: true
    nothing: null
    image: {tag: "1.2"}
    env: [{name: A, value: "1"}, 3]
    when: 2021-01-01
`},
			wantInstances: []NsInstance{{
				Name: "2024", Description: "Demo LDAP NS", NsdName: "openldap_ns", VnfName: "1", VimAccountName: "mylocation1",
				KDU: KDU{Name: "ldap", Params: map[string]any{
					"replicaCount": int64(2),
					"ratio":        0.5,
					"enabled":      true,
					"nothing":      nil,
					"image":        map[string]any{"tag": "1.2"},
					"env":          []any{map[string]any{"name": "A", "value": "1"}, int64(3)},
					"when":         "2021-01-01",
				}},
				Source: SourceRef{File: "full.osmops.yaml", Line: 3},
			}},
			wantSettings: defaults,
		},
		{
			name: "params null and empty are none",
			files: map[string]string{
				"a.osmops.yaml": deployment("a") + "  params:\n",
				"b.osmops.yaml": deployment("b") + "  params: {}\n",
			},
			wantInstances: []NsInstance{
				ldap("a", "a.osmops.yaml", 1),
				func() NsInstance { n := ldap("b", "b.osmops.yaml", 1); n.KDU.Params = map[string]any{}; return n }(),
			},
			wantSettings: defaults,
		},
		{
			name: "settings file: targetDir and fileExtensions, unknown field warned about",
			files: map[string]string{
				"osm_ops_config.yaml":       "targetDir: ./deploy/\nfileExtensions: [.ops.yaml, .ops.yml]\ncolour: blue\n",
				"deploy/ldap.ops.yaml":      deployment("ldap"),
				"deploy/other.osmops.yaml":  "not read: the extensions changed",
				"elsewhere/x.ops.yaml":      "not read: outside targetDir",
				"deploy/osm-pkgs/p.ops.yml": "not read: packages folder",
			},
			wantInstances: []NsInstance{ldap("ldap", "deploy/ldap.ops.yaml", 1)},
			wantSettings:  Settings{Path: "deploy", FileExtensions: []string{".ops.yaml", ".ops.yml"}, PackagesPath: "osm-pkgs"},
			wantWarnings:  []string{`osm_ops_config.yaml:3: unknown field "colour" is ignored`},
		},
		{
			name: "the spec wins over the settings file",
			files: map[string]string{
				"osm_ops_config.yaml":    "targetDir: deploy\nfileExtensions: [.ops.yaml]\n",
				"deploy/ldap.ops.yaml":   "not read: the spec says otherwise",
				"spec/ldap.dep.yaml":     deployment("ldap"),
				"spec/pkgs/x.dep.yaml":   "not read: the spec's packages folder",
				"spec/osm-pkgs/y.dep.ym": "read as nothing: wrong suffix",
			},
			opts:          Options{Path: "spec", FileExtensions: []string{".dep.yaml"}, PackagesPath: "pkgs"},
			wantInstances: []NsInstance{ldap("ldap", "spec/ldap.dep.yaml", 1)},
			wantSettings:  Settings{Path: "spec", FileExtensions: []string{".dep.yaml"}, PackagesPath: "pkgs"},
		},
		{
			name:         "empty settings file and no deployment file",
			files:        map[string]string{"osm_ops_config.yaml": "# nothing set\n"},
			wantSettings: defaults,
		},
		{
			name: "a settings file matching the extensions is not a deployment file",
			files: map[string]string{
				"osm_ops_config.yaml": "fileExtensions: [.yaml]\n",
				"ldap.yaml":           deployment("ldap"),
			},
			wantInstances: []NsInstance{ldap("ldap", "ldap.yaml", 1)},
			wantSettings:  Settings{Path: ".", FileExtensions: []string{".yaml"}, PackagesPath: "osm-pkgs"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			revision, err := Load(writeTree(t, tc.files), tc.opts)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(tc.wantInstances, revision.NsInstances, ignoreDerived); diff != "" {
				t.Errorf("NsInstances (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSettings, revision.Settings); diff != "" {
				t.Errorf("Settings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, revision.Warnings); diff != "" {
				t.Errorf("Warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldLines(t *testing.T) {
	instance, _, problems := parseDeploymentFile("a.ops.yaml", []byte("# header\n"+deployment("ldap")+"  params: {a: 1}\ndescription: x\n"))
	if problems != nil {
		t.Fatalf("problems: %v", problems)
	}
	want := SourceRef{File: "a.ops.yaml", Line: 2, FieldLines: map[string]int{
		"kind": 2, "name": 3, "nsdName": 4, "vnfName": 5, "vimAccountName": 6, "kdu": 7, "kdu.name": 8, "kdu.params": 9, "description": 10,
	}}
	if diff := cmp.Diff(want, instance.Source); diff != "" {
		t.Errorf("Source (-want +got):\n%s", diff)
	}
	if got := instance.Source.LineOf("missing"); got != 2 {
		t.Errorf("LineOf a field not set = %d, want the kind line 2", got)
	}
}

func TestLoadProblems(t *testing.T) {
	billionLaughs := "kind: NsInstance\nname: lol\nnsdName: a\nvnfName: b\nvimAccountName: c\nkdu:\n  name: d\n  params:\n" +
		"    a: &a [x, x, x, x, x, x, x, x, x]\n" +
		"    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n" +
		"    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
	deeplyNested := deployment("deep") + "  params:\n    v: " + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "\n"
	tests := []struct {
		name  string
		files map[string]string
		opts  Options
		want  []string
	}{
		{
			name:  "empty file",
			files: map[string]string{"a.osmops.yaml": ""},
			want:  []string{"a.osmops.yaml: the file is empty; it must declare one NsInstance"},
		},
		{
			name:  "only comments",
			files: map[string]string{"a.osmops.yaml": "# kind: NsInstance\n"},
			want:  []string{"a.osmops.yaml: the file is empty; it must declare one NsInstance"},
		},
		{
			name:  "empty document",
			files: map[string]string{"a.osmops.yaml": "---\n"},
			want:  []string{"a.osmops.yaml:2: the document is null; it must be a map with kind: NsInstance"},
		},
		{
			name:  "a list",
			files: map[string]string{"a.osmops.yaml": "- kind: NsInstance\n"},
			want:  []string{"a.osmops.yaml:1: the document is a list; it must be a map with kind: NsInstance"},
		},
		{
			name:  "syntax error",
			files: map[string]string{"a.osmops.yaml": "kind: NsInstance\nname: a\n  nsdName: b\n"},
			want:  []string{"a.osmops.yaml:3: YAML syntax error: mapping values are not allowed in this context"},
		},
		{
			name:  "two documents",
			files: map[string]string{"a.osmops.yaml": deployment("a") + "---\n" + deployment("b")},
			want:  []string{"a.osmops.yaml:9: a second YAML document starts here; the file must hold only one"},
		},
		{
			name:  "unknown fields",
			files: map[string]string{"a.osmops.yaml": deployment("a") + "  chart: x\nvnfname: openldap\n"},
			want: []string{
				`a.osmops.yaml:8: unknown field "kdu.chart"`,
				`a.osmops.yaml:9: unknown field "vnfname" (did you mean "vnfName"?)`,
			},
		},
		{
			name:  "missing required fields, all reported",
			files: map[string]string{"a.osmops.yaml": "description: nothing else\n"},
			want: []string{
				`a.osmops.yaml:1: missing required field "kind"`,
				`a.osmops.yaml:1: missing required field "name"`,
				`a.osmops.yaml:1: missing required field "nsdName"`,
				`a.osmops.yaml:1: missing required field "vimAccountName"`,
				`a.osmops.yaml:1: missing what the NS instance runs: "vnfName" and "kdu" (one KDU of one VNF), or "vnfs" (several VNFs and KDUs)`,
			},
		},
		{
			name: "empty and null required fields",
			files: map[string]string{"a.osmops.yaml": "kind: NsInstance\nname: \"\"\nnsdName:\nvnfName: v\nvimAccountName: ~\n" +
				"kdu:\n  params: {a: 1}\n"},
			want: []string{
				`a.osmops.yaml:2: field "name" must not be empty`,
				`a.osmops.yaml:3: field "nsdName" must not be empty`,
				`a.osmops.yaml:5: field "vimAccountName" must not be empty`,
				`a.osmops.yaml:6: missing required field "kdu.name"`,
			},
		},
		{
			name: "wrong types",
			files: map[string]string{
				"a.osmops.yaml": "kind: NsInstance\nname: [ldap]\nnsdName: {id: x}\nvnfName: v\nvimAccountName: w\nkdu:\n  name: [k]\n  params: [1, 2]\n",
				"b.osmops.yaml": "kind: NsInstance\nname: b\nnsdName: n\nvnfName: v\nvimAccountName: w\nkdu: ldap\n",
			},
			want: []string{
				`a.osmops.yaml:2: field "name" must be a string, not a list`,
				`a.osmops.yaml:3: field "nsdName" must be a string, not a map`,
				`a.osmops.yaml:7: field "kdu.name" must be a string, not a list`,
				`a.osmops.yaml:8: field "kdu.params" must be a map of Helm values, not a list`,
				`b.osmops.yaml:6: field "kdu" must be a map with name and params, not a scalar`,
			},
		},
		{
			name: "unknown kind, reported alone",
			files: map[string]string{
				"a.osmops.yaml": strings.Replace(deployment("a"), "kind: NsInstance", "kind: NsInstances", 1),
				"b.osmops.yaml": "apiVersion: v1\nkind: ConfigMap\ndata: {}\n",
			},
			want: []string{
				`a.osmops.yaml:1: field "kind" is "NsInstances"; it must be "NsInstance"`,
				`b.osmops.yaml:2: field "kind" is "ConfigMap"; it must be "NsInstance"`,
			},
		},
		{
			name:  "repeated field",
			files: map[string]string{"a.osmops.yaml": deployment("a") + "name: b\n"},
			want:  []string{`a.osmops.yaml:8: field "name" is repeated (first at line 2)`},
		},
		{
			name:  "an alias",
			files: map[string]string{"a.osmops.yaml": deployment("a") + "  params:\n    x: &x 1\n    y: *x\n"},
			want:  []string{"a.osmops.yaml:10: YAML aliases (*x) are not allowed"},
		},
		{
			name:  "an alias bomb",
			files: map[string]string{"a.osmops.yaml": billionLaughs},
			want:  []string{"a.osmops.yaml:10: YAML aliases (*a) are not allowed"},
		},
		{
			name:  "too deep",
			files: map[string]string{"a.osmops.yaml": deeplyNested},
			want:  []string{"a.osmops.yaml:9: the YAML is nested deeper than 64 levels"},
		},
		{
			name:  "huge file",
			files: map[string]string{"a.osmops.yaml": deployment("a") + "# " + strings.Repeat("x", 1<<20) + "\n"},
			want:  []string{"a.osmops.yaml: the file is larger than the limit of 1048576 bytes"},
		},
		{
			name: "params JSON cannot hold",
			files: map[string]string{"a.osmops.yaml": deployment("a") +
				"  params:\n    nan: .nan\n    <<: {x: 1}\n    [k]: 1\n    list: [1, -.inf]\n    a: 1\n    a: 2\n"},
			want: []string{
				`a.osmops.yaml:9: field "kdu.params.nan": .nan is not a number JSON can hold`,
				"a.osmops.yaml:10: YAML merge keys (<<) are not supported",
				"a.osmops.yaml:11: this key is a list; keys must be strings",
				`a.osmops.yaml:12: field "kdu.params.list[1]": -.inf is not a number JSON can hold`,
				`a.osmops.yaml:14: field "kdu.params.a" is repeated (first at line 13)`,
			},
		},
		{
			name: "params that OSM's upgrade reads as options",
			files: map[string]string{"a.osmops.yaml": deployment("a") +
				"  params:\n    replicaCount: 1\n    kdu_model: stable/ldap\n    nested: {kdu_reset_values: x}\n"},
			want: []string{`a.osmops.yaml:10: field "kdu.params": "kdu_model" is an option of OSM's KDU upgrade, not a Helm value: OSM would not pass it to Helm`},
		},
		{
			name: "invalid NS names",
			files: map[string]string{
				"a.osmops.yaml": strings.Replace(deployment("a"), "name: a", "name: \"a\\tb\"", 1),
				"b.osmops.yaml": strings.Replace(deployment("a"), "name: a", "name: "+strings.Repeat("é", 256), 1),
				"c.osmops.yaml": strings.Replace(deployment("a"), "name: a", "name: \"ldap(1)\"", 1),
			},
			want: []string{
				`a.osmops.yaml:2: NS instance name "a\tb" contains a control character`,
				`b.osmops.yaml:2: NS instance name "` + strings.Repeat("é", 32) + `"... is longer than 255 characters`,
				`c.osmops.yaml:2: NS instance name "ldap(1)" contains "(": OSM refuses names with any of , ; ( ) ' "`,
			},
		},
		{
			name: "duplicate NS names",
			files: map[string]string{
				"a.ops.yaml":     deployment("ldap"),
				"b.ops.yaml":     deployment("ldap"),
				"sub/c.ops.yaml": "# the same again\n" + deployment("ldap"),
			},
			opts: Options{FileExtensions: []string{".ops.yaml"}},
			want: []string{
				`b.ops.yaml:2: NS instance "ldap" is already declared in a.ops.yaml:2`,
				`sub/c.ops.yaml:3: NS instance "ldap" is already declared in a.ops.yaml:2`,
			},
		},
		{
			name:  "spec paths outside the artifact",
			files: map[string]string{},
			opts:  Options{Path: "../other", PackagesPath: "/etc"},
			want: []string{
				`spec.packagesPath: "/etc" must be a relative path inside the artifact, without ".."`,
				`spec.path: "../other" must be a relative path inside the artifact, without ".."`,
			},
		},
		{
			name:  "spec extensions",
			files: map[string]string{},
			opts:  Options{FileExtensions: []string{".ops.yaml", ""}},
			want:  []string{"spec.fileExtensions: must not hold an empty suffix"},
		},
		{
			name:  "spec extensions set to none",
			files: map[string]string{},
			opts:  Options{FileExtensions: []string{}},
			want:  []string{"spec.fileExtensions: must list at least one file name suffix"},
		},
		{
			name:  "spec path with a trailing slash is fine",
			files: map[string]string{"deploy/a.osmops.yaml": deployment("a")},
			opts:  Options{Path: "./deploy/"},
		},
		{
			name:  "spec path not there",
			files: map[string]string{"deploy/a.osmops.yaml": deployment("a")},
			opts:  Options{Path: "deploy/nowhere"},
			want:  []string{`spec.path: the folder "deploy/nowhere" does not exist in the revision`},
		},
		{
			name:  "settings file targetDir not there",
			files: map[string]string{"osm_ops_config.yaml": "\ntargetDir: _deployment_\n"},
			want:  []string{`osm_ops_config.yaml:2: field "targetDir": the folder "_deployment_" does not exist in the revision`},
		},
		{
			name:  "settings file with bad values",
			files: map[string]string{"osm_ops_config.yaml": "targetDir: ../up\nfileExtensions: .ops.yaml\n"},
			want: []string{
				`osm_ops_config.yaml:1: field "targetDir": "../up" must be a relative path inside the artifact, without ".."`,
				`osm_ops_config.yaml:2: field "fileExtensions": must be a list of file name suffixes, not a scalar`,
			},
		},
		{
			name:  "settings file with wrong types",
			files: map[string]string{"osm_ops_config.yaml": "targetDir: [a]\nfileExtensions: [[.a]]\n"},
			want: []string{
				`osm_ops_config.yaml:1: field "targetDir" must be a string, not a list`,
				`osm_ops_config.yaml:2: field "fileExtensions": must be a list of file name suffixes, not of a list`,
			},
		},
		{
			name:  "settings file not YAML",
			files: map[string]string{"osm_ops_config.yaml": "targetDir: [a\n"},
			want:  []string{"osm_ops_config.yaml:1: YAML syntax error: did not find expected ',' or ']'"},
		},
		{
			name: "the spec hides a bad settings value",
			files: map[string]string{
				"osm_ops_config.yaml": "targetDir: ../up\n",
				"ok/a.osmops.yaml":    deployment("a"),
			},
			opts: Options{Path: "ok"},
		},
		{
			name: "several problems at once, sorted by file and line",
			files: map[string]string{
				"z.osmops.yaml": deployment("z") + "extra: 1\n",
				"a.osmops.yaml": "kind: NsInstance\n",
				"m.osmops.yaml": deployment("m"),
				"b.osmops.yaml": "",
			},
			want: []string{
				`a.osmops.yaml:1: missing required field "name"`,
				`a.osmops.yaml:1: missing required field "nsdName"`,
				`a.osmops.yaml:1: missing required field "vimAccountName"`,
				`a.osmops.yaml:1: missing what the NS instance runs: "vnfName" and "kdu" (one KDU of one VNF), or "vnfs" (several VNFs and KDUs)`,
				"b.osmops.yaml: the file is empty; it must declare one NsInstance",
				`z.osmops.yaml:8: unknown field "extra"`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeTree(t, tc.files), tc.opts)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			var validationErr *ValidationError
			if !errors.As(err, &validationErr) {
				t.Fatalf("Load error = %v, want a *ValidationError", err)
			}
			if diff := cmp.Diff(tc.want, problemStrings(validationErr.Problems)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func problemStrings(problems []Problem) []string {
	var lines []string
	for _, problem := range problems {
		lines = append(lines, problem.String())
	}
	return lines
}

func TestLoadPackages(t *testing.T) {
	tests := []struct {
		name         string
		files        map[string]string
		wantPackages []packageSummary
		wantProblems []string
	}{
		{
			name: "dependency order, not alphabetical order",
			files: map[string]string{
				"osm-pkgs/a_ns/nsd.yaml":   nsd("a_ns", "z_knf"),
				"osm-pkgs/m_ns/nsd.yaml":   nsd("m_ns", "b_knf", "z_knf", "in_osm_knf"),
				"osm-pkgs/b_knf/vnfd.yaml": vnfd("b_knf", "ldap"),
				"osm-pkgs/z_knf/vnfd.yaml": vnfd("z_knf", "ldap"),
				"osm-pkgs/README.md":       "files beside the package folders are ignored",
			},
			wantPackages: []packageSummary{
				{"osm-pkgs/b_knf", "b_knf", "vnf"},
				{"osm-pkgs/z_knf", "z_knf", "vnf"},
				{"osm-pkgs/a_ns", "a_ns", "ns"},
				{"osm-pkgs/m_ns", "m_ns", "ns"},
			},
		},
		{
			name: "a bad package source",
			files: map[string]string{
				"osm-pkgs/a_knf/vnfd.yaml": "vnfd:\n  product-name: no id\n",
				"osm-pkgs/b_knf/vnfd.yaml": vnfd("b_knf", "ldap"),
			},
			wantProblems: []string{"osm-pkgs/a_knf/vnfd.yaml:2: vnfd.id is missing"},
		},
		{
			name: "two folders with the same descriptor id",
			files: map[string]string{
				"osm-pkgs/ldap_knf/vnfd.yaml":   vnfd("ldap_knf", "ldap"),
				"osm-pkgs/ldap_knf_2/vnfd.yaml": vnfd("ldap_knf", "ldap"),
			},
			wantProblems: []string{`osm-pkgs/ldap_knf_2: descriptor id "ldap_knf" is already the id of osm-pkgs/ldap_knf`},
		},
		{
			name: "cycles",
			files: map[string]string{
				"osm-pkgs/a_ns/nsd.yaml":    nsd("a_ns", "c_ns"),
				"osm-pkgs/b_ns/nsd.yaml":    nsd("b_ns", "a_ns"),
				"osm-pkgs/c_ns/nsd.yaml":    nsd("c_ns", "b_ns"),
				"osm-pkgs/d_ns/nsd.yaml":    nsd("d_ns", "a_ns"),
				"osm-pkgs/self_ns/nsd.yaml": nsd("self_ns", "self_ns"),
				"osm-pkgs/ok_knf/vnfd.yaml": vnfd("ok_knf", "ldap"),
			},
			wantProblems: []string{
				"osm-pkgs/a_ns: package reference cycle: a_ns -> c_ns -> b_ns -> a_ns",
				"osm-pkgs/self_ns: package reference cycle: self_ns -> self_ns",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			revision, err := Load(writeTree(t, tc.files), Options{})
			if validationErr, ok := errors.AsType[*ValidationError](err); ok {
				if diff := cmp.Diff(tc.wantProblems, problemStrings(validationErr.Problems)); diff != "" {
					t.Errorf("problems (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if tc.wantProblems != nil {
				t.Fatalf("Load succeeded, want problems %v", tc.wantProblems)
			}
			if diff := cmp.Diff(tc.wantPackages, summarise(revision.Packages)); diff != "" {
				t.Errorf("Packages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidationErrorText(t *testing.T) {
	one := &ValidationError{Problems: []Problem{{File: "a.yaml", Line: 3, Message: "bad"}}}
	if got, want := one.Error(), "invalid revision, 1 problem: a.yaml:3: bad"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var many ValidationError
	for i := range 23 {
		many.Problems = append(many.Problems, Problem{File: fmt.Sprintf("f%02d.yaml", i), Message: "bad"})
	}
	got := many.Error()
	if !strings.HasPrefix(got, "invalid revision, 23 problems: f00.yaml: bad; f01.yaml: bad;") ||
		!strings.HasSuffix(got, "f19.yaml: bad; and 3 more") {
		t.Errorf("Error() = %q", got)
	}
	if got := (Problem{Message: "spec.path: bad"}).String(); got != "spec.path: bad" {
		t.Errorf("a spec problem renders as %q", got)
	}
}

// A hostile file makes a problem a line: a revision keeps the first MaxProblems, in file and
// line order, and counts the others, also once reference problems are added.
func TestProblemsAreBoundedAtMaxProblems(t *testing.T) {
	withUnknownFields := func(count int) string {
		var text strings.Builder
		text.WriteString(deployment("ldap"))
		for i := range count {
			fmt.Fprintf(&text, "unknown%04d: x\n", i)
		}
		return text.String()
	}
	for _, test := range []struct {
		fields, kept, more int
		suffix             string
	}{
		{fields: MaxProblems, kept: MaxProblems, more: 0, suffix: "; and 80 more"},
		{fields: MaxProblems + 1, kept: MaxProblems, more: 1, suffix: "; and 81 more"},
		{fields: 5000, kept: MaxProblems, more: 5000 - MaxProblems, suffix: "; and 4980 more"},
	} {
		_, err := Load(writeTree(t, map[string]string{"z.osmops.yaml": withUnknownFields(test.fields)}), Options{})
		var invalid *ValidationError
		if !errors.As(err, &invalid) {
			t.Fatalf("%d unknown fields: %v", test.fields, err)
		}
		if len(invalid.Problems) != test.kept || invalid.More != test.more || invalid.Count() != test.fields {
			t.Errorf("%d unknown fields: %d problems kept and %d more, want %d and %d", test.fields, len(invalid.Problems), invalid.More, test.kept, test.more)
		}
		if first := invalid.Problems[0].String(); first != `z.osmops.yaml:8: unknown field "unknown0000"` {
			t.Errorf("%d unknown fields: the first problem kept is %q", test.fields, first)
		}
		if !strings.HasSuffix(invalid.Error(), test.suffix) || !strings.HasPrefix(invalid.Error(), fmt.Sprintf("invalid revision, %d problems: ", test.fields)) {
			t.Errorf("%d unknown fields: Error() = %q", test.fields, invalid.Error())
		}
		earlier := invalid.With([]Problem{{File: "a.osmops.yaml", Line: 1, Message: "first"}})
		if len(earlier.Problems) != test.kept || earlier.Count() != test.fields+1 || earlier.Problems[0].File != "a.osmops.yaml" {
			t.Errorf("%d unknown fields and one more before: %d kept of %d, first %v", test.fields, len(earlier.Problems), earlier.Count(), earlier.Problems[0])
		}
		if invalid.Count() != test.fields {
			t.Errorf("With changed the error it was called on")
		}
	}
}

func BenchmarkLoad1000DeploymentFiles(b *testing.B) {
	files := map[string]string{}
	for i := range 1000 {
		files[fmt.Sprintf("ns/%03d/ldap-%d.osmops.yaml", i/100, i)] = deployment(fmt.Sprintf("ldap-%d", i)) +
			"  params:\n    replicaCount: \"2\"\n    image: {repository: bitnami/openldap, tag: \"2.6\"}\n"
	}
	root := writeTree(b, files)
	for b.Loop() {
		revision, err := Load(root, Options{})
		if err != nil || len(revision.NsInstances) != 1000 {
			b.Fatalf("Load: %v", err)
		}
	}
}

// A symbolic link is never followed, and never skipped without a word: with prune on, the
// NS instance of a skipped file would be terminated.
func TestLoadReportsSymlinks(t *testing.T) {
	outside := writeTree(t, map[string]string{"secret.osmops.yaml": deployment("outside")})
	root := writeTree(t, map[string]string{"in/ldap.osmops.yaml": deployment("ldap"), "real/b.osmops.yaml": deployment("b")})
	for link, target := range map[string]string{
		"linked.osmops.yaml":    filepath.Join(outside, "secret.osmops.yaml"),
		"escape":                outside,
		"in/inside.osmops.yaml": filepath.Join(root, "in", "ldap.osmops.yaml"),
		"inside-dir":            filepath.Join(root, "real"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Load(root, Options{})
	const why = ": a symbolic link: osmops does not follow links, so its NS instances would be missed; put the file or folder itself in the repository"
	want := []string{"escape" + why, "in/inside.osmops.yaml" + why, "inside-dir" + why, "linked.osmops.yaml" + why}
	var validationErr *ValidationError
	if !errors.As(err, &validationErr) {
		t.Fatalf("Load error = %v, want a *ValidationError", err)
	}
	if diff := cmp.Diff(want, problemStrings(validationErr.Problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}

	_, err = Load(root, Options{Path: "escape"})
	if !errors.As(err, &validationErr) {
		t.Fatalf("Load error = %v, want a *ValidationError", err)
	}
	if diff := cmp.Diff([]string{`spec.path: the folder "escape" does not exist in the revision`}, problemStrings(validationErr.Problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// A problem quoting a huge key stays short: it ends up in conditions and events.
func TestProblemsQuotingHugeValuesStayShort(t *testing.T) {
	key := strings.Repeat("k", 40_000)
	root := writeTree(t, map[string]string{"a.osmops.yaml": deployment("a") + "  params:\n    ? " + key + "\n    : 1\n    ? " + key + "\n    : 2\n"})
	_, err := Load(root, Options{})
	if err == nil || len(err.Error()) > 4*maxShownRunes {
		t.Fatalf("Load error of %d bytes, want a problem of at most %d", len(fmt.Sprint(err)), 4*maxShownRunes)
	}
	if !strings.Contains(err.Error(), `a.osmops.yaml:11: field "kdu.params.kkkk`) {
		t.Errorf("the problem lost its place: %v", err)
	}
}

// A file that declares an NS instance under a name the extensions do not match is a problem,
// not a file to skip (and an instance to prune).
func TestLoadReportsDeploymentFilesWithAnotherExtension(t *testing.T) {
	root := writeTree(t, map[string]string{
		"deploy/ldap.osmops.yaml": deployment("ldap"),
		"deploy/ldap2.yaml":       deployment("ldap2"),
		"deploy/ldap3.ops.JSON":   `{"kind": "NsInstance", "name": "ldap3"}`,
		"deploy/notes.yaml":       "kind: Something\n",
		"deploy/values.yml":       "replicaCount: 2\n",
		"README.md":               "kind: NsInstance\n",
	})
	_, err := Load(root, Options{})
	var validationErr *ValidationError
	if !errors.As(err, &validationErr) {
		t.Fatalf("Load error = %v, want a *ValidationError", err)
	}
	const why = ": declares kind NsInstance but its name does not end in .osmops.yaml or .osmops.yml: rename it, or add its extension to spec.fileExtensions"
	if diff := cmp.Diff([]string{"deploy/ldap2.yaml" + why, "deploy/ldap3.ops.JSON" + why}, problemStrings(validationErr.Problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestLoadOfAMissingFolderIsAnIOError(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing"), Options{})
	var validationErr *ValidationError
	if err == nil || errors.As(err, &validationErr) {
		t.Fatalf("Load error = %v, want an I/O error", err)
	}
}

// tinyKeysDeployment is a deployment file of name whose KDU params are tiny keys, as many as
// keep its parsed size within parsedSize: what parsing makes the most of for its bytes.
func tinyKeysDeployment(t testing.TB, name string, parsedSize int64) string {
	t.Helper()
	header := deployment(name) + "  params: {"
	_, headerSize, _ := decodeSingleDocument("", []byte(header+"}\n"))
	var file strings.Builder
	file.WriteString(header)
	for i, size := 0, headerSize; ; i++ {
		key := "k" + strconv.FormatInt(int64(i), 36)
		if size += 2*ParsedNodeBytes + 2*int64(len(key)+1); size > parsedSize {
			break
		}
		file.WriteString(key + ": 1, ")
	}
	file.WriteString("}\n")
	return file.String()
}

// heapInUse is the heap the program holds, after collecting what it does not.
func heapInUse() uint64 {
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return stats.HeapAlloc
}

// TestParsedRevisionAtItsBoundStaysWithinItsParsedSize loads a revision at the full bounds of
// what parsing makes of it, each deployment file filled with tiny keys up to
// MaxParsedFileBytes and as many files as MaxParsedRevisionBytes takes, and measures the heap
// the loaded revision holds: at most its parsed size. One file more is refused.
func TestParsedRevisionAtItsBoundStaysWithinItsParsedSize(t *testing.T) {
	files := map[string]string{}
	var textBytes int
	for i := range MaxParsedRevisionBytes / MaxParsedFileBytes {
		name := fmt.Sprintf("tiny%d", i)
		files[name+".osmops.yaml"] = tinyKeysDeployment(t, name, MaxParsedFileBytes)
		textBytes += len(files[name+".osmops.yaml"])
	}
	root := writeTree(t, files)
	before := heapInUse()
	rev, err := Load(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	held := heapInUse() - before
	t.Logf("%d files, %d bytes of text, %d NS instances: %d bytes held", len(files), textBytes, len(rev.NsInstances), held)
	if held > MaxParsedRevisionBytes {
		t.Errorf("the revision holds %d bytes, more than its parsed size's bound, %d", held, MaxParsedRevisionBytes)
	}
	runtime.KeepAlive(rev)

	if err := os.WriteFile(filepath.Join(root, "zz.osmops.yaml"), []byte(deployment("zz")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(root, Options{})
	want := "invalid revision, 1 problem: zz.osmops.yaml: the deployment files up to this one are larger than the limit of 67108864 bytes once parsed (48 bytes a key, value or item, and twice its text)"
	if err == nil || err.Error() != want {
		t.Errorf("one file more: %v\nwant %s", err, want)
	}
}

func TestAFileLargerOnceParsedIsRefused(t *testing.T) {
	file := tinyKeysDeployment(t, "tiny", MaxParsedFileBytes+4*ParsedNodeBytes)
	_, err := Load(writeTree(t, map[string]string{"tiny.osmops.yaml": file}), Options{})
	want := "invalid revision, 1 problem: tiny.osmops.yaml:8: from this line on the YAML is larger than the limit of 8388608 bytes once parsed (48 bytes a key, value or item, and twice its text)"
	if err == nil || err.Error() != want {
		t.Errorf("Load: %v\nwant %s", err, want)
	}
}

// TestPackageSummariesAreBounded: a revision keeps its packages' summaries, which a descriptor
// within osmpkg's bounds can still make large (one vnfd-id listed a hundred thousand times):
// they are counted as parsed files are, and the package that takes them past
// MaxParsedRevisionBytes is a problem.
func TestPackageSummariesAreBounded(t *testing.T) {
	ids := strings.TrimSuffix(strings.Repeat("a,", 150_000), ",")
	descriptor := strings.Replace(nsd("NAME"), "vnfd-id: []", "vnfd-id: ["+ids+"]", 1)
	files := map[string]string{}
	for i := range 10 {
		id := fmt.Sprintf("big%d_ns", i)
		files["osm-pkgs/"+id+"/nsd.yaml"] = strings.ReplaceAll(descriptor, "NAME", id)
	}
	_, err := Load(writeTree(t, files), Options{})
	if err == nil || !strings.Contains(err.Error(), "the packages' descriptors up to this one keep more than the limit of 67108864 bytes") {
		t.Errorf("Load: %v, want the packages' summaries refused past the revision's bound", err)
	}
}
