package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// ClusterRegistry serialises the claims of NS instance names, so that two OsmDeployments that
// reconcile at the same moment never both create an instance with the same name. A claim lives
// as long as its owner declares the name on that OsmCluster: it is released when the owner no
// longer declares it, uses another OsmCluster, or is gone.
type ClusterRegistry struct {
	mu sync.Mutex
	// claims maps an OsmCluster to the NS instance names claimed on it, and each to its owner.
	claims map[types.NamespacedName]map[string]string
}

// NewClusterRegistry returns an empty registry.
func NewClusterRegistry() *ClusterRegistry {
	return &ClusterRegistry{claims: map[types.NamespacedName]map[string]string{}}
}

// Claim records that owner declares the NS instances names on cluster, releasing the names
// it no longer declares, and returns the names another owner claimed first, with that owner.
// Names claimed by others are not taken.
func (r *ClusterRegistry) Claim(cluster types.NamespacedName, owner string, names []string) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	claims := r.claims[cluster]
	if claims == nil {
		claims = map[string]string{}
		r.claims[cluster] = claims
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

// ReleaseClaims forgets every claim of owner on cluster.
func (r *ClusterRegistry) ReleaseClaims(cluster types.NamespacedName, owner string) {
	r.Claim(cluster, owner, nil)
}

// ReleaseAll forgets every claim of owner, on every OsmCluster: the owner is gone.
func (r *ClusterRegistry) ReleaseAll(owner string) {
	r.ReleaseElsewhere(owner, nil)
}

// ReleaseElsewhere forgets the claims of owner on every OsmCluster but keep (all of them when
// keep is nil): an owner whose clusterRef changed no longer holds the names on the old one.
func (r *ClusterRegistry) ReleaseElsewhere(owner string, keep *types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for cluster, claims := range r.claims {
		if keep != nil && cluster == *keep {
			continue
		}
		for name, o := range claims {
			if o == owner {
				delete(claims, name)
			}
		}
		if len(claims) == 0 {
			delete(r.claims, cluster)
		}
	}
}
