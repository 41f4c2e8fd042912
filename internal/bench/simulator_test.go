package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

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
		name, body, wantURL, wantErr string
	}{
		{
			name:    "reads the address from the banner",
			body:    `echo 'osm-nbi-sim: serving the OSM NBI at http://127.0.0.1:40123/osm (control API at http://127.0.0.1:40123/sim/v1), user "u"'; exec tail -f /dev/null`,
			wantURL: "http://127.0.0.1:40123",
		},
		{name: "an unexpected banner", body: "echo hello; exec tail -f /dev/null", wantErr: `printed "hello"`},
		{name: "an exit at start", body: "exit 3", wantErr: "exited at start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			binary, args := fakeSimulator(t, tt.body)
			sim, err := StartSimulator(ctx, SimulatorOptions{Binary: binary, Credentials: testCredentials, VIMAccount: VIMAccount, OperationDelay: time.Second})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("StartSimulator error = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sim.URL != tt.wantURL {
				t.Errorf("URL = %q, want %q", sim.URL, tt.wantURL)
			}
			if err := sim.Stop(); err != nil {
				t.Errorf("Stop: %v", err)
			}
			recorded, err := os.ReadFile(args)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(recorded); strings.Contains(got, testCredentials.Password) || !strings.Contains(got, "--password-file=") ||
				!strings.Contains(got, "--operation-delay=1s") || !strings.Contains(got, "--vim-account=site1") {
				t.Errorf("arguments %q: want the password in a file, the operation delay and the VIM account", got)
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
	cancelled, cancelNow := context.WithCancel(ctx)
	cancelNow()
	if err := tenant.WaitApplied(cancelled, "d", "main@sha1:2"); err == nil {
		t.Error("WaitApplied of a revision never applied returned without error")
	}
}
