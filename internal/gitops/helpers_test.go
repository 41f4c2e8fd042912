package gitops

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (slash path -> contents) into a new temporary
// folder and returns it.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, contents := range files {
		full := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// deployment is a valid deployment file of an NS instance of openldap_ns.
func deployment(name string) string {
	return fmt.Sprintf(`kind: NsInstance
name: %s
nsdName: openldap_ns
vnfName: openldap
vimAccountName: mylocation1
kdu:
  name: ldap
`, name)
}

// vnfd is a KNF descriptor with one KDU per name.
func vnfd(id string, kduNames ...string) string {
	var kdus strings.Builder
	for _, name := range kduNames {
		fmt.Fprintf(&kdus, "    - name: %s\n      helm-chart: stable/openldap\n", name)
	}
	return fmt.Sprintf("vnfd:\n  id: %s\n  product-name: %s\n  version: \"1.0\"\n  kdu:\n%s", id, id, kdus.String())
}

// nsd is an NS descriptor whose vnf-profile "<vnfd id>-profile" uses each
// VNFD id.
func nsd(id string, vnfdIDs ...string) string {
	var profiles strings.Builder
	for _, vnfdID := range vnfdIDs {
		fmt.Fprintf(&profiles, "            - id: %s-profile\n              vnfd-id: %s\n", vnfdID, vnfdID)
	}
	return fmt.Sprintf(`nsd:
  nsd:
    - id: %s
      name: %s
      version: "1.0"
      vnfd-id: [%s]
      df:
        - id: default-df
          vnf-profile:
%s`, id, id, strings.Join(vnfdIDs, ", "), profiles.String())
}

// mustParse parses a deployment file that has no problems.
func mustParse(t *testing.T, text string) NsInstance {
	t.Helper()
	instance, _, problems := parseDeploymentFile("a.ops.yaml", []byte(text))
	if problems != nil {
		t.Fatalf("problems: %v", problems)
	}
	return instance
}
