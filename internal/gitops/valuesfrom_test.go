package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// secretText is a value held in a Secret: no problem, digest or error may show it.
const secretText = "s3cr3t-pa55"

// valuesObjects are the ConfigMaps and Secrets of the tests, by "Kind/name".
var valuesObjects = map[string]ValuesObject{
	"ConfigMap/common": {Version: "uid-1/1", Data: map[string][]byte{
		"values.yaml": []byte("replicaCount: 1\nimage:\n  tag: \"1.0\"\n  pullPolicy: IfNotPresent\n"),
		"prod.yaml":   []byte("replicaCount: 3\nimage:\n  tag: \"2.0\"\n"),
		"size":        []byte("12"),
		"quoted":      []byte(`"12"`),
		"list.yaml":   []byte("- a\n"),
		"alias.yaml":  []byte("a: &x [1]\nb: *x\n"),
	}},
	"Secret/db": {Version: "uid-2/7", Data: map[string][]byte{
		"values.yaml":   []byte("db:\n  password: " + secretText + "\n"),
		"password":      []byte(secretText),
		"bad.yaml":      []byte("db: [" + secretText + "\n"),
		"notamap.yaml":  []byte(secretText),
		"huge.yaml":     []byte(strings.Repeat("x", MaxValuesBytes+1)),
		"badpath.value": []byte(secretText),
	}},
}

func getValuesObject(_ context.Context, kind, name string) (ValuesObject, bool, error) {
	object, found := valuesObjects[kind+"/"+name]
	return object, found, nil
}

// deploymentWithValuesFrom is a deployment file whose KDU reads valuesFrom (YAML list items,
// indented for the kdu map) under params.
func deploymentWithValuesFrom(params string, refs ...string) string {
	text := deployment("ldap") + "  valuesFrom:\n"
	for _, ref := range refs {
		text += "    - " + ref + "\n"
	}
	if params != "" {
		text += "  params:\n    " + params + "\n"
	}
	return text
}

func loadAndResolve(t *testing.T, file string) (*Revision, error) {
	t.Helper()
	rev, err := Load(writeTree(t, map[string]string{"ldap.osmops.yaml": file}), Options{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return ResolveValues(context.Background(), rev, getValuesObject)
}

func TestResolveValuesMergesAsHelmReleaseDoes(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		params map[string]any
	}{
		{"a document", deploymentWithValuesFrom("", "{kind: ConfigMap, name: common}"),
			map[string]any{"replicaCount": int64(1), "image": map[string]any{"tag": "1.0", "pullPolicy": "IfNotPresent"}}},
		{"later references win, deeply", deploymentWithValuesFrom("", "{kind: ConfigMap, name: common}", "{kind: ConfigMap, name: common, valuesKey: prod.yaml}"),
			map[string]any{"replicaCount": int64(3), "image": map[string]any{"tag": "2.0", "pullPolicy": "IfNotPresent"}}},
		{"inline params win over every reference", deploymentWithValuesFrom("image: {tag: \"3.0\"}", "{kind: ConfigMap, name: common, valuesKey: prod.yaml}"),
			map[string]any{"replicaCount": int64(3), "image": map[string]any{"tag": "3.0"}}},
		{"targetPath types the value as --set does", deploymentWithValuesFrom("", "{kind: ConfigMap, name: common, valuesKey: size, targetPath: persistence.size}"),
			map[string]any{"persistence": map[string]any{"size": int64(12)}}},
		{"a quoted text at targetPath stays a string", deploymentWithValuesFrom("", "{kind: ConfigMap, name: common, valuesKey: quoted, targetPath: 'a.b[1]'}"),
			map[string]any{"a": map[string]any{"b": []any{nil, "12"}}}},
		{"a Secret's key at targetPath", deploymentWithValuesFrom("", "{kind: Secret, name: db, valuesKey: password, targetPath: db.password}"),
			map[string]any{"db": map[string]any{"password": secretText}}},
		{"a missing optional object is skipped", deploymentWithValuesFrom("a: 1", "{kind: Secret, name: absent, optional: true}"),
			map[string]any{"a": int64(1)}},
		{"a missing optional key is skipped", deploymentWithValuesFrom("a: 1", "{kind: ConfigMap, name: common, valuesKey: absent, optional: true}"),
			map[string]any{"a": int64(1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rev, err := loadAndResolve(t, tc.file)
			if err != nil {
				t.Fatalf("ResolveValues: %v", err)
			}
			if diff := cmp.Diff(tc.params, rev.NsInstances[0].KDU.Params); diff != "" {
				t.Errorf("params (-want +got):\n%s", diff)
			}
			if rev.NsInstances[0].ParamsJSON(rev.NsInstances[0].VnfName, rev.NsInstances[0].KDU) != string(mustCanonicalJSON(tc.params)) {
				t.Errorf("the params were not sealed again: %s", rev.NsInstances[0].ParamsJSON(rev.NsInstances[0].VnfName, rev.NsInstances[0].KDU))
			}
		})
	}
}

func TestResolveValuesProblemsNameTheReferenceAndNeverASecret(t *testing.T) {
	tests := []struct {
		name, ref, want string
	}{
		{"missing object", "{kind: Secret, name: absent}",
			`ldap.osmops.yaml:9: field "kdu.valuesFrom[0]" names Secret absent, which does not exist in the OsmDeployment's namespace`},
		{"missing key", "{kind: ConfigMap, name: common, valuesKey: absent}",
			`ldap.osmops.yaml:9: field "kdu.valuesFrom[0]" names key absent, which ConfigMap common does not have`},
		{"a Secret that is not YAML", "{kind: Secret, name: db, valuesKey: bad.yaml}",
			`ldap.osmops.yaml:9: field "kdu.valuesFrom[0]" reads Secret db key bad.yaml, which is not a YAML map of Helm values (line 1; the error is not shown, as it comes from a Secret)`},
		{"a Secret that is not a map", "{kind: Secret, name: db, valuesKey: notamap.yaml}",
			`ldap.osmops.yaml:9: field "kdu.valuesFrom[0]" reads Secret db key notamap.yaml, which is not a YAML map of Helm values (line 1; the error is not shown, as it comes from a Secret)`},
		{"a ConfigMap that is a list", "{kind: ConfigMap, name: common, valuesKey: list.yaml}",
			`ldap.osmops.yaml:9: field "kdu.valuesFrom[0]" reads ConfigMap common key list.yaml, which is not a YAML map of Helm values: ConfigMap common key list.yaml:1: the document is a list; it must be a map of Helm values`},
		{"aliases", "{kind: ConfigMap, name: common, valuesKey: alias.yaml}",
			`ldap.osmops.yaml:9: field "kdu.valuesFrom[0]" reads ConfigMap common key alias.yaml, which is not a YAML map of Helm values: ConfigMap common key alias.yaml:2: YAML aliases (*x) are not allowed`},
		{"too large", "{kind: Secret, name: db, valuesKey: huge.yaml}",
			`ldap.osmops.yaml:9: field "kdu.valuesFrom[0]" reads Secret db key huge.yaml, which is larger than the limit of 1048576 bytes`},
		{"a Secret at a path Helm refuses", "{kind: Secret, name: db, valuesKey: badpath.value, targetPath: 'a[99999]'}",
			`ldap.osmops.yaml:9: field "kdu.valuesFrom[0]" cannot be set at targetPath "a[99999]": the value is not shown, as it comes from a Secret`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadAndResolve(t, deploymentWithValuesFrom("", tc.ref))
			var problems *ValuesProblems
			if !errors.As(err, &problems) {
				t.Fatalf("ResolveValues: %v, want ValuesProblems", err)
			}
			if len(problems.Problems) != 1 || problems.Problems[0].String() != tc.want {
				t.Errorf("problems: %v\nwant: %s", problems.Problems, tc.want)
			}
			if strings.Contains(err.Error(), secretText) {
				t.Errorf("the error shows the Secret: %v", err)
			}
		})
	}
}

func TestValuesFromIsValidated(t *testing.T) {
	tests := []struct{ name, ref, want string }{
		{"another namespace", "{kind: Secret, name: other/db}",
			`ldap.osmops.yaml:9: field "kdu.valuesFrom[0].name" is "other/db": values are read from the OsmDeployment's namespace only; give the name alone`},
		{"a namespace field", "{kind: Secret, name: db, namespace: other}",
			`ldap.osmops.yaml:9: unknown field "kdu.valuesFrom[0].namespace"`},
		{"a kind", "{kind: Pod, name: db}", `ldap.osmops.yaml:9: field "kdu.valuesFrom[0].kind" is "Pod"; it must be ConfigMap or Secret`},
		{"a name", "{kind: Secret, name: DB}", `ldap.osmops.yaml:9: field "kdu.valuesFrom[0].name" is "DB", which is not a Kubernetes object name`},
		{"no name", "{kind: Secret}", `ldap.osmops.yaml:9: missing required field "kdu.valuesFrom[0].name"`},
		{"a target path", "{kind: Secret, name: db, targetPath: 'a b'}",
			`ldap.osmops.yaml:9: field "kdu.valuesFrom[0].targetPath" is "a b": it must be a path like a.b[0].c of at most 250 characters`},
		{"optional", "{kind: Secret, name: db, optional: yes}", `ldap.osmops.yaml:9: field "kdu.valuesFrom[0].optional" must be true or false`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeTree(t, map[string]string{"ldap.osmops.yaml": deploymentWithValuesFrom("", tc.ref)}), Options{})
			var invalid *ValidationError
			if !errors.As(err, &invalid) || len(invalid.Problems) != 1 || invalid.Problems[0].String() != tc.want {
				t.Errorf("Load: %v\nwant: %s", err, tc.want)
			}
		})
	}
}

func TestDigestOfValuesFromASecretIsKeyedByItsVersion(t *testing.T) {
	file := deploymentWithValuesFrom("", "{kind: Secret, name: db, valuesKey: password, targetPath: db.password}")
	rev, err := loadAndResolve(t, file)
	if err != nil {
		t.Fatal(err)
	}
	instance := rev.NsInstances[0]
	// The plain digest of the same values is what someone who guesses the password could
	// compute: the status must not hold it.
	plain := instance
	plain.digestKey, plain.sealed = nil, nil
	if !strings.HasPrefix(instance.Digest(), "hmac-sha256:") || instance.Digest() == plain.Digest() {
		t.Errorf("digest %s is not keyed", instance.Digest())
	}
	again, _ := loadAndResolve(t, file)
	if again.NsInstances[0].Digest() != instance.Digest() {
		t.Error("the digest of the same values and Secret version changed")
	}
	valuesObjects["Secret/db"] = ValuesObject{Version: "uid-2/8", Data: valuesObjects["Secret/db"].Data}
	defer func() {
		valuesObjects["Secret/db"] = ValuesObject{Version: "uid-2/7", Data: valuesObjects["Secret/db"].Data}
	}()
	changed, _ := loadAndResolve(t, file)
	if changed.NsInstances[0].Digest() == instance.Digest() {
		t.Error("a new version of the Secret left the digest as it was")
	}
}

// TestValuesFromBounds: the counts and lengths of values references at their bounds: 16
// references of one KDU and 32 objects of one revision pass, one more is a problem naming the
// bound; a valuesKey of 253 characters passes and of 254 is refused.
func TestValuesFromBounds(t *testing.T) {
	refs := func(n, from int) []string {
		list := make([]string, n)
		for i := range list {
			list[i] = fmt.Sprintf("{kind: ConfigMap, name: values-%d}", from+i)
		}
		return list
	}
	if _, err := Load(writeTree(t, map[string]string{"ldap.osmops.yaml": deploymentWithValuesFrom("", refs(16, 0)...)}), Options{}); err != nil {
		t.Errorf("16 references: %v", err)
	}
	_, err := Load(writeTree(t, map[string]string{"ldap.osmops.yaml": deploymentWithValuesFrom("", refs(17, 0)...)}), Options{})
	if want := `field "kdu.valuesFrom" has 17 items; at most 16 are allowed`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("17 references: %v, want %s", err, want)
	}

	files := map[string]string{}
	for i := range 3 {
		name := fmt.Sprintf("ldap%d", i)
		files[name+".osmops.yaml"] = strings.Replace(deploymentWithValuesFrom("", refs(11, 11*i)...), "name: ldap\nnsdName", "name: "+name+"\nnsdName", 1)
	}
	rev, err := Load(writeTree(t, files), Options{})
	if err != nil {
		t.Fatal(err)
	}
	anyObject := func(context.Context, string, string) (ValuesObject, bool, error) {
		return ValuesObject{Data: map[string][]byte{DefaultValuesKey: []byte("a: 1\n")}}, true, nil
	}
	_, err = ResolveValues(context.Background(), rev, anyObject)
	if want := "is one ConfigMap or Secret too many: a revision may read at most 32"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("33 objects: %v, want %s", err, want)
	}

	for length, valid := range map[int]bool{253: true, 254: false} {
		ref := "{kind: ConfigMap, name: common, valuesKey: " + strings.Repeat("k", length) + "}"
		_, err := Load(writeTree(t, map[string]string{"ldap.osmops.yaml": deploymentWithValuesFrom("", ref)}), Options{})
		if (err == nil) != valid {
			t.Errorf("a valuesKey of %d characters: %v", length, err)
		}
	}
}
