package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/jitter"
	"github.com/fluxcd/pkg/runtime/predicates"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	kuberecorder "k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmconn"
	"github.com/osmops/osmops/internal/printable"
)

// OsmClusterFinalizer holds an OsmCluster back from deletion while OsmDeployments use it.
const OsmClusterFinalizer = "finalizers.gitops.osmops.io"

// clusterRetryInterval is the wait before checking again an NBI that did not answer.
const clusterRetryInterval = 30 * time.Second

// OsmClusterReconciler checks an OSM NBI endpoint with the client of the connection pool, and
// reports whether OSM answers and accepts the credentials.
type OsmClusterReconciler struct {
	client.Client
	kuberecorder.EventRecorder
	// Connections is the pool of NBI clients the OsmDeployment reconciler shares.
	Connections *osmconn.Pool
	// SecretPollInterval is how often the credentials and CA Secrets are read again.
	SecretPollInterval time.Duration
	// MinInterval is the shortest spec.interval obeyed (--min-interval; none when 0).
	MinInterval time.Duration
	// Share bounds the workers one namespace holds (none when nil).
	Share *NamespaceShare
	// AnswerMemory bounds the memory OSM's list answers hold in one reconcile (none when 0).
	AnswerMemory int64
	// ExpiryWarning is how long before OSM expires the user's password or account the
	// OsmCluster warns (CredentialsExpiring); DefaultCredentialsExpiryWarning when 0.
	ExpiryWarning time.Duration
	// Clock tells the time the expiries are compared with; the real clock when nil.
	Clock clock.PassiveClock
	// Jitter spreads every requeue (outcome.result), the Secret polls among them; Flux's
	// interval jitter when nil.
	Jitter jitter.Duration
}

// +kubebuilder:rbac:groups=gitops.osmops.io,resources=osmclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=gitops.osmops.io,resources=osmclusters/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the reconciler: OsmClusters, and the OsmDeployments that use them
// (to keep the count and to release a deletion waiting for them).
// SetupIndexes must have registered the index of OsmDeployments by OsmCluster.
func (r *OsmClusterReconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	if _, wrapped := r.EventRecorder.(deploymentEvents); !wrapped {
		r.EventRecorder = deploymentEvents{EventRecorder: r.EventRecorder}
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&gitopsv1alpha1.OsmCluster{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicates.ReconcileRequestedPredicate{}))).
		Watches(&gitopsv1alpha1.OsmDeployment{}, handler.EnqueueRequestsFromMapFunc(clusterOfDeployment),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(opts).
		Complete(r)
}

// clusterOfDeployment maps an OsmDeployment to the OsmCluster it uses.
func clusterOfDeployment(_ context.Context, obj client.Object) []reconcile.Request {
	d, ok := obj.(*gitopsv1alpha1.OsmDeployment)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: d.Namespace, Name: d.Spec.ClusterRef.Name}}}
}

// Reconcile checks one OsmCluster.
func (r *OsmClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	release, later, ok := r.Share.acquire(req.Namespace)
	if !ok {
		return later, nil
	}
	defer release()
	ctx = osmconn.WithAnswerBudget(ctx, r.AnswerMemory)
	obj := &gitopsv1alpha1.OsmCluster{}
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.Connections.Evict(req.NamespacedName) // gone without its finalizer, removed by hand
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	patcher := newSerialPatcher(obj, r.Client)
	defer func() {
		obj.Status.ObservedGeneration = obj.Generation
		boundMessages(obj.Status.Conditions)
		if err := patcher.Patch(ctx, obj); err != nil {
			retErr = kerrors.NewAggregate([]error{retErr, client.IgnoreNotFound(err)})
		}
	}()
	return r.reconcileOsmCluster(ctx, obj).conclude(obj, jitterOr(r.Jitter))
}

// reconcileOsmCluster counts the OsmDeployments that use the OsmCluster, then holds its
// deletion back or checks its connection.
func (r *OsmClusterReconciler) reconcileOsmCluster(ctx context.Context, obj *gitopsv1alpha1.OsmCluster) outcome {
	users, err := r.users(ctx, obj)
	if err != nil {
		return retrying(err)
	}
	obj.Status.Deployments = int32(len(users))

	if !obj.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(obj, users)
	}
	controllerutil.AddFinalizer(obj, OsmClusterFinalizer)
	requested := obj.Status.ObservedGeneration != obj.Generation
	if v, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		requested = requested || v != obj.Status.LastHandledReconcileAt
		obj.Status.SetLastHandledReconcileRequest(v)
	}
	return r.reconcileConnection(ctx, obj, requested)
}

// reconcileDelete holds the deletion back while OsmDeployments use the OsmCluster: they take
// its client from the pool to terminate their NS instances, even after its Secret is gone.
// The condition and a Warning event (when the holders change) name them, the first
// maxEventNames and how many more.
func (r *OsmClusterReconciler) reconcileDelete(obj *gitopsv1alpha1.OsmCluster, users []string) outcome {
	if len(users) > 0 {
		msg := fmt.Sprintf("deletion waiting for %s %s: %d OsmDeployment(s) still use this OsmCluster",
			gitopsv1alpha1.OsmDeploymentKind, listNames(users), len(users))
		if conditions.GetMessage(obj, meta.ReadyCondition) != msg {
			r.Eventf(obj, corev1.EventTypeWarning, gitopsv1alpha1.InUseReason, "%s", msg)
		}
		return concluded(0, metav1.ConditionFalse, gitopsv1alpha1.InUseReason, msg) // an OsmDeployment's deletion triggers a new reconcile
	}
	r.Connections.Evict(client.ObjectKeyFromObject(obj))
	controllerutil.RemoveFinalizer(obj, OsmClusterFinalizer)
	return done(0)
}

// reconcileConnection takes the OsmCluster's client from the pool (which builds it again when
// its settings or credentials changed), then checks OSM (read the version and VIM accounts, which
// proves the credentials) when a check is due: at once for a client not checked yet, whoever built it.
//
// The operator may only `get` Secrets, so it cannot watch them: instead it reads them every
// SecretPollInterval, which costs the NBI nothing unless they changed.
func (r *OsmClusterReconciler) reconcileConnection(ctx context.Context, obj *gitopsv1alpha1.OsmCluster, requested bool) outcome {
	key := client.ObjectKeyFromObject(obj)
	conn, err := r.Connections.Refresh(ctx, obj)
	if err != nil {
		var broken *osmconn.Error
		if !errors.As(err, &broken) {
			return retrying(err)
		}
		return r.notReady(obj, r.secretPollInterval(), broken.Reason, broken.Message)
	}
	unchecked := !conn.Checked()
	if unchecked && obj.Spec.InsecureSkipTLSVerify {
		r.Eventf(obj, corev1.EventTypeWarning, gitopsv1alpha1.InsecureTLSReason,
			"TLS verification of %s is off (insecureSkipTLSVerify): use caSecretRef outside labs", obj.Spec.URL)
	}
	last := conditions.GetReason(obj, meta.ReadyCondition)
	if !unchecked && !requested && (last == gitopsv1alpha1.AuthenticationFailedReason || r.untilNextCheck(obj, last) > 0) {
		// After a refused login only new credentials or a person's request try again: OSM locks
		// an account after a few failed logins, and a periodic retry would lock it.
		return done(r.secretPollInterval())
	}
	checker, ok := conn.NBI.(healthChecker)
	if !ok {
		return retrying(fmt.Errorf("the NBI client of %s cannot be health-checked", key))
	}
	if requested {
		checker.AllowLogin()
	}
	version, vims, err := checkHealth(ctx, checker)
	conn.MarkChecked()
	now := metav1.Now()
	obj.Status.LastCheckedAt = &now
	identity := checker.ProjectID()
	if err == nil && identity == "" {
		// Which OSM answered is what it says at login: without it, ownership cannot be checked.
		err = errors.New("the NBI's login answer names no project id (project_id) that identifies an OSM project")
	}
	if err != nil {
		reason, message := healthFailureReason(err), err.Error()
		if reason == gitopsv1alpha1.AuthenticationFailedReason {
			message += "; osmops will not log in again until the credentials Secret or the spec changes, " +
				"or a reconcile is requested, as OSM locks an account after repeated failed logins"
		}
		return r.notReady(obj, min(r.untilNextCheck(obj, reason), r.secretPollInterval()), reason, message)
	}
	obj.Status.OSMIdentity = identity
	obj.Status.OSMVersion = shownText(version)
	obj.Status.VIMAccounts = shownVIMAccounts(vims)
	r.reportExpiry(ctx, obj, checker)
	return concluded(min(r.interval(obj), r.secretPollInterval()), metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason,
		fmt.Sprintf("OSM %s answers at %s; %d VIM account(s)", obj.Status.OSMVersion, obj.Spec.URL, len(vims)))
}

// untilNextCheck is the time until the next health check of the NBI after one that ended with
// Ready's reason: every interval, and every clusterRetryInterval while it is unreachable.
func (r *OsmClusterReconciler) untilNextCheck(obj *gitopsv1alpha1.OsmCluster, reason string) time.Duration {
	if obj.Status.LastCheckedAt == nil {
		return 0
	}
	every := r.interval(obj)
	switch reason {
	case gitopsv1alpha1.UnreachableReason, gitopsv1alpha1.LoginHeldBackReason:
		every = min(every, clusterRetryInterval)
	}
	return time.Until(obj.Status.LastCheckedAt.Add(every))
}

func (r *OsmClusterReconciler) secretPollInterval() time.Duration {
	if r.SecretPollInterval > 0 {
		return r.SecretPollInterval
	}
	return osmconn.DefaultSecretPollInterval
}

// notReady concludes Ready=False, looked at again after after, with a Warning event when the
// reason is new (not one per retry of the same failure).
func (r *OsmClusterReconciler) notReady(obj *gitopsv1alpha1.OsmCluster, after time.Duration, reason, message string) outcome {
	if conditions.GetReason(obj, meta.ReadyCondition) != reason {
		r.Eventf(obj, corev1.EventTypeWarning, reason, "%s", message)
	}
	return concluded(after, metav1.ConditionFalse, reason, message)
}

// healthChecker is what the OsmCluster reconciler asks of an NBI client.
type healthChecker interface {
	AllowLogin()
	// ProjectID is the id of the project OSM logged the client in to: the OSM's identity.
	ProjectID() string
	Version(ctx context.Context) (*osm.Version, error)
	ListVIMAccounts(ctx context.Context) ([]osm.VIMAccount, error)
	UserExpiry(ctx context.Context) (osm.UserExpiry, error)
}

// checkHealth reads OSM's version and VIM accounts. The VIM accounts read needs a token, so it
// proves the credentials with the client's token while that is valid: the client logs in only when it has
// none, when it expires, or when OSM refuses it (401). A login per check would cost OSM a bcrypt
// hash and leave one more live token each interval.
func checkHealth(ctx context.Context, nbi healthChecker) (string, []string, error) {
	version, err := nbi.Version(ctx)
	if err != nil {
		return "", nil, err
	}
	vims, err := nbi.ListVIMAccounts(ctx)
	if err != nil {
		return "", nil, err
	}
	names := make([]string, 0, len(vims))
	for _, v := range vims {
		names = append(names, v.Name)
	}
	slices.Sort(names)
	return version.Version, names, nil
}

// The bounds of what the status shows of the NBI's version and VIM account names: real ones
// are short, and a project sees a few accounts. The NBI is the tenant's: unbounded, its answer
// would make every status write larger than the API server takes. The Ready message counts
// every account.
const (
	maxStatusTextBytes   = 256
	maxStatusVIMAccounts = 100
)

// shownText is text of an NBI answer as the status shows it: escaped, cut to maxStatusTextBytes.
func shownText(text string) string { return cut(printable.String(text), maxStatusTextBytes) }

// shownVIMAccounts are the first maxStatusVIMAccounts names, each as shownText shows it.
func shownVIMAccounts(names []string) []string {
	shown := make([]string, min(len(names), maxStatusVIMAccounts))
	for i := range shown {
		shown[i] = shownText(names[i])
	}
	return shown
}

// healthFailureReason classifies a failed health check for a person to act on.
func healthFailureReason(err error) string {
	switch {
	case osm.IsCertificateError(err):
		return gitopsv1alpha1.TLSErrorReason
	case osm.IsLoginBudgetSpent(err):
		return gitopsv1alpha1.LoginHeldBackReason
	case osm.IsUnauthorized(err):
		return gitopsv1alpha1.AuthenticationFailedReason
	}
	return gitopsv1alpha1.UnreachableReason
}

// users returns the names of the OsmDeployments that reference the OsmCluster.
func (r *OsmClusterReconciler) users(ctx context.Context, obj *gitopsv1alpha1.OsmCluster) ([]string, error) {
	var list gitopsv1alpha1.OsmDeploymentList
	if err := r.List(ctx, &list, client.InNamespace(obj.Namespace),
		client.MatchingFields{clusterRefIndex: obj.Name}); err != nil {
		return nil, fmt.Errorf("listing the OsmDeployments of %s: %w", obj.Name, err)
	}
	names := make([]string, len(list.Items))
	for i, d := range list.Items {
		names[i] = d.Name
	}
	return names, nil
}
