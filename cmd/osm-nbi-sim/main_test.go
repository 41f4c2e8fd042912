package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/nbisim"
)

// lineWriter passes each written line to a channel.
type lineWriter struct {
	mu      sync.Mutex
	partial bytes.Buffer
	lines   chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial.Write(p)
	for {
		line, err := w.partial.ReadString('\n')
		if err != nil {
			w.partial.WriteString(line)
			return len(p), nil
		}
		w.lines <- strings.TrimSuffix(line, "\n")
	}
}

func (w *lineWriter) next(t *testing.T) string {
	t.Helper()
	select {
	case line := <-w.lines:
		return line
	case <-time.After(10 * time.Second):
		t.Fatal("no output line within 10s")
		return ""
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunServesUntilCancelled(t *testing.T) {
	passwordFile := writeFile(t, "password", "s3cret-pass\n")
	out := &lineWriter{lines: make(chan string, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--password-file", passwordFile, "--project", "demo",
			"--vim-account", "edge", "--vim-account", "core:nok8s", "--operation-delay", "0s"}, out, io.Discard)
	}()

	startup := out.next(t)
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(startup)
	if url == "" || !strings.Contains(startup, url+"/osm") {
		t.Fatalf("startup line %q has no URL", startup)
	}
	login, err := http.Post(url+"/osm/admin/v1/tokens", "application/json",
		strings.NewReader(`{"username":"admin","password":"s3cret-pass","project_id":"demo"}`))
	if err != nil {
		t.Fatal(err)
	}
	var token struct{ ID string }
	err = json.NewDecoder(login.Body).Decode(&token)
	login.Body.Close()
	if err != nil || login.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %v", login.StatusCode, err)
	}
	logLine := out.next(t)
	if !strings.Contains(logLine, "POST /osm/admin/v1/tokens 200") {
		t.Errorf("request log line %q", logLine)
	}

	request, _ := http.NewRequest("GET", url+"/sim/v1/state", nil)
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	var state nbisim.State
	err = json.NewDecoder(response.Body).Decode(&state)
	response.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var vims []string
	for _, vim := range state.VIMAccounts {
		vims = append(vims, vim.Name+":"+map[bool]string{true: "k8s", false: "nok8s"}[len(vim.K8sClusters) > 0])
	}
	if diff := cmp.Diff([]string{"edge:k8s", "core:nok8s"}, vims); diff != "" {
		t.Errorf("VIM accounts (-want +got):\n%s", diff)
	}

	request, _ = http.NewRequest("DELETE", url+"/osm/admin/v1/tokens/"+token.ID, nil)
	if response, err = http.DefaultClient.Do(request); err != nil {
		t.Fatal(err)
	}
	response.Body.Close()
	for range 2 {
		if line := out.next(t); strings.Contains(line, token.ID) || strings.Contains(line, "s3cret") {
			t.Errorf("a log line holds a secret: %q", line)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop")
	}
	if last := out.next(t); last != "osm-nbi-sim: stopped" {
		t.Errorf("last line %q", last)
	}
}

func TestOptionErrors(t *testing.T) {
	badSeed := writeFile(t, "seed.yaml", "vimAccounts:\n  - name: a\n    colour: red\n")
	noName := writeFile(t, "noname.yaml", "vimAccounts:\n  - type: openstack\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--vim-account", "a:maybe"}, `--vim-account "a:maybe": want NAME or NAME:nok8s`},
		{[]string{"--tls-cert", "cert.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--password", "x", "--password-file", "f"}, "give --password or --password-file, not both"},
		{[]string{"--seed-file", badSeed}, "seed file " + badSeed + ": yaml: unmarshal errors:\n  line 3: field colour not found"},
		{[]string{"--seed-file", noName}, "seed file " + noName + ": vimAccounts[0].name is missing"},
		{[]string{"--operation-delay", "-1s"}, "--operation-delay and --autoremove-delay must not be negative, --token-lifetime must be positive"},
		{[]string{"--autoremove-delay", "-1s"}, "--operation-delay and --autoremove-delay must not be negative, --token-lifetime must be positive"},
		{[]string{"extra"}, "unexpected arguments: extra"},
		{[]string{"--lcm-profile", "fast"}, `--lcm-profile "fast": want one of real`},
		{[]string{"--request-log-size", "0"}, "--request-log-size must be positive"},
	}
	for _, test := range tests {
		err := run(context.Background(), append([]string{"--listen", "127.0.0.1:0"}, test.args...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("run %v: error %v, want %q", test.args, err, test.want)
		}
	}
}

func TestSeedFile(t *testing.T) {
	seed := writeFile(t, "seed.yaml", "vimAccounts:\n  - name: a\n    type: vmware\n  - name: b\n    k8sCluster: false\n")
	o := &options{seedFile: seed, vimAccounts: []string{"c"}}
	cfg, err := o.config(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []nbisim.VIMAccount{{Name: "a", Type: "vmware"}, {Name: "b", NoK8sCluster: true}, {Name: "c"}}
	if diff := cmp.Diff(want, cfg.VIMAccounts); diff != "" {
		t.Errorf("accounts (-want +got):\n%s", diff)
	}
	if cfg.Charts != nil {
		t.Errorf("charts %v, want none (the simulator's default catalog)", cfg.Charts)
	}
}

// The seed file's charts and --chart make the catalog of the Helm repositories.
func TestChartCatalogFlags(t *testing.T) {
	seed := writeFile(t, "seed.yaml", "charts:\n  - stable/openldap:1.2.7\n  - stable/openldap:1.2.9\n")
	o := &options{seedFile: seed, charts: []string{"bitnami/openldap:2.0.0"}}
	cfg, err := o.config(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := nbisim.ChartCatalog{"stable": {"openldap": {"1.2.7", "1.2.9"}}, "bitnami": {"openldap": {"2.0.0"}}}
	if diff := cmp.Diff(want, cfg.Charts); diff != "" {
		t.Errorf("charts (-want +got):\n%s", diff)
	}
	err = run(context.Background(), []string{"--listen", "127.0.0.1:0", "--chart", "stable/openldap"}, io.Discard, io.Discard)
	if want := `chart "stable/openldap": want <repo>/<chart>:<version>`; err == nil || err.Error() != want {
		t.Errorf("run --chart stable/openldap: %v, want %q", err, want)
	}
}

// --lcm-profile real gives the simulator the LCM times measured on OSM 19.
func TestLCMProfileFlag(t *testing.T) {
	o, err := parseOptions([]string{"--lcm-profile", "real"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := o.config(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	real := nbisim.LCMProfiles["real"]
	if cfg.PickupDelay != real.PickupDelay || cfg.PickupInterval != real.PickupInterval || !cmp.Equal(cfg.OperationDelays, real.OperationDelays) {
		t.Errorf("config: pickup %s every %s, delays %v; want the profile's %+v", cfg.PickupDelay, cfg.PickupInterval, cfg.OperationDelays, real)
	}
}
