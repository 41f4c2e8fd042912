package nbisim

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/osmops/osmops/internal/osmpkg"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// newFakeClock is a settable clock for Config.Clock.
func newFakeClock() *testingclock.FakeClock {
	return testingclock.NewFakeClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
}

// sleepRecorder is a Config.Sleep that records durations instead of waiting.
type sleepRecorder struct {
	mu    sync.Mutex
	slept []time.Duration
}

func (r *sleepRecorder) Sleep(_ context.Context, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.slept = append(r.slept, d)
}

func (r *sleepRecorder) total() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.slept...)
}

// harness drives a Server in-process, without a network.
type harness struct {
	t     testing.TB
	clock *testingclock.FakeClock
	sim   *Server
	token string
}

const testOperationDelay = 10 * time.Second

func newHarness(t testing.TB, cfg Config) *harness {
	t.Helper()
	clock := newFakeClock()
	cfg.Clock = clock.Now
	if cfg.OperationDelay == 0 {
		cfg.OperationDelay = testOperationDelay
	}
	if cfg.VIMAccounts == nil {
		cfg.VIMAccounts = []VIMAccount{{Name: "vim1"}, {Name: "vim-nok8s", NoK8sCluster: true}}
	}
	return &harness{t: t, clock: clock, sim: New(cfg)}
}

// newLoggedIn is newHarness with a token.
func newLoggedIn(t testing.TB, cfg Config) *harness {
	h := newHarness(t, cfg)
	h.login()
	return h
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic value.
func (a answer) json(t testing.TB) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", a.status, err, a.body)
	}
	return v
}

func (a answer) object(t testing.TB) map[string]any {
	t.Helper()
	o, ok := a.json(t).(map[string]any)
	if !ok {
		t.Fatalf("answer is not an object: %s", a.body)
	}
	return o
}

func (a answer) list(t testing.TB) []any {
	t.Helper()
	l, ok := a.json(t).([]any)
	if !ok {
		t.Fatalf("answer is not a list: %s", a.body)
	}
	return l
}

// request sends a request; body is JSON-encoded unless it is []byte.
func (h *harness) request(method, path string, body any, headers ...string) answer {
	h.t.Helper()
	var reader io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		reader = bytes.NewReader(b)
	case string:
		reader = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		reader = bytes.NewReader(data)
	}
	r := httptest.NewRequest(method, path, reader)
	r.Header.Set("Accept", "application/json")
	if h.token != "" {
		r.Header.Set("Authorization", "Bearer "+h.token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.sim.ServeHTTP(w, r)
	return answer{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

// must sends a request and fails the test unless the status is want.
func (h *harness) must(want int, method, path string, body any, headers ...string) answer {
	h.t.Helper()
	a := h.request(method, path, body, headers...)
	if a.status != want {
		h.t.Fatalf("%s %s: status %d, want %d: %s", method, path, a.status, want, a.body)
	}
	return a
}

func (h *harness) login() {
	h.t.Helper()
	h.token = ""
	a := h.must(http.StatusOK, "POST", "/osm/admin/v1/tokens", map[string]string{"username": "admin", "password": "admin", "project_id": "admin"})
	h.token = a.object(h.t)["id"].(string)
}

func (h *harness) vimID(name string) string {
	h.t.Helper()
	for _, vim := range h.sim.State().VIMAccounts {
		if vim.Name == name {
			return vim.ID
		}
	}
	h.t.Fatalf("no VIM account %s", name)
	return ""
}

// buildPackage builds a package from one descriptor file.
func buildPackage(t testing.TB, name, file, content string) *osmpkg.Package {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg, err := osmpkg.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// openldapPackage builds one of the OpenLDAP example's packages.
func openldapPackage(t testing.TB, name string) *osmpkg.Package {
	t.Helper()
	pkg, err := osmpkg.Build(filepath.Join(openldap.PackagesDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

func md5Of(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

// uploadTarball posts a tarball to a package endpoint.
func (h *harness) uploadTarball(endpoint string, data []byte, filename string) answer {
	h.t.Helper()
	return h.request("POST", endpoint, data,
		"Content-Type", "application/gzip", "Content-Filename", filename, "Content-File-MD5", md5Of(data))
}

const (
	vnfPackagesPath = "/osm/vnfpkgm/v1/vnf_packages_content"
	nsPackagesPath  = "/osm/nsd/v1/ns_descriptors_content"
	nsContentPath   = "/osm/nslcm/v1/ns_instances_content"
	nsInstancesPath = "/osm/nslcm/v1/ns_instances"
	operationsPath  = "/osm/nslcm/v1/ns_lcm_op_occs"
	vnfInstancePath = "/osm/nslcm/v1/vnf_instances"
)

// onboard uploads a package and returns its _id.
func (h *harness) onboard(endpoint string, pkg *osmpkg.Package) string {
	h.t.Helper()
	a := h.uploadTarball(endpoint, pkg.Tarball, pkg.Name+".tar.gz")
	if a.status != http.StatusCreated {
		h.t.Fatalf("upload of %s: status %d: %s", pkg.Name, a.status, a.body)
	}
	return a.object(h.t)["id"].(string)
}

// onboardOpenLDAP onboards the KNF and NS packages of the OpenLDAP example and returns
// the NSD's _id.
func (h *harness) onboardOpenLDAP() (vnfdID, nsdID string) {
	h.t.Helper()
	vnfdID = h.onboard(vnfPackagesPath, openldapPackage(h.t, "openldap_knf"))
	nsdID = h.onboard(nsPackagesPath, openldapPackage(h.t, "openldap_ns"))
	return vnfdID, nsdID
}

// createNS posts an NS create and returns its id and instantiate operation id.
func (h *harness) createNS(body map[string]any) (nsID, opID string) {
	h.t.Helper()
	a := h.must(http.StatusCreated, "POST", nsContentPath, body)
	o := a.object(h.t)
	return o["id"].(string), o["nslcmop_id"].(string)
}

func ldapCreateBody(name, nsdID, vimID string, params map[string]any) map[string]any {
	body := map[string]any{"nsName": name, "nsdId": nsdID, "vimAccountId": vimID, "nsDescription": "Demo LDAP"}
	if params != nil {
		body["additionalParamsForVnf"] = []any{map[string]any{
			"member-vnf-index":       "openldap",
			"additionalParamsForKdu": []any{map[string]any{"kdu_name": "ldap", "additionalParams": params}},
		}}
	}
	return body
}

func (h *harness) operation(id string) map[string]any {
	h.t.Helper()
	return h.must(http.StatusOK, "GET", operationsPath+"/"+id, nil).object(h.t)
}

func (h *harness) ns(id string) map[string]any {
	h.t.Helper()
	return h.must(http.StatusOK, "GET", nsContentPath+"/"+id, nil).object(h.t)
}

// dig follows keys and indexes into a decoded JSON value.
func dig(v any, path ...any) any {
	for _, step := range path {
		switch key := step.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[key]
		case int:
			l, _ := v.([]any)
			if key >= len(l) {
				return nil
			}
			v = l[key]
		}
	}
	return v
}
