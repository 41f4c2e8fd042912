package pipeline

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nameclaims"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmconn"
)

// Preview is the plan a reconcile of an OsmDeployment would make of a revision, with what it
// was made from.
type Preview struct {
	// Revision is the revision as the OsmDeployment's settings read it, its valuesFrom merged.
	Revision *gitops.Revision
	Observed *engine.Observed
	Plan     engine.Plan
	// Cluster is the OsmDeployment's OsmCluster.
	Cluster *gitopsv1alpha1.OsmCluster
}

// LoadRevision reads the revision checked out at dir as obj's reconcile does: substituted with
// obj's variables and its values resolved (valuesFrom), each NS instance with its origins, the
// ConfigMaps and Secrets read with reader. It changes nothing. The revision's problems come as
// a *gitops.ValidationError (with the revision holding its warnings), its unresolved values as
// a *gitops.ValuesProblems.
func LoadRevision(ctx context.Context, reader client.Reader, obj *gitopsv1alpha1.OsmDeployment, dir string) (*gitops.Revision, error) {
	get := ValuesGetter(reader, obj.Namespace)
	subst, unresolved, err := Substitution(ctx, get, obj)
	switch {
	case err != nil:
		return nil, err
	case unresolved != "":
		return nil, &gitops.ValuesProblems{Problems: []gitops.Problem{{Message: unresolved}}}
	}
	rev, err := gitops.Load(dir, gitops.Options{Path: obj.Spec.Path, FileExtensions: obj.Spec.FileExtensions,
		PackagesPath: obj.Spec.PackagesPath, Substitution: subst})
	if err != nil {
		return rev, err
	}
	return gitops.ResolveValues(ctx, rev, get)
}

// PreviewPlan makes the plan a reconcile of obj would make of the revision unpacked at dir (a
// checkout of its source), by the reconcile's own steps and its Pipeline: spec.postBuild's
// variables, the spec's settings, valuesFrom read from the namespace's ConfigMaps and Secrets,
// OSM reached through the OsmCluster and its Secrets, the inventory of status, the owners that
// still live, the names other OsmDeployments claim (in claimsNamespace, the manager's
// namespace: internal/claims), and ownerIdentity in the markers. It changes nothing, in OSM or
// in Kubernetes (it takes no claim), and reads c past any cache. The revision's problems come
// as a *gitops.ValidationError (with the Preview's Revision holding its warnings), its
// unresolved values as a *gitops.ValuesProblems.
func PreviewPlan(ctx context.Context, c client.Client, obj *gitopsv1alpha1.OsmDeployment, dir, ownerIdentity, claimsNamespace string,
	clientOptions ...osm.Option) (*Preview, error) {
	rev, err := LoadRevision(ctx, c, obj, dir)
	var invalid *gitops.ValidationError
	switch {
	case errors.As(err, &invalid):
		return &Preview{Revision: rev}, err
	case err != nil:
		return nil, err
	}
	clusterKey := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ClusterRef.Name}
	cluster := &gitopsv1alpha1.OsmCluster{}
	if err := c.Get(ctx, clusterKey, cluster); err != nil {
		return nil, fmt.Errorf("OsmCluster %s: %w", clusterKey, err)
	}
	conn, err := (&osmconn.Pool{Reader: c, ClientOptions: clientOptions}).Get(ctx, cluster)
	if err != nil {
		return nil, fmt.Errorf("connecting to the OSM of OsmCluster %s: %w", clusterKey, err)
	}
	registry := &nameclaims.Registry{Client: c, APIReader: c, Namespace: claimsNamespace, OwnerIdentity: ownerIdentity, PastCache: true}
	planned, err := ForDeployment(c, c, ownerIdentity, obj, conn.NBI, registry.View(obj, conn.NBI)).Plan(ctx, obj, rev, "", false)
	if err != nil {
		return nil, err
	}
	return &Preview{Revision: rev, Observed: planned.Observed, Plan: planned.Plan, Cluster: cluster}, nil
}
