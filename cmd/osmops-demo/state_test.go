package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInfoRoundTrip(t *testing.T) {
	info := demoInfo{SupervisorPID: 7, WorkDir: t.TempDir(), Kubeconfig: "k", RepoURL: "r", SimulatorURL: "s"}
	if err := writeInfo(info); err != nil {
		t.Fatal(err)
	}
	got, err := readInfo(info.WorkDir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(info, got); diff != "" {
		t.Errorf("info (-want +got):\n%s", diff)
	}
}

func TestRunningSupervisorIgnoresOtherPrograms(t *testing.T) {
	workDir := t.TempDir()
	if _, running := runningSupervisor(workDir); running {
		t.Error("a supervisor runs without a pid file")
	}
	// This test binary is alive but is no supervisor.
	if err := writeSupervisorPID(workDir); err != nil {
		t.Fatal(err)
	}
	pid, running := runningSupervisor(workDir)
	if running || pid != os.Getpid() {
		t.Errorf("runningSupervisor() = %d, %v; want %d, false", pid, running, os.Getpid())
	}
}

func TestClearWorkDir(t *testing.T) {
	parent := t.TempDir()
	demoDir := filepath.Join(parent, "demo")
	otherDir := filepath.Join(parent, "other")
	for path, content := range map[string]string{
		filepath.Join(demoDir, supervisorLogName): "log",
		filepath.Join(demoDir, "etcd", "db"):      "data",
		filepath.Join(otherDir, "precious.txt"):   "keep me",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name       string
		dir        string
		wantErr    bool
		wantExists bool
	}{
		{name: "absent", dir: filepath.Join(parent, "absent")},
		{name: "a demo's folder", dir: demoDir},
		{name: "another folder", dir: otherDir, wantErr: true, wantExists: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := clearWorkDir(tt.dir)
			if (err != nil) != tt.wantErr {
				t.Fatalf("clearWorkDir(%s) = %v, want error %v", tt.dir, err, tt.wantErr)
			}
			if _, err := os.Stat(tt.dir); os.IsNotExist(err) == tt.wantExists {
				t.Errorf("%s exists = %v, want %v", tt.dir, !os.IsNotExist(err), tt.wantExists)
			}
		})
	}
}
