package controller

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
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
	return ValuesGetter(r.APIReader, namespace)
}

// ValuesGetter reads with reader the ConfigMaps and Secrets of namespace, as the reconciler
// reads them for gitops.ResolveValues (the osmops command line tool reads them alike).
func ValuesGetter(reader client.Reader, namespace string) gitops.ValuesGetter {
	return func(ctx context.Context, kind, name string) (gitops.ValuesObject, bool, error) {
		key := types.NamespacedName{Namespace: namespace, Name: name}
		switch kind {
		case gitops.ValuesKindSecret:
			secret := &corev1.Secret{}
			if err := reader.Get(ctx, key, secret); err != nil {
				return gitops.ValuesObject{}, false, client.IgnoreNotFound(err)
			}
			return gitops.ValuesObject{Data: secret.Data, Version: objectVersion(secret)}, true, nil
		case gitops.ValuesKindConfigMap:
			configMap := &corev1.ConfigMap{}
			if err := reader.Get(ctx, key, configMap); err != nil {
				return gitops.ValuesObject{}, false, client.IgnoreNotFound(err)
			}
			data := make(map[string][]byte, len(configMap.Data))
			for k, v := range configMap.Data {
				data[k] = []byte(v)
			}
			return gitops.ValuesObject{Data: data, Version: objectVersion(configMap)}, true, nil
		}
		return gitops.ValuesObject{}, false, fmt.Errorf("unsupported kind %s", kind)
	}
}

// objectVersion identifies an object's content without telling it.
func objectVersion(obj client.Object) string {
	return string(obj.GetUID()) + "/" + obj.GetResourceVersion()
}

// substitution reads spec.postBuild as kustomize-controller reads a Kustomization's: the keys
// of each substituteFrom object in order (a later one wins; a ConfigMap's or Secret's value
// without its newlines), then substitute on top. A missing optional object is skipped; a
// missing one otherwise is a problem to wait on. It returns nil without postBuild.
func (r *OsmDeploymentReconciler) substitution(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) (*gitops.Substitution, string, error) {
	postBuild := obj.Spec.PostBuild
	if postBuild == nil {
		return nil, "", nil
	}
	subst := &gitops.Substitution{Vars: map[string]string{}, FromSecret: map[string]bool{}, Versions: map[string]string{}, Strict: postBuild.Strict}
	get := r.valuesGetter(obj.Namespace)
	var secretVersions []string
	for i, ref := range postBuild.SubstituteFrom {
		object, found, err := get(ctx, ref.Kind, ref.Name)
		switch {
		case err != nil:
			return nil, "", fmt.Errorf("reading %s %s of spec.postBuild.substituteFrom: %w", ref.Kind, ref.Name, err)
		case !found && ref.Optional:
			continue
		case !found:
			return nil, fmt.Sprintf("spec.postBuild.substituteFrom[%d] names %s %s, which does not exist in the OsmDeployment's namespace", i, ref.Kind, ref.Name), nil
		}
		fromSecret := ref.Kind == gitops.ValuesKindSecret
		if fromSecret {
			secretVersions = append(secretVersions, ref.Name+"@"+object.Version)
		}
		for name, value := range object.Data {
			if len(value) > gitops.MaxValuesBytes {
				return nil, fmt.Sprintf("spec.postBuild.substituteFrom[%d]: key %s of %s %s is larger than the limit of %d bytes",
					i, name, ref.Kind, ref.Name, gitops.MaxValuesBytes), nil
			}
			subst.Vars[name] = strings.ReplaceAll(string(value), "\n", "")
			subst.FromSecret[name] = fromSecret
			if fromSecret {
				subst.Versions[name] = ref.Name + "@" + object.Version
			}
		}
	}
	for name, value := range postBuild.Substitute {
		subst.Vars[name] = value
		subst.FromSecret[name] = false
	}
	slices.Sort(secretVersions)
	key := sha256.Sum256([]byte(strings.Join(secretVersions, "\x00")))
	subst.DigestKey = key[:]
	return subst, "", nil
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
