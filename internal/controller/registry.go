package controller

import (
	"sync"
)

// ClusterRegistry serialises the claims of NS instance names, so that two OsmDeployments that
// reconcile at the same moment never both create an instance with the same name. Claims are
// kept by OSM identity (clusterIdentity, the project id OSM returns at login): every OsmCluster
// logged in to one OSM project shares them, however its URL is written. A claim
// lives as long as its owner declares the name on that OSM: it is released when the owner no
// longer declares it, points at another OSM, or is gone.
type ClusterRegistry struct {
	mu sync.Mutex
	// claims maps an OSM identity to the NS instance names claimed on it, and each to its owner.
	claims map[string]map[string]string
}

// NewClusterRegistry returns an empty registry.
func NewClusterRegistry() *ClusterRegistry {
	return &ClusterRegistry{claims: map[string]map[string]string{}}
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

// ReleaseAll forgets every claim of owner, on every OSM: the owner is gone.
func (r *ClusterRegistry) ReleaseAll(owner string) {
	r.ReleaseElsewhere(owner, "")
}

// ReleaseElsewhere forgets the claims of owner on every OSM but the one of identity keep (on all
// of them when keep is empty): an owner whose clusterRef points at another OSM no longer holds
// the names on the old one.
func (r *ClusterRegistry) ReleaseElsewhere(owner, keep string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for identity, claims := range r.claims {
		if keep != "" && identity == keep {
			continue
		}
		for name, o := range claims {
			if o == owner {
				delete(claims, name)
			}
		}
		if len(claims) == 0 {
			delete(r.claims, identity)
		}
	}
}
