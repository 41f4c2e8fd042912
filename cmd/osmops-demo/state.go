package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// Files of the demo's state folder, beside the stack's own.
const (
	// pidFileName holds the supervisor's pid.
	pidFileName = "demo.pid"
	// infoFileName holds what `up` prints, written by the supervisor once the demo is ready.
	infoFileName = "demo.json"
	// supervisorLogName is the supervisor's log, in the stack's log folder.
	supervisorLogName = "logs/supervisor.log"
)

// demoInfo is what a user needs to use the running demo.
type demoInfo struct {
	SupervisorPID int    `json:"supervisorPID"`
	WorkDir       string `json:"workDir"`
	Kubeconfig    string `json:"kubeconfig"`
	RepoURL       string `json:"repoURL"`
	SimulatorURL  string `json:"simulatorURL"`
	// Sites are the sites of the rollout, in wave order: the first on SimulatorURL.
	Sites []demoSite `json:"sites"`
}

func writeInfo(info demoInfo) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(info.WorkDir, infoFileName), data, 0o644)
}

func readInfo(workDir string) (demoInfo, error) {
	var info demoInfo
	data, err := os.ReadFile(filepath.Join(workDir, infoFileName))
	if err != nil {
		return info, err
	}
	return info, json.Unmarshal(data, &info)
}

func writeSupervisorPID(workDir string) error {
	return os.WriteFile(filepath.Join(workDir, pidFileName), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

// removeStateFiles removes the files that say the demo runs.
func removeStateFiles(workDir string) {
	for _, name := range []string{pidFileName, infoFileName} {
		_ = os.Remove(filepath.Join(workDir, name))
	}
}

// runningSupervisor returns the pid of the demo's supervisor, and whether it runs. The command
// line is checked so that a pid the system gave to another program since is not mistaken for it.
func runningSupervisor(workDir string) (int, bool) {
	data, err := os.ReadFile(filepath.Join(workDir, pidFileName))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, false
	}
	return pid, isSupervisor(pid, workDir)
}

// isSupervisor reports whether pid is a live supervisor of the demo in workDir.
func isSupervisor(pid int, workDir string) bool {
	proc, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	stat, err := proc.Stat()
	if err != nil || stat.State == "Z" {
		return false
	}
	cmdline, err := proc.CmdLine()
	return err == nil && slices.Contains(cmdline, superviseCommand) && slices.Contains(cmdline, "--workdir="+workDir)
}
