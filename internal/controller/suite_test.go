package controller

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/jitter"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nameclaims"
	"github.com/osmops/osmops/internal/osmconn"
	"github.com/osmops/osmops/internal/testing/artifactserver"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// The suite runs both reconcilers in a manager against a real API server (envtest); each test
// brings its own namespace, NBI simulator and artifacts, so tests do not see each other.
var (
	k8sClient  client.Client
	testScheme = testenv.NewScheme()
	// testRESTConfig reaches the suite's API server.
	testRESTConfig *rest.Config
	// recorder keeps the events the reconcilers emit, for assertions.
	recorder = newEventLog()
	// connections is the reconcilers' shared pool of NBI clients.
	connections *osmconn.Pool
	// testOperatorConfig is testRESTConfig impersonating the operator, for the managers tests
	// start of their own (see startManager).
	testOperatorConfig *rest.Config
	// artifacts serves the tarballs that stand for source-controller's artifacts.
	artifacts = artifactserver.NewServer()
)

// Intervals of the suite's reconcilers: short, so that waits are quick.
const (
	testPollInterval      = 100 * time.Millisecond
	testRequeueDependency = 200 * time.Millisecond
	testOperationDelay    = 300 * time.Millisecond
	testSecretPoll        = 300 * time.Millisecond
	eventuallyTimeout     = 20 * time.Second
	// testWorkers is the number of workers of each reconciler.
	testWorkers = 4
	// testMaxRequestTimeout caps the OsmClusters' NBI request timeouts.
	testMaxRequestTimeout = 10 * time.Second
	// testAnswerMemory bounds what OSM's list answers hold in one reconcile (--max-nbi-answer-memory).
	testAnswerMemory = 16 << 20
	// testOwnerIdentity names the suite's operator installation in the owner markers in OSM.
	testOwnerIdentity      = "envtest"
	eventuallyPollInterval = 50 * time.Millisecond
)

// TestController runs the suite's specs; BeforeSuite starts the API server and the manager once
// for all of them.
func TestController(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Controller suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(false), zap.Level(zapLevel()), zap.RawZapOpts(captureLog())))
	env, err := testenv.NewEnvironment()
	Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	Expect(err).NotTo(HaveOccurred(), "starting envtest")
	// Cleanups of BeforeSuite run after AfterSuite, in reverse order.
	DeferCleanup(env.Stop)
	DeferCleanup(artifacts.Close)

	operatorCfg, err := asOperator(context.Background(), cfg)
	Expect(err).NotTo(HaveOccurred())
	// As the manager's --interval-jitter-percentage does: requeues spread, so that two
	// reconciles that give way to each other (shard_test.go) meet again only by chance. Its
	// random numbers are drawn by every reconcile worker at once (lockedrand_test.go).
	jitter.SetGlobalIntervalJitter(0.1, NewJitterRand())
	testOperatorConfig = operatorCfg
	// The suite's manager is the shard without a shard label: the objects of tests that run
	// managers of their own (restarts) are labelled, and it never sees them.
	mgr, err := ctrl.NewManager(operatorCfg, managerOptions(suiteShard))
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), ctrl.Log))
	Expect(setupReconcilers(ctx, mgr)).To(Succeed())
	stopped := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(GinkgoWriter, "manager:", err)
		}
	}()
	// The manager stopped before the API server is: its watches and reconciles, left running,
	// would hold the API server's shutdown past envtest's stop timeout.
	DeferCleanup(func() {
		cancel()
		<-stopped
	})
	testRESTConfig = cfg
	k8sClient, err = client.New(cfg, client.Options{Scheme: testScheme})
	Expect(err).NotTo(HaveOccurred())
})

// After every spec, whether it passed or not: the manager kept the tenants' secrets.
var _ = AfterSuite(func(ctx SpecContext) {
	Expect(checkSuiteKeptSecrets(ctx)).To(Succeed())
}, NodeTimeout(time.Minute))

// managerOptions are the options of a manager of the suite: its objects are those whose labels
// match shard (as --watch-label-selector selects them), and the data of Secrets and ConfigMaps
// is never cached (only the metadata of the labelled ones, as the manager's).
func managerOptions(shard string) ctrl.Options {
	selector := shardSelector(shard)
	leases, claims := nameclaims.Cache(operatorNamespace)
	return ctrl.Options{
		Scheme:                 testScheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields(), ByObject: map[client.Object]cache.ByObject{
			&gitopsv1alpha1.OsmCluster{}:    {Label: selector},
			&gitopsv1alpha1.OsmDeployment{}: {Label: selector},
			&corev1.Secret{}:                {Label: WatchConfigsSelector},
			&corev1.ConfigMap{}:             {Label: WatchConfigsSelector},
			leases:                          claims,
		}},
		Client: client.Options{
			Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}},
		},
	}
}

// suiteShard selects the objects of the suite's manager: those of no shard of a test's own.
const suiteShard = "!" + shardLabel

// shardSelector parses a selector of the suite's own.
func shardSelector(shard string) klabels.Selector {
	selector, err := klabels.Parse(shard)
	if err != nil {
		panic(err)
	}
	return selector
}

func setupReconcilers(ctx context.Context, mgr ctrl.Manager) error {
	connections = newConnectionPool(mgr)
	return setupReconcilersWith(ctx, mgr, connections, suiteShard, true)
}

// newConnectionPool returns an empty pool of NBI clients as the manager's is.
func newConnectionPool(mgr ctrl.Manager) *osmconn.Pool {
	return &osmconn.Pool{Reader: mgr.GetAPIReader(), MaxRequestTimeout: testMaxRequestTimeout, SecretMaxAge: testSecretPoll}
}

// setupReconcilersWith registers the OsmDeployment reconciler of shard, and the OsmCluster
// reconciler when withClusters, with the pool given; edits change the OsmDeployment reconciler's
// settings.
func setupReconcilersWith(ctx context.Context, mgr ctrl.Manager, pool *osmconn.Pool, shard string, withClusters bool,
	edits ...func(*OsmDeploymentReconciler)) error {
	if err := SetupIndexes(ctx, mgr); err != nil {
		return err
	}
	// As the manager's defaults, with shorter times: half the workers per namespace, a capped
	// NBI request timeout, a bounded reconcile.
	opts := controller.Options{MaxConcurrentReconciles: testWorkers, SkipNameValidation: ptrTrue(),
		ReconciliationTimeout: time.Minute}
	events := record.EventRecorder(recorder)
	if withClusters {
		if err := (&OsmClusterReconciler{Client: mgr.GetClient(), EventRecorder: events, Connections: pool,
			SecretPollInterval: testSecretPoll, Share: NewNamespaceShare(testWorkers / 2), AnswerMemory: testAnswerMemory}).
			SetupWithManager(mgr, opts); err != nil {
			return err
		}
	}
	deployments := &OsmDeploymentReconciler{
		Client: mgr.GetClient(), EventRecorder: events, ClaimsNamespace: operatorNamespace, Connections: pool, NoCrossNamespaceRefs: true,
		RequeueDependency: testRequeueDependency, OperationPollInterval: testPollInterval, Clock: waveClock,
		Share: NewNamespaceShare(testWorkers / 2), OwnerIdentity: testOwnerIdentity, AnswerMemory: testAnswerMemory,
		// Every manager of the suite is a shard of its API server (managerOptions).
		Shard: shardSelector(shard),
	}
	for _, edit := range edits {
		edit(deployments)
	}
	return deployments.SetupWithManager(mgr, opts)
}

// restClientFor returns a raw REST client of the suite's API server.
func restClientFor(_ *runtime.Scheme) (rest.Interface, error) {
	clientset, err := kubernetes.NewForConfig(testRESTConfig)
	if err != nil {
		return nil, err
	}
	return clientset.CoreV1().RESTClient(), nil
}

func ptrTrue() *bool { t := true; return &t }

// zapLevel lets OSMOPS_TEST_LOG=debug show the reconcilers' logs; errors only by default.
func zapLevel() zapcore.Level {
	if os.Getenv("OSMOPS_TEST_LOG") == "debug" {
		return -1
	}
	return 2
}
