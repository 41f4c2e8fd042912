package gitops

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretValuePaths(t *testing.T) {
	objects := map[string]ValuesObject{
		"Secret/db":       {Data: map[string][]byte{"values.yaml": []byte("db:\n  password: s3cret\n  hosts: [a, b]\ntls: {}\n"), "password": []byte("s3cret")}},
		"ConfigMap/plain": {Data: map[string][]byte{"values.yaml": []byte("replicaCount: 2\n")}},
		"Secret/broken":   {Data: map[string][]byte{"values.yaml": []byte("- not a map")}},
	}
	get := func(_ context.Context, kind, name string) (ValuesObject, bool, error) {
		object, found := objects[kind+"/"+name]
		return object, found, nil
	}
	kdu := KDU{Name: "ldap", ValuesFrom: []ValuesReference{
		{Kind: ValuesKindConfigMap, Name: "plain", ValuesKey: DefaultValuesKey},
		{Kind: ValuesKindSecret, Name: "db", ValuesKey: DefaultValuesKey},
		{Kind: ValuesKindSecret, Name: "db", ValuesKey: "password", TargetPath: "auth.admin[1]"},
		{Kind: ValuesKindSecret, Name: "missing", ValuesKey: DefaultValuesKey, Optional: true},
		{Kind: ValuesKindSecret, Name: "broken", ValuesKey: DefaultValuesKey},
	}}
	paths, err := SecretValuePaths(context.Background(), kdu, get)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, path := range paths {
		got = append(got, strings.Join(path, "/"))
	}
	slices.Sort(got)
	want := []string{"auth/admin/[0]", "auth/admin/[1]", "db/hosts/[0]", "db/hosts/[1]", "db/password", "tls"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SecretValuePaths (-want +got):\n%s", diff)
	}
}
