package devstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/prometheus/procfs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/osmops/osmops/internal/testing/testenv"
)

// FluxNamespace is where source-controller runs (RUNTIME_NAMESPACE), as `flux install` puts it.
const FluxNamespace = "flux-system"

// controlPlane is etcd and kube-apiserver, run by envtest, with the osmops and Flux CRDs
// installed and a kubeconfig file for an admin user.
type controlPlane struct {
	env        *envtest.Environment
	config     *rest.Config
	client     client.Client
	kubeconfig string
	logs       []*os.File
	pids       pidDir
}

// controlPlaneProcesses are the names (and executables) of the processes envtest starts.
var controlPlaneProcesses = []string{"kube-apiserver", "etcd"}

// startControlPlane starts etcd and kube-apiserver with their state and logs under workDir.
func startControlPlane(ctx context.Context, o Options, port int, pids pidDir) (*controlPlane, error) {
	cp := &controlPlane{pids: pids}
	env, err := testenv.NewEnvironment()
	if err != nil {
		return nil, err
	}
	apiServerLog, err := cp.openLog(o.WorkDir, "kube-apiserver")
	if err != nil {
		return nil, err
	}
	etcdLog, err := cp.openLog(o.WorkDir, "etcd")
	if err != nil {
		return cp, err
	}
	apiServer := &envtest.APIServer{CertDir: filepath.Join(o.WorkDir, "apiserver"), Out: apiServerLog, Err: apiServerLog}
	apiServer.Address = loopback
	apiServer.Port = strconv.Itoa(port)
	// Flux's CRDs are those of the controllers that run, not the suites' copy.
	env.CRDDirectoryPaths = append([]string{testenv.OsmopsCRDPath(), o.SourceControllerCRDs}, o.optionalFluxCRDs()...)
	// envtest's default of 20 seconds is short for a busy 2-core machine.
	env.ControlPlaneStartTimeout, env.ControlPlaneStopTimeout = startTimeout, stopGrace
	env.ControlPlane = envtest.ControlPlane{
		APIServer: apiServer,
		Etcd:      &envtest.Etcd{DataDir: filepath.Join(o.WorkDir, "etcd"), Out: etcdLog, Err: etcdLog},
	}
	cp.env = env
	for _, dir := range []string{apiServer.CertDir, cp.env.ControlPlane.Etcd.DataDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return cp, err
		}
	}
	if _, err := cp.env.Start(); err != nil {
		return cp, fmt.Errorf("starting the %s (logs in %s): %w", PartAPIServer, filepath.Join(o.WorkDir, logDirName), err)
	}
	if err := cp.recordPIDs(env.BinaryAssetsDirectory); err != nil {
		return cp, err
	}
	if err := cp.setUpAdmin(o.WorkDir); err != nil {
		return cp, err
	}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: FluxNamespace}}
	if err := cp.client.Create(ctx, namespace); err != nil {
		return cp, fmt.Errorf("creating the namespace %s: %w", FluxNamespace, err)
	}
	return cp, nil
}

func (cp *controlPlane) openLog(workDir, name string) (*os.File, error) {
	file, err := os.OpenFile(logPath(workDir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cp.logs = append(cp.logs, file)
	return file, nil
}

// setUpAdmin writes the kubeconfig of an admin user and builds a client with it.
func (cp *controlPlane) setUpAdmin(workDir string) error {
	admin, err := cp.env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding the admin user: %w", err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return fmt.Errorf("writing the admin kubeconfig: %w", err)
	}
	cp.kubeconfig = filepath.Join(workDir, "kubeconfig")
	if err := os.WriteFile(cp.kubeconfig, kubeconfig, 0o600); err != nil {
		return err
	}
	cp.config = admin.Config()
	cp.client, err = client.New(cp.config, client.Options{Scheme: testenv.NewScheme()})
	return err
}

// recordPIDs writes the pid files of envtest's processes. envtest does not tell their pids, so
// they are found among this process's children by executable.
func (cp *controlPlane) recordPIDs(assetsDir string) error {
	executables := map[string]string{}
	for _, name := range controlPlaneProcesses {
		path, err := filepath.EvalSymlinks(filepath.Join(assetsDir, name))
		if err != nil {
			return err
		}
		executables[path] = name
	}
	procs, err := procfs.AllProcs()
	if err != nil {
		return fmt.Errorf("listing processes: %w", err)
	}
	self := os.Getpid()
	for _, proc := range procs {
		stat, err := proc.Stat()
		if err != nil || stat.PPID != self {
			continue
		}
		executable, err := proc.Executable()
		if name, ours := executables[executable]; err == nil && ours {
			if err := cp.pids.write(name, proc.PID); err != nil {
				return err
			}
		}
	}
	return nil
}

// stop stops kube-apiserver and etcd and closes their logs.
func (cp *controlPlane) stop() error {
	var errs []error
	if cp.env != nil {
		errs = append(errs, cp.env.Stop())
	}
	for _, name := range controlPlaneProcesses {
		cp.pids.remove(name)
	}
	for _, file := range cp.logs {
		errs = append(errs, file.Close())
	}
	return errors.Join(errs...)
}
