// Package openldap is the OpenLDAP example that the controller tests, the NBI simulator's
// tests, the bench and the end-to-end tests deploy: the sources of its KNF and NS packages and
// its NsInstance deployment file. The package sources are read from the demo repository
// (hack/demo-repo/osm-pkgs), their one copy outside internal/osmpkg's own test data.
package openldap

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/osmops/osmops/internal/testing/testenv"
)

// PackageNames are the package folders of the example: the KNF and the NS that uses it.
var PackageNames = []string{"openldap_knf", "openldap_ns"}

// PackagesDir returns the folder that holds the package folders.
func PackagesDir() string {
	return filepath.Join(testenv.RepoRoot(), "hack", "demo-repo", "osm-pkgs")
}

// PackageFiles returns the files of the package folders names as a repository holds them:
// osm-pkgs/NAME/FILE to content.
func PackageFiles(names ...string) (map[string]string, error) {
	files := map[string]string{}
	for _, name := range names {
		entries, err := os.ReadDir(filepath.Join(PackagesDir(), name))
		if err != nil {
			return nil, fmt.Errorf("package sources: %w", err)
		}
		for _, entry := range entries {
			data, err := os.ReadFile(filepath.Join(PackagesDir(), name, entry.Name()))
			if err != nil {
				return nil, fmt.Errorf("package sources: %w", err)
			}
			files[path.Join("osm-pkgs", name, entry.Name())] = string(data)
		}
	}
	return files, nil
}

// NsInstanceFile is the deployment file of an NS instance of the example, in the first
// generation's format, with the KDU value replicaCount.
func NsInstanceFile(name, vimAccount, replicaCount string) string {
	return fmt.Sprintf(`kind: NsInstance
name: %s
description: Demo LDAP NS
nsdName: openldap_ns
vnfName: openldap
vimAccountName: %s
kdu:
  name: ldap
  params:
    replicaCount: "%s"
`, name, vimAccount, replicaCount)
}
