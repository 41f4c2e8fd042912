package gitops

import (
	"context"
	"strings"
	"testing"
)

// originsOf names an instance's origins with their fingerprints, "name=fingerprint ...".
func originsOf(n NsInstance) string {
	var parts []string
	for _, o := range n.Origins {
		parts = append(parts, o.Name+"="+o.Fingerprint)
	}
	return strings.Join(parts, " ")
}

// An instance's origins are its file in Git, the variables it read and the objects of its
// valuesFrom: each fingerprint changes with what that origin gives alone, and a variable from
// a Secret is fingerprinted by the Secret's version, never by its value.
func TestOriginsTellWhatEachSourceGave(t *testing.T) {
	file := substitutedDeployment + "  valuesFrom:\n    - {kind: ConfigMap, name: common, valuesKey: values.yaml}\n    - {kind: Secret, name: db, valuesKey: password, targetPath: db.password}\n"
	load := func(file string, subst Substitution) NsInstance {
		t.Helper()
		rev, err := Load(writeTree(t, map[string]string{"ldap.osmops.yaml": file}), Options{Substitution: &subst})
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		resolved, err := ResolveValues(context.Background(), rev, getValuesObject)
		if err != nil {
			t.Fatalf("ResolveValues: %v", err)
		}
		return resolved.NsInstances[0]
	}
	vars := func(password, version string) Substitution {
		return Substitution{Vars: map[string]string{"env": "prod", "password": password}, FromSecret: map[string]bool{"password": true},
			Versions: map[string]string{"password": version}}
	}
	base := load(file, vars("pw1", "creds@uid-9/1"))
	names := func(n NsInstance) []string {
		var names []string
		for _, o := range n.Origins {
			names = append(names, o.Name)
		}
		return names
	}
	if got, want := strings.Join(names(base), ", "), "Git, ConfigMap common, Secret db, variable env, variable password, variable replicas"; got != want {
		t.Fatalf("origins %s, want %s", got, want)
	}
	changedOrigins := func(n NsInstance) []string {
		var changed []string
		for i, o := range n.Origins {
			if o != base.Origins[i] {
				changed = append(changed, o.Name)
			}
		}
		return changed
	}
	for _, tc := range []struct {
		name string
		got  NsInstance
		want string
	}{
		{"the same sources", load(file, vars("pw1", "creds@uid-9/1")), ""},
		{"a variable's value", load(file, Substitution{Vars: map[string]string{"env": "prod", "password": "pw1", "replicas": "3"},
			FromSecret: map[string]bool{"password": true}, Versions: map[string]string{"password": "creds@uid-9/1"}}), "variable replicas"},
		{"a Secret variable's Secret", load(file, vars("pw1", "creds@uid-9/2")), "variable password"},
		{"a Secret variable's value alone is not seen (it is never read)", load(file, vars("other", "creds@uid-9/1")), ""},
		{"the file", load(file+"description: more\n", vars("pw1", "creds@uid-9/1")), "Git"},
	} {
		if got := strings.Join(changedOrigins(tc.got), ", "); got != tc.want {
			t.Errorf("%s: changed origins %q, want %q (%s)", tc.name, got, tc.want, originsOf(tc.got))
		}
	}
	valuesObjects["Secret/db"] = ValuesObject{Version: "uid-2/8", Data: valuesObjects["Secret/db"].Data}
	defer func() {
		valuesObjects["Secret/db"] = ValuesObject{Version: "uid-2/7", Data: valuesObjects["Secret/db"].Data}
	}()
	if got := strings.Join(changedOrigins(load(file, vars("pw1", "creds@uid-9/1"))), ", "); got != "Secret db" {
		t.Errorf("a new version of Secret db: changed origins %q, want %q", got, "Secret db")
	}
}
