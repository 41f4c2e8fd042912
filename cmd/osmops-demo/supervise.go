package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/osmops/osmops/internal/testing/devstack"
)

// The demo's tenant.
const (
	demoNamespace  = "telco"
	demoRepository = "osm-gitops"
	// demoVIMAccount is the simulator's VIM account, which hack/demo-repo's deployment names.
	demoVIMAccount = "openstack-site1"
)

// startTimeout bounds the start of the whole stack.
const startTimeout = 5 * time.Minute

// supervise runs the demo's stack until SIGTERM or SIGINT. Its progress goes to its log
// (stdout) and, until the demo is ready, to `up` through the report pipe.
func supervise(cfg config) error {
	// The pipe must not leak into the stack's processes, or `up` would wait for them too.
	syscall.CloseOnExec(reportFD)
	report := os.NewFile(reportFD, "report")
	progress := io.MultiWriter(os.Stdout, report)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := writeSupervisorPID(cfg.workDir); err != nil {
		return err
	}
	defer removeStateFiles(cfg.workDir)

	stack, err := startDemo(ctx, cfg, progress)
	if err != nil {
		fmt.Fprintf(progress, "the demo did not start: %v\n", err)
		return err
	}
	_ = report.Close()
	fmt.Println("the demo is ready; waiting for SIGTERM")
	<-ctx.Done()
	fmt.Println("stopping the demo")
	return stack.Stop()
}

// startDemo starts the stack, seeds the demo repository, applies the tenant and writes the
// demo's info file. On failure it stops what it started.
func startDemo(ctx context.Context, cfg config, progress io.Writer) (*devstack.Stack, error) {
	ports, err := demoPorts(os.Getenv)
	if err != nil {
		return nil, err
	}
	// The stack runs copies of the programs, so that `make demo` and `make build` can rebuild
	// bin/ while it runs.
	binDir := filepath.Join(cfg.workDir, "bin")
	operator, err := copyExecutable(cfg.operator, binDir)
	if err != nil {
		return nil, err
	}
	simulator, err := copyExecutable(cfg.simulator, binDir)
	if err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	stack, err := devstack.Start(startCtx, devstack.Options{
		WorkDir:                cfg.workDir,
		Ports:                  ports,
		OperatorBinary:         operator,
		SimulatorBinary:        simulator,
		SourceControllerBinary: cfg.sourceController,
		SourceControllerCRDs:   filepath.Join(filepath.Dir(cfg.sourceController), "crd"),
		SimulatorArgs:          simulatorArgs,
		Log:                    progress,
	})
	if err != nil {
		return nil, explainPortTaken(err)
	}
	sites, err := startSites(startCtx, stack)
	if err != nil {
		return nil, errors.Join(explainPortTaken(err), stack.Stop())
	}
	if err := setUpTenant(startCtx, stack, cfg, sites, progress); err != nil {
		return nil, errors.Join(err, stack.Stop())
	}
	return stack, nil
}

// simulatorArgs seed every simulator with the VIM account of hack/demo-repo's deployment.
var simulatorArgs = []string{"--vim-account=" + demoVIMAccount}

// startSites starts the simulators of the later sites, and returns every site of the rollout,
// the first (the tenant's OsmDeployment on the stack's simulator) first.
func startSites(ctx context.Context, stack *devstack.Stack) ([]demoSite, error) {
	sites := []demoSite{{Name: demoRepository, SimulatorURL: stack.Simulator().URL()}}
	for _, name := range laterSites {
		port, err := demoPort(devstack.SimulatorPart(name), os.Getenv)
		if err != nil {
			return nil, err
		}
		sim, err := stack.StartSimulatorAt(ctx, simulatorName(name), port, simulatorArgs...)
		if err != nil {
			return nil, err
		}
		sites = append(sites, demoSite{Name: name, SimulatorURL: sim.URL(), After: sites[len(sites)-1].Name})
	}
	return sites, nil
}

func setUpTenant(ctx context.Context, stack *devstack.Stack, cfg config, sites []demoSite, progress io.Writer) error {
	repo, err := stack.Git().CreateRepo(demoRepository)
	if err != nil {
		return err
	}
	sha, err := repo.Seed(cfg.demoRepo)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "seeded %s from %s (commit %.12s)\n", repo.URL(), cfg.demoRepo, sha)
	tenant := devstack.Tenant{Namespace: demoNamespace, Repository: demoRepository, Prune: true}
	if err := stack.ApplyTenant(ctx, tenant); err != nil {
		return err
	}
	fmt.Fprintf(progress, "applied the Secret, OsmCluster, GitRepository and OsmDeployment of namespace %s\n", demoNamespace)
	for _, site := range sites[1:] {
		if err := devstack.Apply(ctx, stack.Client(), siteObjects(site)...); err != nil {
			return err
		}
		fmt.Fprintf(progress, "applied the OsmCluster and OsmDeployment %s, a wave after %s\n", site.Name, site.After)
	}
	return writeInfo(demoInfo{
		SupervisorPID: os.Getpid(),
		WorkDir:       cfg.workDir,
		Kubeconfig:    stack.Kubeconfig(),
		RepoURL:       repo.URL(),
		SimulatorURL:  stack.Simulator().URL(),
		Sites:         sites,
	})
}

// copyExecutable copies the program at path into dir and returns the copy's path.
func copyExecutable(path, dir string) (string, error) {
	content, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s is missing: `make demo` builds it", path)
	}
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	copied := filepath.Join(dir, filepath.Base(path))
	return copied, os.WriteFile(copied, content, 0o755)
}
