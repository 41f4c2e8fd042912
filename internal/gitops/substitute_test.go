package gitops

import (
	"errors"
	"fmt"
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
		got := MaskSecrets(text, []string{secret})
		if strings.Contains(got, "s3cr") || !strings.Contains(got, SecretMask) {
			t.Errorf("MaskSecrets(%q) = %q", text, got)
		}
	}
}
