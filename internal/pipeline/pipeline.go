// Package pipeline turns an OsmDeployment's revision into a plan, the one way for every caller:
// the reconcile, its deletion, and the osmops command line tool's diff, trace and preview. It
// loads a revision as the reconcile does (substitution, values), observes OSM, and computes the
// plan from the spec's settings, the status inventory and what OSM said. It reads and writes no
// status and sends nothing to OSM but reads: the reconciler acts on what it returns.
package pipeline

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nameclaims"
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
	owner := Owner(p.OwnerIdentity, obj)
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

// Owner is the OsmDeployment as the markers in OSM name it.
func Owner(ownerIdentity string, obj *gitopsv1alpha1.OsmDeployment) engine.Owner {
	return engine.Owner{Manager: ownerIdentity, Namespace: obj.Namespace, Name: obj.Name}
}

// ForDeployment is the Pipeline of obj's reconcile and preview: OSM through nbi, the owners
// looked up with apiReader (LiveOwners), the OSM's identity read with reader from obj's
// OsmCluster, and claims.
func ForDeployment(reader, apiReader client.Reader, ownerIdentity string, obj *gitopsv1alpha1.OsmDeployment,
	nbi engine.OSM, claims ClaimsView) Pipeline {
	cluster := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ClusterRef.Name}
	return Pipeline{NBI: nbi, OwnerIdentity: ownerIdentity, LiveOwners: LiveOwners(apiReader, ownerIdentity), Claims: claims,
		Identity: func(ctx context.Context) (string, error) {
			identity, err := nameclaims.Identity(ctx, reader, cluster)
			if err != nil {
				return "", fmt.Errorf("OsmCluster %s: %w", cluster.Name, err)
			}
			return identity, nil
		}}
}

// LiveOwners tells, with apiReader, which of the owners marked on NS instances still exist, by
// marker. An owner of another operator installation than ownerIdentity cannot be looked up and
// counts as existing. The API server is asked, not a cache: with sharding, the manager's cache
// holds only its shard's OsmDeployments.
func LiveOwners(apiReader client.Reader, ownerIdentity string) func(ctx context.Context, owners []engine.Owner) (map[string]bool, error) {
	return func(ctx context.Context, owners []engine.Owner) (map[string]bool, error) {
		live := make(map[string]bool, len(owners))
		for _, owner := range owners {
			if owner.Manager != ownerIdentity {
				live[owner.Marker()] = true
				continue
			}
			key := types.NamespacedName{Namespace: owner.Namespace, Name: owner.Name}
			switch err := apiReader.Get(ctx, key, &gitopsv1alpha1.OsmDeployment{}); {
			case err == nil:
				live[owner.Marker()] = true
			case !apierrors.IsNotFound(err):
				return nil, fmt.Errorf("looking up OsmDeployment %s, owner of NS instances in OSM: %w", key, err)
			}
		}
		return live, nil
	}
}

// PlanDeletion observes what OSM runs of obj, which is being deleted, and plans its
// terminations: every NS instance its inventory lists or its markers claim, none declared. An
// empty inventory is read too: a status lost (a restore) forgets what the markers in OSM
// still say it owns.
func (p Pipeline) PlanDeletion(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) (Planned, error) {
	var out Planned
	if obj.Status.Inventory != nil {
		out.Previous = *obj.Status.Inventory
	}
	owner := Owner(p.OwnerIdentity, obj)
	scope := engine.ScopeOf(&gitops.Revision{}, EngineInventory(out.Previous), owner)
	scope.WithValues, scope.Quotas = false, false // deleting needs no live values and creates nothing
	observed, err := engine.Observe(ctx, p.NBI, scope)
	if err != nil {
		return out, &ObserveError{Err: err}
	}
	liveOwners, err := p.liveOwners(ctx, observed.ForeignOwners(owner))
	if err != nil {
		return out, err
	}
	out.Observed = observed
	out.Plan = engine.Compute(engine.Input{Revision: &gitops.Revision{}, Observed: observed, Inventory: EngineInventory(out.Previous),
		Owner: owner, LiveOwners: liveOwners, Prune: true})
	return out, nil
}
