package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/nbisim"
)

func TestPercentile(t *testing.T) {
	ms := func(values ...int) []time.Duration {
		var out []time.Duration
		for _, v := range values {
			out = append(out, time.Duration(v)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, unsorted
	}
	tests := []struct {
		values []time.Duration
		p      float64
		want   time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 50, 7 * time.Millisecond},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(30, 10, 20), 50, 20 * time.Millisecond},
		{ms(30, 10, 20, 40), 50, 20 * time.Millisecond},
		{ms(30, 10, 20, 40), 99, 40 * time.Millisecond},
		{ms(hundred...), 50, 50 * time.Millisecond},
		{ms(hundred...), 99, 99 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.values, tt.p); got != tt.want {
			t.Errorf("percentile(%v, %g) = %s, want %s", tt.values, tt.p, got, tt.want)
		}
	}
}

// The closeness of one scenario, from a request log and the simulator's operations: the first
// changing request (not a login, not a read, not before the artifact), the wait for Ready after
// the last end, each COMPLETED operation's wait for the next read of the operations, OSM's own time from that request to the last end, the ratio.
func TestMeasureCloseness(t *testing.T) {
	served := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return served.Add(time.Duration(ms) * time.Millisecond) }
	ended := func(ms int) *time.Time { t := at(ms); return &t }
	requests := []nbisim.RequestRecord{
		{Time: at(-50), Method: "POST", Route: "/osm/nslcm/v1/ns_instances_content"}, // the scenario before
		{Time: at(100), Method: "POST", Route: "/osm/admin/v1/tokens"},
		{Time: at(200), Method: "GET", Route: "/osm/nslcm/v1/ns_instances_content"},
		{Time: at(450), Method: "POST", Route: "/osm/nslcm/v1/ns_instances/{nsInstanceId}/action"},
		{Time: at(500), Method: "POST", Route: "/osm/nslcm/v1/ns_instances/{nsInstanceId}/action"},
		{Time: at(4000), Method: "GET", Route: "/osm/nslcm/v1/ns_lcm_op_occs"},
		{Time: at(4500), Method: "GET", Route: "/osm/nslcm/v1/ns_instances_content"},
		{Time: at(4600), Method: "GET", Route: "/osm/nslcm/v1/ns_lcm_op_occs"},
	}
	operations := []nbisim.OperationState{
		{ID: "before", State: "COMPLETED", Accepted: at(-50), Ended: ended(-10)},
		{ID: "a", State: "COMPLETED", Accepted: at(450), Ended: ended(4450)},
		{ID: "b", State: "COMPLETED", Accepted: at(500), Ended: ended(4550)},
		{ID: "failed", State: "FAILED", Accepted: at(500), Ended: ended(1500)},
		{ID: "running", State: "PROCESSING", Accepted: at(600)},
	}
	got := measureCloseness(served, at(5000), requests, operations)
	want := Closeness{
		FirstRequest:     []time.Duration{450 * time.Millisecond},
		CompletedToReady: []time.Duration{450 * time.Millisecond},
		CompletedToPoll:  []time.Duration{150 * time.Millisecond, 50 * time.Millisecond},
		Operations:       4,
		OSMTime:          4100 * time.Millisecond,
		OperatorTime:     5 * time.Second,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("closeness (-want +got):\n%s", diff)
	}
	if ratio := got.Ratio(); ratio < 1.2195 || ratio > 1.2196 {
		t.Errorf("ratio %g, want 5 / 4.1", ratio)
	}
	if perOperation := got.RequestsPerOperation(10); perOperation != 2.5 {
		t.Errorf("requests per operation %g, want 10 / 4", perOperation)
	}
	if none := (Closeness{OperatorTime: time.Second}); none.Ratio() != 0 || none.RequestsPerOperation(3) != 0 {
		t.Errorf("without operations: ratio %g, per operation %g, want 0 and 0", none.Ratio(), none.RequestsPerOperation(3))
	}
}

// The runs with the LCM profile name the VIM account of the OSM they run on: the simulator's,
// which has no other (a revision naming another is refused and never Ready), or OSM's own with
// --real-osm.
func TestClosenessWorkloadNamesTheVIMAccountOfItsOSM(t *testing.T) {
	tests := []struct {
		name     string
		settings Settings
		want     string
	}{
		{"the simulator", Settings{LCMProfile: "real", RealOSMVIMAccount: "mylocation1"}, VIMAccount},
		{"OSM's own", Settings{LCMProfile: "real", RealOSM: "http://127.0.0.1:22999", RealOSMVIMAccount: "mylocation1"}, "mylocation1"},
	}
	for _, tt := range tests {
		w := tt.settings.closenessWorkload(10)
		if w.N != 10 || w.Prefix != repository {
			t.Errorf("%s: workload %+v, want N=10 of the repository's instances", tt.name, w)
		}
		for path, content := range RepositoryFiles(w.First(), nil) {
			if !strings.Contains(content, "\nvimAccountName: "+tt.want+"\n") {
				t.Errorf("%s: %s names another VIM account than %s:\n%s", tt.name, path, tt.want, content)
			}
		}
	}
}
