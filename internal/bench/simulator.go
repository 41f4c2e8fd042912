package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"time"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
)

// SimulatorOptions configure an NBI simulator process.
type SimulatorOptions struct {
	// Binary is the path of the cmd/osm-nbi-sim binary.
	Binary string
	// Credentials are the only ones the NBI accepts.
	Credentials osm.Credentials
	// VIMAccount is the name of the one VIM account (with a Kubernetes cluster) it starts with.
	VIMAccount string
	// OperationDelay is how long each LCM operation stays PROCESSING.
	OperationDelay time.Duration
	// Latency is added to every NBI request (not to the control API).
	Latency time.Duration
}

// Simulator is a running cmd/osm-nbi-sim process and a client of its control API (/sim/v1).
type Simulator struct {
	// URL is the base URL; the NBI is under URL+"/osm".
	URL     string
	cmd     *exec.Cmd
	exited  chan struct{}
	workDir string
	control *http.Client
}

// bannerPattern finds the base URL in the first line the simulator prints.
var bannerPattern = regexp.MustCompile(`serving the OSM NBI at (\S+)/osm `)

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
		_ = os.RemoveAll(workDir)
		return nil, err
	}
	cmd := exec.Command(opts.Binary, "--listen=127.0.0.1:0",
		"--username="+opts.Credentials.Username, "--password-file="+passwordFile, "--project="+opts.Credentials.Project,
		"--vim-account="+opts.VIMAccount, "--operation-delay="+opts.OperationDelay.String())
	cmd.Stderr = os.Stderr
	// Should the benchmark die, the simulator goes with it instead of holding its port.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = os.RemoveAll(workDir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(workDir)
		return nil, fmt.Errorf("starting the NBI simulator %s: %w", opts.Binary, err)
	}
	s := &Simulator{cmd: cmd, exited: make(chan struct{}), workDir: workDir, control: &http.Client{Timeout: 5 * time.Minute}}
	banner := make(chan string, 1)
	go func() {
		// Wait closes the pipe: the output is read to its end first.
		s.readOutput(stdout, banner)
		_ = cmd.Wait()
		close(s.exited)
	}()
	select {
	case line := <-banner:
		match := bannerPattern.FindStringSubmatch(line)
		if match == nil {
			_ = s.Stop()
			return nil, fmt.Errorf("the NBI simulator printed %q, not the address it serves", line)
		}
		s.URL = match[1]
	case <-s.exited:
		_ = os.RemoveAll(workDir)
		return nil, fmt.Errorf("the NBI simulator exited at start: %v", cmd.ProcessState)
	case <-ctx.Done():
		_ = s.Stop()
		return nil, ctx.Err()
	}
	if opts.Latency > 0 {
		if err := s.call(ctx, http.MethodPost, "/sim/v1/faults", map[string]string{"latency": opts.Latency.String()}, nil); err != nil {
			_ = s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// readOutput hands the first line to banner and drains the rest (one line per request), so
// that the simulator never blocks on a full pipe.
func (s *Simulator) readOutput(stdout io.Reader, banner chan<- string) {
	scanner := bufio.NewScanner(stdout)
	if scanner.Scan() {
		banner <- scanner.Text()
	}
	_, _ = io.Copy(io.Discard, stdout)
}

// Stats returns the NBI request counters since start or the last ResetStats.
func (s *Simulator) Stats(ctx context.Context) (nbisim.Stats, error) {
	var stats nbisim.Stats
	err := s.call(ctx, http.MethodGet, "/sim/v1/stats", nil, &stats)
	return stats, err
}

// ResetStats zeroes the request counters.
func (s *Simulator) ResetStats(ctx context.Context) error {
	return s.call(ctx, http.MethodDelete, "/sim/v1/stats", nil, nil)
}

// State returns the simulator's state dump: packages, NS instances and their operations.
func (s *Simulator) State(ctx context.Context) (nbisim.State, error) {
	var state nbisim.State
	err := s.call(ctx, http.MethodGet, "/sim/v1/state", nil, &state)
	return state, err
}

// Stop ends the simulator (SIGTERM) and waits for it.
func (s *Simulator) Stop() error {
	defer func() { _ = os.RemoveAll(s.workDir) }()
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(10 * time.Second):
		return s.cmd.Process.Kill()
	}
}

// call sends a control API request with an optional JSON body and decodes the JSON answer
// into out (nil: ignore it).
func (s *Simulator) call(ctx context.Context, method, path string, body, out any) error {
	return nbisim.ControlClient{URL: s.URL, HTTPClient: s.control}.Call(ctx, method, path, body, out)
}
