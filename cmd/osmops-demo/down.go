package main

import (
	"context"
	"fmt"
	"io"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/osmops/osmops/internal/testing/devstack"
)

// supervisorStopTimeout is how long the supervisor may take to stop its stack after SIGTERM;
// each of its processes has a grace time of its own.
const supervisorStopTimeout = time.Minute

// down stops the supervisor, which stops its stack, then whatever the pid files still list:
// the processes of a supervisor that crashed.
func down(cfg config, stdout io.Writer) error {
	pid, running := runningSupervisor(cfg.workDir)
	if running {
		fmt.Fprintf(stdout, "stopping the demo's supervisor (pid %d)\n", pid)
		if err := stopSupervisor(pid, cfg.workDir); err != nil {
			return err
		}
	}
	leftovers, err := devstack.StopLeftovers(cfg.workDir, stdout)
	if err != nil {
		return err
	}
	removeStateFiles(cfg.workDir)
	if !running && len(leftovers) == 0 {
		fmt.Fprintln(stdout, "the demo is not running")
		return nil
	}
	fmt.Fprintf(stdout, "the demo is stopped; its logs stay in %s/logs\n", cfg.workDir)
	return nil
}

// stopSupervisor sends SIGTERM and waits for the supervisor to exit, with SIGKILL when it takes
// too long (its stack's processes are then stopped from their pid files).
func stopSupervisor(pid int, workDir string) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("signalling the supervisor (pid %d): %w", pid, err)
	}
	gone := func(context.Context) (bool, error) { return !isSupervisor(pid, workDir), nil }
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, supervisorStopTimeout, true, gone)
	if err == nil {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("killing the supervisor (pid %d): %w", pid, err)
	}
	return wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, supervisorStopTimeout, true, gone)
}
