package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/pipeline"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// --osm plans through the reconcile's own pipeline, with spec.instancesFollowPackages as
// --instances-follow-packages says: a KNF package that Git updates under an instance the new
// OsmDeployment would own is a move OSM's LCM fails, which the diff shows as the operator
// would find it.
func TestDiffAgainstOSMFollowsPackages(t *testing.T) {
	t.Setenv(envUsername, nbisim.DefaultUsername)
	t.Setenv(envPassword, nbisim.DefaultPassword)
	ctx := context.Background()
	sim, url := startSimulator(t)
	sim.SetOperationDelay(0)
	deployments := map[string]string{"deploy/ldap.osmops.yaml": openldap.NsInstanceFile("ldap", simVIM, "1")}

	// OSM runs ldap on the KNF package's first revision, as the diff's new OsmDeployment would
	// have made it: it carries that owner's marker.
	rev, err := gitops.Load(ldapRepo(t, deployments), gitops.Options{})
	if err != nil {
		t.Fatal(err)
	}
	nbi, err := osm.NewClient(url, osm.Credentials{Username: nbisim.DefaultUsername, Password: nbisim.DefaultPassword, Project: nbisim.DefaultProject})
	if err != nil {
		t.Fatal(err)
	}
	planned, err := pipeline.Pipeline{NBI: nbi, OwnerIdentity: previewOwnerIdentity}.Plan(ctx, (&diffFlags{}).newDeployment(), rev, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if result := engine.Apply(ctx, nbi, &planned.Plan, planned.Observed, 1); len(result.Errors) > 0 {
		t.Fatalf("applying the revision: %v", result.Errors)
	}

	// Git updates the KNF package.
	knf, err := openldap.PackageFiles("openldap_knf")
	if err != nil {
		t.Fatal(err)
	}
	const descriptor = "osm-pkgs/openldap_knf/openldap_vnfd.yaml"
	repo := ldapRepo(t, map[string]string{
		"deploy/ldap.osmops.yaml": deployments["deploy/ldap.osmops.yaml"],
		descriptor:                strings.Replace(knf[descriptor], `version: "1.0"`, `version: "1.1"`, 1),
	})

	code, stdout, stderr := run(t, "diff", repo, "--osm", url)
	if code != ExitFindings || !strings.Contains(stdout, "~ update vnf package openldap_knf") || strings.Contains(stdout, "Problems") {
		t.Fatalf("without --instances-follow-packages: exit %d, want %d and the package's update alone; stdout:\n%s\nstderr:\n%s",
			code, ExitFindings, stdout, stderr)
	}
	before := sim.Stats()
	code, stdout, stderr = run(t, "diff", repo, "--osm", url, "--instances-follow-packages")
	if code != ExitError || !strings.Contains(stdout, `NS instance "ldap": spec.instancesFollowPackages would move VNF openldap to the new revision of VNF package openldap_knf, a KNF`) {
		t.Errorf("with --instances-follow-packages: exit %d, want %d and the move OSM fails; stdout:\n%s\nstderr:\n%s",
			code, ExitError, stdout, stderr)
	}
	if after := sim.Stats(); after.MutatingRequests != before.MutatingRequests {
		t.Errorf("the diff sent %d mutating requests", after.MutatingRequests-before.MutatingRequests)
	}
}
