//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/osmops/osmops/internal/testing/devstack"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// Environment variables the suite reads. The Flux controllers' are set by `make test-e2e`
// (hack/flux-controller.sh); the two others let a developer reuse binaries instead of building
// them.
const (
	sourceControllerEnv       = "SOURCE_CONTROLLER"
	notificationControllerEnv = "NOTIFICATION_CONTROLLER"
	kustomizeControllerEnv    = "KUSTOMIZE_CONTROLLER"
	operatorEnv               = "OSMOPS_E2E_OPERATOR"
	simulatorEnv              = "OSMOPS_E2E_SIMULATOR"
)

// vimAccount is the VIM account every simulator of the suite is seeded with.
const vimAccount = "openstack-site1"

// simulatorArgs seed a simulator with the suite's VIM account.
var simulatorArgs = []string{"--vim-account=" + vimAccount}

// stack is the one stack every test of the suite uses.
var stack *devstack.Stack

// workDir holds the stack's state and logs; it is removed when every spec passed.
var workDir string

// specFailed records that a spec failed, for AfterSuite to print the stack's logs and keep its
// state.
var specFailed atomic.Bool

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "osmops e2e suite")
}

var _ = BeforeSuite(func() {
	var err error
	workDir, err = os.MkdirTemp("", "osmops-e2e-")
	Expect(err).NotTo(HaveOccurred())
	options, err := stackOptions(workDir)
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	stack, err = devstack.Start(ctx, options)
	Expect(err).NotTo(HaveOccurred(), "the stack did not start (state and logs kept in %s)", workDir)
})

var _ = AfterEach(func() {
	if CurrentSpecReport().Failed() {
		specFailed.Store(true)
	}
})

var _ = AfterSuite(func() {
	if stack == nil {
		return
	}
	if specFailed.Load() {
		dumpLogs()
	}
	Expect(stack.Stop()).To(Succeed(), "stopping the stack")
	if specFailed.Load() {
		fmt.Fprintf(os.Stderr, "e2e: state and logs kept in %s\n", workDir)
	} else {
		_ = os.RemoveAll(workDir)
	}
})

// stackOptions finds or builds the programs of the stack.
func stackOptions(workDir string) (devstack.Options, error) {
	flux := map[string]string{}
	for _, env := range []string{sourceControllerEnv, notificationControllerEnv, kustomizeControllerEnv} {
		if flux[env] = os.Getenv(env); flux[env] == "" {
			return devstack.Options{}, fmt.Errorf("%s is not set: run `make test-e2e`, which provides Flux's controllers", env)
		}
	}
	binDir := filepath.Join(workDir, "bin")
	operator, err := binary(operatorEnv, binDir, "manager", "./cmd")
	if err != nil {
		return devstack.Options{}, err
	}
	simulator, err := binary(simulatorEnv, binDir, "osm-nbi-sim", "./cmd/osm-nbi-sim")
	if err != nil {
		return devstack.Options{}, err
	}
	return devstack.Options{
		WorkDir:                      workDir,
		OperatorBinary:               operator,
		SimulatorBinary:              simulator,
		SourceControllerBinary:       flux[sourceControllerEnv],
		SourceControllerCRDs:         filepath.Join(filepath.Dir(flux[sourceControllerEnv]), "crd"),
		NotificationControllerBinary: flux[notificationControllerEnv],
		KustomizeControllerBinary:    flux[kustomizeControllerEnv],
		SimulatorArgs:                simulatorArgs,
		// The OsmCluster of a scenario is checked every clusterHealthInterval (2 s), under the
		// manager's default floor.
		OperatorArgs: []string{"--min-interval=1s"},
		Log:          prefixWriter{prefix: "e2e: "},
	}, nil
}

// binary returns the program named by the environment variable env, or builds pkg into dir.
func binary(env, dir, name, pkg string) (string, error) {
	if path := os.Getenv(env); path != "" {
		return path, nil
	}
	path := filepath.Join(dir, name)
	fmt.Fprintf(os.Stderr, "e2e: building %s (set %s to use a built one)\n", pkg, env)
	cmd := exec.Command("go", "build", "-o", path, pkg)
	cmd.Dir = testenv.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return path, nil
}

// dumpLogs prints every log of the stack: the operator's, source-controller's, the
// simulators', the Git server's and the control plane's.
func dumpLogs() {
	logs, err := stack.Logs()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: reading the logs: %v\n", err)
		return
	}
	// The operator and source-controller first: they explain most failures.
	names := slices.SortedFunc(maps.Keys(logs), func(a, b string) int {
		return cmp.Or(cmp.Compare(logRank(a), logRank(b)), strings.Compare(a, b))
	})
	for _, name := range names {
		fmt.Fprintf(os.Stderr, "\n===== log of %s =====\n%s\n", name, logs[name])
	}
}

func logRank(name string) int {
	switch name {
	case devstack.OperatorName:
		return 0
	case devstack.SourceControllerName:
		return 1
	}
	return 2
}

// prefixWriter writes the stack's progress lines to stderr with a prefix.
type prefixWriter struct{ prefix string }

func (w prefixWriter) Write(p []byte) (int, error) {
	if _, err := fmt.Fprint(os.Stderr, w.prefix+string(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
