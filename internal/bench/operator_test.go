package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	flowcontrolapi "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/rest"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// The closeness runs start a second operator in the process once the first stopped: its logs go
// to its own writer, not to the first one's, which Stop muted (controller-runtime's process-wide
// logger is set once per process). Each operator's OsmDeployment fails against an OSM that fails
// its package lists, which its reconciler logs as an error.
func TestOperatorsOneAfterAnotherLogToTheirOwnWriters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	packages, err := openldap.PackageFiles(openldap.PackageNames...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		namespace := fmt.Sprintf("tenant-%d", i)
		log := &awaitedLog{wanted: namespace, seen: make(chan struct{})}
		op, err := StartOperator(ctx, OperatorOptions{Log: log, KubeAPIQPS: 100, KubeAPIBurst: 300})
		if err != nil {
			t.Fatal(err)
		}
		if !op.ClientUnlimited() {
			t.Error("envtest's API server has priority and fairness: the manager should run without a client-side limit")
		}
		sim := nbisim.New(nbisim.Config{Username: testCredentials.Username, Password: testCredentials.Password,
			Project: testCredentials.Project, VIMAccounts: []nbisim.VIMAccount{{Name: VIMAccount}}})
		server := httptest.NewServer(sim)
		tenant, err := op.NewTenant(ctx, TenantOptions{Namespace: namespace, NBI: server.URL, Credentials: testCredentials})
		if err != nil {
			t.Fatalf("operator %d: %v", i, err)
		}
		for _, fault := range descriptorListFailures {
			if err := sim.AddFault(fault); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := tenant.Publish(ctx, repository, RepositoryFiles(Workload{N: 1, Prefix: "ldap"}.First(), packages)); err != nil {
			t.Fatal(err)
		}
		if err := tenant.CreateDeployment(ctx, repository, repository, nil); err != nil {
			t.Fatal(err)
		}
		// The first reconcile fails at once: the bound is only for the old code's silence.
		wait, cancelWait := context.WithTimeout(ctx, 30*time.Second)
		select {
		case <-log.seen:
		case <-wait.Done():
			t.Errorf("operator %d: its log writer got no error of its OsmDeployment", i)
		}
		cancelWait()
		if err := op.Stop(); err != nil {
			t.Logf("operator %d: stopping: %v", i, err)
		}
		server.Close()
	}
}

// awaitedLog is an operator's log writer: seen is closed once a line names wanted.
type awaitedLog struct {
	wanted string
	once   sync.Once
	seen   chan struct{}
}

func (l *awaitedLog) Write(p []byte) (int, error) {
	if strings.Contains(string(p), l.wanted) {
		l.once.Do(func() { close(l.seen) })
	}
	return len(p), nil
}

// The manager runs with --kube-api-qps and --kube-api-burst only where the API server has no
// priority and fairness, as cmd/main.go's client configuration does: the API server's answer
// to a ping carries its flow schema when it has.
func TestTheClientLimitIsTheBinarys(t *testing.T) {
	for _, withFlowSchema := range []bool{false, true} {
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if withFlowSchema {
				w.Header().Set(flowcontrolapi.ResponseHeaderMatchedFlowSchemaUID, "a-flow-schema")
			}
		}))
		qps, burst, unlimited := clientLimit(context.Background(), &rest.Config{Host: server.URL}, 100, 300)
		server.Close()
		want := []any{float32(100), 300, false}
		if withFlowSchema {
			want = []any{float32(-1), -1, true}
		}
		if got := []any{qps, burst, unlimited}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("priority and fairness %v: qps, burst, unlimited %v, want %v", withFlowSchema, got, want)
		}
	}
}
