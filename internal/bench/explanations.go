package bench

import (
	"fmt"
	"strings"
	"time"
)

// The explanations of missed targets. Each states what this run's figures show (computed from
// them) and what would close the gap, as read from the engine's code; a remedy is only offered
// when the figures show the cost it removes.

// Routes the explanations count.
const (
	nsdListRoute        = "/osm/nsd/v1/ns_descriptors"
	nsListRoute         = "/osm/nslcm/v1/ns_instances_content"
	vnfListRoute        = "/osm/nslcm/v1/vnf_instances"
	operationsListRoute = "/osm/nslcm/v1/ns_lcm_op_occs"
)

// largest returns the figures of the largest size measured through the operator.
func (r *Report) largest(scenario Scenario) (SizeResult, Measurement, bool) {
	for i := len(r.Sizes) - 1; i >= 0; i-- {
		if m, ok := r.Sizes[i].Operator[scenario]; ok {
			return r.Sizes[i], m, true
		}
	}
	return SizeResult{}, Measurement{}, false
}

// observationCount counts a scenario's observations of OSM: each lists the NSDs once.
func observationCount(m Measurement) int64 { return endpointRequests(m.Stats, "GET", nsdListRoute) }

// observations describes how often a scenario observed OSM and polled the operations.
func observations(m Measurement) string {
	polls := endpointRequests(m.Stats, "GET", operationsListRoute)
	return fmt.Sprintf("observed OSM %d time(s) (%d list requests in all) and polled the operations %d time(s)",
		observationCount(m), m.Stats.ReadRequests-polls, polls)
}

// recordBytes is what a scenario read of the NS and VNF records.
func recordBytes(m Measurement) int64 {
	return endpointBytes(m, nsListRoute) + endpointBytes(m, vnfListRoute)
}

// secondObservation says what A and B spend most on when the engine observes OSM once to plan
// and once more after the operations finished.
const secondObservation = "Most of it is the second observation: once the operations have finished, the reconciler " +
	"lists everything again (NSDs, VNFDs, VIM accounts, NS instances and the VNF records) before it reports Ready, to " +
	"notice an NS instance deleted meanwhile, whose operations OSM drops so that they look completed."

// lighterConfirmation is what would close the request targets of A and B then.
const lighterConfirmation = "Checking that with the NS instance list alone would save 4 requests; trusting the " +
	"finished operations and leaving a deletion to the next drift check would save all 5."

func whyRequests(r *Report, scenario Scenario, budget string) string {
	size, m, ok := r.largest(scenario)
	if !ok {
		return "Not measured."
	}
	why := fmt.Sprintf("%s At N = %s the operator %s.", budget, formatCount(int64(size.N)), observations(m))
	if observationCount(m) > 1 {
		return why + " " + secondObservation + " " + lighterConfirmation
	}
	return why + " Each observation costs 4 or 5 requests and each poll one: fewer polls (a longer " +
		"OperationPollInterval, or a first poll timed on the operations' usual duration) would close it."
}

func whyRequestsA(r *Report) string {
	return whyRequests(r, FirstRevision, fmt.Sprintf("The budget leaves %d requests beyond the N creates, four of which "+
		"the package uploads and their owner marks take, and one the list of the instances the OsmDeployment owns "+
		"(ownership recorded in OSM).", requestAllowance))
}

func whyRequestsB(r *Report) string {
	return whyRequests(r, ChangedValues, fmt.Sprintf("The budget leaves %d requests beyond the 0.1N upgrades.", requestAllowance))
}

func whyWallA(r *Report) string {
	size, m, ok := r.largest(FirstRevision)
	if !ok || size.N != fastApplyInstances {
		return fmt.Sprintf("N = %d was not measured.", fastApplyInstances)
	}
	return fmt.Sprintf("The creates alone take %s at %d in flight; the operator took %s, with %s of CPU on a machine whose %d "+
		"cores also run the simulator, the API server and etcd; it %s.",
		formatDuration(minimum(r.Settings, size.N, FirstRevision, m.Stats).wall), r.Settings.MaxConcurrentRequests,
		formatDuration(m.Usage.Wall), formatDuration(m.Usage.CPU), r.Machine.Cores, observations(m))
}

func whyBytesA(r *Report) string {
	size, m, ok := r.largest(FirstRevision)
	if !ok {
		return "Not measured."
	}
	cli := size.CLI[FirstRevision]
	records := recordBytes(m)
	why := fmt.Sprintf("The creates' own bodies are about what the CLI pattern sends too; the operator's extra is reading "+
		"records: at N = %s, %s of its %s are NS and VNF records.",
		formatCount(int64(size.N)), formatBytes(uint64(records)), formatBytes(uint64(totalBytes(m.Stats))))
	if observationCount(m) > 1 {
		why += fmt.Sprintf(" They are the records of all the new instances, read after the creates. %s Only trusting the "+
			"finished operations (a deleted instance then shows at the next drift check) removes them: A would be %s, %s "+
			"fewer than the CLI pattern.", secondObservation, formatBytes(uint64(totalBytes(m.Stats)-records)),
			formatRatio(totalBytes(cli.Stats), totalBytes(m.Stats)-records))
	}
	return why
}

func whyBytesB(r *Report) string {
	var parts []string
	for _, s := range r.Sizes {
		op, cli := s.Operator[ChangedValues], s.CLI[ChangedValues]
		parts = append(parts, fmt.Sprintf("N = %s: %s (%s of it NS and VNF records, read in %d observation(s)) against the "+
			"CLI pattern's %s", formatCount(int64(s.N)), formatBytes(uint64(totalBytes(op.Stats))), formatBytes(uint64(recordBytes(op))),
			observationCount(op), formatBytes(uint64(totalBytes(cli.Stats)))))
	}
	why := "A plan must read the NS and VNF records of every instance the repository declares, about 8 kB each, to find " +
		"the ones deleted or changed in OSM, while the CLI pattern lists the NS records twice per changed instance only; " +
		"its cost grows as N², the operator's as N, so the factor grows with N: " + strings.Join(parts, "; ") + "."
	if _, m, ok := r.largest(ChangedValues); ok && observationCount(m) > 1 {
		why += " " + secondObservation + " Dropping it would halve the operator's bytes."
	}
	return why + " Where it misses, the CLI pattern's whole work is smaller than the records of the repository's " +
		"instances: 10x fewer would leave under a tenth of the CLI pattern's bytes for N records, less than the smallest " +
		"record OSM serves of an instance (its VNF record, about 2 kB; the NBI has no field selection). Skipping the VNF " +
		"records of the instances whose declaration changed in Git (they are upgraded whatever OSM runs) would trim " +
		"10% of those."
}

func whyUnchanged(r *Report) string {
	var parts []string
	for _, s := range r.Sizes {
		op, cli := s.Operator[DriftCheck], totalBytes(s.CLI[SameRevision].Stats)
		others := totalBytes(op.Stats) - recordBytes(op)
		parts = append(parts, fmt.Sprintf("N = %s: %s (%s, %s of it NS records; the VNF records alone would be %s, the "+
			"descriptor and VIM lists %s)", formatCount(int64(s.N)), percent(ratio(totalBytes(op.Stats), cli)),
			formatBytes(uint64(totalBytes(op.Stats))), formatBytes(uint64(endpointBytes(op, nsListRoute))),
			percent(ratio(endpointBytes(op, vnfListRoute), cli)), percent(ratio(others, cli))))
	}
	return "A drift check must read what OSM runs of the repository: its NS instance and VNF records, which grow as N, " +
		"and the descriptor and VIM account lists the references are checked against; the CLI pattern's C is N upgrades " +
		"that each list every NS record twice, which grows as N²; so the share falls as N grows: " + strings.Join(parts, "; ") +
		". Reading only the VNF records (they carry the live values, and go with their NS instance) when nothing changed " +
		"in Git would get closest, but not under 1% for small N; below that OSM offers no cheaper view (no field selection)."
}

// deploymentWrites are the operator's writes to OsmDeployments: what the client-side limiter
// of --kube-api-qps counts against one bucket.
func deploymentWrites(f FleetResult) int64 {
	return f.OperatorAPIRequests["PATCH osmdeployments"] + f.OperatorAPIRequests["PATCH osmdeployments/status"]
}

func whyFleetReady(r *Report) string {
	f := r.Fleet
	writes := deploymentWrites(f)
	floor := time.Duration(float64(max(writes-int64(r.Settings.KubeAPIBurst), 0)) / float64(r.Settings.KubeAPIQPS) * float64(time.Second))
	return fmt.Sprintf("Each OsmDeployment reads only its own NS instances, so the NBI traffic grows as D·n (%s NBI requests, %s "+
		"received). What paces the fleet is the manager's client-side limit of API server requests: applying a revision "+
		"writes each OsmDeployment %.1f times (the finalizer, the pending creates before they are sent, the operations, "+
		"Ready), %s writes in all, which --kube-api-qps %g (burst %d) lets through in no less than %s. A higher "+
		"--kube-api-qps closes it (the API server protects itself with priority and fairness), as would fewer writes: "+
		"the pending creates and the operations could be written in one patch only by giving up the record that keeps a "+
		"crash from creating an NS instance twice.",
		formatCount(f.Stats.Requests), formatBytes(uint64(f.Stats.BytesSent)), float64(writes)/float64(max(f.Deployments, 1)),
		formatCount(writes), r.Settings.KubeAPIQPS, r.Settings.KubeAPIBurst, formatDuration(floor))
}

func whyFleetMemory(r *Report) string {
	return fmt.Sprintf("The informers cache every OsmDeployment and GitRepository (%s of each) with their status, and "+
		"each of the %d reconciles at once holds its revision and the records of its own NS instances; a heap profile "+
		"of the run (go tool pprof) shows which dominates.", formatCount(int64(r.Fleet.Deployments)), r.Settings.MaxConcurrentReconciles)
}

// whyGoBenchmark explains a missed Go benchmark target, by benchmark name.
var whyGoBenchmark = map[string]string{
	"BenchmarkCompute10000Instances": "gitops.Load computes each instance's digest and canonical values once; what " +
		"remains is mostly decoding and re-encoding the live values OSM reports for each instance (JSON), and GC. " +
		"Comparing the decoded live values with the declared ones without encoding them again would cut most of it.",
	"BenchmarkHostileListHeap": "a list answer is decoded one record at a time and the records kept are counted " +
		"against the list's bound; a heap profile of the benchmark (go test -bench -memprofile) shows what else is held.",
	"BenchmarkLoad1000DeploymentFiles": "gitops.Load reads and validates each file through yaml.v3 nodes; profile the " +
		"benchmark (go test -bench -cpuprofile) to see which step dominates.",
}

// endpointBytes is what the NBI answered to the GETs of a route.
func endpointBytes(m Measurement, route string) int64 {
	var n int64
	for _, e := range m.Stats.Endpoints {
		if e.Method == "GET" && e.Route == route {
			n += e.BytesSent
		}
	}
	return n
}
