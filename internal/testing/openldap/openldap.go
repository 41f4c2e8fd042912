// Package openldap is the OpenLDAP example that the controller tests, the NBI simulator's
// tests, the bench and the end-to-end tests deploy: the sources of its KNF and NS packages and
// its NsInstance deployment file. The package sources are read from the demo repository
// (hack/demo-repo/osm-pkgs), their one copy outside internal/osmpkg's own test data.
//
// Test harness: no product package may import it.
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

// StackPackageNames are the package folders of the example's NS of two KNFs: the LDAP
// directory's KNF, the web front's KNF (KDUs admin and metrics) and the NS that uses both.
var StackPackageNames = []string{"openldap_knf", "ldapweb_knf", "ldap_stack_ns"}

// Stack are the values of an NS instance of ldap_stack_ns that tests change.
type Stack struct {
	// LDAPModel is the chart of KDU ldap of VNF directory.
	LDAPModel string
	// AdminModel and MetricsModel are the charts of KDUs admin and metrics of VNF web, the
	// VNFD's (which names no version) when empty.
	AdminModel, MetricsModel string
	// LDAPReplicas, AdminServiceType and MetricsInterval are values of the three KDUs.
	LDAPReplicas, AdminServiceType, MetricsInterval string
}

// StackOfTheDemo is the Stack of the demo repository's deploy/ldap-stack.osmops.yaml.
var StackOfTheDemo = Stack{LDAPModel: "stable/openldap:1.2.7", AdminModel: "cetic/phpldapadmin:0.1.2",
	MetricsModel: "prometheus-community/prometheus-openldap-exporter:0.1.0", LDAPReplicas: "1", AdminServiceType: "ClusterIP", MetricsInterval: "30s"}

// StackInstanceFile is the deployment file of an NS instance of ldap_stack_ns, in the full
// format, as the demo repository's deploy/ldap-stack.osmops.yaml declares it with
// StackOfTheDemo.
func StackInstanceFile(name, vimAccount string, s Stack) string {
	return fmt.Sprintf(`# An NS of two KNFs and three KDUs, in the full form (see docs/repository-format.md).
kind: NsInstance
name: %s
description: LDAP directory with its web admin UI and metrics
nsdName: ldap_stack_ns
vimAccountName: %s
k8sNamespace: ldap-stack
deployTimeout: 15m
vnfs:
  - memberVnfIndex: directory
    kdus:
      - name: ldap
        model: %s
        params:
          replicaCount: "%s"
  - memberVnfIndex: web
    kdus:
      - name: admin
%s        params:
          service:
            type: %s
      - name: metrics
%s        params:
          interval: %s
`, name, vimAccount, s.LDAPModel, s.LDAPReplicas, modelLine(s.AdminModel), s.AdminServiceType, modelLine(s.MetricsModel), s.MetricsInterval)
}

// modelLine is the model field of a KDU of StackInstanceFile, none when model is empty.
func modelLine(model string) string {
	if model == "" {
		return ""
	}
	return "        model: " + model + "\n"
}
