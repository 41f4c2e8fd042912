package controller

import (
	"context"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	kuberecorder "k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// OsmClusterReconciler checks an OSM NBI endpoint and keeps its shared client.
type OsmClusterReconciler struct {
	client.Client
	kuberecorder.EventRecorder
	Clusters *ClusterRegistry
}

// +kubebuilder:rbac:groups=gitops.osmops.io,resources=osmclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=gitops.osmops.io,resources=osmclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=gitops.osmops.io,resources=osmclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the reconciler with the manager.
func (r *OsmClusterReconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&gitopsv1alpha1.OsmCluster{}).
		WithOptions(opts).
		Complete(r)
}

// Reconcile checks one OsmCluster.
func (r *OsmClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := &gitopsv1alpha1.OsmCluster{}
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	patcher := patch.NewSerialPatcher(obj, r.Client)
	defer func() {
		if err := patcher.Patch(ctx, obj, patch.WithOwnedConditions{Conditions: []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}}); err != nil {
			retErr = kerrors.NewAggregate([]error{retErr, err})
		}
	}()
	conditions.MarkReconciling(obj, meta.ProgressingReason, "checking the OSM NBI")
	return ctrl.Result{}, nil
}
