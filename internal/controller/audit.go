package controller

import (
	"context"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/osm"
)

// withChangeOrigin makes the changes a plan sends to OSM audited as the OsmDeployment's, for
// revision (docs/operations.md, Audit trail).
func withChangeOrigin(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, revision string, plan *engine.Plan) context.Context {
	return osm.WithChangeOrigin(ctx, osm.ChangeOrigin{
		Deployment: obj.Namespace + "/" + obj.Name,
		Revision:   revision,
		PlanDigest: plan.Digest(),
	})
}
