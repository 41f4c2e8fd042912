package controller

import (
	"context"
	"time"

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

// OsmDeploymentReconciler makes OSM match the revision of a Git source.
type OsmDeploymentReconciler struct {
	client.Client
	kuberecorder.EventRecorder
	Clusters             *ClusterRegistry
	NoCrossNamespaceRefs bool
	RequeueDependency    time.Duration
}

// +kubebuilder:rbac:groups=gitops.osmops.io,resources=osmdeployments,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=gitops.osmops.io,resources=osmdeployments/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=gitops.osmops.io,resources=osmdeployments/finalizers,verbs=update
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the reconciler with the manager.
func (r *OsmDeploymentReconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&gitopsv1alpha1.OsmDeployment{}).
		WithOptions(opts).
		Complete(r)
}

// Reconcile applies one OsmDeployment.
func (r *OsmDeploymentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := &gitopsv1alpha1.OsmDeployment{}
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	patcher := patch.NewSerialPatcher(obj, r.Client)
	defer func() {
		if err := patcher.Patch(ctx, obj, patch.WithOwnedConditions{Conditions: []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}}); err != nil {
			retErr = kerrors.NewAggregate([]error{retErr, err})
		}
	}()
	conditions.MarkReconciling(obj, meta.ProgressingReason, "reconciliation in progress")
	return ctrl.Result{}, nil
}
