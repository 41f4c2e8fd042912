package controller

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/jitter"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testenv"
)

// The suite runs both reconcilers in a manager against a real API server (envtest); each test
// brings its own namespace, NBI simulator and artifacts, so tests do not see each other.
var (
	k8sClient  client.Client
	testScheme = runtime.NewScheme()
	// operatorConfig reaches the suite's API server with the operator's RBAC.
	operatorConfig *rest.Config
	// testRESTConfig reaches the suite's API server.
	testRESTConfig *rest.Config
	// recorder keeps the events the reconcilers emit, for assertions.
	recorder = newEventLog()
	// registry is the reconcilers' shared registry, for assertions on claims.
	registry = NewClusterRegistry()
	// artifacts serves the tarballs that stand for source-controller's artifacts.
	artifacts = newArtifactServer()
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
	// testOwnerIdentity names the suite's operator installation in the owner markers in OSM.
	testOwnerIdentity      = "envtest"
	eventuallyPollInterval = 50 * time.Millisecond
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(false), zap.Level(zapLevel()), zap.RawZapOpts(captureLog())))
	assets, err := testenv.BinaryAssetsDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths: testenv.CRDPaths(), ErrorIfCRDPathMissing: true, BinaryAssetsDirectory: assets,
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	defer artifacts.Close()

	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, sourcev1.AddToScheme, gitopsv1alpha1.AddToScheme} {
		if err := add(testScheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	operatorCfg, err := asOperator(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// As the manager's --interval-jitter-percentage does: requeues spread, so that two
	// reconciles that give way to each other (shard_test.go) meet again only by chance.
	jitter.SetGlobalIntervalJitter(0.1, nil)
	operatorConfig = operatorCfg
	mgr, err := newTestManager(operatorCfg, unshardedObjects)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), ctrl.Log))
	defer cancel()
	if err := setupReconcilers(ctx, mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	testRESTConfig = cfg
	if k8sClient, err = client.New(cfg, client.Options{Scheme: testScheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := checkSuiteKeptSecrets(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// unshardedObjects selects the objects of the suite's manager: all but those of a shard
// (shard_test.go), which other managers reconcile, as --watch-label-selector makes them.
const unshardedObjects = "!" + shardLabel

// newTestManager is a manager as cmd/main.go makes it, reconciling the OsmClusters and
// OsmDeployments that selector selects.
func newTestManager(cfg *rest.Config, selector string) (ctrl.Manager, error) {
	watched, err := k8slabels.Parse(selector)
	if err != nil {
		return nil, err
	}
	return ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 testScheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&gitopsv1alpha1.OsmCluster{}: {Label: watched}, &gitopsv1alpha1.OsmDeployment{}: {Label: watched},
		}},
		Client: client.Options{
			Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}},
		},
	})
}

func setupReconcilers(ctx context.Context, mgr ctrl.Manager) error {
	if err := SetupIndexes(ctx, mgr); err != nil {
		return err
	}
	// As the manager's defaults, with shorter times: half the workers per namespace, a capped
	// NBI request timeout, a bounded reconcile.
	opts := controller.Options{MaxConcurrentReconciles: testWorkers, SkipNameValidation: ptrTrue(),
		ReconciliationTimeout: time.Minute}
	events := record.EventRecorder(recorder)
	if err := (&OsmClusterReconciler{Client: mgr.GetClient(), EventRecorder: events, Clusters: registry,
		SecretPollInterval: testSecretPoll, MaxRequestTimeout: testMaxRequestTimeout,
		Share: NewNamespaceShare(testWorkers / 2)}).
		SetupWithManager(mgr, opts); err != nil {
		return err
	}
	return (&OsmDeploymentReconciler{
		Client: mgr.GetClient(), EventRecorder: events, Clusters: registry, NoCrossNamespaceRefs: true,
		RequeueDependency: testRequeueDependency, OperationPollInterval: testPollInterval,
		Share: NewNamespaceShare(testWorkers / 2), OwnerIdentity: testOwnerIdentity,
	}).SetupWithManager(mgr, opts)
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
