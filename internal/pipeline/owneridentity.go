package pipeline

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/osmops/osmops/internal/engine"
)

// The manager may get namespaces (the rbac marker in internal/osmconn/pool.go).

// ResolveOwnerIdentity returns the identity this operator installation writes in the owner
// markers in OSM: the one given, checked, or else "k8s-" and the UID of the kube-system
// namespace, which is stable for the life of a Kubernetes cluster and differs between two
// clusters that drive one OSM. A cluster rebuilt from scratch gets a new one: give the old one
// explicitly to keep the NS instances it marked.
func ResolveOwnerIdentity(ctx context.Context, reader client.Reader, given string) (string, error) {
	identity := given
	if identity == "" {
		ns := &corev1.Namespace{}
		if err := reader.Get(ctx, types.NamespacedName{Name: "kube-system"}, ns); err != nil {
			return "", fmt.Errorf("reading the kube-system namespace for the default owner identity (set --owner-identity instead): %w", err)
		}
		identity = "k8s-" + string(ns.UID)
	}
	if err := engine.CheckManagerIdentity(identity); err != nil {
		return "", fmt.Errorf("--owner-identity: %w", err)
	}
	return identity, nil
}
