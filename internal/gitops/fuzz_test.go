package gitops

import (
	"strings"
	"testing"

	"github.com/fluxcd/pkg/envsubst"
	"github.com/fluxcd/pkg/envsubst/parse"
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

// FuzzSubstitutionBound checks that the bound substitution computes before expanding is never
// less than what envsubst writes.
func FuzzSubstitutionBound(f *testing.F) {
	for _, seed := range []string{"a: ${v}", "${v//a/${w}}", "${v:-${w}x}", "${v^^}${#w}", "${v/#a/b}${v/%a/bb}", "${v:1:2}${w##a*}", "${v//${w}/x}", "$${v}${v//}"} {
		f.Add(seed, "aaé\xff", "a")
	}
	f.Fuzz(func(t *testing.T, text, v, w string) {
		vars := map[string]string{"v": v, "w": w}
		tree, err := parse.Parse(text)
		if err != nil {
			return
		}
		output, err := envsubst.Eval(text, func(name string) (string, bool) { return vars[name], true })
		if err != nil {
			return
		}
		walk := &expansionWalk{vars: vars}
		if bound, _ := walk.bound(tree.Root); int64(len(output)) > bound {
			t.Fatalf("%q with v=%q w=%q: %d bytes written, bound %d", text, v, w, len(output), bound)
		}
	})
}
