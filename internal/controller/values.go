package controller

import (
	"context"
	"errors"
	"slices"

	klabels "k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/pipeline"
)

// Values from Kubernetes: the ConfigMaps and Secrets that KDUs' valuesFrom and
// spec.postBuild.substituteFrom name, in the OsmDeployment's own namespace only.
//
// RBAC: they are read with `get`, past any cache (the API reader), so that no Secret's data is
// ever held in the operator's memory beyond one reconcile. A change of one is seen at once when
// it carries the label reconcile.fluxcd.io/watch: Enabled (Flux's --watch-configs-label-selector),
// and at the next drift check otherwise. Watching needs `list` and `watch`: Kubernetes RBAC has
// no verb or rule that grants them for some labels or for metadata only, so get-only RBAC and a
// watch cannot go together. What the operator does with them is bounded instead: the watch is
// of metadata only (no data is sent or cached) and its cache holds only the labelled objects.
//
// +kubebuilder:rbac:groups="",resources=secrets;configmaps,verbs=get;list;watch

// valuesGetter reads the ConfigMaps and Secrets of namespace for gitops.ResolveValues.
func (r *OsmDeploymentReconciler) valuesGetter(namespace string) gitops.ValuesGetter {
	return pipeline.ValuesGetter(r.APIReader, namespace)
}

// resolveValues merges the values of every KDU's valuesFrom (gitops.ResolveValues). References
// that do not resolve hold the OsmDeployment back, Waiting, and are tried again: the objects
// may be created or mended without a new revision.
func (r *OsmDeploymentReconciler) resolveValues(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment,
	rev *gitops.Revision, revision string) (*gitops.Revision, outcome) {
	resolved, err := gitops.ResolveValues(ctx, rev, r.maskingValuesGetter(obj))
	var unresolved *gitops.ValuesProblems
	var tooLarge *gitops.MaskTooLargeError
	switch {
	case errors.As(err, &unresolved), errors.As(err, &tooLarge):
		r.waitFor(obj, gitopsv1alpha1.ValuesUnresolvedReason, "the values of revision", revision, err.Error())
		return nil, waiting(r.retryInterval(obj))
	case err != nil:
		r.waitFor(obj, gitopsv1alpha1.ValuesUnresolvedReason, "the values of revision", revision, err.Error())
		return nil, retrying(err)
	}
	return resolved, outcome{}
}

// maskingValuesGetter reads the values of obj's KDUs as valuesGetter does, adding the texts
// of every Secret it reads to obj's mask (secretValues) before any step can quote them, and
// stops at the first that passes the mask's bound.
func (r *OsmDeploymentReconciler) maskingValuesGetter(obj *gitopsv1alpha1.OsmDeployment) gitops.ValuesGetter {
	get, key := r.valuesGetter(obj.Namespace), client.ObjectKeyFromObject(obj)
	return func(ctx context.Context, kind, name string) (gitops.ValuesObject, bool, error) {
		object, found, err := get(ctx, kind, name)
		if found && kind == gitops.ValuesKindSecret {
			if tooLarge := r.secrets.add(key, gitops.SecretTexts(object.Data)); tooLarge != nil {
				return gitops.ValuesObject{}, false, tooLarge // read no further, apply nothing
			}
		}
		return object, found, err
	}
}

// deploymentsReading maps a labelled ConfigMap or Secret (kind) to the OsmDeployments of its
// namespace that read it: those whose substituteFrom names it, whose cached revision has a
// valuesFrom that names it, and those without a cached revision (after a restart: whether
// they read it is not known until their artifact is loaded again). The revisions in memory
// only spare reconciles; a change they miss is still seen at the next drift check.
func (r *OsmDeploymentReconciler) deploymentsReading(kind string) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		var list gitopsv1alpha1.OsmDeploymentList
		if err := r.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
			log.FromContext(ctx).Error(err, "listing OsmDeployments to enqueue")
			return nil
		}
		var requests []reconcile.Request
		for _, d := range list.Items {
			if r.reads(&d, kind, obj.GetName()) {
				requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&d)})
			}
		}
		return requests
	}
}

// reads tells whether the OsmDeployment may read the object kind/name (see deploymentsReading).
func (r *OsmDeploymentReconciler) reads(d *gitopsv1alpha1.OsmDeployment, kind, name string) bool {
	if d.Spec.PostBuild != nil && slices.ContainsFunc(d.Spec.PostBuild.SubstituteFrom, func(ref gitopsv1alpha1.SubstituteReference) bool {
		return ref.Kind == kind && ref.Name == name
	}) {
		return true
	}
	rev, cached := r.revisions.last(client.ObjectKeyFromObject(d))
	if !cached {
		return true
	}
	return rev.ReadsValues(func(ref gitops.ValuesReference) bool { return ref.Kind == kind && ref.Name == name })
}

// labelledConfigs lets through the ConfigMaps and Secrets the selector (Flux's
// --watch-configs-label-selector) matches.
func labelledConfigs(selector klabels.Selector) func(client.Object) bool {
	return func(obj client.Object) bool { return selector.Matches(klabels.Set(obj.GetLabels())) }
}
