package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fluxcd/cli-utils/pkg/flowcontrol"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	runtimectrl "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/controller"
	"github.com/osmops/osmops/internal/nameclaims"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmconn"
	"github.com/osmops/osmops/internal/testing/artifactserver"
	"github.com/osmops/osmops/internal/testing/osmtenant"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// OperatorOptions configure the reconcilers under test, as cmd/main.go's flags would.
type OperatorOptions struct {
	// OperationPollInterval is how often pending OSM operations are checked, and
	// OperationPollMinInterval the poll schedule's short wait (0: the manager's default).
	OperationPollInterval    time.Duration
	OperationPollMinInterval time.Duration
	// MaxConcurrentReconciles is --concurrent: reconciles at once, per kind.
	MaxConcurrentReconciles int
	// KubeAPIQPS and KubeAPIBurst bound the reconcilers' requests to the API server, as
	// --kube-api-qps and --kube-api-burst do: where it has no priority and fairness only
	// (clientLimit).
	KubeAPIQPS   float32
	KubeAPIBurst int
	// AnswerMemory is --max-nbi-answer-memory: the bytes OSM's list answers may hold in one
	// reconcile (none when 0).
	AnswerMemory int64
	// Log receives the reconcilers' error logs.
	Log io.Writer
}

// Operator is the real OsmCluster and OsmDeployment reconcilers in a controller-runtime manager
// against an envtest API server, with an artifact server that stands for source-controller's.
type Operator struct {
	env       *envtest.Environment
	log       *mutableWriter
	logger    logr.Logger // the manager's and the reconcilers', to log: not the process's, set once
	client    client.Client
	artifacts *artifactserver.Server
	watch     *deploymentWatch
	apiCalls  *apiCalls
	// unlimited: the API server has priority and fairness, and the manager no client-side
	// limiter (clientLimit).
	unlimited bool
	stop      context.CancelFunc
	stopped   chan error
}

// driverQPS leaves the benchmark's own requests to the API server unthrottled: it must never
// be what the operator waits for.
const driverQPS = -1

// StartOperator starts envtest (kube-apiserver and etcd) with the CRDs, and the manager.
func StartOperator(ctx context.Context, opts OperatorOptions) (*Operator, error) {
	log := &mutableWriter{out: opts.Log}
	processLog().follow(log)
	env, err := testenv.NewEnvironment()
	if err != nil {
		return nil, err
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	o := &Operator{env: env, log: log, logger: newLogger(log), artifacts: artifactserver.NewServer(), stopped: make(chan error, 1)}
	if err := o.start(ctx, cfg, testenv.NewScheme(), opts); err != nil {
		o.artifacts.Close()
		_ = env.Stop()
		return nil, err
	}
	return o, nil
}

func (o *Operator) start(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, opts OperatorOptions) error {
	driverConfig := rest.CopyConfig(cfg)
	driverConfig.QPS = driverQPS
	var err error
	if o.client, err = client.New(driverConfig, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	operatorConfig := rest.CopyConfig(cfg)
	operatorConfig.QPS, operatorConfig.Burst, o.unlimited = clientLimit(ctx, cfg, opts.KubeAPIQPS, opts.KubeAPIBurst)
	o.apiCalls = newAPICalls()
	operatorConfig.Wrap(o.apiCalls.wrap)
	leases, claims := nameclaims.Cache(metav1.NamespaceDefault)
	mgr, err := ctrl.NewManager(operatorConfig, ctrl.Options{
		Scheme: scheme,
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{leases: claims},
			DefaultTransform: cache.TransformStripManagedFields()}, // as cmd/main.go
		Logger:                 o.logger,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		return err
	}
	if err := controller.SetupIndexes(ctx, mgr); err != nil {
		return err
	}
	recorder, err := events.NewRecorder(mgr, o.logger, "", "osmops")
	if err != nil {
		return err
	}
	o.watch = newDeploymentWatch()
	connections := &osmconn.Pool{Reader: mgr.GetAPIReader()}
	// As cmd/main.go: Flux's back-off on errors, with its default delays.
	// The closeness runs start a manager of their own once the first stopped, in the same process:
	// controller-runtime refuses a controller name it registered before unless told not to check.
	controllerOptions := ctrlcontroller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, RateLimiter: runtimectrl.GetDefaultRateLimiter(),
		SkipNameValidation: new(true)}
	if err := (&controller.OsmClusterReconciler{Client: mgr.GetClient(), EventRecorder: recorder, Connections: connections, AnswerMemory: opts.AnswerMemory}).
		SetupWithManager(mgr, controllerOptions); err != nil {
		return err
	}
	if err := (&controller.OsmDeploymentReconciler{
		Client: mgr.GetClient(), APIReader: &reconcileStarts{Reader: mgr.GetAPIReader(), watch: o.watch}, EventRecorder: recorder, ClaimsNamespace: metav1.NamespaceDefault, Connections: connections, NoCrossNamespaceRefs: true,
		RequeueDependency: 30 * time.Second, OperationPollInterval: opts.OperationPollInterval,
		OperationPollMinInterval: opts.OperationPollMinInterval, OwnerIdentity: "bench", AnswerMemory: opts.AnswerMemory,
	}).SetupWithManager(mgr, controllerOptions); err != nil {
		return err
	}
	informer, err := mgr.GetCache().GetInformer(ctx, &gitopsv1alpha1.OsmDeployment{})
	if err != nil {
		return err
	}
	if _, err := informer.AddEventHandler(o.watch); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), o.logger))
	o.stop = cancel
	go func() { o.stopped <- mgr.Start(runCtx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return errors.New("the manager's cache did not sync")
	}
	return nil
}

// clientLimit is the client-side limit of API server requests the manager runs with against the
// API server of cfg, as cmd/main.go's runtimeclient.GetConfigOrDie (Flux's) sets it, which reads
// a kubeconfig and so cannot be given envtest's config: none where the API server has priority
// and fairness (every supported Kubernetes, envtest's too), which then bounds the manager's
// requests; qps and burst elsewhere, or when the API server does not answer the check.
func clientLimit(ctx context.Context, cfg *rest.Config, qps float32, burst int) (float32, int, bool) {
	if enabled, err := flowcontrol.IsEnabled(ctx, cfg); err == nil && enabled {
		return -1, -1, true
	}
	return qps, burst, false
}

// ClientUnlimited tells whether the manager runs without a client-side limiter of API server
// requests: the API server has priority and fairness, and --kube-api-qps does not apply.
func (o *Operator) ClientUnlimited() bool { return o.unlimited }

// MuteLogs drops the reconcilers' logs from now on: once the benchmark stops measuring a
// tenant and its simulator, its reconciles only log failures to reach it.
func (o *Operator) MuteLogs() { o.log.muted.Store(true) }

// Stop ends the manager, the artifact server and envtest; the reconciles cut short are not
// logged.
func (o *Operator) Stop() error {
	o.MuteLogs()
	o.stop()
	err := <-o.stopped
	o.artifacts.Close()
	return errors.Join(err, o.env.Stop())
}

// TenantOptions configure a tenant's OsmCluster.
type TenantOptions struct {
	Namespace   string
	NBI         string
	Credentials osm.Credentials
	// MaxConcurrentRequests is the OsmCluster's bound on requests in flight.
	MaxConcurrentRequests int
}

// Tenant is a namespace with a Ready OsmCluster named osm, whose NBI is a simulator.
type Tenant struct {
	op        *Operator
	namespace string
}

// quietInterval is the interval of the benchmark's objects: long enough that no periodic
// reconcile happens during a run unless a scenario asks for one.
const quietInterval = time.Hour

// NewTenant creates the namespace, the credentials Secret and the OsmCluster, and waits until
// the OsmCluster is Ready.
func (o *Operator) NewTenant(ctx context.Context, opts TenantOptions) (*Tenant, error) {
	cluster := osmtenant.Cluster(opts.Namespace, opts.NBI)
	cluster.Spec.Project = opts.Credentials.Project
	cluster.Spec.MaxConcurrentRequests = int32(opts.MaxConcurrentRequests)
	cluster.Spec.Interval = &metav1.Duration{Duration: quietInterval}
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace}},
		osmtenant.CredentialsSecret(opts.Namespace, opts.Credentials.Username, opts.Credentials.Password),
		cluster,
	}
	for _, obj := range objects {
		if err := o.client.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	if err := osmtenant.WaitClusterReady(ctx, o.client, cluster, time.Minute); err != nil {
		return nil, err
	}
	return &Tenant{op: o, namespace: opts.Namespace}, nil
}

// Publish makes the GitRepository repo point at an artifact of files, as source-controller
// does for a new commit (creating the GitRepository the first time), and returns the revision.
func (t *Tenant) Publish(ctx context.Context, repo string, files map[string]string) (string, error) {
	artifact, err := t.publish(ctx, repo, files)
	if err != nil {
		return "", err
	}
	return artifact.Revision, nil
}

// publish is Publish, returning the whole artifact.
func (t *Tenant) publish(ctx context.Context, repo string, files map[string]string) (*meta.Artifact, error) {
	artifact := t.op.artifacts.PublishFiles(t.namespace+"/"+repo, files)
	return artifact, osmtenant.SetArtifact(ctx, t.op.client, sourcev1.GitRepositoryKind, t.namespace, repo, artifact)
}

// CreateDeployment creates an OsmDeployment of the GitRepository repo, with prune, that
// substitutes the variables of substitute (none when nil). Its deletionPolicy is Orphan: the
// benchmark deletes OsmDeployments only to make room for the next run, and leaves OSM as it is.
func (t *Tenant) CreateDeployment(ctx context.Context, name, repo string, substitute map[string]string) error {
	d := osmtenant.Deployment(t.namespace, name, repo)
	d.Spec.Interval = &metav1.Duration{Duration: quietInterval}
	d.Spec.Prune = true
	d.Spec.DeletionPolicy = gitopsv1alpha1.DeletionPolicyOrphan
	if substitute != nil {
		d.Spec.PostBuild = &gitopsv1alpha1.PostBuild{Substitute: substitute}
	}
	return t.op.client.Create(ctx, d)
}

// RemoveDeployments deletes the tenant's OsmDeployments and GitRepositories, and waits until
// the OsmDeployments are gone, the reconciler having let them go (and dropped what it held for
// them).
func (t *Tenant) RemoveDeployments(ctx context.Context) error {
	for _, list := range []client.Object{&gitopsv1alpha1.OsmDeployment{}, &sourcev1.GitRepository{}} {
		if err := t.op.client.DeleteAllOf(ctx, list, client.InNamespace(t.namespace)); err != nil {
			return fmt.Errorf("deleting the %T objects of %s: %w", list, t.namespace, err)
		}
	}
	return t.op.watch.waitUntil(ctx, func(seen observed) bool {
		for key := range seen.latest {
			if key.Namespace == t.namespace {
				return false
			}
		}
		return true
	})
}

// WaitApplied waits until the OsmDeployment is Ready with revision applied; when the wait ends
// first, the error says what its Ready condition said.
func (t *Tenant) WaitApplied(ctx context.Context, name, revision string) error {
	key := types.NamespacedName{Namespace: t.namespace, Name: name}
	if err := t.op.watch.waitUntil(ctx, func(seen observed) bool { return applied(seen.latest[key], revision) }); err != nil {
		return fmt.Errorf("%w (%s)", err, t.readiness(name, true))
	}
	return nil
}

// WaitAllApplied waits until every OsmDeployment of the tenant is Ready with the revision that
// revisions gives for its name, and returns how many are when it ends. Each wake looks at the
// names not seen applied yet, up to the first that still is not: a wake of the watch (one per
// reconcile and status change) that scanned every OsmDeployment of a fleet of 1,000 took a tenth
// of the process's CPU, under the lock that each reconcile's start takes. The fleet's
// OsmDeployments stay applied once they are (nothing changes them meanwhile); the count at the
// end looks at all of them.
func (t *Tenant) WaitAllApplied(ctx context.Context, revisions map[string]string) (int, error) {
	isApplied := func(seen observed, name string) bool {
		return applied(seen.latest[types.NamespacedName{Namespace: t.namespace, Name: name}], revisions[name])
	}
	pending := slices.Sorted(maps.Keys(revisions))
	err := t.op.watch.waitUntil(ctx, func(seen observed) bool {
		for len(pending) > 0 && isApplied(seen, pending[0]) {
			pending = pending[1:]
		}
		return len(pending) == 0
	})
	ready := 0
	t.op.watch.read(func(seen observed) {
		for name := range revisions {
			if isApplied(seen, name) {
				ready++
			}
		}
	})
	return ready, err
}

// RequestReconcile sets the reconcile.fluxcd.io/requestedAt annotation, as `flux reconcile`
// does, and waits until the OsmDeployment has handled the request and is Ready again.
func (t *Tenant) RequestReconcile(ctx context.Context, name string) error {
	token := time.Now().Format(time.RFC3339Nano)
	key := types.NamespacedName{Namespace: t.namespace, Name: name}
	patch := client.RawPatch(types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, meta.ReconcileRequestAnnotation, token))
	if err := t.op.client.Patch(ctx, &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: t.namespace}}, patch); err != nil {
		return err
	}
	return t.op.watch.waitUntil(ctx, func(seen observed) bool {
		d := seen.latest[key]
		return d != nil && d.Status.LastHandledReconcileAt == token && conditions.IsReady(d)
	})
}

// SetInterval changes the OsmDeployment's interval and waits until the reconcile that the
// change triggers is over, and the OsmCluster's (which counts the OsmDeployments that use it).
func (t *Tenant) SetInterval(ctx context.Context, name string, interval time.Duration) error {
	clusterBefore, err := ClusterReconciles()
	if err != nil {
		return err
	}
	before, err := t.Reconciles(name)
	if err != nil {
		return err
	}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"interval":%q}}`, interval.String()))
	d := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: t.namespace}}
	if err := t.op.client.Patch(ctx, d, patch); err != nil {
		return err
	}
	key := types.NamespacedName{Namespace: t.namespace, Name: name}
	err = t.op.watch.waitUntil(ctx, func(seen observed) bool {
		got := seen.latest[key]
		return got != nil && got.Status.ObservedGeneration == d.Generation && conditions.IsReady(got)
	})
	if err != nil {
		return err
	}
	// The reconciler records its metric after writing the status.
	if err := waitForReconciles(ctx, deploymentReconcilesMetric, deploymentLabels(t.namespace, name), before.Count+1); err != nil {
		return err
	}
	return t.WaitClusterReconciled(ctx, clusterBefore)
}

// WaitDriftCheck waits for the next reconcile of the OsmDeployment after before (the periodic
// one, when nothing else triggers any) to end, and returns how long it took and the process's
// CPU time from its start to the moment the benchmark saw it end: the idle wait for it is
// left out.
func (t *Tenant) WaitDriftCheck(ctx context.Context, name string, before ReconcileCount) (wall, cpu time.Duration, err error) {
	key := types.NamespacedName{Namespace: t.namespace, Name: name}
	var started reconcileStart
	err = t.op.watch.waitUntil(ctx, func(seen observed) bool {
		started = seen.starts[key]
		return started.count > before.Started
	})
	if err != nil {
		return 0, 0, err
	}
	labels := deploymentLabels(t.namespace, name)
	if err := waitForReconciles(ctx, deploymentReconcilesMetric, labels, before.Count+1); err != nil {
		return 0, 0, err
	}
	cpu = cpuTime() - started.cpu
	after, err := metricCount(deploymentReconcilesMetric, labels)
	if err != nil {
		return 0, 0, err
	}
	return time.Duration((after.Seconds - before.Seconds) * float64(time.Second)), cpu, nil
}

// Reconciles returns how many reconciles of the OsmDeployment have started and ended so far,
// and their total duration.
func (t *Tenant) Reconciles(name string) (ReconcileCount, error) {
	count, err := metricCount(deploymentReconcilesMetric, deploymentLabels(t.namespace, name))
	count.Started = t.op.watch.started(types.NamespacedName{Namespace: t.namespace, Name: name})
	return count, err
}

// WaitClusterReconciled waits until the OsmCluster reconciler has run after count.
func (t *Tenant) WaitClusterReconciled(ctx context.Context, count ReconcileCount) error {
	return waitForReconciles(ctx, clusterReconcilesMetric, clusterReconcilesLabels, count.Count+1)
}

// ClusterReconciles returns the OsmCluster reconciler's count of reconciles so far.
func ClusterReconciles() (ReconcileCount, error) {
	return metricCount(clusterReconcilesMetric, clusterReconcilesLabels)
}

// applied tells whether an OsmDeployment is Ready with revision applied.
func applied(d *gitopsv1alpha1.OsmDeployment, revision string) bool {
	return d != nil && d.Status.LastAppliedRevision == revision && conditions.IsReady(d)
}

// deploymentWatch keeps the informer's latest copy of every OsmDeployment, and counts the
// reconciles that start, and wakes the waiters on each change, so that a wait ends as soon as
// the status says so, without polling the API server (which would add to the operator's
// figures).
type deploymentWatch struct {
	mu   sync.Mutex
	seen observed
	// changed is closed, and replaced, on each change.
	changed chan struct{}
}

// observed is what the watch saw; waiters must only read it (the objects are the informer's).
type observed struct {
	latest map[types.NamespacedName]*gitopsv1alpha1.OsmDeployment
	// starts counts the reconciles begun, by OsmDeployment.
	starts map[types.NamespacedName]reconcileStart
}

// reconcileStart counts the reconciles begun and notes the process's CPU time at the last one.
type reconcileStart struct {
	count int
	cpu   time.Duration
}

func newDeploymentWatch() *deploymentWatch {
	return &deploymentWatch{
		seen:    observed{latest: map[types.NamespacedName]*gitopsv1alpha1.OsmDeployment{}, starts: map[types.NamespacedName]reconcileStart{}},
		changed: make(chan struct{}),
	}
}

// OnAdd records an added OsmDeployment.
func (w *deploymentWatch) OnAdd(obj any, _ bool) { w.record(obj) }

// OnUpdate records a changed OsmDeployment.
func (w *deploymentWatch) OnUpdate(_, obj any) { w.record(obj) }

// OnDelete forgets a deleted OsmDeployment.
func (w *deploymentWatch) OnDelete(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if d, ok := obj.(*gitopsv1alpha1.OsmDeployment); ok {
		w.update(func(seen observed) { delete(seen.latest, types.NamespacedName{Namespace: d.Namespace, Name: d.Name}) })
	}
}

var _ toolscache.ResourceEventHandler = (*deploymentWatch)(nil)

func (w *deploymentWatch) record(obj any) {
	if d, ok := obj.(*gitopsv1alpha1.OsmDeployment); ok {
		w.update(func(seen observed) { seen.latest[types.NamespacedName{Namespace: d.Namespace, Name: d.Name}] = d })
	}
}

// start counts a reconcile that begins.
func (w *deploymentWatch) start(key types.NamespacedName) {
	cpu := cpuTime()
	w.update(func(seen observed) { seen.starts[key] = reconcileStart{count: seen.starts[key].count + 1, cpu: cpu} })
}

// latest is the watch's latest copy of an OsmDeployment, nil when it has none.
func (w *deploymentWatch) latest(key types.NamespacedName) *gitopsv1alpha1.OsmDeployment {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen.latest[key]
}

func (w *deploymentWatch) started(key types.NamespacedName) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen.starts[key].count
}

func (w *deploymentWatch) update(change func(observed)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	change(w.seen)
	close(w.changed)
	w.changed = make(chan struct{})
}

// read calls f with what the watch saw.
func (w *deploymentWatch) read(f func(observed)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(w.seen)
}

// waitUntil waits until done holds for what the watch saw.
func (w *deploymentWatch) waitUntil(ctx context.Context, done func(observed) bool) error {
	for {
		w.mu.Lock()
		finished, changed := done(w.seen), w.changed
		w.mu.Unlock()
		if finished {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// reconcileStarts is the OsmDeployment reconciler's API reader: it passes everything through
// and tells the watch when a reconcile starts, which it does by reading its OsmDeployment.
type reconcileStarts struct {
	client.Reader
	watch *deploymentWatch
}

// Get reads an object, counting the reads of OsmDeployments.
func (c *reconcileStarts) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*gitopsv1alpha1.OsmDeployment); ok {
		c.watch.start(key)
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

// newLogger logs the errors to w.
func newLogger(w io.Writer) logr.Logger {
	return zap.New(zap.WriteTo(w), zap.Level(zapcore.ErrorLevel))
}

// processLog is the writer of controller-runtime's process-wide logger, which its package-level
// loggers (the cache's, the sources', envtest's) write to and no manager option reaches:
// ctrl.SetLogger takes effect once per process, so it is set once, to a writer that follows the
// operator started last.
var processLog = sync.OnceValue(func() *followingWriter {
	w := &followingWriter{}
	ctrl.SetLogger(newLogger(w))
	return w
})

// followingWriter writes to the writer it last followed (nowhere before the first).
type followingWriter struct {
	current atomic.Pointer[mutableWriter]
}

func (w *followingWriter) follow(to *mutableWriter) { w.current.Store(to) }

func (w *followingWriter) Write(p []byte) (int, error) {
	if to := w.current.Load(); to != nil {
		return to.Write(p)
	}
	return len(p), nil
}

// mutableWriter passes writes through until it is muted.
type mutableWriter struct {
	out   io.Writer
	muted atomic.Bool
}

func (w *mutableWriter) Write(p []byte) (int, error) {
	if w.muted.Load() {
		return len(p), nil
	}
	return w.out.Write(p)
}
