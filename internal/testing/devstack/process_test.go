package devstack

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/procfs"
)

// newHelperProcess returns a Process that runs the test binary in helper mode.
func newHelperProcess(t *testing.T, mode string) *Process {
	t.Helper()
	port, err := freePort("helper")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := &Process{
		name:     "helper",
		path:     os.Args[0],
		env:      []string{helperModeEnv + "=" + mode, helperAddrEnv + "=" + hostPort(port)},
		readyURL: "http://" + hostPort(port) + "/readyz",
		logPath:  filepath.Join(dir, "helper.log"),
		pids:     pidDir(dir),
		progress: io.Discard,
	}
	t.Cleanup(func() { _ = p.Stop() })
	return p
}

func boundedContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestProcessStartKillRestartStop(t *testing.T) {
	ctx := boundedContext(t)
	p := newHelperProcess(t, helperServe)
	client := &http.Client{Timeout: 2 * time.Second}

	if err := p.start(ctx); err != nil {
		t.Fatal(err)
	}
	first := p.Pid()
	if first == 0 || !answersOK(ctx, client, p.ReadyURL()) {
		t.Fatalf("after start: pid %d, ready %v; want a pid and ready", first, answersOK(ctx, client, p.ReadyURL()))
	}
	if _, err := os.Stat(p.pids.path(p.Name())); err != nil {
		t.Errorf("no pid file while running: %v", err)
	}

	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if p.Pid() != 0 || answersOK(ctx, client, p.ReadyURL()) {
		t.Fatalf("after Kill: pid %d, ready %v; want neither", p.Pid(), answersOK(ctx, client, p.ReadyURL()))
	}
	if _, err := os.Stat(p.pids.path(p.Name())); !os.IsNotExist(err) {
		t.Errorf("pid file left after Kill: %v", err)
	}

	if err := p.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if second := p.Pid(); second == 0 || second == first || !answersOK(ctx, client, p.ReadyURL()) {
		t.Fatalf("after Restart: pid %d (was %d); want a new pid and ready", second, first)
	}

	for range 2 { // stopping a stopped process does nothing
		if err := p.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	if p.Pid() != 0 || answersOK(ctx, client, p.ReadyURL()) {
		t.Errorf("after Stop: pid %d; want no process", p.Pid())
	}
}

func TestProcessThatExitsEarlyQuotesItsLog(t *testing.T) {
	p := newHelperProcess(t, helperFail)
	err := p.start(boundedContext(t))
	if err == nil {
		t.Fatal("start succeeded, want an error")
	}
	for _, want := range []string{"helper exited before it was ready", "exit status 2", helperFailure} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestProcessRefusesASecondStart(t *testing.T) {
	ctx := boundedContext(t)
	p := newHelperProcess(t, helperServe)
	if err := p.start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.start(ctx); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second start: error %v, want 'already running'", err)
	}
}

func TestProcessRestartWithExtraArguments(t *testing.T) {
	ctx := boundedContext(t)
	p := newHelperProcess(t, helperServe)
	p.args = []string{"--base"}
	if err := p.start(ctx); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		restart func() error
		want    []string
	}{
		{"RestartWith an extra flag", func() error { return p.RestartWith(ctx, "--extra=1") }, []string{"--base", "--extra=1"}},
		{"Restart keeps it", func() error { return p.Restart(ctx) }, []string{"--base", "--extra=1"}},
		{"RestartWith nothing drops it", func() error { return p.RestartWith(ctx) }, []string{"--base"}},
	}
	for _, step := range steps {
		if err := step.restart(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if diff := cmp.Diff(step.want, commandLineArgs(t, p.Pid())); diff != "" {
			t.Errorf("%s: arguments (-want +got):\n%s", step.name, diff)
		}
	}
}

// commandLineArgs returns the arguments of the running process pid, without the program.
func commandLineArgs(t *testing.T, pid int) []string {
	t.Helper()
	proc, err := procfs.NewProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	cmdline, err := proc.CmdLine()
	if err != nil {
		t.Fatal(err)
	}
	return cmdline[1:]
}
