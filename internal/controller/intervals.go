package controller

import (
	"time"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// DefaultMinInterval is the manager's default --min-interval: the shortest interval and
// retry interval a tenant's spec may set. A spec may ask for 1ms (the CRDs bound intervals
// above only, as Flux's do); every interval sends requests to the tenant's OSM, which other
// tenants may share, so the manager, not the spec, bounds how often.
const DefaultMinInterval = 10 * time.Second

// interval is obj's spec.interval, at least MinInterval.
func (r *OsmDeploymentReconciler) interval(obj *gitopsv1alpha1.OsmDeployment) time.Duration {
	return max(obj.GetInterval(), r.MinInterval)
}

// retryInterval is obj's spec.retryInterval (else its interval), at least MinInterval.
func (r *OsmDeploymentReconciler) retryInterval(obj *gitopsv1alpha1.OsmDeployment) time.Duration {
	return max(obj.GetRetryInterval(), r.MinInterval)
}

// interval is obj's spec.interval, at least MinInterval.
func (r *OsmClusterReconciler) interval(obj *gitopsv1alpha1.OsmCluster) time.Duration {
	return max(obj.GetInterval(), r.MinInterval)
}
