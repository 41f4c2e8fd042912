package osmpkg

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDescriptor(t *testing.T) {
	ldapKNF := &Descriptor{Kind: KindVNF, ID: "openldap_knf", Name: "openldap_knf", Version: "1.0", IDLine: 2,
		KDUs: []KDU{{Name: "ldap", HelmChart: "stable/openldap"}}}
	ldapNS := &Descriptor{Kind: KindNS, ID: "openldap_ns", Name: "openldap_ns", Version: "1.0", IDLine: 3,
		VnfdIDs: []string{"openldap_knf"}, VnfdIDLines: []int{9}, VnfProfiles: []VnfProfile{{ID: "openldap", VnfdID: "openldap_knf"}}}
	tests := []struct {
		name string
		data string
		want *Descriptor
	}{
		{"KNF package", readTestdata(t, "openldap_knf/openldap_vnfd.yaml"), ldapKNF},
		{"NS package", readTestdata(t, "openldap_ns/openldap_nsd.yaml"), ldapNS},
		{"JSON VNFD with a number for version", `{"vnfd": {"id": "v", "product-name": "p", "version": 2.5,
			"kdu": [{"name": "k", "helm-chart": "https://charts.example.com/k-1.0.tgz"}, {"name": "j", "juju-bundle": "b"}]}}`,
			&Descriptor{Kind: KindVNF, ID: "v", Name: "p", Version: "2.5", IDLine: 1, KDUs: []KDU{
				{Name: "k", HelmChart: "https://charts.example.com/k-1.0.tgz"}, {Name: "j"}}}},
		{"SOL006 prefixed VNFD", "etsi-nfv-vnfd:vnfd:\n  id: v\n", &Descriptor{Kind: KindVNF, ID: "v", IDLine: 2}},
		{"VNFD with a software-version", "vnfd:\n  id: v\n  software-version: '2.0'\n",
			&Descriptor{Kind: KindVNF, ID: "v", IDLine: 2, SoftwareVersion: "2.0", SoftwareVersionLine: 3}},
		{"NSD without the inner list", "nsd:\n  id: n\n  vnfd-id: [a, b]\n",
			&Descriptor{Kind: KindNS, ID: "n", IDLine: 2, VnfdIDs: []string{"a", "b"}, VnfdIDLines: []int{3, 3}}},
		{"NSD profiles of every deployment flavour", `
nsd:
  nsd:
    - id: n
      df:
        - vnf-profile: [{id: "1", vnfd-id: a}]
        - vnf-profile: [{id: "2", vnfd-id: b}, {id: "3", vnfd-id: a}]
`, &Descriptor{Kind: KindNS, ID: "n", IDLine: 4, VnfProfiles: []VnfProfile{{"1", "a"}, {"2", "b"}, {"3", "a"}}}},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			got, err := parseDescriptor([]byte(test.data))
			if err != nil {
				t.Fatalf("parseDescriptor: %v", err)
			}
			if diff := cmp.Diff(test.want, got); diff != "" {
				t.Errorf("descriptor (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDescriptorErrors(t *testing.T) {
	tests := []struct {
		name        string
		data        string
		wantLine    int
		wantMessage string
	}{
		{"empty", "", 0, "empty document"},
		{"YAML syntax", "vnfd:\n  id: a\n   bad: [\n", 3, "invalid YAML:"},
		{"not a map", "- a\n- b\n", 1, "must be a map with a top-level vnfd or nsd key"},
		{"not a descriptor", "replicaCount: 2\n", 1, "no top-level vnfd or nsd key"},
		{"vnfd not a map", "vnfd: [a]\n", 1, "vnfd must be a map"},
		{"vnfd without id", "vnfd:\n  product-name: p\n", 2, "vnfd.id is missing"},
		{"vnfd id of the wrong type", "vnfd:\n  id: [a]\n", 2, "vnfd: invalid YAML: cannot unmarshal !!seq into string"},
		{"kdu without name", "vnfd:\n  id: a\n  kdu:\n    - helm-chart: r/c\n", 4, "vnfd.kdu[0].name is missing"},
		{"kdu not a map", "vnfd:\n  id: a\n  kdu:\n    - x\n", 4, "vnfd.kdu[0] must be a map"},
		{"helm chart with a version", "vnfd:\n  id: a\n  kdu:\n    - name: k\n      helm-chart: stable/openldap:1.2.7\n", 4,
			"vnfd.kdu[0].helm-chart: helm-chart 'stable/openldap:1.2.7' is not valid"},
		{"nsd list of two", "nsd:\n  nsd:\n    - id: a\n    - id: b\n", 3, "nsd.nsd must be a list of only one element"},
		{"nsd without id", "nsd:\n  nsd:\n    - name: a\n", 3, "nsd.nsd[0].id is missing"},
		{"nsd vnfd-id of the wrong type", "nsd:\n  nsd:\n    - id: a\n      vnfd-id: {x: y}\n", 4,
			"nsd.nsd[0]: invalid YAML: cannot unmarshal !!map into []string"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			_, problem := parseDescriptor([]byte(test.data))
			if problem == nil {
				t.Fatal("want an *Error, got none")
			}
			if problem.Line != test.wantLine || !strings.Contains(problem.Message, test.wantMessage) {
				t.Errorf("got line %d %q, want line %d and a message containing %q", problem.Line, problem.Message, test.wantLine, test.wantMessage)
			}
		})
	}
}

func TestValidateHelmChart(t *testing.T) {
	tests := []struct {
		chart string
		valid bool
	}{
		{"stable/openldap", true},
		{"openldap", true},
		{"my-repo/my-chart2", true},
		{"https://charts.example.com/openldap-1.2.7.tgz", true},
		{"http://charts.example.com:8080/x.tgz", true},
		{"oci://registry.example.com/charts/x", true}, // the NBI takes any scheme with a host
		{"stable/openldap:1.2.7", false},
		{"Stable/OpenLDAP", false},
		{"a/b/c", false},
		{"-repo/chart", false},
		{"repo/chart-", false},
		{"https:///no-host", false},
		{"", false},
	}
	for _, test := range tests {
		err := ValidateHelmChart(test.chart)
		if (err == nil) != test.valid {
			t.Errorf("ValidateHelmChart(%q) = %v, want valid=%v", test.chart, err, test.valid)
		}
		if err != nil && err.Error() != "helm-chart '"+test.chart+"' is not valid" {
			t.Errorf("ValidateHelmChart(%q) says %q, not the NBI's wording", test.chart, err)
		}
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Message: "m"}, "m"},
		{Error{Package: "p", Message: "m"}, "package p: m"},
		{Error{Package: "p", File: "f.yaml", Line: 3, Message: "m"}, "package p, file f.yaml, line 3: m"},
	}
	for _, test := range tests {
		if got := test.err.Error(); got != test.want {
			t.Errorf("Error() = %q, want %q", got, test.want)
		}
	}
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
