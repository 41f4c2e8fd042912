package cli

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// simVIM is the VIM account of the simulators the tests start.
const simVIM = "openstack-site1"

// writeRepo writes files (slash path to content) into a new folder and returns it.
func writeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	return dir
}

// writeFiles writes files (slash path to content) into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ldapRepo is a repository of the OpenLDAP example's packages and the deployment files.
func ldapRepo(t *testing.T, deployments map[string]string) string {
	t.Helper()
	files, err := openldap.PackageFiles(openldap.StackPackageNames...)
	if err != nil {
		t.Fatal(err)
	}
	more, err := openldap.PackageFiles("openldap_ns")
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(files, more)
	maps.Copy(files, deployments)
	return writeRepo(t, files)
}

// replaceAll replaces each old string of pairs (old, new, old, new...) in text, failing the test
// when one is not there: a fixture that changed must not plant nothing without a word.
func replaceAll(t *testing.T, text string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(text, pairs[i]) {
			t.Fatalf("the fixture lacks %q:\n%s", pairs[i], text)
		}
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

// run runs the command line and returns its exit status, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	code := Execute(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// startSimulator starts an NBI simulator with the VIM account simVIM.
func startSimulator(t *testing.T) (*nbisim.Server, string) {
	t.Helper()
	sim := nbisim.New(nbisim.Config{VIMAccounts: []nbisim.VIMAccount{{Name: simVIM}}})
	server := httptest.NewServer(sim)
	t.Cleanup(server.Close)
	return sim, server.URL
}

func TestValidate(t *testing.T) {
	// Not parallel: the cases clear the credentials' environment variables.
	// The three typos of issue 15, in two files: a field name, a vnf-profile and a KDU name.
	typos := ldapRepo(t, map[string]string{
		"deploy/ldap.osmops.yaml": strings.Replace(openldap.NsInstanceFile("ldap", simVIM, "1"), "vnfName: openldap", "vnfName: openldapx", 1),
		"deploy/stack.osmops.yaml": strings.Replace(openldap.StackInstanceFile("stack", simVIM,
			openldap.Stack{LDAPModel: "stable/openldap:1.2.7", LDAPReplicas: "1", AdminServiceType: "ClusterIP", MetricsInterval: "30s"}), "- name: admin", "- name: admni", 1),
	})
	badField := ldapRepo(t, map[string]string{
		"deploy/ldap.osmops.yaml": strings.Replace(openldap.NsInstanceFile("ldap", simVIM, "1"), "  params:", "  parms:", 1),
	})
	stackFile := openldap.StackInstanceFile("ldap-stack", simVIM, openldap.StackOfTheDemo)
	// Issue 29: a parse problem hid every reference problem of the revision.
	twoFiles := ldapRepo(t, map[string]string{
		"deploy/ldap-stack.osmops.yaml": strings.Replace(stackFile, "        params:", "        parms:", 1),
		"deploy/ldap.osmops.yaml":       strings.Replace(openldap.NsInstanceFile("ldap", simVIM, "1"), "vnfName: openldap", "vnfName: openldapx", 1),
	})
	twoFilesWant := []string{
		`✗ deploy/ldap-stack.osmops.yaml:14: unknown field "vnfs[0].kdus[0].parms"`,
		`✗ deploy/ldap.osmops.yaml:5: vnfName "openldapx" is not a vnf-profile of NSD "openldap_ns" (valid: "openldap")`,
		"2 problems"}
	threeInOne := ldapRepo(t, map[string]string{"deploy/ldap-stack.osmops.yaml": replaceAll(t, stackFile,
		"memberVnfIndex: directory", "memberVnfIndex: directry",
		"- name: admin\n        model: cetic/phpldapadmin:0.1.2\n        params:", "- name: admni\n        model: cetic/phpldapadmin:0.1.2\n        parms:")})
	threeInOneWant := []string{
		`✗ deploy/ldap-stack.osmops.yaml:10: vnfs[0].memberVnfIndex "directry" is not a vnf-profile of NSD "ldap_stack_ns" (valid: "directory", "web")`,
		`✗ deploy/ldap-stack.osmops.yaml:18: vnfs[1].kdus[0].name "admni" is not a KDU of VNFD "ldapweb_knf" (valid: "admin", "metrics")`,
		`✗ deploy/ldap-stack.osmops.yaml:20: unknown field "vnfs[1].kdus[0].parms"`,
		"3 problems"}
	var unknownFields strings.Builder
	unknownFields.WriteString(openldap.NsInstanceFile("ldap", simVIM, "1"))
	for i := range gitops.MaxProblems + 50 {
		fmt.Fprintf(&unknownFields, "unknown%03d: x\n", i)
	}
	manyProblems := ldapRepo(t, map[string]string{"deploy/ldap.osmops.yaml": unknownFields.String()})
	// The web KNF's two KDUs unpinned, the directory's pinned.
	stack := ldapRepo(t, map[string]string{"deploy/stack.osmops.yaml": openldap.StackInstanceFile("stack", simVIM, openldap.Stack{
		LDAPModel: "stable/openldap:1.2.7", LDAPReplicas: "1", AdminServiceType: "ClusterIP", MetricsInterval: "30s"})})
	valid := ldapRepo(t, map[string]string{"deploy/ldap.osmops.yaml": openldap.NsInstanceFile("ldap", simVIM, "1")})
	variables := ldapRepo(t, map[string]string{"deploy/ldap.osmops.yaml": openldap.NsInstanceFile("ldap", "${VIM}", "${REPLICAS:=1}")})
	varsFile := filepath.Join(t.TempDir(), "vars.env")
	if err := os.WriteFile(varsFile, []byte("# the site\nVIM=nowhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	otherVIM := ldapRepo(t, map[string]string{"deploy/ldap.osmops.yaml": openldap.NsInstanceFile("ldap", "nowhere", "1")})
	sim, url := startSimulator(t)
	osmArgs := []string{"--osm", url, "--username", nbisim.DefaultUsername, "--password", nbisim.DefaultPassword}

	for _, test := range []struct {
		name     string
		args     []string
		wantExit int
		// want are lines the output must hold, in order.
		want []string
	}{
		{"a valid repository", []string{"validate", valid}, ExitOK,
			[]string{"✔ " + valid + " is valid: 1 NS instance, 4 packages (offline: vnf-profiles and KDUs checked against the repository's 4 packages in osm-pkgs)"}},
		{"a wrong vnf-profile and KDU name found offline from the repository's own packages, at once", []string{"validate", typos}, ExitFindings, []string{
			`✗ deploy/ldap.osmops.yaml:5: vnfName "openldapx" is not a vnf-profile of NSD "openldap_ns" (valid: "openldap")`,
			`✗ deploy/stack.osmops.yaml:18: vnfs[1].kdus[0].name "admni" is not a KDU of VNFD "ldapweb_knf" (valid: "admin", "metrics")`,
			"2 problems"}},
		{"a chart without a version, in the declaration nor in the VNFD: a warning naming the file, the line and the KDU", []string{"validate", valid}, ExitOK, []string{
			`! deploy/ldap.osmops.yaml:8: NS instance "ldap": KDU ldap of VNF openldap runs chart "stable/openldap", which names no version ` +
				`(neither in the declaration's model nor in VNFD "openldap_knf"'s helm-chart): OSM installs the newest chart of the repository, ` +
				`and again at every upgrade; declare model: stable/openldap:<version> to pin it`,
			"is valid: 1 NS instance"}},
		{"a KDU whose model names the version is not warned of; the others of the NS are", []string{"validate", stack}, ExitOK, []string{
			`! deploy/stack.osmops.yaml:18: NS instance "stack": KDU admin of VNF web runs chart "cetic/phpldapadmin", which names no version`,
			`! deploy/stack.osmops.yaml:22: NS instance "stack": KDU metrics of VNF web runs chart "prometheus-community/prometheus-openldap-exporter", which names no version`,
			"is valid: 1 NS instance"}},
		{"an unknown field in one file and a wrong vnfName in another, offline", []string{"validate", twoFiles}, ExitFindings, twoFilesWant},
		{"an unknown field in one file and a wrong vnfName in another, against OSM", append([]string{"validate", twoFiles}, osmArgs...), ExitFindings, twoFilesWant},
		{"a field's typo, a wrong vnf-profile and a wrong KDU beside the typo, offline", []string{"validate", threeInOne}, ExitFindings, threeInOneWant},
		{"a field's typo, a wrong vnf-profile and a wrong KDU beside the typo, against OSM", append([]string{"validate", threeInOne}, osmArgs...), ExitFindings, threeInOneWant},
		{"the first problems of many, and how many more", []string{"validate", manyProblems}, ExitFindings, []string{
			`✗ deploy/ldap.osmops.yaml:11: unknown field "unknown000"`,
			fmt.Sprintf(`✗ deploy/ldap.osmops.yaml:%d: unknown field "unknown%03d"`, 11+gitops.MaxProblems-1, gitops.MaxProblems-1),
			"✗ and 50 more problems, not shown",
			fmt.Sprintf("%d problems", gitops.MaxProblems+50)}},
		{"a file problem, in the operator's words", []string{"validate", badField}, ExitFindings,
			[]string{`✗ deploy/ldap.osmops.yaml:9: unknown field "kdu.parms"`, "1 problem"}},
		{"variables substituted from flags and a file, a flag winning", []string{"validate", variables, "--substitute-from", varsFile, "--substitute", "VIM=" + simVIM, "--substitute-strict"}, ExitOK,
			[]string{"is valid: 1 NS instance"}},
		{"a strict substitution without value", []string{"validate", variables, "--substitute", "OTHER=x", "--substitute-strict"}, ExitFindings,
			[]string{`✗ deploy/ldap.osmops.yaml:6: variable substitution (spec.postBuild) failed`}},
		{"the spec's settings as flags", []string{"validate", valid, "--path", "missing"}, ExitFindings,
			[]string{`✗ spec.path: the folder "missing" does not exist in the revision`}},
		{"valid against OSM", append([]string{"validate", valid}, osmArgs...), ExitOK,
			[]string{"is valid: 1 NS instance, 4 packages (references checked against OSM " + url + ")"}},
		{"a VIM account OSM lacks", append([]string{"validate", otherVIM}, osmArgs...), ExitFindings,
			[]string{`✗ deploy/ldap.osmops.yaml:6: vimAccountName "nowhere" is not a VIM account of OSM (known: "` + simVIM + `")`}},
		{"a folder that does not exist", []string{"validate", filepath.Join(valid, "nothing")}, ExitError, nil},
		{"an unknown flag", []string{"validate", "--parms"}, ExitError, nil},
		{"two folders", []string{"validate", valid, valid}, ExitError, nil},
		{"--osm without credentials", []string{"validate", valid, "--osm", url, "--username", ""}, ExitError, nil},
	} {
		t.Run(test.name, func(t *testing.T) {
			t.Setenv(envUsername, "")
			t.Setenv(envPassword, "")
			code, stdout, stderr := run(t, test.args...)
			if code != test.wantExit {
				t.Fatalf("exit status %d, want %d; stdout:\n%s\nstderr:\n%s", code, test.wantExit, stdout, stderr)
			}
			rest := stdout
			for _, line := range test.want {
				at := strings.Index(rest, line)
				if at < 0 {
					t.Fatalf("output lacks %q (in order); stdout:\n%s", line, stdout)
				}
				rest = rest[at+len(line):]
			}
			if strings.Contains(stdout, "KDU ldap of VNF directory") {
				t.Errorf("a KDU whose model names a version warned of:\n%s", stdout)
			}
			if code == ExitError && stderr == "" {
				t.Error("an error without a word on stderr")
			}
		})
	}
	if stats := sim.Stats(); stats.MutatingRequests != 0 {
		t.Errorf("validate sent %d mutating requests", stats.MutatingRequests)
	}
}

// plantedDemoRepo is a copy of the demo repository (deployment files in deploy/, packages in
// osm-pkgs/ at its root) with four mistakes of a new user planted (issue 45): a wrong vnfName, a
// wrong memberVnfIndex, a wrong KDU name, and a file that is no YAML. With git, it is a Git
// checkout (a .git folder at its root).
func plantedDemoRepo(t *testing.T, git bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "hack", "demo-repo"))); err != nil {
		t.Fatal(err)
	}
	plant := func(name string, pairs ...string) {
		file := filepath.Join(dir, "deploy", name)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(replaceAll(t, string(data), pairs...)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plant("ldap.osmops.yaml", "vnfName: openldap", "vnfName: openldapx")
	plant("ldap-stack.osmops.yaml", "memberVnfIndex: directory", "memberVnfIndex: directry", "- name: admin", "- name: admni")
	files := map[string]string{"deploy/broken.osmops.yaml": "kind: NsInstance\nname: broken\n  nsdName: openldap_ns\n"}
	if git {
		files[".git/HEAD"] = "ref: refs/heads/main\n"
	}
	writeFiles(t, dir, files)
	return dir
}

// problemLines are the lines of output that report a problem.
func problemLines(output string) []string {
	var problems []string
	for line := range strings.Lines(output) {
		if strings.HasPrefix(line, "✗ ") {
			problems = append(problems, line)
		}
	}
	return problems
}

// Issue 45: "osmops validate --path deploy", which docs/cli.md recommended for CI, looked for the
// packages in deploy/osm-pkgs, found none, reported 1 of the 4 mistakes of the demo repository,
// and said it had checked the references against the repository's packages.
func TestValidateAFolderOfTheRepositoryChecksAgainstTheRepositorysPackages(t *testing.T) {
	checkout := plantedDemoRepo(t, true)
	wantProblems := []string{
		"✗ deploy/broken.osmops.yaml:3: YAML syntax error: mapping values are not allowed in this context\n",
		`✗ deploy/ldap-stack.osmops.yaml:10: vnfs[0].memberVnfIndex "directry" is not a vnf-profile of NSD "ldap_stack_ns" (valid: "directory", "web")` + "\n",
		`✗ deploy/ldap-stack.osmops.yaml:18: vnfs[1].kdus[0].name "admni" is not a KDU of VNFD "ldapweb_knf" (valid: "admin", "metrics")` + "\n",
		`✗ deploy/ldap.osmops.yaml:5: vnfName "openldapx" is not a vnf-profile of NSD "openldap_ns" (valid: "openldap")` + "\n",
	}
	const checkedAgainst = "4 problems (offline: vnf-profiles and KDUs checked against the repository's 4 packages in osm-pkgs)"
	for _, test := range []struct {
		name string
		args []string
		// wantWarning is what the warning of a packages folder without package must hold; "" for
		// no such warning.
		wantWarning string
	}{
		{"the whole repository", []string{"validate", checkout}, ""},
		{"--path deploy", []string{"validate", checkout, "--path", "deploy"},
			`! deploy/osm-pkgs holds no package, so the operator uploads none with spec.path "deploy": vnf-profiles and KDUs are checked against those of osm-pkgs, which OSM must hold`},
		{"the folder deploy of the checkout as DIR", []string{"validate", filepath.Join(checkout, "deploy")}, `with spec.path "deploy"`},
	} {
		t.Run(test.name, func(t *testing.T) {
			code, stdout, stderr := run(t, test.args...)
			if code != ExitFindings {
				t.Fatalf("exit status %d, want %d; stdout:\n%s\nstderr:\n%s", code, ExitFindings, stdout, stderr)
			}
			if diff := cmp.Diff(wantProblems, problemLines(stdout)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nstdout:\n%s", diff, stdout)
			}
			if !strings.Contains(stdout, checkout+": "+checkedAgainst+"\n") {
				t.Errorf("the verdict is not %q about the checkout's root; stdout:\n%s", checkedAgainst, stdout)
			}
			switch warned := strings.Contains(stdout, "holds no package"); {
			case test.wantWarning == "" && warned:
				t.Errorf("a warning of a packages folder without package; stdout:\n%s", stdout)
			case !strings.Contains(stdout, test.wantWarning):
				t.Errorf("output lacks the warning %q; stdout:\n%s", test.wantWarning, stdout)
			}
		})
	}
}

func TestValidateSaysWhatItDidNotCheck(t *testing.T) {
	noGit := plantedDemoRepo(t, false)
	deploymentsOnly := writeRepo(t, map[string]string{"deploy/ldap.osmops.yaml": openldap.NsInstanceFile("ldap", "nowhere", "1")})
	for _, test := range []struct {
		name     string
		args     []string
		wantExit int
		// wantStdout and wantStderr are strings the outputs must hold.
		wantStdout, wantStderr string
	}{
		{"no package anywhere", []string{"validate", deploymentsOnly}, ExitOK,
			"is valid: 1 NS instance, 0 packages (offline: vnfName, memberVnfIndex and KDU names NOT checked, no package in osm-pkgs: give --osm, or --packages-path)", ""},
		{"a packages path that holds none", []string{"validate", noGit, "--path", "deploy", "--packages-path", "pkgs"}, ExitFindings,
			"1 problem (offline: vnfName, memberVnfIndex and KDU names NOT checked, no package in deploy/pkgs: give --osm, or --packages-path)", ""},
		{"settings that stop the reading", []string{"validate", noGit, "--path", "missing"}, ExitFindings,
			"1 problem (references not checked)", ""},
		{"a folder of a repository whose root no .git marks", []string{"validate", filepath.Join(noGit, "deploy")}, ExitError,
			"", "holds neither osm_ops_config.yaml nor osm-pkgs but the folder above it does, and no Git checkout says where the repository's root is: give the repository's root as DIR, with --path to this folder"},
		{"a folder of a checkout with --path", []string{"validate", filepath.Join(plantedDemoRepo(t, true), "deploy"), "--path", "."}, ExitError,
			"", "whose root the operator reads: give the root as DIR, with --path relative to it"},
	} {
		t.Run(test.name, func(t *testing.T) {
			code, stdout, stderr := run(t, test.args...)
			if code != test.wantExit || !strings.Contains(stdout, test.wantStdout) || !strings.Contains(stderr, test.wantStderr) {
				t.Errorf("exit status %d, want %d; stdout (want %q):\n%s\nstderr (want %q):\n%s", code, test.wantExit, test.wantStdout, stdout, test.wantStderr, stderr)
			}
		})
	}
}
