package main

import (
	"strings"
	"testing"
)

func TestInstructionsGiveEveryCommand(t *testing.T) {
	text := instructions(demoInfo{
		SupervisorPID: 42,
		WorkDir:       "/repo/.demo",
		Kubeconfig:    "/repo/.demo/kubeconfig",
		RepoURL:       "http://127.0.0.1:18080/osm-gitops.git",
		SimulatorURL:  "http://127.0.0.1:9999",
	})
	for _, want := range []string{
		"supervisor pid 42",
		"export KUBECONFIG=/repo/.demo/kubeconfig",
		"kubectl get osmd -n telco -w",
		"git clone http://127.0.0.1:18080/osm-gitops.git && cd osm-gitops",
		"NBI simulator:   http://127.0.0.1:9999",
		`sed -i 's/replicaCount: "1"/replicaCount: "2"/' deploy/ldap.osmops.yaml`,
		`sed -i 's|stable/openldap:1.2.7|stable/openldap:1.2.8|' deploy/ldap-stack.osmops.yaml`,
		"deploy/ldap2.osmops.yaml",
		"deploy/broken.osmops.yaml",
		"make demo-stop",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the instructions do not say %q:\n%s", want, text)
		}
	}
}
