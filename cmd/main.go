// Command manager runs the osmops operator: the OsmCluster and OsmDeployment reconcilers.
//
// It only turns flags into the options of the reconcilers (internal/controller) and of the NBI
// client (internal/osm): no reconcile logic lives here, and it must not import the simulator or
// the test harness (internal/nbisim, internal/testing).
package main

import (
	"crypto/tls"
	goflag "flag"
	"fmt"
	"os"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/acl"
	runtimeclient "github.com/fluxcd/pkg/runtime/client"
	runtimectrl "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	"github.com/fluxcd/pkg/runtime/jitter"
	"github.com/fluxcd/pkg/runtime/leaderelection"
	"github.com/fluxcd/pkg/runtime/logger"
	"github.com/fluxcd/pkg/runtime/probes"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	flag "github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/controller"
	"github.com/osmops/osmops/internal/nameclaims"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmconn"
	"github.com/osmops/osmops/internal/pipeline"
)

// controllerName names the operator in events, leader election and field managers.
const controllerName = "osmops"

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(sourcev1.AddToScheme(scheme))
	utilruntime.Must(gitopsv1alpha1.AddToScheme(scheme))
}

// options are the manager's command-line settings.
type options struct {
	metricsAddr, healthAddr, eventsAddr string
	ownerIdentity                       string
	metricsSecure, enableHTTP2          bool
	concurrent, concurrentPerNamespace  int
	maxNBIRequestTimeout                time.Duration
	maxNBIAnswerMemory                  int64
	reconcileTimeout                    time.Duration
	requeueDependency                   time.Duration
	minInterval                         time.Duration
	operationPollInterval               time.Duration
	operationPollMinInterval            time.Duration
	secretPollInterval                  time.Duration
	credentialsExpiryWarning            time.Duration
	client                              runtimeclient.Options
	log                                 logger.Options
	leaderElection                      leaderelection.Options
	acl                                 acl.Options
	watch                               runtimectrl.WatchOptions
	rateLimiter                         runtimectrl.RateLimiterOptions
	jitter                              jitter.IntervalOptions
}

func (o *options) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443",
		"The address the metrics endpoint binds to; '0' disables it.")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS with authentication and authorization by the API server; false serves plain HTTP.")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Serve the metrics endpoint with HTTP/2 (off by default: HTTP/2 Rapid Reset and Stream Cancellation CVEs).")
	fs.StringVar(&o.healthAddr, "health-probe-bind-address", ":8081",
		"The address the liveness and readiness probes bind to.")
	fs.StringVar(&o.eventsAddr, "events-addr", "",
		"The address of a Flux notification-controller to forward events to (optional).")
	fs.StringVar(&o.ownerIdentity, "owner-identity", "",
		"The name of this operator installation in the owner markers it writes on NS instances in OSM: a DNS label that "+
			"starts with a letter, stable across restarts, different for each Kubernetes cluster that drives one OSM. "+
			"Empty: k8s- and the UID of the kube-system namespace.")
	fs.IntVar(&o.concurrent, "concurrent", 4,
		"The number of OsmDeployments and OsmClusters reconciled at once, each.")
	fs.IntVar(&o.concurrentPerNamespace, "concurrent-per-namespace", 0,
		"The number of OsmDeployments and OsmClusters of one namespace reconciled at once, each, so that one "+
			"tenant's unanswering OSMs cannot hold every worker; 0 means half of --concurrent (at least 1).")
	fs.DurationVar(&o.maxNBIRequestTimeout, "max-nbi-request-timeout", time.Minute,
		"The longest NBI request timeout an OsmCluster's spec.timeout may set.")
	fs.Int64Var(&o.maxNBIAnswerMemory, "max-nbi-answer-memory", 64<<20,
		"The bytes of memory the records of OSM's list answers may hold in one reconcile, so that the manager holds at most "+
			"its workers times this, whatever a tenant's OSM answers; raise it for OsmDeployments of many thousands of NS instances.")
	fs.DurationVar(&o.reconcileTimeout, "reconcile-timeout", 5*time.Minute,
		"The longest one reconcile may take; its requests to OSM are cancelled past it.")
	fs.DurationVar(&o.minInterval, "min-interval", controller.DefaultMinInterval,
		"The shortest spec.interval and spec.retryInterval of OsmDeployments and OsmClusters obeyed: a shorter one is read as this, "+
			"so that no tenant's spec makes the manager read its OSM more often.")
	fs.DurationVar(&o.requeueDependency, "requeue-dependency", 30*time.Second,
		"The wait before checking again an OsmDeployment whose dependencies are not Ready.")
	fs.DurationVar(&o.operationPollInterval, "operation-poll-interval", controller.DefaultOperationPollInterval,
		"How often the OSM operations of an OsmDeployment are checked while they run, at most: the longest wait of the poll schedule.")
	fs.DurationVar(&o.operationPollMinInterval, "operation-poll-min-interval", osmconn.DefaultOperationPollMinInterval,
		"The shortest wait of the poll schedule: operations are checked this often from when those of their type usually end on that OSM (learnt from those seen end), for one --operation-poll-interval (at most --operation-poll-interval).")
	fs.DurationVar(&o.secretPollInterval, "secret-poll-interval", osmconn.DefaultSecretPollInterval,
		"How often the OsmClusters' Secrets are read again (they are not watched).")
	fs.DurationVar(&o.credentialsExpiryWarning, "credentials-expiry-warning", controller.DefaultCredentialsExpiryWarning,
		"How long before OSM expires an OsmCluster's password or account it warns (condition CredentialsExpiring, a Warning event).")
	o.client.BindFlags(fs)
	// Flux's client configuration (runtimeclient.GetConfigOrDie) has no client-side limiter where
	// the API server has priority and fairness, as every supported Kubernetes has: its priority
	// levels bound the manager then. Where it has none, applying a revision writes an
	// OsmDeployment three times (pending creates, operations, Ready; and its finalizer the first
	// time) and each new NS instance name costs a Lease (its claim), under a limiter of its own:
	// at Flux's default of 50 queries per second, 1,000 OsmDeployments would wait a minute for
	// the limiter alone (docs/operations.md).
	setFlagDefault(fs, "kube-api-qps", "100")
	for _, name := range []string{"kube-api-qps", "kube-api-burst"} {
		fs.Lookup(name).Usage += " Applies only where the API server has no priority and fairness: where it has, the manager has no client-side limit."
	}
	o.log.BindFlags(fs)
	o.leaderElection.BindFlags(fs)
	o.acl.BindFlags(fs)
	// Flux's WatchOptions flags, bound here to say what they select for the operator.
	fs.BoolVar(&o.watch.AllNamespaces, "watch-all-namespaces", true,
		"Watch OsmClusters and OsmDeployments in all namespaces; false: only the runtime namespace.")
	fs.StringVar(&o.watch.LabelSelector, "watch-label-selector", "",
		"Reconcile only OsmClusters and OsmDeployments with matching labels (sharding), e.g. 'sharding.fluxcd.io/key=shard1'.")
	fs.StringVar(&o.watch.ConfigsLabelSelector, "watch-configs-label-selector", meta.LabelKeyWatch+"="+meta.LabelValueWatchEnabled,
		"Watch the ConfigMaps and Secrets with matching labels that valuesFrom and substituteFrom read: a change reconciles the OsmDeployments that read them at once (others are read again at the drift interval).")
	o.rateLimiter.BindFlags(fs)
	o.jitter.BindFlags(fs)
}

// setFlagDefault changes the default of a flag a library bound.
func setFlagDefault(fs *flag.FlagSet, name, value string) {
	f := fs.Lookup(name)
	f.DefValue = value
	if err := f.Value.Set(value); err != nil {
		panic(fmt.Sprintf("flag --%s: default %q: %v", name, value, err))
	}
}

func main() {
	var o options
	o.bindFlags(flag.CommandLine)
	flag.CommandLine.AddGoFlagSet(goflag.CommandLine) // --kubeconfig, from controller-runtime
	flag.Parse()
	ctrl.SetLogger(logger.NewLogger(o.log))
	if err := run(o); err != nil {
		setupLog.Error(err, "manager stopped")
		os.Exit(1)
	}
}

func run(o options) error {
	if err := o.jitter.SetGlobalJitter(controller.NewJitterRand()); err != nil {
		return fmt.Errorf("interval jitter: %w", err)
	}
	watchSelector, err := runtimectrl.GetWatchSelector(o.watch)
	if err != nil {
		return fmt.Errorf("watch label selector: %w", err)
	}
	var shard labels.Selector // nil: this process reconciles every OsmDeployment
	if o.watch.LabelSelector != "" {
		shard = watchSelector
	}

	var tlsOpts []func(*tls.Config)
	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOptions := metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.metricsSecure,
		TLSOpts:       tlsOpts,
	}
	if o.metricsSecure {
		metricsOptions.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	// The operator's own objects are sharded by label (as Flux does: several replicas, each
	// with --watch-label-selector). The data of Secrets and ConfigMaps is never cached: they are
	// read with `get`; the cache holds the metadata of the labelled ones only, for the watch
	// that reconciles the OsmDeployments reading them (internal/controller/values.go).
	configsSelector, err := labels.Parse(o.watch.ConfigsLabelSelector)
	if err != nil {
		return fmt.Errorf("--watch-configs-label-selector: %w", err)
	}
	cacheOptions := ctrlcache.Options{
		// Nothing reads the managedFields of a cached object; 10,000 claims would hold tens of MiB of them.
		DefaultTransform: ctrlcache.TransformStripManagedFields(),
		ByObject: map[ctrlclient.Object]ctrlcache.ByObject{
			&gitopsv1alpha1.OsmCluster{}:    {Label: watchSelector},
			&gitopsv1alpha1.OsmDeployment{}: {Label: watchSelector},
			&corev1.Secret{}:                {Label: configsSelector},
			&corev1.ConfigMap{}:             {Label: configsSelector},
		},
	}
	// The manager's namespace holds the claims of NS instance names, where tenants have no rights.
	runtimeNamespace := os.Getenv("RUNTIME_NAMESPACE")
	if runtimeNamespace == "" {
		return fmt.Errorf("the RUNTIME_NAMESPACE environment variable must name the manager's namespace, where the claims of NS instance names live")
	}
	if !o.watch.AllNamespaces {
		cacheOptions.DefaultNamespaces = map[string]ctrlcache.Config{runtimeNamespace: {}}
	}
	leases, claims := nameclaims.Cache(runtimeNamespace)
	cacheOptions.ByObject[leases] = claims

	restConfig := runtimeclient.GetConfigOrDie(o.client)
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsOptions,
		HealthProbeBindAddress:        o.healthAddr,
		LeaderElection:                o.leaderElection.Enable,
		LeaderElectionReleaseOnCancel: o.leaderElection.ReleaseOnCancel,
		LeaseDuration:                 &o.leaderElection.LeaseDuration,
		RenewDeadline:                 &o.leaderElection.RenewDeadline,
		RetryPeriod:                   &o.leaderElection.RetryPeriod,
		LeaderElectionID:              controllerName + "-leader-election",
		Cache:                         cacheOptions,
		Client: ctrlclient.Options{
			Cache: &ctrlclient.CacheOptions{DisableFor: []ctrlclient.Object{&corev1.Secret{}, &corev1.ConfigMap{}}},
		},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	probes.SetupChecks(mgr, setupLog)

	eventRecorder, err := events.NewRecorder(mgr, ctrl.Log, o.eventsAddr, controllerName)
	if err != nil {
		return fmt.Errorf("creating the event recorder: %w", err)
	}

	ctrlOptions := ctrlcontroller.Options{
		MaxConcurrentReconciles: o.concurrent,
		RateLimiter:             runtimectrl.GetRateLimiter(o.rateLimiter),
		ReconciliationTimeout:   o.reconcileTimeout,
	}
	perNamespace := o.concurrentPerNamespace
	if perNamespace <= 0 {
		perNamespace = o.concurrent / 2
	}
	ctx := ctrl.SetupSignalHandler()
	if err := controller.SetupIndexes(ctx, mgr); err != nil {
		return err
	}
	ownerIdentity, err := pipeline.ResolveOwnerIdentity(ctx, mgr.GetAPIReader(), o.ownerIdentity)
	if err != nil {
		return err
	}
	setupLog.Info("owner identity", "identity", ownerIdentity)
	// One pool of NBI clients for both reconcilers: either builds the client of an OsmCluster
	// from its Secrets when it needs one first.
	connections := &osmconn.Pool{
		Reader:            mgr.GetAPIReader(),
		MaxRequestTimeout: o.maxNBIRequestTimeout,
		SecretMaxAge:      o.secretPollInterval,
		Metrics:           osm.NewMetrics(ctrlmetrics.Registry),
	}
	if err := (&controller.OsmClusterReconciler{
		Client:             mgr.GetClient(),
		EventRecorder:      eventRecorder,
		Connections:        connections,
		SecretPollInterval: o.secretPollInterval,
		MinInterval:        o.minInterval,
		ExpiryWarning:      o.credentialsExpiryWarning,
		Share:              controller.NewNamespaceShare(perNamespace),
		AnswerMemory:       o.maxNBIAnswerMemory,
	}).SetupWithManager(mgr, ctrlOptions); err != nil {
		return fmt.Errorf("setting up the OsmCluster controller: %w", err)
	}
	if err := (&controller.OsmDeploymentReconciler{
		Client:                   mgr.GetClient(),
		EventRecorder:            eventRecorder,
		ClaimsNamespace:          runtimeNamespace,
		Connections:              connections,
		NoCrossNamespaceRefs:     o.acl.NoCrossNamespaceRefs,
		RequeueDependency:        o.requeueDependency,
		MinInterval:              o.minInterval,
		OperationPollInterval:    o.operationPollInterval,
		OperationPollMinInterval: o.operationPollMinInterval,
		Share:                    controller.NewNamespaceShare(perNamespace),
		OwnerIdentity:            ownerIdentity,
		Shard:                    shard,
		WatchConfigsSelector:     configsSelector,
		AnswerMemory:             o.maxNBIAnswerMemory,
	}).SetupWithManager(mgr, ctrlOptions); err != nil {
		return fmt.Errorf("setting up the OsmDeployment controller: %w", err)
	}

	setupLog.Info("starting manager")
	return mgr.Start(ctx)
}
