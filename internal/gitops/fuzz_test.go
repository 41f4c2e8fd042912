package gitops

import (
	"strings"
	"testing"
)

// FuzzParseDeploymentFile checks that no input makes the parser panic, and
// that whatever it accepts is a complete instance with encodable params.
func FuzzParseDeploymentFile(f *testing.F) {
	f.Add([]byte(deployment("ldap") + "  params:\n    replicaCount: \"2\"\n    nested: {a: [1, 2.5, true, null]}\n"))
	f.Add([]byte(""))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("kind: NsInstance\nname: [a\n"))
	f.Add([]byte("a: &a [x, x]\nb: [*a, *a]\n"))
	f.Add([]byte(deployment("x") + "  params: {<<: {a: 1}, [k]: v, n: .nan}\n"))
	f.Add([]byte(strings.Repeat("[", 100)))
	f.Fuzz(func(t *testing.T, data []byte) {
		instance, _, problems := parseDeploymentFile("f.ops.yaml", data)
		if len(problems) > 0 {
			for _, problem := range problems {
				if problem.File != "f.ops.yaml" || problem.Message == "" {
					t.Fatalf("malformed problem %#v", problem)
				}
			}
			return
		}
		if instance.Name == "" || instance.NsdName == "" || instance.VimAccountName == "" {
			t.Fatalf("accepted an incomplete instance %#v", instance)
		}
		for _, vnf := range instance.Members() {
			if vnf.MemberVnfIndex == "" || len(vnf.KDUs) == 0 {
				t.Fatalf("accepted an incomplete VNF %#v", vnf)
			}
			for _, kdu := range vnf.KDUs {
				encoded := instance.ParamsJSON(vnf.MemberVnfIndex, kdu)
				if ok, err := equalParams(kdu.Params, encoded); err != nil || !ok || kdu.Name == "" {
					t.Fatalf("KDU %#v: params do not equal their own JSON %s: %v", kdu, encoded, err)
				}
			}
		}
		_ = instance.Digest()
	})
}
