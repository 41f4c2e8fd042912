package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/nbisim"
)

const actionRoute = "/osm/nslcm/v1/ns_instances/{nsInstanceId}/action"

// measured makes a Measurement; actions are upgrade requests.
func measured(requests, mutating, bytes, actions int64, wall time.Duration) Measurement {
	stats := nbisim.Stats{Requests: requests, MutatingRequests: mutating, ReadRequests: requests - mutating, BytesSent: bytes}
	if actions > 0 {
		stats.Endpoints = []nbisim.EndpointStats{{Route: actionRoute, Method: "POST", Status: 202, Requests: actions}}
	}
	return Measurement{Stats: stats, Usage: Usage{Wall: wall, PeakHeap: 50 << 20}}
}

// goodSize is a size whose figures meet every target.
func goodSize(n int) SizeResult {
	changed := Workload{N: n, Prefix: repository}.ChangedNames()
	tenth := int64(len(changed))
	return SizeResult{
		N: n, Changed: changed, Upgraded: changed,
		Operator: map[Scenario]Measurement{
			FirstRevision: measured(int64(n)+8, int64(n)+2, 1000, 0, time.Second),
			ChangedValues: measured(tenth+3, tenth, 1000, tenth, time.Second),
			SameRevision:  measured(5, 0, 100, 0, time.Second),
			DriftCheck:    measured(5, 0, 100, 0, time.Second),
			Pruned:        measured(tenth+8, tenth, 1000, 0, time.Second),
		},
		CLI: map[Scenario]Measurement{
			FirstRevision: measured(int64(5*n), int64(n)+2, 10_000, 0, time.Second),
			ChangedValues: measured(4*tenth, tenth, 10_000, tenth, time.Second),
			Pruned:        measured(3*tenth, tenth, 10_000, 0, time.Second),
		},
	}
}

// withWait adds the figures of the CLI pattern with --wait to a size.
func withWait(s SizeResult) SizeResult {
	tenth := int64(len(s.Changed))
	s.CLIWait = map[Scenario]Measurement{
		FirstRevision: measured(int64(7*s.N), int64(s.N)+2, 12_000, 0, 10*time.Second),
		ChangedValues: measured(6*tenth, tenth, 12_000, tenth, 5*time.Second),
		Pruned:        measured(5*tenth, tenth, 12_000, 0, 5*time.Second),
	}
	return s
}

// withCloseness adds the operator's figures against the LCM profile to a size of 10: A's ten
// instantiations and B's one upgrade, near OSM's own time.
func withCloseness(s SizeResult) SizeResult {
	a := measured(22, 12, 10_000, 0, 26*time.Second)
	a.Closeness = &Closeness{
		FirstRequest:     []time.Duration{450 * time.Millisecond},
		CompletedToReady: []time.Duration{990 * time.Millisecond},
		CompletedToPoll:  []time.Duration{300, 400, 500, 600, 700, 800, 900, 950, 980, 990},
		Operations:       10, OSMTime: 25 * time.Second, OperatorTime: 26 * time.Second,
	}
	for i := range a.Closeness.CompletedToPoll {
		a.Closeness.CompletedToPoll[i] *= time.Millisecond
	}
	b := measured(7, 1, 1000, 1, 4500*time.Millisecond)
	b.Closeness = &Closeness{
		FirstRequest: []time.Duration{200 * time.Millisecond}, CompletedToReady: []time.Duration{300 * time.Millisecond},
		CompletedToPoll: []time.Duration{100 * time.Millisecond},
		Operations:      1, OSMTime: 4100 * time.Millisecond, OperatorTime: 4400 * time.Millisecond,
	}
	s.Profiled = map[Scenario]Measurement{FirstRevision: a, ChangedValues: b}
	return s
}

func goodReport() *Report {
	return &Report{
		Command: "make bench",
		Settings: Settings{
			Sizes: []int{10, 1000}, Latency: 5 * time.Millisecond, OperationDelay: 100 * time.Millisecond, MaxConcurrentRequests: 32,
			CLIPollInterval: 5 * time.Second, CLIWaitSizes: []int{10}, FleetTarget: time.Minute, Fleets: FleetSources,
			LCMProfile: "real", ProfileSizes: []int{10}, OperationPollInterval: 5 * time.Second, ProfilePollInterval: 5 * time.Second, ProfilePollMinInterval: time.Second,
		},
		Sizes: []SizeResult{withCloseness(withWait(goodSize(10))), goodSize(1000)},
		Fleets: []FleetResult{
			{
				Source: SeparateSources, Deployments: 1000, InstancesEach: 10, AllReady: 30 * time.Second,
				Measurement: Measurement{Usage: Usage{Wall: 30 * time.Second, PeakHeap: 100 << 20}},
			},
			{
				Source: SharedSource, Deployments: 1000, InstancesEach: 10, AllReady: 40 * time.Second,
				Measurement: Measurement{Usage: Usage{Wall: 40 * time.Second, PeakHeap: 120 << 20}},
			},
		},
		GoBenchmarks: []GoBenchmark{
			{GoBenchmarkTarget: GoBenchmarkTargets[0], PerOp: 100 * time.Millisecond},
			{GoBenchmarkTarget: GoBenchmarkTargets[1], PerOp: 10 * time.Millisecond},
			{GoBenchmarkTarget: GoBenchmarkTargets[2], PerOp: 10 * time.Second, HeapGrowth: 14 << 20},
		},
	}
}

func missedTargets(r *Report) []string {
	var missed []string
	for _, v := range Evaluate(r) {
		if !v.Pass {
			missed = append(missed, v.Target)
		}
	}
	return missed
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Report)
		wantM []string
	}{
		{name: "every target met", edit: func(*Report) {}},
		{
			name: "A over N + 8 and too slow",
			edit: func(r *Report) {
				m := r.Sizes[1].Operator[FirstRevision]
				m.Stats.Requests, m.Usage.Wall = 1009, 3*time.Second
				r.Sizes[1].Operator[FirstRevision] = m
			},
			wantM: []string{"A: NBI requests <= N + 8", "A: wall time for N = 1000 under 3 s"},
		},
		{
			name: "B upgrades an instance it did not change",
			edit: func(r *Report) {
				r.Sizes[0].Upgraded = []string{"ldap-0000", "ldap-0005"}
				m := r.Sizes[0].Operator[ChangedValues]
				m.Stats.Endpoints[0].Requests = 2
				r.Sizes[0].Operator[ChangedValues] = m
			},
			wantM: []string{"B: only the changed instances get an operation"},
		},
		{
			name: "B sends more requests than the CLI pattern without --wait",
			edit: func(r *Report) {
				r.Sizes[0].Operator[ChangedValues] = measured(5, 1, 1000, 1, time.Second)
			},
			wantM: []string{"B: NBI requests no more than the CLI pattern's (without --wait)"},
		},
		{
			name: "a drift check that writes and reads too much",
			edit: func(r *Report) {
				r.Sizes[0].Operator[DriftCheck] = measured(9, 1, 200_000, 0, time.Second)
			},
			wantM: []string{
				"C: zero mutating requests (same revision, drift check)", "C: at most 8 NBI requests, whatever N (same revision, drift check)",
				"C2: bytes per declared instance under 10.0 KiB, whatever N (drift check)",
			},
		},
		{
			name: "B bytes only 5x fewer",
			edit: func(r *Report) {
				m := r.Sizes[1].Operator[ChangedValues]
				m.Stats.BytesSent = 2000
				r.Sizes[1].Operator[ChangedValues] = m
			},
			wantM: []string{"B: bytes at least 10x fewer than the CLI pattern (without --wait)"},
		},
		{
			name: "slow, large fleets and slow functions",
			edit: func(r *Report) {
				separate := &r.Fleets[0]
				separate.AllReady, separate.ReadyByTarget, separate.ReadyAtEnd = 0, 400, 900
				separate.Usage.PeakHeap = 300 << 20
				r.Fleets[1].Usage.PeakHeap = 250 << 20
				r.GoBenchmarks[1].PerOp = 60 * time.Millisecond
				r.GoBenchmarks[2].HeapGrowth = 100 << 20
			},
			wantM: []string{
				"1,000 OsmDeployments, each on its own GitRepository: all Ready within 60 s of creation",
				"1,000 OsmDeployments, each on its own GitRepository: operator peak memory under 200.0 MiB",
				"1,000 OsmDeployments, all on one GitRepository: operator peak memory under 200.0 MiB",
				"plan 10,000 NS instances (10% changed) in under 25 ms",
				"read each of 6 hostile 1 GiB list answers up to its first bound, the heap in use growing by under 64.0 MiB",
			},
		},
		{
			name: "an end seen late, polled too often, too slow against OSM",
			edit: func(r *Report) {
				b := r.Sizes[0].Profiled[ChangedValues]
				b.Stats.Requests = 12
				c := *b.Closeness
				c.CompletedToReady, c.OperatorTime = []time.Duration{4 * time.Second}, 8100*time.Millisecond
				b.Closeness = &c
				r.Sizes[0].Profiled[ChangedValues] = b
			},
			wantM: []string{
				`A, B, B2: an operation's end reaches Ready within 1 s of OSM's COMPLETED (p99) (LCM profile "real")`,
				`A, B, B2: requests per operation at or under today's (A 2.4, B and B2 8) (LCM profile "real")`,
				`A at N = 10, B, B2: time from the artifact to Ready within 1.1x OSM's own time (LCM profile "real")`,
			},
		},
		{
			name: "without the LCM profile, the closeness targets are not measured",
			edit: func(r *Report) { r.Sizes[0].Profiled = nil },
			wantM: []string{
				`A, B, B2: an operation's end reaches Ready within 1 s of OSM's COMPLETED (p99) (LCM profile "real")`,
				`A, B, B2: requests per operation at or under today's (A 2.4, B and B2 8) (LCM profile "real")`,
				`A at N = 10, B, B2: time from the artifact to Ready within 1.1x OSM's own time (LCM profile "real")`,
			},
		},
		{
			name: "a size that was not measured misses its targets",
			edit: func(r *Report) { delete(r.Sizes[0].Operator, ChangedValues) },
			wantM: []string{
				"B: NBI requests <= 0.1N + 8", "B: NBI requests no more than the CLI pattern's (without --wait)",
				"B: only the changed instances get an operation", "B: bytes at least 10x fewer than the CLI pattern (without --wait)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := goodReport()
			tt.edit(r)
			if diff := cmp.Diff(tt.wantM, missedTargets(r)); diff != "" {
				t.Errorf("missed targets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMinimum(t *testing.T) {
	s := Settings{Latency: 5 * time.Millisecond, OperationDelay: 100 * time.Millisecond, MaxConcurrentRequests: 32}
	operator := nbisim.Stats{Endpoints: []nbisim.EndpointStats{
		{Route: "/osm/admin/v1/tokens", Method: "POST", Requests: 1, BytesReceived: 80, BytesSent: 600},
		{Route: actionRoute, Method: "POST", Requests: 100, BytesReceived: 10_000, BytesSent: 5_000},
		{Route: "/osm/nslcm/v1/vnf_instances", Method: "GET", Requests: 1, BytesSent: 1 << 20},
	}}
	tests := []struct {
		scenario Scenario
		want     floor
	}{
		// One log in, two packages one after the other, 1,000 creates in 32 rounds, one operation.
		{FirstRevision, floor{requests: 1003, mutating: 1002, bytes: 15_680, wall: 35*5*time.Millisecond + 100*time.Millisecond}},
		{ChangedValues, floor{requests: 100, mutating: 100, bytes: 15_000, wall: 4*5*time.Millisecond + 100*time.Millisecond}},
		{DriftCheck, floor{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, minimum(s, 1000, tt.scenario, operator), cmp.AllowUnexported(floor{})); diff != "" {
			t.Errorf("%s: minimum (-want +got):\n%s", tt.scenario, diff)
		}
	}
}

func TestFormats(t *testing.T) {
	tests := []struct{ got, want string }{
		{formatBytes(512), "512 B"},
		{formatBytes(1536), "1.5 KiB"},
		{formatBytes(200 << 20), "200.0 MiB"},
		{formatDuration(0), "0"},
		{formatDuration(1500 * time.Microsecond), "1.5 ms"},
		{formatDuration(1234 * time.Millisecond), "1.23 s"},
		{formatDuration(90 * time.Second), "90 s"},
		{formatCount(1234567), "1,234,567"},
		{formatCount(-1000), "-1,000"},
		{formatRatio(7004, 1007), "7x"},
		{formatRatio(1, 3), "0.33x"},
		{formatRatio(1, 1000), "< 0.01x"},
		{formatRatio(5, 0), "–"},
		{formatRatio(0, 5), "0x"},
		{formatRatio(12_000, 10), "1200x"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestRenderExplainsOnlyMissedTargets(t *testing.T) {
	var good strings.Builder
	if err := Render(&good, goodReport()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Targets", "19 of 19 targets met.", "## Scenario A", "**N = 1,000**", "## Method", "`make bench`",
		// The CLI pattern with --wait beside the default one where it ran, and only there.
		"|  | operator | CLI | CLI ÷ operator | CLI --wait | CLI --wait ÷ operator | minimum |",
		"|  | operator | CLI | CLI ÷ operator | minimum |",
		// C against a CLI user who sends nothing: the operator's figures alone, and a day of drift checks.
		"|  | operator | minimum |",
		"| 10 | 5 | 0 | 100 B | 10 B | 720 requests, 14.1 KiB |",
		"## 1,000 OsmDeployments of 10 instances on one OSM, all on one GitRepository",
	} {
		if !strings.Contains(good.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(good.String(), "Why targets are missed") {
		t.Error("a report with every target met explains misses")
	}
	bad := goodReport()
	bad.Sizes[1].Operator[FirstRevision] = measured(2000, 1002, 1000, 0, time.Second)
	var missed strings.Builder
	if err := Render(&missed, bad); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(missed.String(), "Why targets are missed") || !strings.Contains(missed.String(), "| A: NBI requests <= N + 8 | N=10: 18; N=1000: 2000 | **miss** |") {
		t.Errorf("the report does not show and explain the missed target:\n%s", missed.String())
	}
}

func TestWhyRequestsOffersTheRemedyOfTheCostMeasured(t *testing.T) {
	observations := func(n int64) Measurement {
		m := measured(1012, 1002, 1000, 0, time.Second)
		m.Stats.Endpoints = append(m.Stats.Endpoints, nbisim.EndpointStats{Route: nsListRoute, Method: "GET", Requests: n})
		return m
	}
	tests := []struct {
		observations int64
		want         string
	}{
		{2, secondObservation},
		{1, "fewer polls"},
	}
	for _, tt := range tests {
		r := goodReport()
		r.Sizes[1].Operator[FirstRevision] = observations(tt.observations)
		got := whyRequestsA(r)
		if !strings.Contains(got, tt.want) || !strings.Contains(got, "At N = 1,000 the operator observed OSM") {
			t.Errorf("%d observation(s): the explanation %q lacks %q", tt.observations, got, tt.want)
		}
	}
}

func TestWhyRequestsBAgainstCLIFindsTheBreakEven(t *testing.T) {
	r := goodReport()
	// One changed instance: the CLI pattern's 4 requests against the operator's action and 7 reads.
	r.Sizes[0].Operator[ChangedValues] = measured(8, 1, 1000, 1, time.Second)
	got := whyRequestsBAgainstCLI(r)
	for _, want := range []string{
		"At N = 10, 1 instance(s) changed: the CLI pattern sent 4 requests, 4 per changed instance",
		"the operator sent 8, 1 operation(s) and 7 reads",
		"the operator sends no more from 3 changed instance(s) on", // c + 7 <= 4c
		"in 3 reads",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the explanation %q lacks %q", got, want)
		}
	}
}

func TestWhyDriftBytesBreaksDownEachInstance(t *testing.T) {
	r := goodReport()
	m := measured(6, 0, 0, 0, time.Second)
	m.Stats.Endpoints = []nbisim.EndpointStats{
		{Route: nsListRoute, Method: "GET", Requests: 1, BytesSent: 60_000},
		{Route: vnfListRoute, Method: "GET", Requests: 1, BytesSent: 20_000},
		{Route: nsdListRoute, Method: "GET", Requests: 1, BytesSent: 5_000},
	}
	m.Stats.BytesSent = 85_000
	r.Sizes[0].Operator[DriftCheck] = m
	got := whyDriftBytes(r)
	want := "N = 10: 8.3 KiB per instance, of which NS records 5.9 KiB, VNF records 2.0 KiB and the other lists (descriptors, VIM accounts, operations) 500 B"
	if !strings.Contains(got, want) {
		t.Errorf("the explanation %q lacks %q", got, want)
	}
}

func TestWhyBytesASaysWhenNoClientCouldMeetIt(t *testing.T) {
	r := goodReport()
	creates := nbisim.EndpointStats{Route: "/osm/nslcm/v1/ns_instances_content", Method: "POST", Requests: 10, BytesReceived: 6000}
	op := measured(20, 14, 1500, 0, time.Second)
	op.Stats.BytesReceived, op.Stats.Endpoints = 6000, []nbisim.EndpointStats{creates}
	r.Sizes[0].Operator[FirstRevision] = op
	r.Sizes[0].CLI[FirstRevision] = measured(54, 12, 61_000, 0, time.Second) // 10x the creates' 6,000 B
	got := whyBytesA(r)
	for _, want := range []string{"N = 10: the operator 7.3 KiB, of which 5.9 KiB its own", "the CLI pattern 59.6 KiB, 10x the minimum"} {
		if !strings.Contains(got, want) {
			t.Errorf("the explanation %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "no client could") {
		t.Errorf("the CLI pattern is 10x the minimum, yet the explanation says no client could meet the target: %q", got)
	}
	r.Sizes[0].CLI[FirstRevision] = measured(54, 12, 40_000, 0, time.Second)
	if got := whyBytesA(r); !strings.Contains(got, "no client could send 10x fewer") {
		t.Errorf("the CLI pattern is under 10x the minimum, yet the explanation %q does not say so", got)
	}
}

func TestResourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"/apis/gitops.osmops.io/v1alpha1/namespaces/t/osmdeployments/d/status": "osmdeployments/status",
		"/apis/gitops.osmops.io/v1alpha1/namespaces/t/osmdeployments/d":        "osmdeployments",
		"/apis/gitops.osmops.io/v1alpha1/namespaces/t/osmdeployments":          "osmdeployments",
		"/api/v1/namespaces/t/events":                                          "events",
		"/apis/gitops.osmops.io/v1alpha1/osmdeployments":                       "osmdeployments",
	} {
		if got := resourceOf(path); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// The closeness section, its targets and their explanations, rendered from fixed figures.
func TestRenderCloseness(t *testing.T) {
	r := goodReport()
	var good strings.Builder
	if err := Render(&good, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## How close to OSM's own time",
		"| N | scenario | operations | first request p50, p99 | COMPLETED to Ready p50, p99 | COMPLETED to next poll p50, p99 | requests per operation | OSM's own time | artifact to Ready | ratio |",
		"| 10 | A | 10 | 450 ms, 450 ms | 990 ms, 990 ms | 700 ms, 990 ms | 2.2 (22 requests) | 25 s | 26 s | 1.04x |",
		"| 10 | B | 1 | 200 ms, 200 ms | 300 ms, 300 ms | 100 ms, 100 ms | 7.0 (7 requests) | 4.1 s | 4.4 s | 1.07x |",
		`| A, B, B2: an operation's end reaches Ready within 1 s of OSM's COMPLETED (p99) (LCM profile "real") | A N=10: 990 ms; B N=10: 300 ms | pass |`,
		`| A at N = 10, B, B2: time from the artifact to Ready within 1.1x OSM's own time (LCM profile "real") | A N=10: 1.04x; B N=10: 1.07x | pass |`,
		"| simulator LCM profile (sizes run with it) | real (10) |",
		"**How close to OSM.** At N = 10 the operator runs the scenarios once more against a simulator started with `--lcm-profile real`",
	} {
		if !strings.Contains(good.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	b := r.Sizes[0].Profiled[ChangedValues]
	c := *b.Closeness
	c.CompletedToReady, c.CompletedToPoll, c.OperatorTime = []time.Duration{4 * time.Second}, []time.Duration{3900 * time.Millisecond}, 8300*time.Millisecond
	b.Closeness = &c
	r.Sizes[0].Profiled[ChangedValues] = b
	var missed strings.Builder
	if err := Render(&missed, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"In B at N = 10 the last operation's end reached Ready 4 s after OSM's COMPLETED, and the next read of the operations came 3.9 s after an operation's end at the median, 3.9 s at p99, with the reconciler's poll schedule between 1 s and 5 s",
		"In B at N = 10 the operator took 8.3 s from the artifact to Ready against OSM's own 4.1 s: its first changing request came 200 ms after the artifact, and the last operation's end reached Ready 4 s after",
	} {
		if !strings.Contains(missed.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, missed.String())
		}
	}

	r.Settings.LCMProfile = ""
	var none strings.Builder
	if err := Render(&none, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(none.String(), "Not run (`--lcm-profile` empty or `--lcm-profile-sizes` none).") {
		t.Error("a run without the LCM profile does not say the section was not run")
	}
}

// The fleet's explanation names the client-side limiter that paced it: a status subresource
// counts with its resource, reads and writes go to different clients.
func TestBusiestBucketPacesTheFleet(t *testing.T) {
	f := FleetResult{Deployments: 1000, OperatorAPIRequests: map[string]int64{
		"PATCH osmdeployments": 1000, "PATCH osmdeployments/status": 3000, "POST leases": 10000, "GET leases": 13000, "GET osmdeployments": 2000}}
	bucket, requests := busiestBucket(f)
	if bucket != (apiBucket{resource: "leases", reads: true}) || requests != 13000 {
		t.Errorf("busiest: %+v with %d requests; want the reads of leases, 13000", bucket, requests)
	}
	f.OperatorAPIRequests["PATCH osmdeployments/status"] = 20000
	if bucket, requests = busiestBucket(f); bucket != (apiBucket{resource: "osmdeployments"}) || requests != 21000 {
		t.Errorf("busiest: %+v with %d requests; want the writes of osmdeployments with their status, 21000", bucket, requests)
	}
	f.Usage.Wall = 2 * time.Minute // stopped waiting
	why := whyFleetReady(&Report{Settings: Settings{KubeAPIQPS: 100, KubeAPIBurst: 300}}, f)
	if !strings.Contains(why, "writes (creates, patches, deletes) of osmdeployments, 21.0 per OsmDeployment, 21,000 in all") ||
		!strings.Contains(why, "no less than 207 s") || !strings.Contains(why, "What paces the fleet is") {
		t.Errorf("explanation: %s", why)
	}
}

// A limiter that lets the fleet's requests through in far less than the fleet took is not
// named as its pace (a raised --kube-api-qps): the explanation says so, with the CPU measured.
func TestAFastLimiterIsNotNamedThePace(t *testing.T) {
	f := FleetResult{Deployments: 1000, OperatorAPIRequests: map[string]int64{"POST leases": 10000}}
	f.Usage.Wall, f.Usage.CPU = 2*time.Minute, 53*time.Second
	r := &Report{Settings: Settings{KubeAPIQPS: 1000, KubeAPIBurst: 2000, MaxConcurrentReconciles: 4}}
	r.Machine.Cores = 2
	why := whyFleetReady(r, f)
	if strings.Contains(why, "What paces the fleet is") || !strings.Contains(why, "It is paced neither by") ||
		!strings.Contains(why, "no less than 8 s") || !strings.Contains(why, "used 53 s of CPU") ||
		!strings.Contains(why, "no less than 26.5 s, both far less than the 120 s it took") {
		t.Errorf("explanation: %s", why)
	}
}

// A fleet whose processes used about all the machine's cores for as long as it took is paced
// by them, not by a limiter that lets its requests through sooner: the explanation says so,
// with each process's CPU time.
func TestTheMachinesCoresPaceTheFleet(t *testing.T) {
	f := FleetResult{Deployments: 1000, OperatorAPIRequests: map[string]int64{"POST leases": 10000}}
	f.ProcessCPU = map[string]time.Duration{"kube-apiserver": 107 * time.Second, "etcd": 18 * time.Second, "osm-nbi-sim": 22 * time.Second}
	f.AllReady, f.Usage.CPU = 108*time.Second, 41*time.Second
	r := &Report{Settings: Settings{KubeAPIQPS: 1000, KubeAPIBurst: 2000}}
	r.Machine.Cores = 2
	why := whyFleetReady(r, f)
	if !strings.Contains(why, "What paces the fleet is the machine's CPU: its processes used 188 s of CPU meanwhile "+
		"(the operator 41 s, etcd 18 s, kube-apiserver 107 s, osm-nbi-sim 22 s), which its 2 cores run in no less than 94 s") ||
		!strings.Contains(why, "Next comes the manager's client-side limit") {
		t.Errorf("explanation: %s", why)
	}
	r.Settings.KubeAPIQPS, r.Settings.KubeAPIBurst = 100, 300
	if why := whyFleetReady(r, f); !strings.Contains(why, "What paces the fleet is the manager's client-side limit") ||
		!strings.Contains(why, "no less than 97 s") || !strings.Contains(why, "Next comes the machine's CPU") {
		t.Errorf("explanation at --kube-api-qps 100: %s", why)
	}
	r.Settings.KubeAPIQPS = -1 // no client-side limiter
	if why := whyFleetReady(r, f); !strings.Contains(why, "What paces the fleet is the machine's CPU") ||
		!strings.Contains(why, "no client-side limit of API server requests (--kube-api-qps -1)") ||
		strings.Contains(why, "no less than -") || strings.Contains(why, "Next comes") {
		t.Errorf("explanation at --kube-api-qps -1: %s", why)
	}
	r.Settings.KubeAPIQPS, r.ClientUnlimited = 100, true // as the manager runs where the API server has priority and fairness
	if why := whyFleetReady(r, f); !strings.Contains(why, "What paces the fleet is the machine's CPU") ||
		!strings.Contains(why, "(the API server has priority and fairness, and the manager then none") ||
		!strings.Contains(why, "the writes (creates, patches, deletes) of leases, 10.0 per OsmDeployment, 10,000 in all (the claims") ||
		strings.Contains(why, "97 s") {
		t.Errorf("explanation without a client-side limiter: %s", why)
	}
	f.AllReady = 5 * time.Minute
	if why := whyFleetReady(r, f); strings.Contains(why, "What paces the fleet is") ||
		!strings.Contains(why, "Nor is it paced by the machine's CPU") {
		t.Errorf("explanation without a client-side limiter, the CPU far from the time taken: %s", why)
	}
}

// The limiter's floor is client-go's token bucket: none without a limiter, its defaults for a
// zero rate or burst.
func TestClientLimiterFloor(t *testing.T) {
	for _, tc := range []struct {
		qps   float32
		burst int
		want  time.Duration
	}{
		{100, 300, 97 * time.Second}, {-1, 300, 0}, {0, 0, 1998 * time.Second}, {1000, 20000, 0},
	} {
		if got := clientLimiterFloor(10000, tc.qps, tc.burst); got != tc.want {
			t.Errorf("qps %g, burst %d: %s, want %s", tc.qps, tc.burst, got, tc.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0", 250 * time.Microsecond: "250 µs", 21300 * time.Microsecond: "21.3 ms", 207 * time.Second: "207 s",
		1106 * time.Second: "1106 s",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

// TestWhyRequestsListsTheReadsMeasured: the explanation names each read route with its count,
// the most requested first, so that it says what was measured, not what the code once did.
func TestWhyRequestsListsTheReadsMeasured(t *testing.T) {
	r := goodReport()
	m := measured(1013, 1004, 1000, 0, time.Second)
	m.Stats.Endpoints = append(m.Stats.Endpoints,
		nbisim.EndpointStats{Route: nsdListRoute, Method: "GET", Requests: 1},
		nbisim.EndpointStats{Route: nsListRoute, Method: "GET", Requests: 2},
		nbisim.EndpointStats{Route: nsListRoute, Method: "GET", Status: 404, Requests: 1},
		nbisim.EndpointStats{Route: vnfListRoute, Method: "GET", Requests: 1},
		nbisim.EndpointStats{Route: nsListRoute, Method: "POST", Requests: 1000})
	r.Sizes[1].Operator[FirstRevision] = m
	got := whyRequestsA(r)
	want := "3 `GET /osm/nslcm/v1/ns_instances_content`, 1 `GET /osm/nsd/v1/ns_descriptors`, 1 `GET /osm/nslcm/v1/vnf_instances`."
	if !strings.Contains(got, want) || !strings.Contains(got, firstRevisionReads) {
		t.Errorf("the explanation %q lacks %q or why a first revision reads them", got, want)
	}
}

// A's wall time at N = 1,000 is explained by the machine's CPU when its processes kept its cores
// busy for about as long, each named with its CPU time; otherwise the explanation says the CPU
// does not pace it.
func TestTheMachinesCoresPaceA(t *testing.T) {
	m := Measurement{ProcessCPU: map[string]time.Duration{"kube-apiserver": 4 * time.Second, "etcd": time.Second, "osm-nbi-sim": 2 * time.Second}}
	m.Usage.Wall, m.Usage.CPU = 4700*time.Millisecond, 1800*time.Millisecond
	r := &Report{Settings: Settings{MaxConcurrentRequests: 32, Latency: 5 * time.Millisecond},
		Sizes: []SizeResult{{N: fastApplyInstances, Operator: map[Scenario]Measurement{FirstRevision: m}}}}
	r.Machine.Cores = 2
	if why := whyWallA(r); !strings.Contains(why, "the operator took 4.7 s, after a claim of each NS instance name") ||
		!strings.Contains(why, "What paces it is the machine's CPU: its processes used 8.8 s of CPU meanwhile (the operator 1.8 s, "+
			"etcd 1 s, kube-apiserver 4 s, osm-nbi-sim 2 s), which its 2 cores run in no less than 4.4 s") {
		t.Errorf("explanation: %s", why)
	}
	m.ProcessCPU = nil
	r.Sizes[0].Operator[FirstRevision] = m
	if why := whyWallA(r); strings.Contains(why, "What paces it") || !strings.Contains(why, "It is not paced by the machine's CPU") {
		t.Errorf("explanation with the operator's CPU alone: %s", why)
	}
}
