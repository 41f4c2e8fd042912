package pipeline

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
)

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

// Substitution reads spec.postBuild as kustomize-controller reads a Kustomization's: the keys
// of each substituteFrom object in order (a later one wins; a ConfigMap's or Secret's value
// without its newlines), then substitute on top. A missing optional object is skipped; a
// missing one otherwise is a problem to wait on. It reads the objects with get
// (ValuesGetter). It returns nil without postBuild.
func Substitution(ctx context.Context, get gitops.ValuesGetter, obj *gitopsv1alpha1.OsmDeployment) (*gitops.Substitution, string, error) {
	postBuild := obj.Spec.PostBuild
	if postBuild == nil {
		return nil, "", nil
	}
	subst := &gitops.Substitution{Vars: map[string]string{}, FromSecret: map[string]bool{}, Versions: map[string]string{}, Strict: postBuild.Strict}
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
