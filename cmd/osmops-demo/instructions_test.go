package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/testing/testenv"
)

func TestInstructionsGiveEveryCommand(t *testing.T) {
	text := instructions(demoInfo{
		SupervisorPID: 42,
		WorkDir:       "/repo/.demo",
		Kubeconfig:    "/repo/.demo/kubeconfig",
		RepoURL:       "http://127.0.0.1:18080/osm-gitops.git",
		SimulatorURL:  "http://127.0.0.1:9999",
		Sites: []demoSite{
			{Name: "osm-gitops", SimulatorURL: "http://127.0.0.1:9999"},
			{Name: "canary", SimulatorURL: "http://127.0.0.1:9998", After: "osm-gitops"},
			{Name: "region", SimulatorURL: "http://127.0.0.1:9997", After: "canary"},
		},
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
		"osm-gitops  http://127.0.0.1:9999  the lab: at once",
		"canary      http://127.0.0.1:9998  once osm-gitops applied the same commit and was Ready on it for 20s",
		"region      http://127.0.0.1:9997  once canary applied the same commit and was Ready on it for 20s",
		`curl -s -X POST http://127.0.0.1:9998/sim/v1/operation-failures -d '{"operation":"upgrade","nsName":"ldap","count":1}'`,
		`sed -i 's/replicaCount: "[0-9]*"/replicaCount: "3"/' deploy/ldap.osmops.yaml`,
		"the rollout starts again at osm-gitops and completes",
		"make demo-stop",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the instructions do not say %q:\n%s", want, text)
		}
	}
}

// The demo repository is what its users copy: it passes its own validation without a warning
// and pins every chart it runs, so that the tour runs the same charts on every OSM.
func TestDemoRepositoryValidatesClean(t *testing.T) {
	rev, err := gitops.Load(filepath.Join(testenv.RepoRoot(), "hack", "demo-repo"), gitops.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if problems := rev.CheckOwnReferences(); len(problems) > 0 {
		t.Errorf("problems: %v", problems)
	}
	if len(rev.Warnings) > 0 {
		t.Errorf("warnings: %v", rev.Warnings)
	}
	if floating := rev.FloatingCharts(gitops.NewCatalog(nil, nil, nil, rev)); len(floating) > 0 {
		t.Errorf("charts without a version: %v", floating)
	}
}
