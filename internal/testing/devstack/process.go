package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Timeouts of the stack's processes.
const (
	// startTimeout bounds the wait for a process to answer its readiness URL; source-controller
	// takes a few seconds on a busy 2-core machine.
	startTimeout = 2 * time.Minute
	// stopGrace is how long a process may take to exit after SIGTERM before it gets SIGKILL.
	stopGrace = 10 * time.Second
	// readyPollInterval is the pause between two readiness checks.
	readyPollInterval = 100 * time.Millisecond
	// logTailLines is how much of a log an error quotes.
	logTailLines = 20
)

// Process is a program of the stack, run on loopback with its standard output and error
// appended to a log file. It counts as started once its readiness URL answers 200 OK.
type Process struct {
	name     string
	path     string
	args     []string
	env      []string
	readyURL string
	logPath  string
	pids     pidDir
	progress io.Writer

	mu sync.Mutex
	// extraArgs follow args; RestartWith sets them.
	extraArgs []string
	cmd       *exec.Cmd
	// exited is closed once the current command has exited and waitErr is set.
	exited  chan struct{}
	waitErr error
}

// Name returns the process's name, which also names its log file.
func (p *Process) Name() string { return p.name }

// LogPath returns the path of the process's log file.
func (p *Process) LogPath() string { return p.logPath }

// ReadyURL returns the URL that answers 200 OK while the process is ready.
func (p *Process) ReadyURL() string { return p.readyURL }

// Pid returns the process id, or 0 when the process is not running.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.runningLocked() {
		return 0
	}
	return p.cmd.Process.Pid
}

// Kill ends the process with SIGKILL, as a crash would, and waits until it is gone.
func (p *Process) Kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.signalAndWaitLocked(syscall.SIGKILL)
}

// Stop asks the process to exit (SIGTERM), kills it if it is still there after a grace time,
// and waits until it is gone. Stopping a stopped process does nothing.
func (p *Process) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.signalAndWaitLocked(syscall.SIGTERM)
}

// Restart stops the process if it runs, starts it again with the same arguments and waits
// until it is ready.
func (p *Process) Restart(ctx context.Context) error {
	if err := p.Stop(); err != nil {
		return err
	}
	return p.start(ctx)
}

// RestartWith restarts the process as Restart does, with extraArgs after the arguments it was
// made with. They replace those of an earlier RestartWith and hold for later restarts, so that
// RestartWith with none goes back to the original arguments: a test that needs the operator
// with another flag restarts it with the flag and, in its cleanup, without.
func (p *Process) RestartWith(ctx context.Context, extraArgs ...string) error {
	if err := p.Stop(); err != nil {
		return err
	}
	p.mu.Lock()
	p.extraArgs = slices.Clone(extraArgs)
	p.mu.Unlock()
	return p.start(ctx)
}

// start launches the process and waits until its readiness URL answers.
func (p *Process) start(ctx context.Context) error {
	exited, err := p.launch()
	if err != nil {
		return err
	}
	return p.waitReady(ctx, exited)
}

func (p *Process) launch() (<-chan struct{}, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runningLocked() {
		return nil, fmt.Errorf("%s is already running (pid %d)", p.name, p.cmd.Process.Pid)
	}
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log of %s: %w", p.name, err)
	}
	// The child holds its own copy of the descriptor.
	defer logFile.Close()

	cmd := exec.Command(p.path, slices.Concat(p.args, p.extraArgs)...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Should the caller die without stopping the stack (a test binary killed on timeout), its
	// processes go with it instead of holding on to their ports.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (%s): %w", p.name, p.path, err)
	}
	pid := cmd.Process.Pid
	if err := p.pids.write(p.name, pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	exited := make(chan struct{})
	p.cmd, p.exited = cmd, exited
	go func() {
		err := cmd.Wait()
		p.pids.remove(p.name)
		p.waitErr = err
		close(exited)
	}()
	fmt.Fprintf(p.progress, "started %s (pid %d), log in %s\n", p.name, pid, p.logPath)
	return exited, nil
}

// waitReady polls the readiness URL until it answers 200, the process exits or time runs out.
func (p *Process) waitReady(ctx context.Context, exited <-chan struct{}) error {
	client := &http.Client{Timeout: 2 * time.Second}
	err := wait.PollUntilContextTimeout(ctx, readyPollInterval, startTimeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-exited:
			return false, fmt.Errorf("%s exited before it was ready (%v); the end of %s:\n%s",
				p.name, p.waitErr, p.logPath, logTail(p.logPath, logTailLines))
		default:
		}
		return answersOK(ctx, client, p.readyURL), nil
	})
	if err != nil && wait.Interrupted(err) {
		return fmt.Errorf("%s did not become ready at %s (waited at most %s): %w; the end of %s:\n%s",
			p.name, p.readyURL, startTimeout, err, p.logPath, logTail(p.logPath, logTailLines))
	}
	return err
}

// answersOK reports whether a GET of url answers 200 OK.
func answersOK(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

func (p *Process) runningLocked() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// signalAndWaitLocked sends sig and waits for the exit, with SIGKILL after stopGrace.
func (p *Process) signalAndWaitLocked(sig syscall.Signal) error {
	if !p.runningLocked() {
		return nil
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signalling %s: %w", p.name, err)
	}
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case <-p.exited:
	case <-grace.C:
		fmt.Fprintf(p.progress, "%s did not exit within %s of %s; killing it\n", p.name, stopGrace, sig)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	fmt.Fprintf(p.progress, "stopped %s (%s)\n", p.name, sig)
	return nil
}

// logTail returns the last lines of a log file, for error messages.
func logTail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read the log: %v)", err)
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
