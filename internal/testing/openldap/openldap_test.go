package openldap

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPackageFiles(t *testing.T) {
	files, err := PackageFiles(PackageNames...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"osm-pkgs/openldap_knf/openldap_vnfd.yaml", "osm-pkgs/openldap_ns/openldap_nsd.yaml"}
	var got []string
	for name := range files {
		got = append(got, name)
	}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("files = %v, want %v", got, want)
	}
	if _, err := PackageFiles("missing_knf"); err == nil || !strings.Contains(err.Error(), "missing_knf") {
		t.Errorf("error = %v, want one naming missing_knf", err)
	}
}

// The demo repository's NS of two KNFs is the one tests declare.
func TestStackInstanceFileIsTheDemos(t *testing.T) {
	demo, err := os.ReadFile(filepath.Join(PackagesDir(), "..", "deploy", "ldap-stack.osmops.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := StackInstanceFile("ldap-stack", "openstack-site1", StackOfTheDemo); got != string(demo) {
		t.Errorf("StackInstanceFile =\n%s\nwant the demo's\n%s", got, demo)
	}
	if _, err := PackageFiles(StackPackageNames...); err != nil {
		t.Error(err)
	}
}
