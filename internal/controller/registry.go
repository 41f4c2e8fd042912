package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// ClusterRegistry keeps what the OsmCluster reconciler learnt of each OSM installation for the
// OsmDeployment reconciler: one shared NBI client per OsmCluster, so that a token is reused by
// every reconcile and the bound on concurrent requests holds across OsmDeployments.
type ClusterRegistry struct {
	mu       sync.RWMutex
	clusters map[types.NamespacedName]struct{}
}

// NewClusterRegistry returns an empty registry.
func NewClusterRegistry() *ClusterRegistry {
	return &ClusterRegistry{clusters: map[types.NamespacedName]struct{}{}}
}
