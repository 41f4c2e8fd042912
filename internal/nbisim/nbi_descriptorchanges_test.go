package nbisim

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osmops/osmops/internal/osmpkg"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// readOpenLDAPFile reads a file of the OpenLDAP example's package folders.
func readOpenLDAPFile(t *testing.T, path ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(append([]string{openldap.PackagesDir()}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// edit replaces the first old in text with new, and fails when it is missing.
func edit(t *testing.T, text, old, new string) string {
	t.Helper()
	if !strings.Contains(text, old) {
		t.Fatalf("%q is not in the descriptor", old)
	}
	return strings.Replace(text, old, new, 1)
}

// The expectations come from running the NBI's _validate_descriptor_changes
// (descriptor_topics.py, with deepdiff 8.6.1 and PyYAML) on the same files.
func TestDescriptorChanges(t *testing.T) {
	vnfd := readOpenLDAPFile(t, "openldap_knf", "openldap_vnfd.yaml")
	nsd := readOpenLDAPFile(t, "openldap_ns", "openldap_nsd.yaml")
	const (
		vnfDisallowed = " cannot be modified, there are disallowed changes in the vnf descriptor."
		nsDisallowed  = " cannot be modified, there are disallowed changes in the ns descriptor. "
		noValueChange = " Descriptor could not be processed with error: 'NoneType' object has no attribute 'keys'."
	)
	newDescription := func(text string) string { return edit(t, text, "description: KNF with", "description: A KNF with") }
	withDay12 := func(text, scaling, primitives string) string {
		return edit(t, text, "    - id: default-df\n", "    - id: default-df\n"+scaling+
			"      lcm-operations-configuration:\n        operate-vnf-op-config:\n          day1-2:\n            - id: openldap_knf\n"+primitives)
	}
	day12Old := withDay12(vnfd, "      scaling-aspect:\n        - id: s1\n", "              config-primitive:\n                - name: touch\n")
	day12New := withDay12(vnfd, "      scaling-aspect:\n        - id: s2\n      healing-aspect:\n        - id: h\n",
		"              initial-config-primitive:\n                - name: init\n")

	tests := []struct {
		name     string
		kind     osmpkg.Kind
		old, new string
		status   int // 0: allowed
		detail   string
	}{
		{"a changed description", osmpkg.KindVNF, vnfd, newDescription(vnfd), 422,
			"Error in validating new descriptor: ['description']" + vnfDisallowed},
		{"a changed chart", osmpkg.KindVNF, vnfd, edit(t, vnfd, "helm-chart: stable/openldap", "helm-chart: bitnami/openldap"), 422,
			"Error in validating new descriptor: ['kdu'][0]['helm-chart']" + vnfDisallowed},
		{"two changes", osmpkg.KindVNF, vnfd, edit(t, newDescription(vnfd), "helm-chart: stable/openldap", "helm-chart: bitnami/openldap"), 422,
			"Error in validating new descriptor: ['description'] , ['kdu'][0]['helm-chart']" + vnfDisallowed},
		{"a comment and another layout", osmpkg.KindVNF, vnfd,
			edit(t, edit(t, vnfd, "  version: \"1.0\"\n", "  version: '1.0'  # the same\n"), "    - id: default-df\n", "    - {id: default-df}\n"), 0, ""},
		{"a new software-version", osmpkg.KindVNF, vnfd,
			newDescription(edit(t, vnfd, "  version: \"1.0\"\n", "  version: \"1.0\"\n  software-version: \"2.0\"\n")), 0, ""},
		{"software-version 1.0, a float, is not the default \"1.0\"", osmpkg.KindVNF, vnfd,
			newDescription(edit(t, vnfd, "  version: \"1.0\"\n", "  version: \"1.0\"\n  software-version: 1.0\n")), 0, ""},
		{"software-version \"1.0\" is the default", osmpkg.KindVNF, vnfd,
			newDescription(edit(t, vnfd, "  version: \"1.0\"\n", "  version: \"1.0\"\n  software-version: \"1.0\"\n")), 422,
			"Error in validating new descriptor: ['description']" + vnfDisallowed},
		{"a KDU added", osmpkg.KindVNF, vnfd, vnfd + "    - name: admin\n      helm-chart: bitnami/phpldapadmin\n", 400, "VNF" + noValueChange},
		{"a type changed", osmpkg.KindVNF, vnfd, edit(t, vnfd, `version: "1.0"`, "version: 1.0"), 400, "VNF" + noValueChange},
		{"yes is a bool", osmpkg.KindVNF, vnfd, edit(t, vnfd, "provider: Example", "provider: yes"), 400, "VNF" + noValueChange},
		{"modifiable items", osmpkg.KindVNF, day12Old, day12New, 0, ""},
		{"a day-1/2 configuration is not modifiable", osmpkg.KindVNF, day12Old, edit(t, day12New, "- id: openldap_knf\n", "- id: other\n"), 422,
			"Error in validating new descriptor: ['df'][0]['lcm-operations-configuration']['operate-vnf-op-config']['day1-2'][0]['id']" + vnfDisallowed},
		{"a day-1/2 configuration added", osmpkg.KindVNF, vnfd, day12New, 400, "VNF" + noValueChange},
		// Too few keys in common: the whole root is a changed value.
		{"another envelope", osmpkg.KindVNF, vnfd, edit(t, vnfd, "vnfd:\n", "etsi-nfv-vnfd:vnfd:\n"), 422,
			"Error in validating new descriptor: " + vnfDisallowed},
		{"df a mapping", osmpkg.KindVNF, vnfd, edit(t, vnfd, "  df:\n    - id: default-df\n", "  df:\n    id: default-df\n"), 400,
			"VNF Descriptor could not be processed with error: 'str' object has no attribute 'get'."},
		// A TypeError is not one of the types the NBI re-raises with its message.
		{"df null", osmpkg.KindVNF, vnfd, edit(t, vnfd, "  df:\n    - id: default-df\n", "  df:\n"), 400, "'NoneType' object is not iterable"},

		{"NSD: a changed description", osmpkg.KindNS, nsd, edit(t, nsd, "description: NS with", "description: An NS with"), 422,
			"Error in validating new descriptor: ['description']" + nsDisallowed},
		{"NSD: two changes", osmpkg.KindNS, nsd, edit(t, edit(t, nsd, "description: NS with", "description: An NS with"), "designer: Example", "designer: Someone"), 422,
			"Error in validating new descriptor: ['description'], ['designer']" + nsDisallowed},
		{"NSD: a VNFD added", osmpkg.KindNS, nsd, edit(t, nsd, "        - openldap_knf\n", "        - openldap_knf\n        - other_knf\n"), 400, "NS" + noValueChange},
		{"NSD: ns-configuration added", osmpkg.KindNS, nsd,
			edit(t, nsd, "      version: \"1.0\"\n", "      version: \"1.0\"\n      ns-configuration:\n        config-primitive:\n          - name: touch\n"), 400, "NS" + noValueChange},
		{"NSD: software-version does not matter", osmpkg.KindNS, nsd,
			edit(t, edit(t, nsd, "      version: \"1.0\"\n", "      version: \"1.0\"\n      software-version: \"2.0\"\n"), "description: NS with", "description: An NS with"), 422,
			"Error in validating new descriptor: ['description']" + nsDisallowed},
		{"NSD: a changed connection point", osmpkg.KindNS, nsd, edit(t, nsd, "constituent-cpd-id: mgmt-ext", "constituent-cpd-id: other-ext"), 422,
			"Error in validating new descriptor: ['df'][0]['vnf-profile'][0]['virtual-link-connectivity'][0]['constituent-cpd-id'][0]['constituent-cpd-id']" + nsDisallowed},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			err := descriptorChanges(test.kind, []byte(test.old), []byte(test.new))
			switch {
			case test.status == 0 && err != nil:
				t.Errorf("refused: %d %s", err.status, err.detail)
			case test.status != 0 && err == nil:
				t.Errorf("allowed, want %d %s", test.status, test.detail)
			case test.status != 0 && (err.status != test.status || err.detail != test.detail):
				t.Errorf("%d %q\nwant %d %q", err.status, err.detail, test.status, test.detail)
			}
		})
	}
}

// TestInUsePackageUpdate drives the check through the NBI's routes.
func TestInUsePackageUpdate(t *testing.T) {
	h := newLoggedIn(t, Config{})
	vnfdID, nsdID := h.onboardOpenLDAP()
	vnfd := readOpenLDAPFile(t, "openldap_knf", "openldap_vnfd.yaml")
	nsd := readOpenLDAPFile(t, "openldap_ns", "openldap_nsd.yaml")
	put := func(kind, id, name, file, content string) answer {
		t.Helper()
		pkg := buildPackage(t, name, file, content)
		path := "/osm/vnfpkgm/v1/vnf_packages/" + id + "/package_content"
		if kind == "ns" {
			path = "/osm/nsd/v1/ns_descriptors/" + id + "/nsd_content"
		}
		return h.request("PUT", path, pkg.Tarball, "Content-Type", "application/gzip", "Content-File-MD5", pkg.MD5)
	}
	changedVNFD := edit(t, vnfd, "description: KNF with", "description: A KNF with")
	changedNSD := edit(t, nsd, "description: NS with", "description: An NS with")

	// Not in use: no check.
	if a := put("vnf", vnfdID, "openldap_knf", "openldap_vnfd.yaml", changedVNFD); a.status != http.StatusNoContent {
		t.Fatalf("update of a VNFD not in use: %d %s", a.status, a.body)
	}
	if a := put("ns", nsdID, "openldap_ns", "openldap_nsd.yaml", changedNSD); a.status != http.StatusNoContent {
		t.Fatalf("update of an NSD not in use: %d %s", a.status, a.body)
	}

	// An NS instance, even one not instantiated, has VNF records: both
	// descriptors are in use.
	h.must(http.StatusCreated, "POST", nsInstancesPath, ldapCreateBody("ldap", nsdID, h.vimID("vim1"), nil))
	before := h.sim.State().Packages
	beforeVNFD := h.must(http.StatusOK, "GET", "/osm/vnfpkgm/v1/vnf_packages/"+vnfdID, nil).body

	tests := []struct {
		name                  string
		kind, id, name_, file string
		content               string
		status                int
		detail                string
	}{
		{"a changed description", "vnf", vnfdID, "openldap_knf", "openldap_vnfd.yaml", vnfd, 422,
			"Error in validating new descriptor: ['description'] cannot be modified, there are disallowed changes in the vnf descriptor."},
		{"a KDU added", "vnf", vnfdID, "openldap_knf", "openldap_vnfd.yaml", changedVNFD + "    - name: admin\n      helm-chart: bitnami/phpldapadmin\n", 400,
			"VNF Descriptor could not be processed with error: 'NoneType' object has no attribute 'keys'."},
		{"the descriptor elsewhere", "vnf", vnfdID, "openldap_knf", "vnfd.yaml", vnfd, 404,
			"storage exception File " + vnfdID + "/openldap_knf/vnfd.yaml does not exist"},
		{"an NSD change", "ns", nsdID, "openldap_ns", "openldap_nsd.yaml", nsd, 422,
			"Error in validating new descriptor: ['description'] cannot be modified, there are disallowed changes in the ns descriptor. "},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			a := put(test.kind, test.id, test.name_, test.file, test.content)
			if a.status != test.status || string(a.body) != errorBody(test.status, test.detail) {
				t.Errorf("%d %s, want %d %q", a.status, a.body, test.status, test.detail)
			}
		})
	}
	// Refused updates leave the packages as they were.
	after := h.sim.State().Packages
	if before[0].Revision != 2 || after[0] != before[0] || after[1] != before[1] {
		t.Errorf("packages before %+v, after %+v", before, after)
	}
	if afterVNFD := h.must(http.StatusOK, "GET", "/osm/vnfpkgm/v1/vnf_packages/"+vnfdID, nil).body; string(afterVNFD) != string(beforeVNFD) {
		t.Errorf("the VNFD record changed")
	}

	// What may change: a comment, a new software-version.
	if a := put("vnf", vnfdID, "openldap_knf", "openldap_vnfd.yaml", changedVNFD+"# a comment\n"); a.status != http.StatusNoContent {
		t.Errorf("a comment: %d %s", a.status, a.body)
	}
	withVersion := edit(t, vnfd, "  version: \"1.0\"\n", "  version: \"1.0\"\n  software-version: \"2.0\"\n")
	if a := put("vnf", vnfdID, "openldap_knf", "openldap_vnfd.yaml", withVersion); a.status != http.StatusNoContent {
		t.Errorf("a new software-version: %d %s", a.status, a.body)
	}
	if revision := h.sim.State().Packages[0].Revision; revision != 4 {
		t.Errorf("VNFD revision %d, want 4", revision)
	}
}
