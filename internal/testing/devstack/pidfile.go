package devstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"k8s.io/apimachinery/pkg/util/wait"
)

// pidDir is the folder with one file per running process of the stack, so that the processes
// a crashed supervisor left behind can be found and stopped (StopLeftovers).
type pidDir string

// pidRecord identifies one process. The executable and start time guard against a pid the
// system has since given to another program.
type pidRecord struct {
	PID        int    `json:"pid"`
	Executable string `json:"executable"`
	StartTime  uint64 `json:"startTime"`
}

func (d pidDir) path(name string) string { return filepath.Join(string(d), name+".json") }

// write records the running process pid under name.
func (d pidDir) write(name string, pid int) error {
	record, err := identify(pid)
	if err != nil {
		return fmt.Errorf("recording the pid of %s: %w", name, err)
	}
	data, err := json.Marshal(record)
	if err != nil {
		return err
	}
	if err := os.WriteFile(d.path(name), data, 0o644); err != nil {
		return fmt.Errorf("recording the pid of %s: %w", name, err)
	}
	return nil
}

// remove forgets the process recorded under name.
func (d pidDir) remove(name string) { _ = os.Remove(d.path(name)) }

// identify reads what tells the process pid apart from a later one with the same pid.
func identify(pid int) (pidRecord, error) {
	proc, err := procfs.NewProc(pid)
	if err != nil {
		return pidRecord{}, err
	}
	executable, err := proc.Executable()
	if err != nil {
		return pidRecord{}, err
	}
	stat, err := proc.Stat()
	if err != nil {
		return pidRecord{}, err
	}
	return pidRecord{PID: pid, Executable: executable, StartTime: stat.Starttime}, nil
}

// alive reports whether the recorded process still runs (a zombie counts as gone).
func (r pidRecord) alive() bool {
	proc, err := procfs.NewProc(r.PID)
	if err != nil {
		return false
	}
	stat, err := proc.Stat()
	if err != nil || stat.State == "Z" || stat.Starttime != r.StartTime {
		return false
	}
	executable, err := proc.Executable()
	return err == nil && executable == r.Executable
}

// pidDirName is the folder of the pid files under a stack's WorkDir.
const pidDirName = "pids"

// StopLeftovers stops the processes that the pid files of a stack's workDir still list: those a
// supervisor left behind when it died without stopping its stack. Each gets SIGTERM, then
// SIGKILL after a grace time. Files of processes that are gone are removed. It returns the
// names of the processes it stopped.
func StopLeftovers(workDir string, progress io.Writer) ([]string, error) {
	dir := pidDir(filepath.Join(workDir, pidDirName))
	files, err := filepath.Glob(dir.path("*"))
	if err != nil {
		return nil, err
	}
	var stopped []string
	var errs []error
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		record, err := readPIDFile(file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if record.alive() {
			fmt.Fprintf(progress, "stopping %s (pid %d), left over by a previous run\n", name, record.PID)
			if err := terminate(record); err != nil {
				errs = append(errs, fmt.Errorf("stopping %s (pid %d): %w", name, record.PID, err))
				continue
			}
			stopped = append(stopped, name)
		}
		dir.remove(name)
	}
	slices.Sort(stopped)
	return stopped, errors.Join(errs...)
}

func readPIDFile(path string) (pidRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return pidRecord{}, err
	}
	var record pidRecord
	if err := json.Unmarshal(data, &record); err != nil || record.PID <= 0 {
		return pidRecord{}, fmt.Errorf("%s: not a pid file of the stack", path)
	}
	return record, nil
}

// terminate sends SIGTERM to a process that is not our child, and SIGKILL after stopGrace;
// not being its parent, it can only poll for the exit.
func terminate(record pidRecord) error {
	if err := syscall.Kill(record.PID, syscall.SIGTERM); err != nil {
		return ignoreGone(err)
	}
	if waitGone(record, stopGrace) {
		return nil
	}
	if err := syscall.Kill(record.PID, syscall.SIGKILL); err != nil {
		return ignoreGone(err)
	}
	if !waitGone(record, stopGrace) {
		return errors.New("still running after SIGKILL")
	}
	return nil
}

func waitGone(record pidRecord, timeout time.Duration) bool {
	err := wait.PollUntilContextTimeout(context.Background(), readyPollInterval, timeout, true,
		func(context.Context) (bool, error) { return !record.alive(), nil })
	return err == nil
}

func ignoreGone(err error) error {
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
