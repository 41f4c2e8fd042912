package bench

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/openldap"
)

var testCredentials = osm.Credentials{Username: "bench", Password: "bench-secret-password", Project: "admin"}

// parsedRevision parses the repository of instances with the example's packages.
func parsedRevision(t *testing.T, instances []Instance) *gitops.Revision {
	t.Helper()
	packages, err := openldap.PackageFiles(openldap.PackageNames...)
	if err != nil {
		t.Fatal(err)
	}
	revision, err := ParseRevision(RepositoryFiles(instances, packages))
	if err != nil {
		t.Fatal(err)
	}
	return revision
}

// requestsByEndpoint sums the simulator's counters by method and route, whatever the status.
func requestsByEndpoint(stats nbisim.Stats) map[string]int64 {
	out := map[string]int64{}
	for _, e := range stats.Endpoints {
		out[e.Method+" "+e.Route] += e.Requests
	}
	return out
}

// newCLISimulator serves a simulator whose operations complete at the next request.
func newCLISimulator(t *testing.T) (*nbisim.Server, string) {
	t.Helper()
	sim := nbisim.New(nbisim.Config{
		Username: testCredentials.Username, Password: testCredentials.Password, Project: testCredentials.Project,
		VIMAccounts: []nbisim.VIMAccount{{Name: VIMAccount}},
	})
	sim.SetOperationDelay(0)
	server := httptest.NewServer(sim)
	t.Cleanup(server.Close)
	return sim, server.URL
}

// TestCLIPatternSendsWhatTheCLISends checks each command's requests against the counts of the
// NBI README: with operations that complete at once, --wait reads each operation once.
func TestCLIPatternSendsWhatTheCLISends(t *testing.T) {
	sim, url := newCLISimulator(t)
	cli := &CLIPattern{NBI: url, Credentials: testCredentials, Wait: true, PollInterval: time.Millisecond, Parallelism: 2}
	workload := Workload{N: 3, Prefix: "ldap"}
	first, changed := parsedRevision(t, workload.First()), parsedRevision(t, workload.WithChangedValues())
	ctx := context.Background()

	steps := []struct {
		name string
		run  func() error
		want map[string]int64
	}{
		{
			name: "nfpkg-create and nspkg-create: a token and the upload each",
			run:  func() error { return cli.CreatePackages(ctx, first.Packages) },
			want: map[string]int64{
				"POST /osm/admin/v1/tokens": 2, "POST /osm/vnfpkgm/v1/vnf_packages_content": 1, "POST /osm/nsd/v1/ns_descriptors_content": 1,
			},
		},
		{
			name: "ns-create --wait: a token, all NSDs, all VIM accounts, the VIM account, the create, the wait",
			run:  func() error { return cli.CreateInstances(ctx, first.NsInstances) },
			want: map[string]int64{
				"POST /osm/admin/v1/tokens": 3, "GET /osm/nsd/v1/ns_descriptors": 3, "GET /osm/admin/v1/vim_accounts": 3,
				"GET /osm/admin/v1/vim_accounts/{vimAccountId}": 3, "POST /osm/nslcm/v1/ns_instances_content": 3,
				"GET /osm/nslcm/v1/ns_lcm_op_occs/{nsLcmOpOccId}": 3,
			},
		},
		{
			name: "ns-action --wait: a token, the NS instance list twice, the action, the wait",
			run: func() error {
				return cli.UpgradeInstances(ctx, instancesNamed(changed.NsInstances, workload.ChangedNames()))
			},
			want: map[string]int64{
				"POST /osm/admin/v1/tokens": 1, "GET /osm/nslcm/v1/ns_instances_content": 2,
				"POST /osm/nslcm/v1/ns_instances/{nsInstanceId}/action": 1, "GET /osm/nslcm/v1/ns_lcm_op_occs/{nsLcmOpOccId}": 1,
			},
		},
		{
			name: "ns-delete --wait: a token, the NS instance list, the delete, the wait until the operation is gone",
			run:  func() error { return cli.DeleteInstances(ctx, workload.PrunedNames()) },
			want: map[string]int64{
				"POST /osm/admin/v1/tokens": 1, "GET /osm/nslcm/v1/ns_instances_content": 1,
				"DELETE /osm/nslcm/v1/ns_instances_content/{nsInstanceContentId}": 1, "GET /osm/nslcm/v1/ns_lcm_op_occs/{nsLcmOpOccId}": 1,
			},
		},
	}
	for _, step := range steps {
		sim.ResetStats()
		if err := step.run(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if diff := cmp.Diff(step.want, requestsByEndpoint(sim.Stats())); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", step.name, diff)
		}
	}

	values := map[string]string{}
	for _, ns := range sim.State().NSInstances {
		var params struct {
			ReplicaCount string `json:"replicaCount"`
		}
		if err := json.Unmarshal(ns.KDUs[0].Params, &params); err != nil {
			t.Fatal(err)
		}
		values[ns.Name] = params.ReplicaCount
	}
	want := map[string]string{"ldap-0000": "2", "ldap-0001": "1"} // ldap-0002 was deleted
	if diff := cmp.Diff(want, values); diff != "" {
		t.Errorf("replicaCount of the NS instances (-want +got):\n%s", diff)
	}
}

// TestCLIPatternWithoutWait checks that the CLI's default commands return once OSM has accepted
// their request: no read of the operation, and OSM still does the work.
func TestCLIPatternWithoutWait(t *testing.T) {
	sim, url := newCLISimulator(t)
	cli := &CLIPattern{NBI: url, Credentials: testCredentials, Parallelism: 2}
	workload := Workload{N: 3, Prefix: "ldap"}
	first, changed := parsedRevision(t, workload.First()), parsedRevision(t, workload.WithChangedValues())
	ctx := context.Background()
	for _, run := range []func() error{
		func() error { return cli.CreatePackages(ctx, first.Packages) },
		func() error { return cli.CreateInstances(ctx, first.NsInstances) },
		func() error {
			return cli.UpgradeInstances(ctx, instancesNamed(changed.NsInstances, workload.ChangedNames()))
		},
		func() error { return cli.DeleteInstances(ctx, workload.PrunedNames()) },
	} {
		if err := run(); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{
		"POST /osm/admin/v1/tokens": 7, "POST /osm/vnfpkgm/v1/vnf_packages_content": 1, "POST /osm/nsd/v1/ns_descriptors_content": 1,
		"GET /osm/nsd/v1/ns_descriptors": 3, "GET /osm/admin/v1/vim_accounts": 3, "GET /osm/admin/v1/vim_accounts/{vimAccountId}": 3,
		"POST /osm/nslcm/v1/ns_instances_content": 3, "GET /osm/nslcm/v1/ns_instances_content": 3,
		"POST /osm/nslcm/v1/ns_instances/{nsInstanceId}/action": 1, "DELETE /osm/nslcm/v1/ns_instances_content/{nsInstanceContentId}": 1,
	}
	if diff := cmp.Diff(want, requestsByEndpoint(sim.Stats())); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	sim.CompleteOperations() // what the benchmark does before the next scenario
	if got := len(sim.State().NSInstances); got != 2 {
		t.Errorf("OSM runs %d NS instance(s), want 2 (one of the three deleted)", got)
	}
}

func TestCLIPatternReportsRefusals(t *testing.T) {
	sim := nbisim.New(nbisim.Config{Username: "someone-else", Password: "another-password", VIMAccounts: []nbisim.VIMAccount{{Name: VIMAccount}}})
	server := httptest.NewServer(sim)
	defer server.Close()
	cli := &CLIPattern{NBI: server.URL, Credentials: testCredentials, PollInterval: time.Millisecond, Parallelism: 1}
	err := cli.CreateInstances(context.Background(), parsedRevision(t, Workload{N: 1, Prefix: "ldap"}.First()).NsInstances)
	if err == nil {
		t.Fatal("CreateInstances with refused credentials succeeded")
	}
	if got := err.Error(); !strings.Contains(got, "creating NS instance ldap-0000: logging in: POST /osm/admin/v1/tokens: 401") ||
		strings.Contains(got, testCredentials.Password) {
		t.Errorf("error = %q, want the command, the request and the status, never the password", got)
	}
}
