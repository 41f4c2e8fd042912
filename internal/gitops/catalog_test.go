package gitops

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/osmpkg"
)

func TestCheckReferencesOfTheFirstGenerationRepository(t *testing.T) {
	revision, err := Load("testdata/firstgen", Options{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	// OSM holds nothing yet: the revision's packages provide the NSD and VNFD.
	catalog := NewCatalog(nil, nil, []string{"mylocation1"}, revision)
	if problems := revision.CheckReferences(catalog); problems != nil {
		t.Errorf("CheckReferences = %v, want none", problemStrings(problems))
	}
}

func TestCheckReferences(t *testing.T) {
	osmNSD := osmpkg.Descriptor{
		Kind: osmpkg.KindNS, ID: "openldap_ns", VnfdIDs: []string{"openldap_knf"},
		VnfProfiles: []osmpkg.VnfProfile{{ID: "openldap", VnfdID: "openldap_knf"}, {ID: "backup", VnfdID: "backup_knf"}},
	}
	osmVNFD := osmpkg.Descriptor{Kind: osmpkg.KindVNF, ID: "openldap_knf", KDUs: []osmpkg.KDU{{Name: "ldap"}, {Name: "admin"}}}
	var manyVIMs []string
	for i := range 12 {
		manyVIMs = append(manyVIMs, fmt.Sprintf("vim%02d", i))
	}
	instance := func(change func(*NsInstance)) NsInstance {
		n := NsInstance{
			Name: "ldap", NsdName: "openldap_ns", VnfName: "openldap", VimAccountName: "vim00", KDU: KDU{Name: "ldap"},
			Source: SourceRef{File: "ldap.ops.yaml", Line: 1, FieldLines: map[string]int{
				"name": 2, "nsdName": 3, "vnfName": 4, "vimAccountName": 5, "kdu": 6, "kdu.name": 7,
			}},
		}
		if change != nil {
			change(&n)
		}
		return n
	}
	revisionPackage := func(source string, descriptor osmpkg.Descriptor) Package {
		return Package{Source: source, Package: &osmpkg.Package{Name: descriptor.ID, Descriptor: descriptor, DescriptorPath: descriptor.ID + ".yaml"}}
	}
	tests := []struct {
		name      string
		instances []NsInstance
		packages  []Package
		want      []string
	}{
		{name: "all known", instances: []NsInstance{instance(nil)}},
		{
			name:      "unknown NSD",
			instances: []NsInstance{instance(func(n *NsInstance) { n.NsdName = "ldap_ns" })},
			want:      []string{`ldap.ops.yaml:3: nsdName "ldap_ns" is not an NSD id in OSM nor in this revision`},
		},
		{
			name:      "unknown vnf-profile",
			instances: []NsInstance{instance(func(n *NsInstance) { n.VnfName = "1" })},
			want:      []string{`ldap.ops.yaml:4: vnfName "1" is not a vnf-profile of NSD "openldap_ns" (valid: "backup", "openldap")`},
		},
		{
			name:      "the profile's VNFD is unknown",
			instances: []NsInstance{instance(func(n *NsInstance) { n.VnfName = "backup" })},
			want:      []string{`ldap.ops.yaml:4: vnf-profile "backup" of NSD "openldap_ns" uses VNFD "backup_knf", which is neither in OSM nor in this revision`},
		},
		{
			name:      "unknown KDU",
			instances: []NsInstance{instance(func(n *NsInstance) { n.KDU.Name = "openldap" })},
			want:      []string{`ldap.ops.yaml:7: kdu.name "openldap" is not a KDU of VNFD "openldap_knf" (valid: "admin", "ldap")`},
		},
		{
			name:      "unknown VIM account, and NSD: both reported",
			instances: []NsInstance{instance(func(n *NsInstance) { n.VimAccountName = "mylocation1"; n.NsdName = "x" })},
			want: []string{
				`ldap.ops.yaml:3: nsdName "x" is not an NSD id in OSM nor in this revision`,
				`ldap.ops.yaml:5: vimAccountName "mylocation1" is not a VIM account of OSM (known: "vim00", "vim01", "vim02", "vim03", "vim04", "vim05", "vim06", "vim07", "vim08", "vim09" and 2 more)`,
			},
		},
		{
			name: "the revision's packages replace OSM's descriptors",
			instances: []NsInstance{instance(func(n *NsInstance) {
				n.VnfName = "backup"
				n.KDU.Name = "restic"
			})},
			packages: []Package{
				revisionPackage("osm-pkgs/backup_knf", osmpkg.Descriptor{Kind: osmpkg.KindVNF, ID: "backup_knf", KDUs: []osmpkg.KDU{{Name: "restic"}}}),
			},
		},
		{
			name: "an NS package naming an unknown VNFD, at its line",
			packages: []Package{
				revisionPackage("osm-pkgs/new_ns", osmpkg.Descriptor{Kind: osmpkg.KindNS, ID: "new_ns",
					VnfdIDs: []string{"openldap_knf", "missing_knf"}, VnfdIDLines: []int{9, 10}}),
			},
			want: []string{`osm-pkgs/new_ns/new_ns.yaml:10: vnfd-id "missing_knf" names a VNFD that is neither in OSM nor in this revision`},
		},
		{
			name: "an NS package naming an unknown VNFD, at its folder when the line is not known",
			packages: []Package{
				revisionPackage("osm-pkgs/new_ns", osmpkg.Descriptor{Kind: osmpkg.KindNS, ID: "new_ns", VnfdIDs: []string{"missing_knf"}}),
			},
			want: []string{`osm-pkgs/new_ns: vnfd-id "missing_knf" names a VNFD that is neither in OSM nor in this revision`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			revision := &Revision{NsInstances: tc.instances, Packages: tc.packages}
			catalog := NewCatalog([]osmpkg.Descriptor{osmNSD}, []osmpkg.Descriptor{osmVNFD}, manyVIMs, revision)
			if diff := cmp.Diff(tc.want, problemStrings(revision.CheckReferences(catalog))); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewCatalogWithoutRevision(t *testing.T) {
	catalog := NewCatalog(nil, []osmpkg.Descriptor{{Kind: osmpkg.KindVNF, ID: "v"}}, nil, nil)
	want := Catalog{
		NSDs:        map[string]osmpkg.Descriptor{},
		VNFDs:       map[string]osmpkg.Descriptor{"v": {Kind: osmpkg.KindVNF, ID: "v"}},
		VIMAccounts: map[string]bool{},
	}
	if diff := cmp.Diff(want, catalog); diff != "" {
		t.Errorf("NewCatalog (-want +got):\n%s", diff)
	}
}

func TestCheckOwnReferences(t *testing.T) {
	root := writeTree(t, map[string]string{
		"osm-pkgs/openldap_knf/openldap_vnfd.yaml": vnfd("openldap_knf", "ldap"),
		"osm-pkgs/openldap_ns/openldap_nsd.yaml":   nsd("openldap_ns", "openldap_knf", "elsewhere_knf"),
		// The profile is wrong, but OSM may hold the NSD: nothing is known offline.
		"in-osm.osmops.yaml":  strings.ReplaceAll(deployment("in-osm"), "nsdName: openldap_ns\nvnfName: openldap", "nsdName: osm_ns\nvnfName: nowhere"),
		"profile.osmops.yaml": strings.Replace(deployment("profile"), "vnfName: openldap", "vnfName: openldapx", 1),
		"kdu.osmops.yaml": strings.Replace(strings.Replace(deployment("kdu"), "vnfName: openldap", "vnfName: openldap_knf-profile", 1),
			"name: ldap", "name: ldapx", 1),
		// The VNFD is OSM's: its KDUs are not known offline.
		"other-vnfd.osmops.yaml": strings.Replace(strings.Replace(deployment("other"), "vnfName: openldap", "vnfName: elsewhere_knf-profile", 1),
			"name: ldap", "name: whatever", 1),
		"valid.osmops.yaml": strings.Replace(deployment("valid"), "vnfName: openldap", "vnfName: openldap_knf-profile", 1),
	})
	revision, err := Load(root, Options{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []string{
		`kdu.osmops.yaml:7: kdu.name "ldapx" is not a KDU of VNFD "openldap_knf" (valid: "ldap")`,
		`profile.osmops.yaml:4: vnfName "openldapx" is not a vnf-profile of NSD "openldap_ns" (valid: "elsewhere_knf-profile", "openldap_knf-profile")`,
	}
	if diff := cmp.Diff(want, problemStrings(revision.CheckOwnReferences())); diff != "" {
		t.Errorf("CheckOwnReferences (-want +got):\n%s", diff)
	}
}

// everyProblemRepo is a revision of two NS packages and their VNFDs, with deployment files.
func everyProblemRepo(t *testing.T, deployments map[string]string) string {
	t.Helper()
	files := map[string]string{
		"osm-pkgs/openldap_knf/openldap_vnfd.yaml":   vnfd("openldap_knf", "ldap"),
		"osm-pkgs/ldapweb_knf/ldapweb_vnfd.yaml":     vnfd("ldapweb_knf", "admin", "metrics"),
		"osm-pkgs/openldap_ns/openldap_nsd.yaml":     nsd("openldap_ns", "openldap_knf"),
		"osm-pkgs/ldap_stack_ns/ldap_stack_nsd.yaml": nsd("ldap_stack_ns", "openldap_knf", "ldapweb_knf"),
	}
	maps.Copy(files, deployments)
	return writeTree(t, files)
}

// stackDeployment is a valid deployment file of ldap_stack_ns in the full form.
const stackDeployment = `kind: NsInstance
name: ldap-stack
nsdName: ldap_stack_ns
vimAccountName: mylocation1
vnfs:
  - memberVnfIndex: openldap_knf-profile
    kdus:
      - name: ldap
        params:
          replicaCount: "1"
  - memberVnfIndex: ldapweb_knf-profile
    kdus:
      - name: admin
        params:
          service: {type: ClusterIP}
`

// A parse problem in one file hides no reference problem of another, nor of the fields of its
// own file that parsed: one push shows every problem, offline and against OSM alike.
func TestAnInvalidRevisionKeepsTheReferencesOfWhatParsed(t *testing.T) {
	ldap := strings.Replace(deployment("ldap"), "vnfName: openldap", "vnfName: openldapx", 1)
	tests := []struct {
		name        string
		deployments map[string]string
		want        []string
	}{{
		name: "an unknown field in one file, a wrong vnfName in another",
		deployments: map[string]string{
			"deploy/ldap-stack.osmops.yaml": strings.Replace(stackDeployment, "        params:\n          replicaCount", "        parms:\n          replicaCount", 1),
			"deploy/ldap.osmops.yaml":       ldap,
		},
		want: []string{
			`deploy/ldap-stack.osmops.yaml:9: unknown field "vnfs[0].kdus[0].parms"`,
			`deploy/ldap.osmops.yaml:4: vnfName "openldapx" is not a vnf-profile of NSD "openldap_ns" (valid: "openldap_knf-profile")`,
		},
	}, {
		name: "a field's typo, a wrong vnf-profile and a wrong KDU beside the typo, in one file",
		deployments: map[string]string{"deploy/ldap-stack.osmops.yaml": strings.NewReplacer(
			"memberVnfIndex: openldap_knf-profile", "memberVnfIndex: openldap",
			"      - name: admin\n        params:", "      - name: admni\n        parms:",
		).Replace(stackDeployment)},
		want: []string{
			`deploy/ldap-stack.osmops.yaml:6: vnfs[0].memberVnfIndex "openldap" is not a vnf-profile of NSD "ldap_stack_ns" (valid: "ldapweb_knf-profile", "openldap_knf-profile")`,
			`deploy/ldap-stack.osmops.yaml:13: vnfs[1].kdus[0].name "admni" is not a KDU of VNFD "ldapweb_knf" (valid: "admin", "metrics")`,
			`deploy/ldap-stack.osmops.yaml:14: unknown field "vnfs[1].kdus[0].parms"`,
		},
	}, {
		// Issue 29's case: a wrong KDU beside a wrong vnf-profile, both told in one run, the
		// KDU against every VNF of the NSD.
		name: "a wrong vnf-profile and a wrong KDU of that VNF, beside a typo",
		deployments: map[string]string{"deploy/ldap-stack.osmops.yaml": strings.NewReplacer(
			"memberVnfIndex: openldap_knf-profile", "memberVnfIndex: openldap",
			"      - name: ldap\n", "      - name: ldapx\n",
			"        params:\n          service", "        parms:\n          service",
		).Replace(stackDeployment)},
		want: []string{
			`deploy/ldap-stack.osmops.yaml:6: vnfs[0].memberVnfIndex "openldap" is not a vnf-profile of NSD "ldap_stack_ns" (valid: "ldapweb_knf-profile", "openldap_knf-profile")`,
			`deploy/ldap-stack.osmops.yaml:8: vnfs[0].kdus[0].name "ldapx" is not a KDU of any VNF of NSD "ldap_stack_ns" (valid: "admin", "ldap", "metrics")`,
			`deploy/ldap-stack.osmops.yaml:14: unknown field "vnfs[1].kdus[0].parms"`,
		},
	}, {
		name: "a file that is no map, a missing field, a name declared twice: nothing more, nor less",
		deployments: map[string]string{
			"deploy/a-list.osmops.yaml":  "- kind: NsInstance\n",
			"deploy/b-ldap.osmops.yaml":  strings.Replace(deployment("ldap"), "nsdName: openldap_ns\n", "", 1),
			"deploy/c-twice.osmops.yaml": ldap,
		},
		want: []string{
			`deploy/a-list.osmops.yaml:1: the document is a list; it must be a map with kind: NsInstance`,
			`deploy/b-ldap.osmops.yaml:1: missing required field "nsdName"`,
			`deploy/c-twice.osmops.yaml:2: NS instance "ldap" is already declared in deploy/b-ldap.osmops.yaml:2`,
			`deploy/c-twice.osmops.yaml:4: vnfName "openldapx" is not a vnf-profile of NSD "openldap_ns" (valid: "openldap_knf-profile")`,
		},
	}}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			_, err := Load(everyProblemRepo(t, test.deployments), Options{})
			var invalid *ValidationError
			if !errors.As(err, &invalid) || invalid.Parsed == nil {
				t.Fatalf("Load: %v, want a ValidationError with what parsed", err)
			}
			offline := invalid.With(invalid.Parsed.CheckOwnReferences())
			if diff := cmp.Diff(test.want, problemStrings(offline.Problems)); diff != "" {
				t.Errorf("offline (-want +got):\n%s", diff)
			}
			osm := invalid.With(invalid.Parsed.CheckReferences(NewCatalog(nil, nil, []string{"mylocation1"}, invalid.Parsed)))
			if diff := cmp.Diff(test.want, problemStrings(osm.Problems)); diff != "" {
				t.Errorf("against OSM (-want +got):\n%s", diff)
			}
			for _, instance := range invalid.Parsed.NsInstances {
				for _, vnf := range instance.Members() {
					for _, kdu := range vnf.KDUs {
						if kdu.Params != nil || kdu.ValuesFrom != nil {
							t.Errorf("an invalid revision keeps the values of %s %s", instance.Source.File, kdu.Path)
						}
					}
				}
			}
		})
	}
}
