package gitops

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/osmops/osmops/internal/osmpkg"
)

// fullForm is a deployment file of the full form: two VNFs, three KDUs, NS-level settings.
const fullForm = `kind: NsInstance
name: core
nsdName: core_ns
vimAccountName: mylocation1
params:
  region: eu1
k8sNamespace: core
deployTimeout: 10m
vnfs:
  - memberVnfIndex: amf
    params: {log_level: debug}
    k8sNamespace: amf
    kdus:
      - name: amf
        model: free5gc/amf:1.2.3
        params:
          replicaCount: 2
      - name: metrics
        k8sNamespace: metrics
  - memberVnfIndex: smf
    kdus:
      - name: smf
`

func TestParseFullForm(t *testing.T) {
	instance, _, problems := parseDeploymentFile("core.ops.yaml", []byte(fullForm))
	if problems != nil {
		t.Fatalf("problems: %v", problems)
	}
	want := NsInstance{
		Name: "core", NsdName: "core_ns", VimAccountName: "mylocation1",
		Params: map[string]any{"region": "eu1"}, K8sNamespace: "core", DeployTimeout: 10 * time.Minute,
		VNFs: []VNF{
			{MemberVnfIndex: "amf", Params: map[string]any{"log_level": "debug"}, K8sNamespace: "amf", KDUs: []KDU{
				{Name: "amf", Model: "free5gc/amf:1.2.3", Params: map[string]any{"replicaCount": int64(2)}},
				{Name: "metrics", K8sNamespace: "metrics"},
			}},
			{MemberVnfIndex: "smf", KDUs: []KDU{{Name: "smf"}}},
		},
		Source: SourceRef{File: "core.ops.yaml", Line: 1},
	}
	if diff := cmp.Diff(want, instance, ignoreDerived); diff != "" {
		t.Errorf("instance (-want +got):\n%s", diff)
	}
	members := instance.Members()
	if got := []string{members[0].Path, members[0].KDUs[1].Path, members[1].KDUs[0].Path}; !cmp.Equal(got, []string{"vnfs[0]", "vnfs[0].kdus[1]", "vnfs[1].kdus[0]"}) {
		t.Errorf("paths = %v", got)
	}
	if line := instance.Source.LineOf("vnfs[0].kdus[0].model"); line != 15 {
		t.Errorf("line of vnfs[0].kdus[0].model = %d, want 15", line)
	}
	if instance.VNFs[0].Path != "" {
		t.Error("Members changed the instance's own VNFs")
	}
}

func TestShortFormIsOneVNFOfOneKDU(t *testing.T) {
	instance, _, problems := parseDeploymentFile("a.ops.yaml", []byte(deployment("a")+"  model: bitnami/openldap:1.2.7\n  k8sNamespace: ldap\n"))
	if problems != nil {
		t.Fatalf("problems: %v", problems)
	}
	want := []VNF{{MemberVnfIndex: "openldap", KDUs: []KDU{{Name: "ldap", Model: "bitnami/openldap:1.2.7", K8sNamespace: "ldap", Path: "kdu"}}}}
	if diff := cmp.Diff(want, instance.Members()); diff != "" {
		t.Errorf("Members (-want +got):\n%s", diff)
	}
}

func TestParseProblemsOfTheNewFields(t *testing.T) {
	head := "kind: NsInstance\nname: core\nnsdName: core_ns\nvimAccountName: v\n" // lines 1-4
	tests := []struct {
		name string
		text string
		want []string
	}{
		{
			name: "both forms",
			text: head + "vnfName: amf\nkdu: {name: amf}\nvnfs:\n  - memberVnfIndex: amf\n    kdus: [{name: amf}]\n",
			want: []string{
				`a.ops.yaml:5: field "vnfName" belongs to the short form (vnfName and kdu: one KDU of one VNF), and the file uses the full one (vnfs): write the KDU as an item of vnfs`,
				`a.ops.yaml:6: field "kdu" belongs to the short form (vnfName and kdu: one KDU of one VNF), and the file uses the full one (vnfs): write the KDU as an item of vnfs`,
			},
		},
		{
			name: "vnfs not a list, or empty",
			text: head + "vnfs: []\n",
			want: []string{`a.ops.yaml:5: field "vnfs" must be a list of VNFs (memberVnfIndex, kdus), not a list`},
		},
		{
			name: "an item not a map, an item without index nor kdus",
			text: head + "vnfs:\n  - amf\n  - params: {}\n",
			want: []string{
				`a.ops.yaml:6: vnfs[0] must be a map with memberVnfIndex and kdus, not a scalar`,
				`a.ops.yaml:7: missing required field "vnfs[1].kdus"`,
				`a.ops.yaml:7: missing required field "vnfs[1].memberVnfIndex"`,
			},
		},
		{
			name: "duplicates: two items of one VNF, two KDUs of one name",
			text: head + "vnfs:\n  - memberVnfIndex: amf\n    kdus: [{name: amf}, {name: amf}]\n  - memberVnfIndex: amf\n    kdus: [{name: x}]\n",
			want: []string{
				`a.ops.yaml:7: vnfs[0].kdus[1].name "amf" is declared already at line 7: give each KDU one item`,
				`a.ops.yaml:8: vnfs[1].memberVnfIndex "amf" is declared already at line 6: give each VNF one item`,
			},
		},
		{
			name: "unknown fields, with did-you-mean, in every map",
			text: head + "k8snamespace: x\nvnfs:\n  - memberVNFIndex: amf\n    kdus:\n      - name: amf\n        Model: a/b\n",
			want: []string{
				`a.ops.yaml:5: unknown field "k8snamespace" (did you mean "k8sNamespace"?)`,
				`a.ops.yaml:7: missing required field "vnfs[0].memberVnfIndex"`,
				`a.ops.yaml:7: unknown field "vnfs[0].memberVNFIndex" (did you mean "vnfs[0].memberVnfIndex"?)`,
				`a.ops.yaml:10: unknown field "vnfs[0].kdus[0].Model" (did you mean "vnfs[0].kdus[0].model"?)`,
			},
		},
		{
			name: "kdus empty, a KDU not a map, a KDU without name",
			text: head + "vnfs:\n  - memberVnfIndex: a\n    kdus: []\n  - memberVnfIndex: b\n    kdus: [x, {model: r/c}]\n",
			want: []string{
				`a.ops.yaml:7: field "vnfs[0].kdus" must be a list of KDUs (name, params), not a list`,
				`a.ops.yaml:9: missing required field "vnfs[1].kdus[1].name"`,
				`a.ops.yaml:9: vnfs[1].kdus[0] must be a map with name and params, not a scalar`,
			},
		},
		{
			name: "model forms",
			text: head + "vnfs:\n  - memberVnfIndex: a\n    kdus:\n" +
				"      - {name: a, model: openldap}\n" +
				"      - {name: b, model: \"stable/openldap:1:2\"}\n" +
				"      - {name: c, model: \"https://charts.example/openldap-1.2.tgz\"}\n" +
				"      - {name: d, model: \"stable/open;ldap\"}\n" +
				"      - {name: e, model: stable/openldap:>=1.2}\n",
			want: []string{
				`a.ops.yaml:8: field "vnfs[0].kdus[0].model": "openldap" is not a chart reference: write <repo>/<chart> or <repo>/<chart>:<version> (a chart of a Helm repository OSM knows)`,
				`a.ops.yaml:9: field "vnfs[0].kdus[1].model": "stable/openldap:1:2" is not a chart reference: write <repo>/<chart> or <repo>/<chart>:<version> (a chart of a Helm repository OSM knows)`,
				`a.ops.yaml:10: field "vnfs[0].kdus[2].model": "https://charts.example/openldap-1.2.tgz" is not a chart reference: write <repo>/<chart> or <repo>/<chart>:<version> (a chart of a Helm repository OSM knows)`,
				`a.ops.yaml:11: field "vnfs[0].kdus[3].model": "stable/open;ldap" is longer than 255 characters or contains one of , ; ( ) ' ": OSM refuses it`,
			},
		},
		{
			name: "the short form's kdu is read the same way",
			text: head + "vnfName: a\nkdu:\n  name: a\n  model: openldap\n  k8sNamespace: Not_A_Namespace\n  params: {kdu_model: x}\n",
			want: []string{
				`a.ops.yaml:8: field "kdu.model": "openldap" is not a chart reference: write <repo>/<chart> or <repo>/<chart>:<version> (a chart of a Helm repository OSM knows)`,
				`a.ops.yaml:9: field "kdu.k8sNamespace": "Not_A_Namespace" is not a Kubernetes namespace name: at most 63 lowercase letters, digits and -, starting and ending with a letter or digit`,
				`a.ops.yaml:10: field "kdu.params": "kdu_model" is an option of OSM's KDU upgrade, not a Helm value: OSM would not pass it to Helm`,
			},
		},
		{
			name: "NS and VNF params: OSM's names only, the owner marker reserved; a KDU's Helm values may use any name",
			text: head + "params:\n  osmops_owner: me\n  k8s-namespace: x\n  1st: y\nvnfs:\n  - memberVnfIndex: a\n    params: {log.level: debug}\n    kdus: [{name: a, params: {image.tag: \"1\"}}]\n",
			want: []string{
				`a.ops.yaml:11: field "vnfs[0].params": "log.level" is not a name OSM accepts: only letters, digits and _, not starting with a digit`,
				`a.ops.yaml:6: field "params": "osmops_owner" is reserved: osmops records there which OsmDeployment owns the instance`,
				`a.ops.yaml:7: field "params": "k8s-namespace" is not a name OSM accepts: only letters, digits and _, not starting with a digit`,
				`a.ops.yaml:8: field "params": "1st" is not a name OSM accepts: only letters, digits and _, not starting with a digit`,
			},
		},
		{
			name: "params not a map",
			text: head + "params: [a]\nvnfName: a\nkdu: {name: a}\n",
			want: []string{`a.ops.yaml:5: field "params" must be a map of parameters, not a list`},
		},
		{
			name: "deploy timeouts",
			text: head + "deployTimeout: 0s\nvnfName: a\nkdu: {name: a}\n",
			want: []string{`a.ops.yaml:5: field "deployTimeout" is "0s"; it must be a duration of whole seconds, at least 1s (like 300s, 10m or 1h30m)`},
		},
		{
			name: "a deploy timeout of a fraction of a second",
			text: head + "deployTimeout: 1500ms\nvnfName: a\nkdu: {name: a}\n",
			want: []string{`a.ops.yaml:5: field "deployTimeout" is "1500ms"; it must be a duration of whole seconds, at least 1s (like 300s, 10m or 1h30m)`},
		},
		{
			name: "a deploy timeout without unit",
			text: head + "deployTimeout: 600\nvnfName: a\nkdu: {name: a}\n",
			want: []string{`a.ops.yaml:5: field "deployTimeout" is "600"; it must be a duration of whole seconds, at least 1s (like 300s, 10m or 1h30m)`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, problems := parseDeploymentFile("a.ops.yaml", []byte(tc.text))
			got := problemStrings(problems)
			if diff := cmp.Diff(tc.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDigestOfTheNewFields(t *testing.T) {
	parse := func(text string) NsInstance { return mustParse(t, text) }
	base := parse(fullForm)
	change := func(old, new string) NsInstance {
		t.Helper()
		if !strings.Contains(fullForm, old) {
			t.Fatalf("%q is not in the file", old)
		}
		return parse(strings.Replace(fullForm, old, new, 1))
	}
	tests := []struct {
		name     string
		instance NsInstance
		same     bool
	}{
		{"comments and key order", change("    params: {log_level: debug}\n    k8sNamespace: amf\n", "    k8sNamespace: amf # here\n    params: {log_level: debug}\n"), true},
		{"600s for 10m", change("deployTimeout: 10m", "deployTimeout: 600s"), true},
		{"a model", change("free5gc/amf:1.2.3", "free5gc/amf:1.2.4"), false},
		{"no model", change("        model: free5gc/amf:1.2.3\n", ""), false},
		{"a KDU's values", change("replicaCount: 2", "replicaCount: 3"), false},
		{"a KDU's namespace", change("k8sNamespace: metrics", "k8sNamespace: monitoring"), false},
		{"a VNF's params", change("log_level: debug", "log_level: info"), false},
		{"a VNF's namespace", change("k8sNamespace: amf", "k8sNamespace: amf2"), false},
		{"the NS params", change("region: eu1", "region: eu2"), false},
		{"the NS namespace", change("k8sNamespace: core", "k8sNamespace: core2"), false},
		{"the deploy timeout", change("deployTimeout: 10m", "deployTimeout: 11m"), false},
		{"the order of the KDUs", change("      - name: amf\n        model: free5gc/amf:1.2.3\n        params:\n          replicaCount: 2\n      - name: metrics\n        k8sNamespace: metrics\n",
			"      - name: metrics\n        k8sNamespace: metrics\n      - name: amf\n        model: free5gc/amf:1.2.3\n        params:\n          replicaCount: 2\n"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.instance.Digest() == base.Digest(); got != tc.same {
				t.Errorf("same digest = %v, want %v", got, tc.same)
			}
		})
	}
	// The short form's new fields change its digest only when set.
	short := parse(deployment("ldap"))
	if short.Digest() != parse(deployment("ldap")+"  params: {}\n").Digest() {
		t.Error("empty params changed the digest")
	}
	for _, extra := range []string{"  model: r/c\n", "  k8sNamespace: x\n", "params: {a: 1}\n", "k8sNamespace: x\n", "deployTimeout: 1s\n"} {
		if short.Digest() == parse(deployment("ldap")+extra).Digest() {
			t.Errorf("%q did not change the digest", extra)
		}
	}
}

func TestCheckReferencesOfTheFullForm(t *testing.T) {
	instance, _, problems := parseDeploymentFile("core.ops.yaml", []byte(fullForm))
	if problems != nil {
		t.Fatalf("problems: %v", problems)
	}
	nsd := osmpkg.Descriptor{Kind: osmpkg.KindNS, ID: "core_ns", VnfProfiles: []osmpkg.VnfProfile{{ID: "amf", VnfdID: "amf_knf"}, {ID: "upf", VnfdID: "upf_knf"}}}
	amf := osmpkg.Descriptor{Kind: osmpkg.KindVNF, ID: "amf_knf", KDUs: []osmpkg.KDU{{Name: "amf"}, {Name: "upf"}}}
	revision := &Revision{NsInstances: []NsInstance{instance}}
	catalog := NewCatalog([]osmpkg.Descriptor{nsd}, []osmpkg.Descriptor{amf}, []string{"mylocation1"}, revision)
	want := []string{
		`core.ops.yaml:18: vnfs[0].kdus[1].name "metrics" is not a KDU of VNFD "amf_knf" (valid: "amf", "upf")`,
		`core.ops.yaml:20: vnfs[1].memberVnfIndex "smf" is not a vnf-profile of NSD "core_ns" (valid: "amf", "upf")`,
	}
	if diff := cmp.Diff(want, problemStrings(revision.CheckReferences(catalog))); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
