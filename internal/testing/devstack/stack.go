package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Names of the stack's processes; each also names the process's log file.
const (
	OperatorName               = "operator"
	SourceControllerName       = "source-controller"
	NotificationControllerName = "notification-controller"
	KustomizeControllerName    = "kustomize-controller"
	SimulatorName              = "osm-nbi-sim"
	GitServerName              = "git-server"
)

// The NBI credentials a simulator accepts unless its arguments say otherwise, and that
// ApplyTenant puts in a tenant's Secret when the tenant sets none.
const (
	SimulatorUsername = "admin"
	SimulatorPassword = "admin"
)

// Folders under Options.WorkDir.
const (
	logDirName       = "logs"
	gitDirName       = "git"
	cloneDirName     = "clones"
	artifactsDirName = "artifacts"
)

// Options configure a stack.
type Options struct {
	// WorkDir holds all the stack's state: etcd's data, the Git repositories and their clones,
	// source-controller's artifacts, the logs, the pid files and the kubeconfig.
	WorkDir string
	// Ports of the parts; zero fields get free ports.
	Ports Ports
	// Paths of the programs the stack runs, built or provided beforehand.
	OperatorBinary, SimulatorBinary, SourceControllerBinary string
	// SourceControllerCRDs is the folder of Flux's source CRDs (hack/flux-controller.sh puts
	// them in crd/ beside the binary).
	SourceControllerCRDs string
	// NotificationControllerBinary and KustomizeControllerBinary, when set, add these Flux
	// controllers to the stack, each with the CRDs in crd/ beside its binary (as
	// hack/flux-controller.sh provides them). The operator and kustomize-controller then send
	// their events to notification-controller.
	NotificationControllerBinary, KustomizeControllerBinary string
	// OperatorArgs are extra flags for the operator.
	OperatorArgs []string
	// SimulatorArgs are extra flags for the stack's NBI simulator, e.g. --vim-account NAME.
	SimulatorArgs []string
	// Log receives one line per step; nil discards them.
	Log io.Writer
}

// Stack is a running chain of parts on loopback: etcd and kube-apiserver (envtest) with the
// osmops and Flux CRDs, Flux's source-controller, a Git server, an NBI simulator and the
// operator, each a real process or server. Stop stops them all.
type Stack struct {
	processHome
	ports        Ports
	controlPlane *controlPlane
	git          *GitServer

	sourceController, operator *Process
	// notificationController and kustomizeController are nil unless Options ask for them.
	notificationController, kustomizeController *Process
	simulator                                   *Simulator

	mu sync.Mutex
	// simulators are every simulator started, the stack's own first.
	simulators []*Simulator
}

// Start checks that every program and port is there and starts the stack. On failure it stops
// what it had started and says which part failed and why.
func Start(ctx context.Context, o Options) (*Stack, error) {
	if o.WorkDir == "" {
		return nil, errors.New("devstack: Options.WorkDir is empty")
	}
	gitBackend, err := checkPrerequisites(o)
	if err != nil {
		return nil, err
	}
	ports, err := o.Ports.Resolve()
	if err != nil {
		return nil, err
	}
	home, err := newProcessHome(o.WorkDir, o.Log)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(home.workDir, artifactsDirName), 0o755); err != nil {
		return nil, err
	}
	o.WorkDir = home.workDir
	s := &Stack{processHome: home, ports: ports}
	if err := s.start(ctx, o, gitBackend); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	fmt.Fprintf(s.progress, "the stack is up; state and logs in %s\n", s.workDir)
	return s, nil
}

// processHome is where processes keep their logs and pid files (under workDir) and where they
// report starting and stopping.
type processHome struct {
	workDir  string
	pids     pidDir
	progress io.Writer
}

// newProcessHome makes the log and pid folders under workDir; a nil progress discards the
// reports.
func newProcessHome(workDir string, progress io.Writer) (processHome, error) {
	workDir, err := filepath.Abs(workDir)
	if err != nil {
		return processHome{}, err
	}
	for _, dir := range []string{logDirName, pidDirName} {
		if err := os.MkdirAll(filepath.Join(workDir, dir), 0o755); err != nil {
			return processHome{}, err
		}
	}
	if progress == nil {
		progress = io.Discard
	}
	return processHome{workDir: workDir, pids: pidDir(filepath.Join(workDir, pidDirName)), progress: progress}, nil
}

func (s *Stack) start(ctx context.Context, o Options, gitBackend string) error {
	fmt.Fprintf(s.progress, "starting etcd and the %s on %s\n", PartAPIServer, hostPort(s.ports.APIServer))
	cp, err := startControlPlane(ctx, o, s.ports.APIServer, s.pids)
	s.controlPlane = cp
	if err != nil {
		return err
	}
	kubeconfigEnv := []string{"KUBECONFIG=" + cp.kubeconfig}

	fmt.Fprintf(s.progress, "starting the %s on %s\n", PartGitServer, hostPort(s.ports.Git))
	s.git, err = startGitServer(filepath.Join(s.workDir, gitDirName), filepath.Join(s.workDir, cloneDirName),
		s.ports.Git, gitBackend, logPath(s.workDir, GitServerName))
	if err != nil {
		return err
	}

	s.simulator, err = s.startSimulator(ctx, SimulatorName, o.SimulatorBinary, s.ports.Simulator, o.SimulatorArgs)
	if err != nil {
		return err
	}

	storage := hostPort(s.ports.SourceStorage)
	s.sourceController = s.newFluxController(SourceControllerName, o.SourceControllerBinary,
		s.ports.SourceMetrics, s.ports.SourceHealth, kubeconfigEnv,
		"--storage-path="+filepath.Join(s.workDir, artifactsDirName),
		"--storage-addr="+storage,
		"--storage-adv-addr="+storage)
	if err := s.sourceController.start(ctx); err != nil {
		return err
	}

	var eventsArgs []string
	if o.NotificationControllerBinary != "" {
		eventsPort, err := freePort(NotificationControllerName + " events")
		if err != nil {
			return err
		}
		receiverPort, err := freePort(NotificationControllerName + " receiver")
		if err != nil {
			return err
		}
		if s.notificationController, err = s.startFluxController(ctx, NotificationControllerName, o.NotificationControllerBinary, kubeconfigEnv,
			"--events-addr="+hostPort(eventsPort),
			"--receiverAddr="+hostPort(receiverPort)); err != nil {
			return err
		}
		eventsArgs = []string{"--events-addr=http://" + hostPort(eventsPort) + "/"}
	}
	if o.KustomizeControllerBinary != "" {
		// A Kustomization waiting for another one looks again after --requeue-dependency; the
		// default, 30 seconds, would be most of a test's wait.
		args := append([]string{"--requeue-dependency=2s"}, eventsArgs...)
		if s.kustomizeController, err = s.startFluxController(ctx, KustomizeControllerName, o.KustomizeControllerBinary, kubeconfigEnv, args...); err != nil {
			return err
		}
	}

	// The operator claims NS instance names in its RUNTIME_NAMESPACE: Flux's here, which exists.
	s.operator = s.newProcess(OperatorName, o.OperatorBinary, slices.Concat([]string{
		"--metrics-bind-address=" + hostPort(s.ports.OperatorMetrics),
		"--metrics-secure=false",
		"--health-probe-bind-address=" + hostPort(s.ports.OperatorHealth),
		"--log-encoding=console",
	}, eventsArgs, o.OperatorArgs), append(slices.Clip(kubeconfigEnv), "RUNTIME_NAMESPACE="+FluxNamespace), "http://"+hostPort(s.ports.OperatorHealth)+"/readyz")
	return s.operator.start(ctx)
}

// newFluxController prepares a Flux controller with the flags they share, in Flux's namespace.
func (s *Stack) newFluxController(name, binary string, metricsPort, healthPort int, env []string, args ...string) *Process {
	return s.newProcess(name, binary, append([]string{
		"--metrics-addr=" + hostPort(metricsPort),
		"--health-addr=" + hostPort(healthPort),
		"--enable-leader-election=false",
		"--log-encoding=console",
	}, args...), append(slices.Clip(env), "RUNTIME_NAMESPACE="+FluxNamespace), "http://"+hostPort(healthPort)+"/readyz")
}

// startFluxController starts one of the optional Flux controllers on free ports.
func (s *Stack) startFluxController(ctx context.Context, name, binary string, env []string, args ...string) (*Process, error) {
	metricsPort, err := freePort(name + " metrics")
	if err != nil {
		return nil, err
	}
	healthPort, err := freePort(name + " health probes")
	if err != nil {
		return nil, err
	}
	p := s.newFluxController(name, binary, metricsPort, healthPort, env, args...)
	return p, p.start(ctx)
}

func (h processHome) newProcess(name, path string, args, env []string, readyURL string) *Process {
	return &Process{
		name:     name,
		path:     path,
		args:     args,
		env:      env,
		readyURL: readyURL,
		logPath:  logPath(h.workDir, name),
		pids:     h.pids,
		progress: h.progress,
	}
}

// StartSimulator starts one more NBI simulator on a free port, named name (which must be
// unique in the stack: it names the log), with the stack's simulator binary and args. A test
// that counts requests uses one of its own. Stop stops it with the rest.
func (s *Stack) StartSimulator(ctx context.Context, name string, args ...string) (*Simulator, error) {
	return s.StartSimulatorAt(ctx, name, 0, args...)
}

// StartSimulatorAt is StartSimulator on a fixed loopback port (0: a free one), as the demo's
// sites want, so that their URLs stay the same from one run to the next. A taken port is a
// PortTakenError of the part SimulatorPart(name).
func (s *Stack) StartSimulatorAt(ctx context.Context, name string, port int, args ...string) (*Simulator, error) {
	l, err := listen(port, SimulatorPart(name))
	if err != nil {
		return nil, err
	}
	port = l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return nil, err
	}
	return s.startSimulator(ctx, name, s.simulator.path, port, args)
}

// SimulatorPart names the part of the simulator name in errors and progress lines.
func SimulatorPart(name string) string { return PartSimulator + " " + name }

func (s *Stack) startSimulator(ctx context.Context, name, binary string, port int, args []string) (*Simulator, error) {
	s.mu.Lock()
	for _, sim := range s.simulators {
		if sim.name == name {
			s.mu.Unlock()
			return nil, fmt.Errorf("a simulator named %s already exists", name)
		}
	}
	sim := s.newSimulator(name, binary, port, args)
	s.simulators = append(s.simulators, sim)
	s.mu.Unlock()
	return sim, sim.start(ctx)
}

// Stop stops every process the stack started, the operator first and etcd last, and the Git
// server. Each process gets SIGTERM, then SIGKILL after a grace time. Stopping twice is safe.
func (s *Stack) Stop() error {
	var errs []error
	for _, p := range []*Process{s.operator, s.kustomizeController, s.notificationController, s.sourceController} {
		if p != nil {
			errs = append(errs, p.Stop())
		}
	}
	s.mu.Lock()
	simulators := s.simulators
	s.mu.Unlock()
	for _, sim := range simulators {
		errs = append(errs, sim.Stop())
	}
	if s.git != nil {
		errs = append(errs, s.git.close())
		s.git = nil
	}
	if s.controlPlane != nil {
		errs = append(errs, s.controlPlane.stop())
		s.controlPlane = nil
	}
	return errors.Join(errs...)
}

// WorkDir returns the absolute path of the stack's state folder.
func (s *Stack) WorkDir() string { return s.workDir }

// Ports returns the ports the stack uses, free ones resolved.
func (s *Stack) Ports() Ports { return s.ports }

// Kubeconfig returns the path of the admin user's kubeconfig file.
func (s *Stack) Kubeconfig() string { return s.controlPlane.kubeconfig }

// RESTConfig returns the admin user's client configuration.
func (s *Stack) RESTConfig() *rest.Config { return rest.CopyConfig(s.controlPlane.config) }

// Client returns a client of the API server as the admin user, with testenv.NewScheme.
func (s *Stack) Client() client.Client { return s.controlPlane.client }

// Git returns the Git server.
func (s *Stack) Git() *GitServer { return s.git }

// Simulator returns the stack's own NBI simulator.
func (s *Stack) Simulator() *Simulator { return s.simulator }

// SourceController returns the source-controller process.
func (s *Stack) SourceController() *Process { return s.sourceController }

// NotificationController returns the notification-controller process, nil unless
// Options.NotificationControllerBinary was set.
func (s *Stack) NotificationController() *Process { return s.notificationController }

// KustomizeController returns the kustomize-controller process, nil unless
// Options.KustomizeControllerBinary was set.
func (s *Stack) KustomizeController() *Process { return s.kustomizeController }

// Operator returns the operator process.
func (s *Stack) Operator() *Process { return s.operator }

// ApplyTenant applies the objects of t (see Tenant), after filling in what t leaves empty: the
// Git URL of its repository on the stack's Git server, the URL of the stack's simulator and
// the simulator's default credentials.
func (s *Stack) ApplyTenant(ctx context.Context, t Tenant) error {
	if t.GitURL == "" {
		t.GitURL = s.git.URL(t.Repository)
	}
	if t.NBIURL == "" {
		t.NBIURL = s.simulator.URL()
	}
	if t.Username == "" && t.Password == "" {
		t.Username, t.Password = SimulatorUsername, SimulatorPassword
	}
	return Apply(ctx, s.Client(), t.Objects()...)
}

// Logs returns the content of every log of the stack, by name (the process, server or
// control-plane part that wrote it), for failure dumps.
func (s *Stack) Logs() (map[string]string, error) {
	paths, err := filepath.Glob(logPath(s.workDir, "*"))
	if err != nil {
		return nil, err
	}
	logs := map[string]string{}
	for _, path := range paths {
		content, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		logs[strings.TrimSuffix(filepath.Base(path), ".log")] = string(content)
	}
	return logs, nil
}

// logPath is the path of the log of the part name.
func logPath(workDir, name string) string {
	return filepath.Join(workDir, logDirName, name+".log")
}
