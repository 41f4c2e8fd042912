package main

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// The demo's rollout (docs/rollouts.md): the tenant's OsmDeployment, named after the
// repository, is the first site (the lab, on the stack's simulator); each later site is an OSM
// of its own (a simulator on a fixed port), its OsmCluster, and an OsmDeployment of the same
// repository one wave after the site before it.

// laterSites are the sites after the first, in wave order.
var laterSites = []string{"canary", "region"}

// rolloutBakeTime is how long a site must have been Ready on a commit before the next site
// applies it: short, so that a push walks through every site in about a minute.
const rolloutBakeTime = 20 * time.Second

// demoSite is one site of the demo's rollout, as the instructions show it.
type demoSite struct {
	Name         string `json:"name"`
	SimulatorURL string `json:"simulatorURL"`
	// After is the site whose commit it waits for; empty for the first.
	After string `json:"after,omitempty"`
}

// simulatorName names the simulator process (and its log) of a later site.
func simulatorName(site string) string { return "osm-nbi-sim-" + site }

// siteObjects are the OsmCluster and the OsmDeployment of a later site: its OSM at nbiURL,
// with the tenant's credentials, and the tenant's repository applied once the site after has
// applied the same commit and been Ready on it for rolloutBakeTime.
func siteObjects(site demoSite) []client.Object {
	cluster := osmtenant.Cluster(demoNamespace, site.SimulatorURL)
	cluster.Name = site.Name
	deployment := osmtenant.Deployment(demoNamespace, site.Name, demoRepository)
	deployment.Spec.ClusterRef.Name = site.Name
	deployment.Spec.Prune = true
	deployment.Spec.DependsOn = []gitopsv1alpha1.DependencyReference{{
		Name:     site.After,
		Revision: gitopsv1alpha1.DependencyRevisionSame,
		BakeTime: &metav1.Duration{Duration: rolloutBakeTime},
	}}
	return []client.Object{cluster, deployment}
}
