package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/devstack"
)

// SimulatorOptions configure an NBI simulator process.
type SimulatorOptions struct {
	// Binary is the path of the cmd/osm-nbi-sim binary.
	Binary string
	// Credentials are the only ones the NBI accepts.
	Credentials osm.Credentials
	// VIMAccount is the name of the one VIM account (with a Kubernetes cluster) it starts with.
	VIMAccount string
	// OperationDelay is how long each LCM operation stays PROCESSING; LCMProfile, when set,
	// names the simulator's LCM times (nbisim.LCMProfiles), which replace it for the types it
	// names, and then the request log keeps the closeRequestLog last requests.
	OperationDelay time.Duration
	LCMProfile     string
	// Latency is added to every NBI request (not to the control API).
	Latency time.Duration
}

// benchQuotas lifts OSM's default quotas (500 per project) above the fleets' NS instances and
// packages, all in one project.
var benchQuotas = fmt.Sprintf("%s=%d,%s=%d,%s=%d", nbisim.QuotaNSInstances, benchQuota, nbisim.QuotaVNFDs, benchQuota, nbisim.QuotaNSDs, benchQuota)

const benchQuota = 1_000_000

// closeRequestLog is the request log of a simulator with an LCM profile: it must hold a whole
// scenario, whose first changing request the closeness measures.
const closeRequestLog = 1 << 16

// Simulator is a devstack simulator process started with the bench's credentials and latency.
type Simulator struct {
	*devstack.Simulator
	// workDir holds the password file, the log and the pid file, all removed by Stop.
	workDir string
}

// StartSimulator starts the simulator on a free loopback port, waits for it to serve, and
// injects the latency.
func StartSimulator(ctx context.Context, opts SimulatorOptions) (*Simulator, error) {
	workDir, err := os.MkdirTemp("", "osmops-bench-sim-")
	if err != nil {
		return nil, err
	}
	// A file keeps the password out of the process list.
	passwordFile := filepath.Join(workDir, "password")
	if err := os.WriteFile(passwordFile, []byte(opts.Credentials.Password), 0o600); err != nil {
		return nil, errors.Join(err, os.RemoveAll(workDir))
	}
	args := []string{"--username=" + opts.Credentials.Username, "--password-file=" + passwordFile, "--project=" + opts.Credentials.Project,
		"--vim-account=" + opts.VIMAccount, "--operation-delay=" + opts.OperationDelay.String(), "--quota=" + benchQuotas}
	if opts.LCMProfile != "" {
		args = append(args, "--lcm-profile="+opts.LCMProfile, fmt.Sprintf("--request-log-size=%d", closeRequestLog))
	}
	process, err := devstack.StartSimulator(ctx, devstack.SimulatorOptions{Binary: opts.Binary, WorkDir: workDir, Args: args})
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(workDir))
	}
	s := &Simulator{Simulator: process, workDir: workDir}
	if opts.Latency > 0 {
		if err := process.AddFault(ctx, nbisim.Fault{Latency: opts.Latency}); err != nil {
			return nil, errors.Join(err, s.Stop())
		}
	}
	return s, nil
}

// CompleteOperations ends every operation still PROCESSING (the control API's
// /sim/v1/operations/complete), as if its OperationDelay had passed.
func (s *Simulator) CompleteOperations(ctx context.Context) error {
	control := nbisim.ControlClient{URL: s.URL(), HTTPClient: &http.Client{Timeout: time.Minute}}
	return control.Call(ctx, http.MethodPost, "/sim/v1/operations/complete", nil, nil)
}

// Stop ends the simulator (SIGTERM, then SIGKILL after a grace time) and removes its folder.
func (s *Simulator) Stop() error {
	return errors.Join(s.Simulator.Stop(), os.RemoveAll(s.workDir))
}
