package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/jitter"
	"github.com/fluxcd/pkg/runtime/predicates"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	kuberecorder "k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/artifact"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nameclaims"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmconn"
	"github.com/osmops/osmops/internal/pipeline"
)

const (
	// fieldOwner is the field manager of the operator's patches.
	fieldOwner = "osmops"
	// clusterRefIndex indexes OsmDeployments by the name of their OsmCluster.
	clusterRefIndex = ".spec.clusterRef.name"
	// sourceRefIndex indexes OsmDeployments by "kind/namespace/name" of their source.
	sourceRefIndex = ".spec.sourceRef"
	// dependsOnIndex indexes OsmDeployments by "namespace/name" of each OsmDeployment they depend on.
	dependsOnIndex = ".spec.dependsOn"
	// DefaultOperationPollInterval is how often pending OSM operations are checked.
	DefaultOperationPollInterval = 5 * time.Second
)

// WatchConfigsSelector is Flux's default --watch-configs-label-selector:
// reconcile.fluxcd.io/watch=Enabled.
var WatchConfigsSelector = klabels.SelectorFromSet(klabels.Set{meta.LabelKeyWatch: meta.LabelValueWatchEnabled})

// OsmDeploymentReconciler makes OSM match the revision of a Git source.
type OsmDeploymentReconciler struct {
	client.Client
	kuberecorder.EventRecorder
	// ClaimsNamespace is where the claims of NS instance names live (claims.go): the manager's
	// namespace, where tenants have no rights.
	ClaimsNamespace string
	// readsPastCache says that Client reads the API server itself (the command line's preview):
	// it has none of the cache's indexes.
	readsPastCache bool
	// Connections is the pool of NBI clients the OsmCluster reconciler shares.
	Connections          *osmconn.Pool
	NoCrossNamespaceRefs bool
	RequeueDependency    time.Duration
	// MinInterval is the shortest spec.interval and spec.retryInterval obeyed (--min-interval;
	// none when 0).
	MinInterval time.Duration
	// Clock tells the time of the bake times of waves (waves.go) and of status.readySince;
	// the real clock when nil.
	Clock clock.PassiveClock
	// OperationPollInterval is how often pending OSM operations are checked, and the longest
	// wait of the poll schedule (osmconn.PollSchedule).
	OperationPollInterval time.Duration
	// OperationPollMinInterval is the shortest wait of the poll schedule: how often operations
	// past their usual end are checked (osmconn.DefaultOperationPollMinInterval when 0; at most
	// OperationPollInterval).
	OperationPollMinInterval time.Duration
	// HTTPClient downloads artifacts from source-controller.
	HTTPClient *http.Client
	// ArtifactLimits bound what one artifact may hold.
	ArtifactLimits artifact.Limits
	// Share bounds the workers one namespace holds (none when nil).
	Share *NamespaceShare
	// OwnerIdentity names this operator installation in the owner markers it writes in OSM
	// (engine.Owner): stable across restarts, and different for each Kubernetes cluster that
	// drives one OSM.
	OwnerIdentity string
	// AnswerMemory bounds the memory OSM's list answers hold in one reconcile (none when 0).
	AnswerMemory int64
	// Shard selects the OsmDeployments this process reconciles (--watch-label-selector; nil
	// for all). Other processes reconcile the others (the claims on the API server guard names
	// across them); an OsmDeployment relabelled out of the shard is left to the shard it joins.
	Shard klabels.Selector

	// WatchConfigsSelector selects the ConfigMaps and Secrets whose changes trigger a
	// reconcile of the OsmDeployments that read them (Flux's --watch-configs-label-selector);
	// WatchConfigsSelector when nil. The manager's cache must hold only those (metadata only).
	WatchConfigsSelector klabels.Selector

	// Jitter spreads every requeue (outcome.result); Flux's interval jitter when nil.
	Jitter jitter.Duration

	// APIReader reads the OsmDeployment past the cache, which may not hold yet the status this
	// process wrote last: a reconcile that another object triggers can follow at once, and the
	// pending creates, the inventory and the operations must be those last written. The
	// manager's API reader when nil.
	APIReader client.Reader

	revisions revisionCache
	// secrets are the values from Secrets to mask in each OsmDeployment's conditions and events.
	secrets secretValues
}

// +kubebuilder:rbac:groups=gitops.osmops.io,resources=osmdeployments,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=gitops.osmops.io,resources=osmdeployments/status,verbs=patch
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories;buckets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupIndexes registers the field indexes both reconcilers use; call it once per manager.
func SetupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	indexer := mgr.GetFieldIndexer()
	if err := indexer.IndexField(ctx, &gitopsv1alpha1.OsmDeployment{}, clusterRefIndex, func(o client.Object) []string {
		return []string{o.(*gitopsv1alpha1.OsmDeployment).Spec.ClusterRef.Name}
	}); err != nil {
		return fmt.Errorf("indexing OsmDeployments by OsmCluster: %w", err)
	}
	if err := indexer.IndexField(ctx, &gitopsv1alpha1.OsmDeployment{}, sourceRefIndex, func(o client.Object) []string {
		d := o.(*gitopsv1alpha1.OsmDeployment)
		return []string{sourceKey(d.Spec.SourceRef.Kind, d.GetSourceNamespace(), d.Spec.SourceRef.Name)}
	}); err != nil {
		return fmt.Errorf("indexing OsmDeployments by source: %w", err)
	}
	if err := indexer.IndexField(ctx, &gitopsv1alpha1.OsmDeployment{}, dependsOnIndex, dependencyKeys); err != nil {
		return fmt.Errorf("indexing OsmDeployments by dependency: %w", err)
	}
	if err := indexer.IndexField(ctx, &coordinationv1.Lease{}, nameclaims.HolderIndex, nameclaims.HolderUID); err != nil {
		return fmt.Errorf("indexing claims by holder: %w", err)
	}
	return nil
}

// SetupWithManager registers the reconciler: OsmDeployments (spec changes and "reconcile now"
// requests), sources of every kind whose artifact changed, and OsmClusters whose readiness
// changed.
func (r *OsmDeploymentReconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	if r.ClaimsNamespace == "" {
		return errors.New("the claims of NS instance names need a namespace (ClaimsNamespace)")
	}
	if r.OperationPollInterval == 0 {
		r.OperationPollInterval = DefaultOperationPollInterval
	}
	if r.HTTPClient == nil {
		r.HTTPClient = &http.Client{Timeout: 2 * time.Minute}
	}
	r.revisions.fetch = r.fetchArtifact
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.WatchConfigsSelector == nil {
		r.WatchConfigsSelector = WatchConfigsSelector
	}
	if _, wrapped := r.EventRecorder.(deploymentEvents); !wrapped {
		r.EventRecorder = deploymentEvents{EventRecorder: r.EventRecorder, secrets: &r.secrets}
	}
	watchedConfigs := predicate.NewPredicateFuncs(labelledConfigs(r.WatchConfigsSelector))
	b := ctrl.NewControllerManagedBy(mgr).
		For(&gitopsv1alpha1.OsmDeployment{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicates.ReconcileRequestedPredicate{})))
	for _, kind := range pipeline.SourceKinds() {
		source, _ := pipeline.NewSource(kind)
		b = b.Watches(source, handler.EnqueueRequestsFromMapFunc(r.deploymentsOfSource(kind)),
			builder.WithPredicates(artifactChanged{}))
	}
	return b.
		Watches(&gitopsv1alpha1.OsmCluster{}, handler.EnqueueRequestsFromMapFunc(r.deploymentsOfCluster),
			builder.WithPredicates(readinessChanged{})).
		Watches(&gitopsv1alpha1.OsmDeployment{}, handler.EnqueueRequestsFromMapFunc(r.dependentsOf),
			builder.WithPredicates(rolloutStandingChanged{})).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.deploymentsReading(gitops.ValuesKindSecret)),
			builder.OnlyMetadata, builder.WithPredicates(predicate.ResourceVersionChangedPredicate{}, watchedConfigs)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.deploymentsReading(gitops.ValuesKindConfigMap)),
			builder.OnlyMetadata, builder.WithPredicates(predicate.ResourceVersionChangedPredicate{}, watchedConfigs)).
		WithOptions(opts).
		Complete(r)
}

// deploymentsOfSource maps a source of kind to the OsmDeployments that apply it. The kind is
// the watch's: objects from the cache carry no TypeMeta to read it from.
func (r *OsmDeploymentReconciler) deploymentsOfSource(kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		return r.requestsFor(ctx, client.MatchingFields{sourceRefIndex: sourceKey(kind, obj.GetNamespace(), obj.GetName())})
	}
}

// sourceKey is the sourceRefIndex key of a source: two kinds may share a name.
func sourceKey(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}

func (r *OsmDeploymentReconciler) deploymentsOfCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.requestsFor(ctx, client.InNamespace(obj.GetNamespace()), client.MatchingFields{clusterRefIndex: obj.GetName()})
}

// dependencyKeys are the dependsOnIndex keys of an OsmDeployment.
func dependencyKeys(o client.Object) []string {
	d := o.(*gitopsv1alpha1.OsmDeployment)
	keys := make([]string, 0, len(d.Spec.DependsOn))
	for _, dep := range d.Spec.DependsOn {
		keys = append(keys, dependencyKey(d, dep).String())
	}
	return keys
}

// dependentsOf maps an OsmDeployment to those that depend on it, so that a wave starts when
// its dependency is Ready on the revision, not a dependency interval later.
func (r *OsmDeploymentReconciler) dependentsOf(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.requestsFor(ctx, client.MatchingFields{dependsOnIndex: client.ObjectKeyFromObject(obj).String()})
}

func (r *OsmDeploymentReconciler) requestsFor(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	var list gitopsv1alpha1.OsmDeploymentList
	if err := r.List(ctx, &list, opts...); err != nil {
		log.FromContext(ctx).Error(err, "listing OsmDeployments to enqueue")
		return nil
	}
	requests := make([]reconcile.Request, 0, len(list.Items))
	for _, d := range list.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&d)})
	}
	return requests
}

// artifactChanged lets through source updates that bring a new artifact.
type artifactChanged struct{ predicate.Funcs }

func (artifactChanged) Update(e event.UpdateEvent) bool {
	before, okOld := e.ObjectOld.(pipeline.ArtifactSource)
	after, okNew := e.ObjectNew.(pipeline.ArtifactSource)
	if !okOld || !okNew || after.GetArtifact() == nil {
		return false
	}
	return before.GetArtifact() == nil || before.GetArtifact().Digest != after.GetArtifact().Digest
}

// readinessChanged lets through OsmCluster updates whose Ready condition changed status.
type readinessChanged struct{ predicate.Funcs }

func (readinessChanged) Update(e event.UpdateEvent) bool {
	oldCluster, okOld := e.ObjectOld.(*gitopsv1alpha1.OsmCluster)
	newCluster, okNew := e.ObjectNew.(*gitopsv1alpha1.OsmCluster)
	if !okOld || !okNew {
		return false
	}
	return conditions.IsReady(oldCluster) != conditions.IsReady(newCluster)
}

// rolloutStandingChanged passes an OsmDeployment's status change that can let its dependents
// go on or halt them: readiness, health, the revisions applied and attempted, the time it
// became Ready, and its own place in a rollout.
type rolloutStandingChanged struct{ predicate.Funcs }

func (rolloutStandingChanged) Update(e event.UpdateEvent) bool {
	oldDep, okOld := e.ObjectOld.(*gitopsv1alpha1.OsmDeployment)
	newDep, okNew := e.ObjectNew.(*gitopsv1alpha1.OsmDeployment)
	if !okOld || !okNew {
		return false
	}
	conditionChanged := func(kind string) bool {
		o, n := conditions.Get(oldDep, kind), conditions.Get(newDep, kind)
		if o == nil || n == nil {
			return (o == nil) != (n == nil)
		}
		return o.Status != n.Status || o.Reason != n.Reason
	}
	return conditionChanged(meta.ReadyCondition) || conditionChanged(gitopsv1alpha1.HealthyCondition) ||
		oldDep.Status.LastAppliedRevision != newDep.Status.LastAppliedRevision ||
		oldDep.Status.LastAttemptedRevision != newDep.Status.LastAttemptedRevision ||
		!oldDep.Status.ReadySince.Equal(newDep.Status.ReadySince) ||
		!equality.Semantic.DeepEqual(oldDep.Status.Rollout, newDep.Status.Rollout)
}

// Reconcile applies one OsmDeployment. Its steps each set the conditions that explain them;
// the status is written once, on return.
func (r *OsmDeploymentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	release, later, ok := r.Share.acquire(req.Namespace)
	if !ok {
		return later, nil
	}
	defer release()
	ctx = osmconn.WithAnswerBudget(ctx, r.AnswerMemory)
	start := time.Now()
	obj := &gitopsv1alpha1.OsmDeployment{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone, maybe without its finalizer (removed by hand): the claims it did not
			// release are taken over by whoever wants their names (claims.go).
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.Shard != nil && !r.Shard.Matches(klabels.Set(obj.Labels)) {
		// Relabelled out of the shard (read past the cache, which dropped it): the shard it
		// joins applies it from now on, this one neither applies it nor looks at it again.
		r.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	patcher := newSerialPatcher(obj, r.Client)
	r.secrets.forget(req.NamespacedName) // built again from what this reconcile reads
	defer func() {
		r.secrets.maskConditions(obj)
		r.secrets.maskHistory(obj)
		summarize(obj)
		markSteadySince(obj, r.now())
		if err := patcher.Patch(ctx, obj); err != nil {
			if !apierrors.IsNotFound(err) {
				err = r.reportStatusRefused(ctx, obj, patcher, err)
			}
			retErr = kerrors.NewAggregate([]error{retErr, client.IgnoreNotFound(err)})
		}
		retErr = r.secrets.maskError(req.NamespacedName, retErr) // the manager logs it
		r.secrets.forget(req.NamespacedName)
		recordMetrics(obj, start)
	}()

	var requested string
	if v, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok && v != obj.Status.LastHandledReconcileAt {
		requested = v
	}
	return r.reconcileDeployment(ctx, obj, patcher, requested).conclude(obj, jitterOr(r.Jitter))
}

// reportStatusRefused says, when the API server refused the status a reconcile wrote (too
// large, invalid), what it can still write: Ready=False StatusWriteFailed on the status it last
// stored, with a Warning event, so that the OsmDeployment never shows a stale Ready. It returns
// the refusal, with the failure of that write if it failed too: the work queue retries.
func (r *OsmDeploymentReconciler) reportStatusRefused(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, patcher *serialPatcher, refusal error) error {
	msg := cut("the status of this reconcile could not be written: "+refusal.Error(), maxConditionMessage)
	r.Eventf(obj, corev1.EventTypeWarning, gitopsv1alpha1.StatusWriteFailedReason, "%s", msg)
	stored := patcher.before.DeepCopyObject().(*gitopsv1alpha1.OsmDeployment)
	conditions.MarkFalse(stored, meta.ReadyCondition, gitopsv1alpha1.StatusWriteFailedReason, "%s", msg)
	if err := patcher.Patch(ctx, stored); err != nil {
		return kerrors.NewAggregate([]error{refusal, fmt.Errorf("reporting it: %w", err)})
	}
	return refusal
}

// reconcileDependencies waits, without failing, while an OsmDeployment of dependsOn is not Ready.
// An entry with revision Same is judged once the source's revision is known (reconcileWaves).
func (r *OsmDeploymentReconciler) reconcileDependencies(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) (outcome, bool) {
	for _, dep := range obj.Spec.DependsOn {
		key := types.NamespacedName{Namespace: dep.Namespace, Name: dep.Name}
		if key.Namespace == "" {
			key.Namespace = obj.Namespace
		}
		if r.NoCrossNamespaceRefs && key.Namespace != obj.Namespace {
			markStalled(obj, gitopsv1alpha1.AccessDeniedReason, "dependency %s is in another namespace, which --no-cross-namespace-refs forbids", key)
			return stalling(0), false
		}
		if dep.Revision == gitopsv1alpha1.DependencyRevisionSame {
			continue
		}
		other := &gitopsv1alpha1.OsmDeployment{}
		err := r.Get(ctx, key, other)
		switch {
		case err != nil:
			r.waitFor(obj, gitopsv1alpha1.DependencyNotReadyReason, gitopsv1alpha1.OsmDeploymentKind, refName(obj, key), notFoundOr(err))
		case conditions.IsReady(other) && other.Status.ObservedGeneration == other.Generation:
			continue
		default:
			r.waitOn(obj, other, gitopsv1alpha1.DependencyNotReadyReason, gitopsv1alpha1.OsmDeploymentKind, refName(obj, key), "not Ready")
		}
		return waiting(r.RequeueDependency), false
	}
	return outcome{}, true
}

// reconcileCluster takes the NBI connection of the OsmCluster from the pool, once the
// OsmCluster is Ready: OSM answers and accepts its credentials.
func (r *OsmDeploymentReconciler) reconcileCluster(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) (*osmconn.Connection, outcome) {
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ClusterRef.Name}
	cluster := &gitopsv1alpha1.OsmCluster{}
	if err := r.Get(ctx, key, cluster); err != nil {
		r.waitFor(obj, gitopsv1alpha1.ClusterNotReadyReason, gitopsv1alpha1.OsmClusterKind, key.Name, notFoundOr(err))
		return nil, waiting(r.retryInterval(obj))
	}
	if !conditions.IsReady(cluster) {
		r.waitOn(obj, cluster, gitopsv1alpha1.ClusterNotReadyReason, gitopsv1alpha1.OsmClusterKind, key.Name, notReady(cluster))
		// The OsmCluster's readiness change triggers the next reconcile; this is a safety net.
		return nil, waiting(r.retryInterval(obj))
	}
	if nameclaims.ClusterIdentity(cluster) == "" {
		// Checked before the identity was recorded (an upgrade of osmops), or not yet for its
		// spec: which OSM it reaches is not known, so nothing can be claimed there.
		r.awaitProgress(obj, gitopsv1alpha1.ClusterNotReadyReason, gitopsv1alpha1.OsmClusterKind, key.Name,
			"not yet checked as it is now: which OSM it reaches is known after its next login")
		return nil, waiting(r.retryInterval(obj))
	}
	conn, err := r.Connections.Get(ctx, cluster)
	if err != nil {
		// The OsmCluster reconciler reports it too, and its readiness change triggers the next reconcile.
		r.waitFor(obj, gitopsv1alpha1.ClusterNotReadyReason, gitopsv1alpha1.OsmClusterKind, key.Name, err.Error())
		return nil, waiting(r.retryInterval(obj))
	}
	return conn, outcome{}
}

// reconcileSource resolves the source, of any kind, and its current artifact.
func (r *OsmDeploymentReconciler) reconcileSource(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) (*meta.Artifact, outcome) {
	kind := obj.Spec.SourceRef.Kind
	key := types.NamespacedName{Namespace: obj.GetSourceNamespace(), Name: obj.Spec.SourceRef.Name}
	if r.NoCrossNamespaceRefs && key.Namespace != obj.Namespace {
		markStalled(obj, gitopsv1alpha1.AccessDeniedReason,
			"cross-namespace reference to %s %s is forbidden (--no-cross-namespace-refs)", kind, key)
		return nil, stalling(0)
	}
	source, ok := pipeline.NewSource(kind)
	if !ok {
		// The API's enum refuses other kinds; a CRD newer than this operator (installed before
		// it during an upgrade) may not.
		markStalled(obj, gitopsv1alpha1.SourceNotReadyReason, "source kind %q is not supported", kind)
		return nil, stalling(0)
	}
	if err := r.Get(ctx, key, source); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, retrying(err)
		}
		r.waitFor(obj, gitopsv1alpha1.SourceNotReadyReason, kind, refName(obj, key), "not found")
		return nil, waiting(r.retryInterval(obj))
	}
	if source.GetArtifact() == nil {
		why := "no artifact yet"
		if !progressing(source) {
			why += ": " + notReady(source)
		}
		r.waitOn(obj, source, gitopsv1alpha1.SourceNotReadyReason, kind, refName(obj, key), why)
		return nil, waiting(r.retryInterval(obj))
	}
	return source.GetArtifact(), outcome{}
}

// reconcileRevision fetches, verifies, unpacks and validates the artifact (once per artifact
// digest and settings, for every OsmDeployment that reads it so: revisionCache), and rejects
// the whole revision if any file is invalid, with the reference problems of what parsed
// (invalidWithReferences).
func (r *OsmDeploymentReconciler) reconcileRevision(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, conn *osmconn.Connection,
	a *meta.Artifact) (*gitops.Revision, outcome) {
	subst, unresolved, err := pipeline.Substitution(ctx, r.valuesGetter(obj.Namespace), obj)
	switch {
	case err != nil:
		r.waitFor(obj, gitopsv1alpha1.ValuesUnresolvedReason, "the variables of revision", a.Revision, err.Error())
		return nil, retrying(err)
	case unresolved != "":
		r.waitFor(obj, gitopsv1alpha1.ValuesUnresolvedReason, "the variables of revision", a.Revision, unresolved)
		return nil, waiting(r.retryInterval(obj))
	}
	if err := r.secrets.add(client.ObjectKeyFromObject(obj), subst.SecretValues()); err != nil {
		r.waitFor(obj, gitopsv1alpha1.ValuesUnresolvedReason, "the variables of revision", a.Revision, err.Error())
		return nil, waiting(r.retryInterval(obj))
	}
	opts := gitops.Options{Path: obj.Spec.Path, FileExtensions: obj.Spec.FileExtensions, PackagesPath: obj.Spec.PackagesPath, Substitution: subst}
	rev, joined, err := r.revisions.load(ctx, client.ObjectKeyFromObject(obj), newRevisionKey(a.Digest, opts), a.URL, opts)
	var invalid *gitops.ValidationError
	switch {
	case errors.As(err, &invalid):
		invalid = r.invalidWithReferences(ctx, obj, conn, invalid)
		recordFailedRevision(obj, a.Revision)
		markStalled(obj, gitopsv1alpha1.ValidationFailedReason, "revision %s rejected, nothing applied: %s", a.Revision, invalid)
		r.Eventf(obj, corev1.EventTypeWarning, gitopsv1alpha1.ValidationFailedReason, "revision %s rejected: %s", a.Revision, invalid)
		return nil, stalling(0)
	case errors.Is(err, artifact.ErrInvalidArtifact):
		recordFailedRevision(obj, a.Revision)
		markStalled(obj, gitopsv1alpha1.ArtifactFailedReason, "artifact of %s: %s", a.Revision, err)
		return nil, stalling(0)
	case err != nil:
		r.waitFor(obj, gitopsv1alpha1.ArtifactFailedReason, "the artifact of revision", a.Revision, err.Error())
		return nil, retrying(err)
	}
	if joined {
		for _, warning := range rev.Warnings {
			r.AnnotatedEventf(obj, revisionEvent(a.Revision), corev1.EventTypeWarning, gitopsv1alpha1.RepositorySettingsReason, "%s", warning)
		}
	}
	return rev, outcome{}
}

// recordFailedRevision records a revision rejected before anything reached OSM (invalid, or
// its artifact) as attempted, so that the waves after it halt on it (judgeWave) rather than
// wait for a revision it will never apply. Not while OSM operations of the previous revision
// are in flight: lastAttemptedRevision is theirs, which settleOperations marks applied once
// they end, and the rejected revision, mended, would be marked applied without being sent.
func recordFailedRevision(obj *gitopsv1alpha1.OsmDeployment, revision string) {
	if len(obj.Status.Operations) == 0 {
		obj.Status.LastAttemptedRevision = revision
	}
}

// invalidWithReferences adds to the problems of an invalid revision those of the references of
// what parsed of it, checked as a plan checks them (engine.CheckReferences), so that one push
// shows every problem, as osmops validate --osm does. It reads OSM's descriptors and VIM
// accounts (no NS instance); when OSM does not answer, the references are checked against the
// revision's own packages only, as osmops validate does offline: the files must change anyway.
// invalid is not changed: the revision cache shares it.
func (r *OsmDeploymentReconciler) invalidWithReferences(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, conn *osmconn.Connection,
	invalid *gitops.ValidationError) *gitops.ValidationError {
	if invalid.Parsed == nil {
		return invalid
	}
	observed, err := engine.Observe(ctx, conn.NBI, engine.Scope{})
	if err != nil {
		log.FromContext(ctx).Info("references of an invalid revision checked without OSM",
			"error", r.secrets.mask(client.ObjectKeyFromObject(obj), err.Error()))
		return invalid.With(invalid.Parsed.CheckOwnReferences())
	}
	return invalid.With(engine.CheckReferences(invalid.Parsed, observed))
}

// fetchArtifact downloads an artifact, checks its digest and unpacks it into dir, within
// r.ArtifactLimits.
func (r *OsmDeploymentReconciler) fetchArtifact(ctx context.Context, url, digest, dir string) error {
	return artifact.Fetch(ctx, r.HTTPClient, url, digest, dir, r.ArtifactLimits)
}

// recordOperations records the OSM operations that ended in the inventory, keeps the running
// ones, and reports failures: in the Ready condition and a Warning event.
func (r *OsmDeploymentReconciler) recordOperations(obj *gitopsv1alpha1.OsmDeployment, running []gitopsv1alpha1.OperationEntry, ended []engine.Outcome) {
	obj.Status.Operations = running
	recordHistoryOperations(obj, running, ended, time.Now())
	var failures []string
	reason := gitopsv1alpha1.OperationFailedReason
	for _, outcome := range ended {
		recordOperationMetric(outcome)
		if outcome.Failed {
			failures = append(failures, fmt.Sprintf("NS instance %s: %s operation %s: %s",
				outcome.Operation.NsInstance, outcome.Operation.Type, outcome.Operation.State, outcome.Message))
		}
		if outcome.TimedOut {
			reason = gitopsv1alpha1.TimeoutReason
		}
		setInstanceState(obj, outcome)
	}
	if len(failures) > 0 {
		msg := strings.Join(failures, "; ")
		reason = failureReason(obj, reason)
		r.Eventf(obj, corev1.EventTypeWarning, reason, "%s", msg)
		markStalled(obj, reason, "%s", msg)
		healthFailed(obj, reason, msg)
	}
}

// settleOperations records the last OSM operations, all ended: failed instances stall the
// OsmDeployment, otherwise the revision they carried is applied, and its health reported from
// the records of the instances they completed (read by determineState: st.observed). The
// reconcile ends there when the revision was attempted already, no instance waits for a later
// plan and no reconcile is requested: their outcome, recorded as they ended, is the status.
// Otherwise the plan is made.
func (r *OsmDeploymentReconciler) settleOperations(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, st deploymentState) outcome {
	r.recordOperations(obj, nil, st.ended)
	var settled outcome
	switch {
	case settleRemediation(obj):
		return next // the plan sends the remediation
	case hasFailedInstances(obj):
		markFailedInstances(obj)
		settled = stalling(r.retryInterval(obj))
	case hasUnsettledInstances(obj):
		return next // the revision is applied again
	default:
		// The finished operations are trusted: observing OSM again before Ready would read
		// every NS and VNF record once more (most of the requests and bytes of a revision). The
		// one case it would catch, an instance deleted while its operation ran (OSM drops its
		// operations with it, so they look completed), is corrected by the next drift check.
		r.markApplied(obj, obj.Status.LastAttemptedRevision)
		settled = r.reportHealth(ctx, obj, st.observed, done(r.interval(obj)))
	}
	if obj.Status.LastAttemptedRevision != st.revision || hasUnsettledInstances(obj) || st.requested != "" {
		return next
	}
	return settled
}

// applyPlan sends the plan to OSM, records what OSM answered and the operations to wait for.
func (r *OsmDeploymentReconciler) applyPlan(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, patcher *serialPatcher, st deploymentState) outcome {
	plan, revision := &st.plan, st.revision
	if err := r.revisions.withTarballs(ctx, client.ObjectKeyFromObject(obj), plan); err != nil {
		r.waitFor(obj, gitopsv1alpha1.ArtifactFailedReason, "the artifact of revision", revision, err.Error())
		return retrying(err)
	}
	obj.Status.LastAttemptedRevision = revision
	obj.Status.Inventory = pipeline.APIInventory(plan.Inventory)
	setSummary(obj, len(st.rev.NsInstances))
	for _, warning := range plan.Warnings {
		r.Eventf(obj, corev1.EventTypeWarning, gitopsv1alpha1.PackageMayBeRefusedReason, "%s", warning)
	}
	conditions.MarkReconciling(obj, meta.ProgressingReason, "applying %s: %s", revision, describePlan(plan))
	if len(plan.Creates) > 0 {
		// Creates are marked pending in status before they are sent (their names claimed
		// before, in actForState): a reconcile after a crash finds them by their markers.
		if err := patcher.Patch(ctx, obj); err != nil {
			return retrying(fmt.Errorf("recording pending creates: %w", err))
		}
	}
	result := engine.Apply(withChangeOrigin(ctx, obj, revision, plan), st.conn.NBI, plan, st.observed, st.conn.Parallelism)
	now := time.Now()
	recordApplied(obj, st.previous, plan, result, now)
	recordApply(obj, revision, plan, result, now)
	r.eventApplied(obj, revision, plan, result)
	r.eventRemediations(obj, plan)
	if len(result.Errors) > 0 {
		return r.applyFailure(obj, revision, result.Errors)
	}
	if len(obj.Status.Operations) > 0 {
		conditions.MarkReconciling(obj, meta.ProgressingReason, "waiting for %d OSM operation(s) of %s", len(obj.Status.Operations), revision)
		healthProgressing(obj, revision)
		return r.pollOperations(st.conn, obj, now)
	}
	if hasUnsettledInstances(obj) {
		// Something waits for a later plan (an instance replaced, or moved after its
		// package's upload): it is made soon, not at the next drift check.
		conditions.MarkReconciling(obj, meta.ProgressingReason, "applying %s: waiting for OSM before the next step", revision)
		return waiting(r.OperationPollInterval)
	}
	r.markApplied(obj, revision)
	return r.reportHealth(ctx, obj, st.observed, done(r.interval(obj)))
}

// finishWithoutChanges ends a reconcile that found OSM matching the revision.
func (r *OsmDeploymentReconciler) finishWithoutChanges(obj *gitopsv1alpha1.OsmDeployment, revision string, plan engine.Plan) outcome {
	if len(plan.Orphans) > 0 && obj.Status.LastAppliedRevision != revision {
		r.Eventf(obj, corev1.EventTypeNormal, gitopsv1alpha1.OrphanedReason, "left running, as prune is off: %s", strings.Join(plan.Orphans, ", "))
	}
	if hasFailedInstances(obj) {
		markFailedInstances(obj)
		return stalling(r.interval(obj))
	}
	if progressing := countInstances(obj, gitopsv1alpha1.NsInstanceProgressing) + countInstances(obj, gitopsv1alpha1.NsInstanceReplacing); progressing > 0 {
		conditions.MarkReconciling(obj, meta.ProgressingReason, "waiting for OSM to finish %d NS instance(s)", progressing)
		return waiting(r.OperationPollInterval)
	}
	r.markApplied(obj, revision)
	return done(r.interval(obj))
}

// applyFailure reports the actions OSM refused: transient ones are retried with back-off,
// the others stall the revision until it or the spec changes.
func (r *OsmDeploymentReconciler) applyFailure(obj *gitopsv1alpha1.OsmDeployment, revision string, failures []engine.ActionError) outcome {
	messages := make([]string, 0, len(failures))
	transient := false
	for _, f := range failures {
		messages = append(messages, f.Error())
		transient = transient || retryable(f.Err)
	}
	msg := fmt.Sprintf("applying %s: %s", revision, strings.Join(messages, "; "))
	if transient {
		r.waitFor(obj, gitopsv1alpha1.OSMUnavailableReason, gitopsv1alpha1.OsmClusterKind, obj.Spec.ClusterRef.Name, msg)
		return retrying(errors.New(msg))
	}
	r.Eventf(obj, corev1.EventTypeWarning, gitopsv1alpha1.OSMRequestFailedReason, "%s", msg)
	markStalled(obj, gitopsv1alpha1.OSMRequestFailedReason, "%s", msg)
	return stalling(0)
}

// osmFailure reports a failed read of OSM.
func (r *OsmDeploymentReconciler) osmFailure(obj *gitopsv1alpha1.OsmDeployment, what string, err error) outcome {
	if retryable(err) {
		r.waitFor(obj, gitopsv1alpha1.OSMUnavailableReason, gitopsv1alpha1.OsmClusterKind, obj.Spec.ClusterRef.Name, what+": "+err.Error())
		return retrying(err)
	}
	markStalled(obj, gitopsv1alpha1.OSMRequestFailedReason, "%s: %s", what, err)
	return stalling(0)
}

// retryable tells whether trying again later may succeed: OSM unreachable or overloaded, an
// expired session, an object that changed meanwhile (404) or an NS instance busy (409).
func retryable(err error) bool {
	return osm.IsTransient(err) || osm.IsUnauthorized(err) || osm.IsNotFound(err) || osm.IsConflict(err) ||
		errors.Is(err, context.DeadlineExceeded)
}

// markApplied records a revision whose every operation completed.
func (r *OsmDeploymentReconciler) markApplied(obj *gitopsv1alpha1.OsmDeployment, revision string) {
	if obj.Status.LastAppliedRevision != revision {
		r.Eventf(obj, corev1.EventTypeNormal, gitopsv1alpha1.AppliedReason, "revision %s applied: %s", revision, obj.Status.NsInstancesSummary+" NS instances ready")
	}
	if obj.Status.LastAppliedRevision != revision || obj.Status.LastAppliedRevisionTime == nil {
		// Real time, as health checks time out by it; readySince follows the reconciler's clock (bake times).
		now := metav1.Now()
		obj.Status.LastAppliedRevisionTime = &now
	}
	if obj.Status.LastAppliedRevision != revision {
		obj.Status.ReadySince = nil // the bake of the waves after it starts again (markSteadySince)
	}
	obj.Status.LastAppliedRevision = revision
	obj.Status.ObservedGeneration = obj.Generation
	conditions.Delete(obj, meta.StalledCondition)
	conditions.Delete(obj, meta.ReconcilingCondition)
	conditions.MarkTrue(obj, meta.ReadyCondition, gitopsv1alpha1.AppliedReason, "Applied revision: %s", revision)
}

// A deletion cleans OSM up as spec.deletionPolicy says, then lets the object go: it terminates
// the owned NS instances and waits until OSM has removed them (Delete, WaitForTermination,
// MirrorPrune with prune), or leaves them running (Orphan, MirrorPrune without prune,
// suspended). Its states are those of the machine (determineDeletionState).
//
// Deletion always ends, but with WaitForTermination: when OSM cannot be reached for good (the
// OsmCluster is gone, or is being deleted and its Secrets are gone with no client left in the
// pool), or the NS instances are not gone within spec.timeout of the deletion (OSM down or
// failing, terminations that do not end), the finalizer is removed with a Warning event that
// lists the NS instances OSM may still run.

// terminate sends OSM the terminations the deletion's plan holds (Terminating), and waits for
// OSM to remove the instances, until the deletion's timeout.
func (r *OsmDeploymentReconciler) terminate(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, st deploymentState) outcome {
	plan := &st.plan
	obj.Status.Inventory = pipeline.APIInventory(plan.Inventory)
	if len(plan.Deletes) > 0 {
		// A deletion applies no revision: its terminates are audited with the last one applied.
		ctx := withChangeOrigin(ctx, obj, obj.Status.LastAppliedRevision, plan)
		result := engine.Apply(ctx, st.conn.NBI, plan, st.observed, st.conn.Parallelism)
		recordApplied(obj, st.previous, plan, result, time.Now())
		if len(result.Errors) > 0 {
			messages := make([]string, 0, len(result.Errors))
			transient := false
			for _, f := range result.Errors {
				messages = append(messages, f.Error())
				transient = transient || retryable(f.Err)
			}
			msg := strings.Join(messages, "; ")
			r.Eventf(obj, corev1.EventTypeWarning, gitopsv1alpha1.OSMRequestFailedReason, "deletion: %s", msg)
			var retry error
			if transient {
				retry = errors.New(msg)
			}
			return r.deletionBlocked(obj, msg, false, retry)
		}
		r.Eventf(obj, corev1.EventTypeNormal, gitopsv1alpha1.PruningReason, "terminating %d NS instance(s) before deletion", len(plan.Deletes))
	}
	if r.deletionExpired(obj) {
		return r.letGo(obj, fmt.Sprintf("OSM has not removed them within the timeout (%s) of the deletion", obj.GetTimeout()))
	}
	conditions.MarkReconciling(obj, meta.ProgressingReason, "deleting: waiting for OSM to remove %d NS instance(s)", len(plan.Inventory.NsInstances))
	return waiting(r.OperationPollInterval)
}

// recordDeletionOperations records the OSM operations the status lists that ended (the
// terminates sent, and any operation of the apply path still running when the deletion came)
// in the inventory: a completed terminate removes its instance. It returns the failures of
// terminates, reported in a Warning event.
func (r *OsmDeploymentReconciler) recordDeletionOperations(obj *gitopsv1alpha1.OsmDeployment, running []gitopsv1alpha1.OperationEntry, ended []engine.Outcome) string {
	obj.Status.Operations = running
	recordHistoryOperations(obj, running, ended, time.Now())
	var failures []string
	for _, outcome := range ended {
		if outcome.Failed && outcome.Operation.Type == osm.OperationTypeTerminate {
			failures = append(failures, fmt.Sprintf("NS instance %s: %s operation %s: %s",
				outcome.Operation.NsInstance, outcome.Operation.Type, outcome.Operation.State, outcome.Message))
		}
		setInstanceState(obj, outcome)
	}
	failed := strings.Join(failures, "; ")
	if failed != "" {
		r.Eventf(obj, corev1.EventTypeWarning, gitopsv1alpha1.OperationFailedReason, "deletion: %s", failed)
	}
	return failed
}

// deletionConnection takes the OsmCluster's connection from the pool, whatever the OsmCluster's
// last health check said: a deletion tries OSM. Without a connection it says why, and whether
// that is for good (final): the OsmCluster is gone, or is being deleted and its Secrets are gone
// with no client left in the pool to use (after a restart). Other errors are transient.
func (r *OsmDeploymentReconciler) deletionConnection(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) (*osmconn.Connection, string, bool, error) {
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ClusterRef.Name}
	cluster := &gitopsv1alpha1.OsmCluster{}
	if err := r.Get(ctx, key, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("OsmCluster %s not found", key.Name), true, nil
		}
		return nil, "", false, err
	}
	conn, err := r.Connections.Get(ctx, cluster)
	var broken *osmconn.Error
	switch {
	case err == nil:
		return conn, "", false, nil
	case errors.As(err, &broken):
		return nil, fmt.Sprintf("OsmCluster %s: %s", key.Name, broken.Message), broken.Gone || !cluster.DeletionTimestamp.IsZero(), nil
	}
	return nil, "", false, err
}

// deletionBlocked handles a deletion that cannot reach OSM, or that OSM refused: it waits and
// tries again (err, when not nil, is retried with back-off), unless OSM cannot be reached for
// good (final) or the deletion's timeout has passed, when it lets the OsmDeployment go. With
// WaitForTermination it waits however long it takes.
func (r *OsmDeploymentReconciler) deletionBlocked(obj *gitopsv1alpha1.OsmDeployment, why string, final bool, err error) outcome {
	policy := obj.GetDeletionPolicy()
	if policy != gitopsv1alpha1.DeletionPolicyWaitForTermination && (final || r.deletionExpired(obj)) {
		return r.letGo(obj, why)
	}
	r.waitFor(obj, gitopsv1alpha1.DeletionFailedReason, "OSM to terminate", fmt.Sprintf("%d NS instance(s)", len(obj.Status.Inventory.NsInstances)),
		fmt.Sprintf("%s (deletionPolicy %s)", why, policy))
	if err != nil {
		return retrying(err)
	}
	retry := r.retryInterval(obj)
	if policy != gitopsv1alpha1.DeletionPolicyWaitForTermination {
		retry = min(retry, time.Until(r.deletionDeadline(obj)))
	}
	return waiting(retry)
}

// deletionDeadline is when a deletion stops waiting for OSM: spec.timeout after it was asked.
func (r *OsmDeploymentReconciler) deletionDeadline(obj *gitopsv1alpha1.OsmDeployment) time.Time {
	return obj.DeletionTimestamp.Add(obj.GetTimeout())
}

// deletionExpired tells whether the deletion has waited for OSM as long as its policy allows.
func (r *OsmDeploymentReconciler) deletionExpired(obj *gitopsv1alpha1.OsmDeployment) bool {
	return obj.GetDeletionPolicy() != gitopsv1alpha1.DeletionPolicyWaitForTermination &&
		!time.Now().Before(r.deletionDeadline(obj))
}

// letGo ends a deletion that could not clean OSM up, as kustomize-controller does: a Warning
// event lists the NS instances OSM may still run, and the finalizer is removed.
func (r *OsmDeploymentReconciler) letGo(obj *gitopsv1alpha1.OsmDeployment, why string) outcome {
	entries := obj.Status.Inventory.NsInstances
	r.Eventf(obj, corev1.EventTypeWarning, gitopsv1alpha1.DeletionFailedReason,
		"%s; deletionPolicy %s lets the OsmDeployment go: %d NS instance(s) may still run in OSM: %s",
		why, obj.GetDeletionPolicy(), len(entries), describeInstances(entries))
	r.release(obj)
	return done(0)
}

// orphanedBecause says why a deletion leaves the NS instances running.
func orphanedBecause(obj *gitopsv1alpha1.OsmDeployment) string {
	switch {
	case obj.Spec.Suspend:
		return "deleted while suspended"
	case obj.GetDeletionPolicy() == gitopsv1alpha1.DeletionPolicyMirrorPrune:
		return "deleted without prune (deletionPolicy MirrorPrune)"
	}
	return "deleted with deletionPolicy " + string(obj.GetDeletionPolicy())
}

// describeInstances names NS instances with their OSM id and state, at most maxEventNames of them.
func describeInstances(entries []gitopsv1alpha1.NsInstanceEntry) string {
	described := make([]string, 0, len(entries))
	for _, e := range entries {
		id := e.ID
		if id == "" {
			id = "no id yet"
		}
		described = append(described, fmt.Sprintf("%s (%s, %s)", e.Name, id, e.State))
	}
	return listNames(described)
}

// release drops what the process holds for the OsmDeployment, and its finalizer (its claims
// are released with it, in actForState).
func (r *OsmDeploymentReconciler) release(obj *gitopsv1alpha1.OsmDeployment) {
	r.forget(client.ObjectKeyFromObject(obj))
	controllerutil.RemoveFinalizer(obj, gitopsv1alpha1.OsmDeploymentFinalizer)
}

// forget drops what the process holds for an OsmDeployment: its use of a cached revision and
// the values of its Secrets.
func (r *OsmDeploymentReconciler) forget(key types.NamespacedName) {
	r.revisions.forget(key)
	r.secrets.forget(key)
}

func notFoundOr(err error) string {
	if apierrors.IsNotFound(err) {
		return "not found"
	}
	return err.Error()
}
