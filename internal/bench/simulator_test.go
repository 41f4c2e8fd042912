package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// The test binary doubles as the simulator that TestStartSimulator starts: with
// fakeSimulatorEnv set it answers 200 OK on its --listen address, as cmd/osm-nbi-sim answers
// the readiness check and the fault that sets the latency.
const fakeSimulatorEnv = "BENCH_TEST_FAKE_SIMULATOR"

func TestMain(m *testing.M) {
	if os.Getenv(fakeSimulatorEnv) != "" {
		for _, arg := range os.Args[1:] {
			if listen, ok := strings.CutPrefix(arg, "--listen="); ok {
				fmt.Println(http.ListenAndServe(listen, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
			}
		}
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// fakeSimulator writes a script that stands for cmd/osm-nbi-sim: it records its arguments in
// args, then runs body.
func fakeSimulator(t *testing.T, body string) (binary, args string) {
	t.Helper()
	dir := t.TempDir()
	binary, args = filepath.Join(dir, "osm-nbi-sim"), filepath.Join(dir, "args")
	script := "#!/bin/sh\necho \"$@\" > " + args + "\n" + body + "\n"
	if err := os.WriteFile(binary, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return binary, args
}

func TestStartSimulator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tests := []struct {
		name, body, wantErr string
	}{
		{name: "serves", body: fakeSimulatorEnv + "=1 exec " + os.Args[0] + ` "$@"`},
		{name: "an exit at start", body: "exit 3", wantErr: "exited before it was ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			binary, args := fakeSimulator(t, tt.body)
			sim, err := StartSimulator(ctx, SimulatorOptions{Binary: binary, Credentials: testCredentials, VIMAccount: VIMAccount,
				OperationDelay: time.Second, Latency: time.Millisecond})
			recorded, readErr := os.ReadFile(args)
			if readErr != nil {
				t.Fatal(readErr)
			}
			if got := string(recorded); strings.Contains(got, testCredentials.Password) || !strings.Contains(got, "--password-file=") ||
				!strings.Contains(got, "--operation-delay=1s") || !strings.Contains(got, "--vim-account=site1") {
				t.Errorf("arguments %q: want the password in a file, the operation delay and the VIM account", got)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("StartSimulator error = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(sim.URL(), "http://127.0.0.1:") {
				t.Errorf("URL = %q, want one on loopback", sim.URL())
			}
			if err := sim.Stop(); err != nil {
				t.Errorf("Stop: %v", err)
			}
			if _, err := os.Stat(sim.workDir); !os.IsNotExist(err) {
				t.Errorf("the password file's folder is still there after Stop: %v", err)
			}
		})
	}
}

func TestDeploymentWatchWakesWaiters(t *testing.T) {
	w := newDeploymentWatch()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ready := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"}}
	ready.Status.LastAppliedRevision = "main@sha1:1"
	ready.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}
	tenant := &Tenant{op: &Operator{watch: w}, namespace: "ns"}
	done := make(chan error)
	go func() { done <- tenant.WaitApplied(ctx, "d", "main@sha1:1") }()
	w.OnAdd(&gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"}}, false)
	w.OnUpdate(nil, ready)
	if err := <-done; err != nil {
		t.Errorf("WaitApplied: %v", err)
	}
	refused := ready.DeepCopy()
	refused.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "ValidationFailed",
		Message: `vimAccountName "mylocation1" is not a VIM account of OSM`}}
	w.OnUpdate(nil, refused)
	cancelled, cancelNow := context.WithCancel(ctx)
	cancelNow()
	err := tenant.WaitApplied(cancelled, "d", "main@sha1:2")
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), `Ready=False ValidationFailed: vimAccountName "mylocation1"`) {
		t.Errorf("WaitApplied of a revision never applied: %v, want the cancellation and why it is not Ready", err)
	}
}

// WaitAllApplied ends when the last OsmDeployment is applied, whatever the order they become so
// in, and counts those applied when it ends, also when it stops waiting.
func TestWaitAllAppliedFollowsEveryOsmDeployment(t *testing.T) {
	w := newDeploymentWatch()
	tenant := &Tenant{op: &Operator{watch: w}, namespace: "ns"}
	appliedAs := func(name string) *gitopsv1alpha1.OsmDeployment {
		d := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		d.Status.LastAppliedRevision = "main@sha1:1"
		d.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}
		return d
	}
	revisions := map[string]string{"a": "main@sha1:1", "b": "main@sha1:1", "c": "main@sha1:1"}
	w.OnAdd(appliedAs("c"), false)
	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	if ready, err := tenant.WaitAllApplied(cancelled, revisions); ready != 1 || !errors.Is(err, context.Canceled) {
		t.Errorf("WaitAllApplied with c applied alone: %d, %v; want 1 and the cancellation", ready, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan int)
	go func() {
		ready, err := tenant.WaitAllApplied(ctx, revisions)
		if err != nil {
			t.Errorf("WaitAllApplied: %v", err)
		}
		done <- ready
	}()
	w.OnAdd(appliedAs("b"), false)
	w.OnAdd(appliedAs("a"), false)
	if ready := <-done; ready != 3 {
		t.Errorf("WaitAllApplied counted %d, want 3", ready)
	}
}
