package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// A spec's interval shorter than the manager's --min-interval is read as it: a tenant's spec
// never makes the manager read its OSM more often.
func TestSpecIntervalsAreAtLeastMinInterval(t *testing.T) {
	short := &metav1.Duration{Duration: time.Millisecond}
	deployment := &gitopsv1alpha1.OsmDeployment{Spec: gitopsv1alpha1.OsmDeploymentSpec{Interval: short, RetryInterval: short}}
	cluster := &gitopsv1alpha1.OsmCluster{Spec: gitopsv1alpha1.OsmClusterSpec{Interval: short}}
	deployments := &OsmDeploymentReconciler{MinInterval: DefaultMinInterval}
	clusters := &OsmClusterReconciler{MinInterval: DefaultMinInterval}
	for name, got := range map[string]time.Duration{
		"OsmDeployment interval":      deployments.interval(deployment),
		"OsmDeployment retryInterval": deployments.retryInterval(deployment),
		"OsmCluster interval":         clusters.interval(cluster),
	} {
		if got != DefaultMinInterval {
			t.Errorf("%s of 1ms = %s, want %s", name, got, DefaultMinInterval)
		}
	}
	long := &metav1.Duration{Duration: time.Hour}
	deployment.Spec.Interval, deployment.Spec.RetryInterval = long, nil
	if got := deployments.retryInterval(deployment); got != time.Hour {
		t.Errorf("retryInterval of an OsmDeployment of interval 1h = %s, want 1h", got)
	}
}
