package devstack

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// startSleeper starts a process that is not a Process of the stack, as those of a crashed
// supervisor are not; its end is reported on the returned channel.
func startSleeper(t *testing.T) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	return cmd, exited
}

// newPIDDir returns a stack's work folder with its pid folder.
func newPIDDir(t *testing.T) (string, pidDir) {
	workDir := t.TempDir()
	pids := pidDir(filepath.Join(workDir, pidDirName))
	if err := os.MkdirAll(string(pids), 0o755); err != nil {
		t.Fatal(err)
	}
	return workDir, pids
}

func TestStopLeftoversStopsRecordedProcesses(t *testing.T) {
	workDir, pids := newPIDDir(t)
	sleeper, exited := startSleeper(t)
	if err := pids.write("sleeper", sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}

	stopped, err := StopLeftovers(workDir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"sleeper"}, stopped); diff != "" {
		t.Errorf("stopped (-want +got):\n%s", diff)
	}
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatal("the recorded process still runs")
	}
	if _, err := os.Stat(pids.path("sleeper")); !os.IsNotExist(err) {
		t.Errorf("pid file left: %v", err)
	}
}

func TestStopLeftoversLeavesAPidReusedByAnotherProgram(t *testing.T) {
	workDir, pids := newPIDDir(t)
	sleeper, exited := startSleeper(t)
	record, err := identify(sleeper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for name, reused := range map[string]pidRecord{
		"other-start": {PID: record.PID, Executable: record.Executable, StartTime: record.StartTime + 1},
		"other-exe":   {PID: record.PID, Executable: "/usr/bin/other", StartTime: record.StartTime},
	} {
		if err := os.WriteFile(pids.path(name), mustJSON(t, reused), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	stopped, err := StopLeftovers(workDir, io.Discard)
	if err != nil || len(stopped) != 0 {
		t.Fatalf("StopLeftovers() = %v, %v; want nothing stopped", stopped, err)
	}
	select {
	case <-exited:
		t.Fatal("a process that only shares a recorded pid was stopped")
	default:
	}
	if files, _ := filepath.Glob(pids.path("*")); len(files) != 0 {
		t.Errorf("stale pid files left: %v", files)
	}
}

func TestStopLeftoversWithoutPidFiles(t *testing.T) {
	stopped, err := StopLeftovers(t.TempDir(), io.Discard)
	if err != nil || len(stopped) != 0 {
		t.Errorf("StopLeftovers() = %v, %v; want nothing", stopped, err)
	}
}
