package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/osmops/osmops/internal/engine"
)

// Connection is one OsmCluster's NBI client, shared by every OsmDeployment that uses it, so
// that one token serves all reconciles and the bound on requests in flight holds across them.
type Connection struct {
	NBI engine.OSM
	// Parallelism bounds the NS operations one apply sends at once.
	Parallelism int
	// Fingerprint identifies the settings and credentials the client was built with; a new one
	// means the client must be rebuilt.
	Fingerprint string
}

// ClusterRegistry hands the OsmCluster reconciler's connections to the OsmDeployment
// reconciler, and serialises the claims of NS instance names, so that two OsmDeployments that
// reconcile at the same moment never both create an instance with the same name. Claims are
// kept by OSM identity (osm.Identity): two OsmClusters of one OSM project share them.
type ClusterRegistry struct {
	mu          sync.Mutex
	connections map[types.NamespacedName]*Connection
	// claims maps an OSM identity to the NS instance names claimed on it, and each to its owner.
	claims map[string]map[string]string
}

// NewClusterRegistry returns an empty registry.
func NewClusterRegistry() *ClusterRegistry {
	return &ClusterRegistry{
		connections: map[types.NamespacedName]*Connection{},
		claims:      map[string]map[string]string{},
	}
}

// Connection returns the connection of an OsmCluster, if it has one.
func (r *ClusterRegistry) Connection(cluster types.NamespacedName) (*Connection, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.connections[cluster]
	return c, ok
}

// SetConnection stores (or replaces) the connection of an OsmCluster.
func (r *ClusterRegistry) SetConnection(cluster types.NamespacedName, c *Connection) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.connections[cluster] = c
}

// RemoveConnection forgets an OsmCluster's connection.
func (r *ClusterRegistry) RemoveConnection(cluster types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.connections, cluster)
}

// Claim records that owner declares the NS instances names on the OSM of identity, releasing
// the names it no longer declares, and returns the names another owner claimed first, with
// that owner. Names claimed by others are not taken.
func (r *ClusterRegistry) Claim(identity string, owner string, names []string) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	claims := r.claims[identity]
	if claims == nil {
		claims = map[string]string{}
		r.claims[identity] = claims
	}
	wanted := make(map[string]bool, len(names))
	for _, name := range names {
		wanted[name] = true
	}
	for name, o := range claims {
		if o == owner && !wanted[name] {
			delete(claims, name)
		}
	}
	conflicts := map[string]string{}
	for _, name := range names {
		if o, taken := claims[name]; taken && o != owner {
			conflicts[name] = o
			continue
		}
		claims[name] = owner
	}
	return conflicts
}

// ReleaseClaims forgets every claim of owner, on every OSM.
func (r *ClusterRegistry) ReleaseClaims(owner string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, claims := range r.claims {
		for name, o := range claims {
			if o == owner {
				delete(claims, name)
			}
		}
	}
}
