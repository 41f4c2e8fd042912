package osm_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/osmops/osmops/internal/osm"
)

// auditLines captures the audit lines logged through a context, each decoded from its JSON.
type auditLines struct {
	mutex sync.Mutex
	raw   []string
	lines []map[string]any
}

// context returns a context whose logger writes into the capture, with origin.
func (a *auditLines) context(t *testing.T, origin osm.ChangeOrigin) context.Context {
	logger := funcr.NewJSON(func(obj string) {
		var line map[string]any
		if err := json.Unmarshal([]byte(obj), &line); err != nil {
			t.Errorf("a log line is not JSON: %v: %s", err, obj)
		}
		a.mutex.Lock()
		defer a.mutex.Unlock()
		a.raw = append(a.raw, obj)
		if line["msg"] == osm.AuditMessage {
			a.lines = append(a.lines, line)
		}
	}, funcr.Options{})
	return osm.WithChangeOrigin(log.IntoContext(t.Context(), logger), origin)
}

// take returns the audit lines captured since the last take.
func (a *auditLines) take() []map[string]any {
	a.mutex.Lock()
	defer a.mutex.Unlock()
	lines := a.lines
	a.lines = nil
	return lines
}

// auditedKeys are the keys every audit line has, whatever the request.
var auditedKeys = []string{"osmCluster", "osmDeployment", "revision", "planDigest", "method", "path", "status", "outcome", "attempts", "durationSeconds"}

// checkAuditLine checks that line has every audited key, and the values of want.
func checkAuditLine(t *testing.T, line map[string]any, want map[string]any) {
	t.Helper()
	for _, key := range auditedKeys {
		if _, ok := line[key]; !ok {
			t.Errorf("the audit line has no %q: %v", key, line)
		}
	}
	got := map[string]any{}
	for key := range want {
		got[key] = line[key]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit line (-want +got):\n%s", diff)
	}
}

var testOrigin = osm.ChangeOrigin{Deployment: "tenant-a/ldap", Revision: "main@sha1:0123abcd", PlanDigest: "sha256:feed"}

// TestAuditLogsEachChangeOnce: a POST, a PUT and a DELETE each log one audit line naming the
// OsmDeployment, the revision, the plan, the request and OSM's answer; a GET logs none.
func TestAuditLogsEachChangeOnce(t *testing.T) {
	f := newLDAPFixture(t, nil)
	var audit auditLines
	ctx := audit.context(t, testOrigin)
	origin := map[string]any{"osmDeployment": "tenant-a/ldap", "revision": "main@sha1:0123abcd", "planDigest": "sha256:feed"}
	with := func(more map[string]any) map[string]any {
		maps.Copy(more, origin)
		return more
	}

	_, err := f.client.ListNSInstances(ctx)
	noError(t, err)
	if lines := audit.take(); len(lines) != 0 {
		t.Errorf("a GET logged %d audit lines: %v", len(lines), lines)
	}

	created, err := f.client.CreateNSInstance(ctx, f.nsCreate("ldap", map[string]any{"replicaCount": 1}))
	noError(t, err)
	lines := audit.take()
	if len(lines) != 1 {
		t.Fatalf("a POST logged %d audit lines, want 1: %v", len(lines), lines)
	}
	checkAuditLine(t, lines[0], with(map[string]any{"method": "POST", "path": "/osm/nslcm/v1/ns_instances_content",
		"status": float64(http.StatusCreated), "outcome": "accepted", "attempts": float64(1),
		"id": created.ID, "operationId": created.OperationID}))

	noError(t, f.client.UpdatePackage(ctx, f.vnfdID, f.knfPkg))
	lines = audit.take()
	if len(lines) != 1 {
		t.Fatalf("a PUT logged %d audit lines, want 1: %v", len(lines), lines)
	}
	checkAuditLine(t, lines[0], with(map[string]any{"method": "PUT", "path": "/osm/vnfpkgm/v1/vnf_packages/" + f.vnfdID + "/package_content",
		"outcome": "accepted", "attempts": float64(1)}))

	f.finishOperations()
	operationID, err := f.client.DeleteNSInstance(ctx, created.ID, false)
	noError(t, err)
	lines = audit.take()
	if len(lines) != 1 {
		t.Fatalf("a DELETE logged %d audit lines, want 1: %v", len(lines), lines)
	}
	checkAuditLine(t, lines[0], with(map[string]any{"method": "DELETE", "path": "/osm/nslcm/v1/ns_instances_content/" + created.ID,
		"status": float64(http.StatusAccepted), "outcome": "accepted", "operationId": operationID}))
}

// TestAuditLogsARetriedChangeOnce: a change sent again after OSM refused the token logs one
// line, with two attempts and the last answer.
func TestAuditLogsARetriedChangeOnce(t *testing.T) {
	f := newLDAPFixture(t, nil)
	nsID := f.createReadyNS(t, "ldap", map[string]any{"replicaCount": 1})
	f.sim.RevokeTokens()
	var audit auditLines
	ctx := audit.context(t, testOrigin)
	operationID, err := f.upgrade(ctx, nsID, map[string]any{"replicaCount": 2})
	noError(t, err)
	lines := audit.take()
	if len(lines) != 1 {
		t.Fatalf("a retried POST logged %d audit lines, want 1: %v", len(lines), lines)
	}
	checkAuditLine(t, lines[0], map[string]any{"method": "POST", "path": "/osm/nslcm/v1/ns_instances/" + nsID + "/action",
		"status": float64(http.StatusAccepted), "outcome": "accepted", "attempts": float64(2), "operationId": operationID})
}

// TestAuditShowsNoSecret: a values change carrying a value from a Secret, refused or
// accepted, and a refused login, log no value of the body nor the password.
func TestAuditShowsNoSecret(t *testing.T) {
	const secretValue = "from-a-Secret-4f1e9a"
	f := newLDAPFixture(t, nil)
	nsID := f.createReadyNS(t, "ldap", map[string]any{"replicaCount": 1})
	var audit auditLines
	ctx := audit.context(t, testOrigin)

	values := map[string]any{"adminPassword": secretValue}
	_, err := f.upgrade(ctx, nsID, values)
	noError(t, err)
	// A KDU OSM does not know: refused, with the values in the body all the same.
	_, err = f.client.UpgradeKDU(ctx, nsID, osm.KDUUpgrade{MemberVnfIndex: memberIndex, KDUName: "nope", Params: values})
	if err == nil {
		t.Fatal("an upgrade of an unknown KDU was accepted")
	}
	wrong := simCredentials
	wrong.Password = "wrong-" + secretValue
	if err := f.newClient(t, wrong).Authenticate(ctx); err == nil {
		t.Fatal("a wrong password was accepted")
	}

	lines := audit.take()
	if len(lines) != 3 {
		t.Fatalf("%d audit lines, want 3 (upgrade, refused upgrade, refused login): %v", len(lines), lines)
	}
	checkAuditLine(t, lines[1], map[string]any{"method": "POST", "outcome": "refused"})
	checkAuditLine(t, lines[2], map[string]any{"method": "POST", "path": "/osm/admin/v1/tokens",
		"status": float64(http.StatusUnauthorized), "outcome": "refused"})
	audit.mutex.Lock()
	defer audit.mutex.Unlock()
	for _, raw := range audit.raw {
		if strings.Contains(raw, secretValue) {
			t.Errorf("a log line shows the Secret's value: %s", raw)
		}
	}
}
