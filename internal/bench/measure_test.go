package bench

import (
	"os/exec"
	"testing"
	"time"
)

// The CPU time of the benchmark's child processes is found by their command names, as the
// fleets' report names kube-apiserver, etcd and the simulators.
func TestChildCPUNamesTheChildProcesses(t *testing.T) {
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Skipf("no sleep to start: %v", err)
	}
	t.Cleanup(func() {
		_ = child.Process.Kill()
		_ = child.Wait()
	})
	cpu, err := ChildCPU()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cpu["sleep"]; !ok {
		t.Errorf("ChildCPU = %v, without the child process sleep", cpu)
	}
}

// A process that ended meanwhile takes its time with it: what another of its name spent since
// is never below zero.
func TestCPUSinceCountsEachCommand(t *testing.T) {
	spent := cpuSince(map[string]time.Duration{"etcd": 5 * time.Second, "osm-nbi-sim": 9 * time.Second},
		map[string]time.Duration{"etcd": 7 * time.Second, "osm-nbi-sim": 2 * time.Second, "kube-apiserver": time.Second})
	want := map[string]time.Duration{"etcd": 2 * time.Second, "osm-nbi-sim": 0, "kube-apiserver": time.Second}
	for command, d := range want {
		if spent[command] != d {
			t.Errorf("%s: %s, want %s", command, spent[command], d)
		}
	}
}
