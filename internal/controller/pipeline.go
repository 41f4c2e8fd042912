package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
)

// Pipeline observes OSM and plans a revision of an OsmDeployment: the one way a plan is made,
// by the reconcile (observeAndPlan), PreviewPlan and osmops diff. They differ only in where its
// lookups go (the cache or the API server, a cluster or none), never in what the plan is made
// from: the OsmDeployment's spec settings, status inventory and last applied revision, the
// revision, OSM's answers, the owners that still live and the names others hold.
type Pipeline struct {
	// NBI is the OSM observed; only read requests are sent.
	NBI engine.OSM
	// OwnerIdentity is the manager's part of the owner marker (--owner-identity).
	OwnerIdentity string
	// LiveOwners tells, by marker, which owners marked on NS instances still exist. Nil when
	// there is no cluster to ask: each counts as existing, as an owner of another operator
	// installation does.
	LiveOwners func(ctx context.Context, owners []engine.Owner) (map[string]bool, error)
	// Identity is the identity of the OSM (clusterIdentity) that names are claimed on; nil: "".
	Identity func(ctx context.Context) (string, error)
	// Claims is who else holds the revision's names; nil: no one.
	Claims ClaimsView
}

// ClaimsView returns the NS instance names of rev that another OsmDeployment holds on the OSM
// of identity, with that OsmDeployment ("namespace/name"): the plan leaves them alone.
type ClaimsView func(ctx context.Context, identity string, rev *gitops.Revision, observed *engine.Observed) (map[string]string, error)

// Planned is what the pipeline observed and planned.
type Planned struct {
	Observed *engine.Observed
	// Previous is the inventory the plan started from (status.inventory).
	Previous gitopsv1alpha1.Inventory
	// Identity is the OSM's, as Pipeline.Identity said.
	Identity string
	Plan     engine.Plan
}

// ObserveError is a failure of OSM to answer the observation, as opposed to a lookup in
// Kubernetes: the reconcile reports it as OSM's.
type ObserveError struct{ Err error }

func (e *ObserveError) Error() string { return "observing OSM: " + e.Err.Error() }
func (e *ObserveError) Unwrap() error { return e.Err }

// Plan observes OSM for rev, obj's revision whose source revision is revision ("" when
// unknown, as for a checkout previewed: everything obj owns is read, as a drift check does),
// and plans it with obj's settings. retryFailed (a reconcile was requested) tries the failed
// instances again.
func (p Pipeline) Plan(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, rev *gitops.Revision,
	revision string, retryFailed bool) (Planned, error) {
	var out Planned
	if obj.Status.Inventory != nil {
		out.Previous = *obj.Status.Inventory
	}
	owner := ownerOf(p.OwnerIdentity, obj)
	observed, err := engine.Observe(ctx, p.NBI, observationScope(obj, rev, revision, out.Previous, owner))
	if err != nil {
		return out, &ObserveError{Err: err}
	}
	liveOwners, err := p.liveOwners(ctx, observed.ForeignOwners(owner))
	if err != nil {
		return out, err
	}
	if p.Identity != nil {
		if out.Identity, err = p.Identity(ctx); err != nil {
			return out, err
		}
	}
	var claims map[string]string
	if p.Claims != nil {
		if claims, err = p.Claims(ctx, out.Identity, rev, observed); err != nil {
			return out, err
		}
	}
	out.Observed = observed
	out.Plan = engine.Compute(planInput(obj, rev, observed, withoutRetries(out.Previous, retryFailed), owner, liveOwners, claims))
	return out, nil
}

func (p Pipeline) liveOwners(ctx context.Context, owners []engine.Owner) (map[string]bool, error) {
	if p.LiveOwners != nil {
		return p.LiveOwners(ctx, owners)
	}
	live := make(map[string]bool, len(owners))
	for _, owner := range owners {
		live[owner.Marker()] = true
	}
	return live, nil
}

// ownerOf is the OsmDeployment as the markers in OSM name it.
func ownerOf(ownerIdentity string, obj *gitopsv1alpha1.OsmDeployment) engine.Owner {
	return engine.Owner{Manager: ownerIdentity, Namespace: obj.Namespace, Name: obj.Name}
}

// pipeline is the reconciler's Pipeline for obj: OSM through nbi, owners looked up on the API
// server, the OSM's identity read from obj's OsmCluster, and claims.
func (r *OsmDeploymentReconciler) pipeline(obj *gitopsv1alpha1.OsmDeployment, nbi engine.OSM, claims ClaimsView) Pipeline {
	cluster := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ClusterRef.Name}
	return Pipeline{NBI: nbi, OwnerIdentity: r.OwnerIdentity, LiveOwners: r.liveOwners, Claims: claims,
		Identity: func(ctx context.Context) (string, error) {
			identity, err := r.osmIdentity(ctx, r.Client, cluster)
			if err != nil {
				return "", fmt.Errorf("OsmCluster %s: %w", cluster.Name, err)
			}
			return identity, nil
		}}
}
