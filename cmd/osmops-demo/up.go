package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/osmops/osmops/internal/testing/devstack"
)

// reportFD is the descriptor on which the supervisor finds the pipe to `up`: the first of
// exec.Cmd's ExtraFiles.
const reportFD = 3

// up starts the supervisor in the background, copies its progress lines to stdout until it
// closes the pipe between them (ready, or failed), and prints how to use the demo.
func up(cfg config, stdout io.Writer) error {
	if pid, running := runningSupervisor(cfg.workDir); running {
		info, err := readInfo(cfg.workDir)
		if err != nil {
			return fmt.Errorf("the demo is already running (supervisor pid %d) but is not ready yet; `make demo-stop` stops it", pid)
		}
		fmt.Fprintf(stdout, "The demo is already running (supervisor pid %d); `make demo-stop` stops it.\n\n", pid)
		fmt.Fprint(stdout, instructions(info))
		return nil
	}
	if cfg.sourceController == "" {
		return fmt.Errorf("--source-controller is required: `make demo` passes the binary of `hack/flux-controller.sh source-controller`")
	}
	// What a crashed run left behind goes first, then its state: each run starts afresh.
	if _, err := devstack.StopLeftovers(cfg.workDir, stdout); err != nil {
		return err
	}
	if err := clearWorkDir(cfg.workDir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(cfg.workDir, supervisorLogName)), 0o755); err != nil {
		return err
	}

	if err := startSupervisor(cfg, stdout); err != nil {
		return err
	}
	info, err := readInfo(cfg.workDir)
	if err != nil {
		return fmt.Errorf("the demo did not start; see %s", filepath.Join(cfg.workDir, supervisorLogName))
	}
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, instructions(info))
	return nil
}

// startSupervisor runs this program's supervise command in a session of its own (so that it
// outlives the terminal) and relays what it reports until it closes the pipe.
func startSupervisor(cfg config, stdout io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(filepath.Join(cfg.workDir, supervisorLogName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	reports, reportWriter, err := os.Pipe()
	if err != nil {
		return err
	}
	defer reports.Close()

	cmd := exec.Command(self, append([]string{superviseCommand}, cfg.args()...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.ExtraFiles = []*os.File{reportWriter}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	// Only the supervisor may hold the writing end, or the relay below would never end.
	_ = reportWriter.Close()
	if err != nil {
		return fmt.Errorf("starting the supervisor: %w", err)
	}
	if err := cmd.Process.Release(); err != nil {
		return err
	}
	_, err = io.Copy(stdout, reports)
	return err
}

// clearWorkDir removes the state of a previous run. Only a folder that is empty or looks like a
// demo's is removed, so that a mistyped --workdir cannot wipe anything else.
func clearWorkDir(workDir string) error {
	entries, err := os.ReadDir(workDir)
	if os.IsNotExist(err) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(workDir, supervisorLogName)); err != nil {
		return fmt.Errorf("refusing to clear %s: it has no %s, so it is not a demo's folder", workDir, supervisorLogName)
	}
	return os.RemoveAll(workDir)
}
