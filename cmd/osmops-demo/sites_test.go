package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

func TestSiteObjectsMakeAWave(t *testing.T) {
	objects := siteObjects(demoSite{Name: "canary", SimulatorURL: "http://127.0.0.1:9998", After: "osm-gitops"})
	if len(objects) != 2 {
		t.Fatalf("got %d objects, want an OsmCluster and an OsmDeployment", len(objects))
	}
	cluster, ok := objects[0].(*gitopsv1alpha1.OsmCluster)
	if !ok || cluster.Namespace != "telco" || cluster.Name != "canary" || cluster.Spec.URL != "http://127.0.0.1:9998" {
		t.Errorf("OsmCluster = %+v, want telco/canary of http://127.0.0.1:9998", objects[0])
	}
	deployment, ok := objects[1].(*gitopsv1alpha1.OsmDeployment)
	if !ok {
		t.Fatalf("second object = %T, want an OsmDeployment", objects[1])
	}
	if deployment.Namespace != "telco" || deployment.Name != "canary" || deployment.Spec.ClusterRef.Name != "canary" ||
		deployment.Spec.SourceRef.Name != "osm-gitops" || !deployment.Spec.Prune {
		t.Errorf("OsmDeployment = %+v, want telco/canary of the repository osm-gitops on OsmCluster canary, with prune", deployment)
	}
	want := []gitopsv1alpha1.DependencyReference{{
		Name: "osm-gitops", Revision: gitopsv1alpha1.DependencyRevisionSame, BakeTime: &metav1.Duration{Duration: 20 * time.Second},
	}}
	if diff := cmp.Diff(want, deployment.Spec.DependsOn); diff != "" {
		t.Errorf("dependsOn (-want +got):\n%s", diff)
	}
}
