package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nameclaims"
	"github.com/osmops/osmops/internal/pipeline"
)

// claims are the reconciler's claims of NS instance names (internal/nameclaims): in the
// manager's namespace, read from its cache, confirmed through its pool of connections.
func (r *OsmDeploymentReconciler) claims() *nameclaims.Registry {
	return &nameclaims.Registry{Client: r.Client, APIReader: r.APIReader, Namespace: r.ClaimsNamespace,
		OwnerIdentity: r.OwnerIdentity, Connections: r.Connections, PastCache: r.readsPastCache}
}

// yieldContested gives up this round when another OsmDeployment holds names obj was to create
// or adopt: the inventory stays as it was, nothing is sent, and the plan is made again after a
// jittered retryInterval, when a create that went on shows in OSM as the other's.
func (r *OsmDeploymentReconciler) yieldContested(obj *gitopsv1alpha1.OsmDeployment, previous gitopsv1alpha1.Inventory, contested map[string]string) outcome {
	obj.Status.Inventory = &previous
	others := map[string]bool{}
	for _, holder := range contested {
		others[holder] = true
	}
	r.waitFor(obj, gitopsv1alpha1.ConflictReason, gitopsv1alpha1.OsmDeploymentKind, listNames(slices.Sorted(maps.Keys(others))),
		fmt.Sprintf("it declares NS instance(s) %s on this OSM too: nothing applied, checked again", listNames(slices.Sorted(maps.Keys(contested)))))
	return waiting(r.retryInterval(obj))
}

// claimPlanned makes obj's claims those of its planned inventory (nameclaims.Registry.Hold). When another
// OsmDeployment holds one of the names, or the claims cannot be read or written, it stops the
// reconcile with that outcome.
func (r *OsmDeploymentReconciler) claimPlanned(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, st deploymentState) (outcome, bool) {
	claims := r.claims()
	contested, err := claims.Hold(ctx, obj, st.identity, *pipeline.APIInventory(st.plan.Inventory))
	contested = claims.Confirmed(ctx, obj, st.conn.NBI, st.observed, contested)
	switch {
	case err != nil:
		return retrying(err), true
	case len(contested) > 0:
		return r.yieldContested(obj, st.previous, contested), true
	}
	return outcome{}, false
}
