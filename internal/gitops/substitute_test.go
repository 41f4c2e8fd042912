package gitops

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/osmops/osmops/internal/printable"
	"github.com/osmops/osmops/internal/pyjson"
)

// substitutedDeployment is a deployment file whose name and values are variables.
const substitutedDeployment = `kind: NsInstance
name: ldap-${env}
nsdName: openldap_ns
vnfName: openldap
vimAccountName: mylocation1
kdu:
  name: ldap
  params:
    replicaCount: ${replicas:=1}
    password: "${password}"
`

func TestSubstitution(t *testing.T) {
	tests := []struct {
		name         string
		file         string
		subst        Substitution
		wantName     string
		wantParams   string
		wantProblem  string
		wantDigestKy bool
	}{
		{name: "variables and a default", file: substitutedDeployment,
			subst:    Substitution{Vars: map[string]string{"env": "staging", "password": "p"}},
			wantName: "ldap-staging", wantParams: `{"password":"p","replicaCount":1}`},
		{name: "a value wins over the default", file: substitutedDeployment,
			subst:    Substitution{Vars: map[string]string{"env": "prod", "replicas": "3", "password": "p"}},
			wantName: "ldap-prod", wantParams: `{"password":"p","replicaCount":3}`},
		{name: "an unset variable is empty when not strict", file: substitutedDeployment,
			subst:    Substitution{Vars: map[string]string{"env": "prod"}},
			wantName: "ldap-prod", wantParams: `{"password":"","replicaCount":1}`},
		{name: "strict: an unset variable is an error at its line", file: substitutedDeployment,
			subst:       Substitution{Vars: map[string]string{"env": "prod"}, Strict: true},
			wantProblem: `ldap.osmops.yaml:10: variable substitution (spec.postBuild) failed: variable not set (strict mode): "password"`},
		{name: "strict: a default is enough", file: substitutedDeployment,
			subst:    Substitution{Vars: map[string]string{"env": "prod", "password": "p"}, Strict: true},
			wantName: "ldap-prod", wantParams: `{"password":"p","replicaCount":1}`},
		{name: "a file opts out with the annotation",
			file:     "metadata:\n  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\n" + strings.Replace(substitutedDeployment, "${env}", "literal", 1),
			subst:    Substitution{Vars: map[string]string{"password": "p"}, Strict: true},
			wantName: "ldap-literal", wantParams: `{"password":"${password}","replicaCount":"${replicas:=1}"}`},
		{name: "a file opts out with the label",
			file:     "metadata:\n  labels:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\n" + strings.Replace(substitutedDeployment, "${env}", "literal", 1),
			subst:    Substitution{Vars: map[string]string{"password": "p"}},
			wantName: "ldap-literal", wantParams: `{"password":"${password}","replicaCount":"${replicas:=1}"}`},
		{name: "a Secret's variable keys the digest", file: substitutedDeployment,
			subst: Substitution{Vars: map[string]string{"env": "prod", "password": secretText},
				FromSecret: map[string]bool{"password": true}, DigestKey: []byte("key")},
			wantName: "ldap-prod", wantParams: `{"password":"` + secretText + `","replicaCount":1}`, wantDigestKy: true},
		{name: "a problem never shows a Secret's value", file: substitutedDeployment,
			subst: Substitution{Vars: map[string]string{"env": "bad(" + secretText + ")", "password": "bad(" + secretText + ")"},
				FromSecret: map[string]bool{"env": true}, DigestKey: []byte("key")},
			wantProblem: `ldap.osmops.yaml:2: NS instance name "ldap-<redacted: from a Secret>" contains "(": OSM refuses names with any of , ; ( ) ' "`},
		{name: "a variable name envsubst cannot read", file: substitutedDeployment,
			subst:       Substitution{Vars: map[string]string{"env": "a", "1bad": "b"}},
			wantProblem: `spec.postBuild: variable "1bad" has an invalid name: it must match ^[_[:alpha:]][_[:alpha:][:digit:]]*$`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rev, err := Load(writeTree(t, map[string]string{"ldap.osmops.yaml": tc.file}), Options{Substitution: &tc.subst})
			if tc.wantProblem != "" {
				var invalid *ValidationError
				if !errors.As(err, &invalid) || len(invalid.Problems) != 1 || invalid.Problems[0].String() != tc.wantProblem {
					t.Fatalf("Load: %v\nwant: %s", err, tc.wantProblem)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			instance := rev.NsInstances[0]
			if instance.Name != tc.wantName || instance.ParamsJSON(instance.VnfName, instance.KDU) != tc.wantParams {
				t.Errorf("got %s %s, want %s %s", instance.Name, instance.ParamsJSON(instance.VnfName, instance.KDU), tc.wantName, tc.wantParams)
			}
			if keyed := strings.HasPrefix(instance.Digest(), "hmac-sha256:"); keyed != tc.wantDigestKy {
				t.Errorf("digest %s, keyed: %v", instance.Digest(), tc.wantDigestKy)
			}
		})
	}
}

func TestMetadataIsValidated(t *testing.T) {
	_, err := Load(writeTree(t, map[string]string{"ldap.osmops.yaml": "metadata:\n  name: x\n  labels: [a]\n" + deployment("ldap")}), Options{})
	want := `invalid revision, 2 problems: ldap.osmops.yaml:2: unknown field "metadata.name"; ldap.osmops.yaml:3: field "metadata.labels" must be a map of strings, not a list`
	if err == nil || err.Error() != want {
		t.Errorf("Load: %v\nwant: %s", err, want)
	}
}

// allocatedBy returns the bytes of heap f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestSubstitutionIsBoundedWhileSubstituting(t *testing.T) {
	// A 4 KiB file of ${v}, 16 on each line of params, with a 16 KiB variable: 16 MiB once
	// substituted. Each line of params adds 256 KiB: the fourth (line 12) passes 1 MiB.
	header := "kind: NsInstance\nname: ldap\nnsdName: openldap_ns\nvnfName: openldap\nvimAccountName: mylocation1\nkdu:\n  name: ldap\n  params:\n"
	var file strings.Builder
	file.WriteString(header)
	for i := 0; file.Len() < 4<<10; i++ {
		fmt.Fprintf(&file, "    a%d: %s\n", i, strings.Repeat("${v}", 16))
	}
	sixteenKiB := strings.Repeat("x", 16<<10)
	sixtyFourKiB := strings.Repeat("a", MaxVariableBytes)
	tests := []struct {
		name, file  string
		vars        map[string]string
		wantProblem string
	}{
		{name: "a 4 KiB file of ${v} with a 16 KiB variable", file: file.String(), vars: map[string]string{"v": sixteenKiB},
			wantProblem: `a.osmops.yaml:12: variable substitution (spec.postBuild) failed: expanding variable "v" here makes the file larger than the limit of 1048576 bytes`},
		{name: "a replacement multiplies a variable", file: "name: ${v//a/${w}}\n", vars: map[string]string{"v": sixtyFourKiB, "w": sixteenKiB},
			wantProblem: `a.osmops.yaml:1: variable substitution (spec.postBuild) failed: expanding variable "v" here makes the file larger than the limit of 1048576 bytes`},
		{name: "an unused default still expands", file: "a: 1\nb: ${v:-" + strings.Repeat("${w}", 80) + "}\n", vars: map[string]string{"v": "set", "w": sixteenKiB},
			wantProblem: `a.osmops.yaml:2: variable substitution (spec.postBuild) failed: expanding variable "v" here makes the file larger than the limit of 1048576 bytes`},
		{name: "text after the variables", file: "a: ${v}\n" + strings.Repeat("b\n", 600<<10), vars: map[string]string{"v": strings.Repeat("x", 48<<10)},
			wantProblem: `a.osmops.yaml:` + strconv.Itoa(2+(1<<20-48<<10-len("a: ")-1)/2) + `: variable substitution (spec.postBuild) failed: from this line on the file is larger than the limit of 1048576 bytes`},
		{name: "too many references", file: strings.Repeat("${v}\n", MaxVariableReferences+1), vars: map[string]string{"v": "x"},
			wantProblem: `a.osmops.yaml:4097: variable substitution (spec.postBuild) failed: the file has more than 4096 variable references (${)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			subst := &Substitution{Vars: tc.vars}
			var problem *Problem
			allocated := allocatedBy(func() { _, _, _, problem = subst.substitute("a.osmops.yaml", []byte(tc.file)) })
			if problem == nil || problem.String() != tc.wantProblem {
				t.Fatalf("problem %v\nwant %s", problem, tc.wantProblem)
			}
			// The file is refused before anything is expanded: what it costs is its parse.
			if allocated > 4<<20 {
				t.Errorf("refusing it allocated %d bytes, more than 4 MiB", allocated)
			}
		})
	}
}

func TestSubstitutionUpToItsBounds(t *testing.T) {
	atBound := strings.Repeat("x", MaxVariableBytes)
	file := []byte(strings.Repeat("${v}", MaxSubstitutedFileBytes/MaxVariableBytes))
	subst := &Substitution{Vars: map[string]string{"v": atBound}}
	if problems := subst.checkVariables(); problems != nil {
		t.Fatalf("a variable at the bound: %v", problems)
	}
	var substituted []byte
	var problem *Problem
	allocated := allocatedBy(func() { substituted, _, _, problem = subst.substitute("a.osmops.yaml", file) })
	if problem != nil || len(substituted) != MaxSubstitutedFileBytes {
		t.Fatalf("a file substituted to exactly the bound: %d bytes, %v", len(substituted), problem)
	}
	t.Logf("substituting to the bound allocated %d bytes", allocated)
	// docs/operations.md (Memory model): about 4 MiB allocated at the bound.
	if allocated > 6<<20 {
		t.Errorf("substituting to the bound allocated %d bytes, more than 6 MiB", allocated)
	}
	_, _, _, problem = subst.substitute("a.osmops.yaml", append(file, '\n'))
	want := `a.osmops.yaml:1: variable substitution (spec.postBuild) failed: from this line on the file is larger than the limit of 1048576 bytes`
	if problem == nil || problem.String() != want {
		t.Errorf("one byte more: %v\nwant %s", problem, want)
	}

	subst.Vars["v"] = atBound + "y"
	subst.FromSecret = map[string]bool{"v": true}
	problems := subst.checkVariables()
	want = `spec.postBuild: variable "v" is 65537 bytes long, more than the limit of 65536`
	if len(problems) != 1 || problems[0].String() != want {
		t.Errorf("a variable over the bound: %v\nwant %s", problems, want)
	}
}

// maskWith masks secrets in text with one Mask.
func maskWith(t *testing.T, text string, secrets ...string) string {
	t.Helper()
	var mask Mask
	if err := mask.Add(secrets); err != nil {
		t.Fatal(err)
	}
	return mask.Apply(text)
}

// A value from a Secret is masked in a message however the message quotes it.
func TestMaskSecretsInEveryQuoting(t *testing.T) {
	secret := "s3cr\"et\\-'q'-é密-\x1b[31m-\u202e\tend"
	for _, text := range []string{
		"VIM account " + secret + " unknown",
		fmt.Sprintf("VIM account %q unknown", secret),
		fmt.Sprintf("VIM account %+q unknown", secret),
		"VIM account " + printable.String(secret) + " unknown",
		"VIM account " + pyjson.Quote(secret) + " unknown",
	} {
		got := maskWith(t, text, secret)
		if strings.Contains(got, "s3cr") || !strings.Contains(got, SecretMask) {
			t.Errorf("mask(%q) = %q", text, got)
		}
	}
}

// TestSecretMaskEverywhere: what a Secret holds is masked in every form a message may quote it
// (Python's repr and YAML's single quotes as well), also when a bound cut the message inside
// it; a values document in a Secret contributes its leaves, short numbers aside.
func TestSecretMaskEverywhere(t *testing.T) {
	const secret = "it's-s3cr\u00e9t\\n"
	for _, text := range []string{
		"OSM said: invalid value \"it's-s3cr\u00e9t\\\\n\"", // Python's repr
		"in YAML: 'it''s-s3cr\u00e9t\\n'",
		"cut inside it: it's-s3c…",
		"cut inside it: it's-s3c",
	} {
		if got := maskWith(t, text, secret); strings.Contains(got, "s3c") || !strings.Contains(got, SecretMask) {
			t.Errorf("mask(%q) = %q", text, got)
		}
	}
	texts := SecretTexts(map[string][]byte{
		"values.yaml": []byte("auth:\n  password: l3af-pass\n  pin: 123456\nreplicaCount: 3\nlist: [v4lue-in-list]\n"),
		"token":       []byte("t0ken\n"),
	})
	for _, want := range []string{"l3af-pass", "123456", "v4lue-in-list", "t0ken", "t0ken\n"} {
		if !slices.Contains(texts, want) {
			t.Errorf("SecretTexts: %q missing from %q", want, texts)
		}
	}
	if slices.Contains(texts, "3") {
		t.Errorf("SecretTexts masks a replicaCount of 3: every 3 of a message would go")
	}
}
