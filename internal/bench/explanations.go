package bench

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/osmops/osmops/internal/nbisim"
)

// notMeasured is the explanation of a target this run did not measure.
const notMeasured = "Not measured."

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
	for _, v := range slices.Backward(r.Sizes) {
		if m, ok := v.Operator[scenario]; ok {
			return v, m, true
		}
	}
	return SizeResult{}, Measurement{}, false
}

// observationCount counts a scenario's observations of OSM: each lists the NS instances once
// (the descriptor lists only when the references can have changed).
func observationCount(m Measurement) int64 { return endpointRequests(m.Stats, "GET", nsListRoute) }

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
// and reads the records of the instances once more after the operations finished.
const secondObservation = "Most of it is the second read of the records: once the operations have finished, the " +
	"reconciler reads the NS and VNF records of the instances they completed before it reports Ready, for their health " +
	"(an operation COMPLETED is not yet an instance READY with its KDUs READY: the Healthy condition)."

// lighterConfirmation is what the second read would cost to save.
const lighterConfirmation = "Taking COMPLETED for healthy would save it, and leave the Healthy condition unknown " +
	"until the next drift check."

// firstRevisionReads says why a first revision cannot read less.
const firstRevisionReads = "A first revision cannot read less: its creates name OSM's ids of the NSD and the VIM " +
	"account, so the descriptors, packages and VIM accounts (and the project, for its quotas) are read once, and the " +
	"instances are listed by owner, then by the names no marker found."

// readsByRoute lists the reads of stats, the most requested first: "3 GET /osm/...".
func readsByRoute(stats nbisim.Stats) string {
	counts := map[string]int64{}
	for _, e := range stats.Endpoints {
		if e.Method == "GET" {
			counts[e.Route] += e.Requests
		}
	}
	routes := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(routes))
	for i, route := range routes {
		parts[i] = fmt.Sprintf("%d `GET %s`", counts[route], route)
	}
	return strings.Join(parts, ", ")
}

func whyRequests(r *Report, scenario Scenario, budget string) string {
	size, m, ok := r.largest(scenario)
	if !ok {
		return notMeasured
	}
	why := fmt.Sprintf("%s At N = %s the operator %s: %s.", budget, formatCount(int64(size.N)), observations(m), readsByRoute(m.Stats))
	if scenario == FirstRevision {
		why += " " + firstRevisionReads
	}
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
	why := fmt.Sprintf("The creates alone take %s at %d in flight; the operator took %s, after a claim of each NS instance "+
		"name (a Lease create each); it %s. ", formatDuration(minimum(r.Settings, size.N, FirstRevision, m.Stats).wall),
		r.Settings.MaxConcurrentRequests, formatDuration(m.Usage.Wall), observations(m))
	cpu, floor := machineCPU(r, m)
	if !canPace(floor, m.Usage.Wall) {
		return why + fmt.Sprintf("It is not paced by %s, far less than the %s it took.", cpu, formatDuration(m.Usage.Wall))
	}
	return why + "What paces it is " + cpu + "."
}

// whyBytesA breaks down A's bytes at each size that misses: the operator's above the minimum
// (its own creates and uploads), and how far the CLI pattern's are above that minimum.
func whyBytesA(r *Report) string {
	var parts []string
	noRoom := false
	for _, s := range r.Sizes {
		op, okOp := s.Operator[FirstRevision]
		cli, okCLI := s.CLI[FirstRevision]
		if !okOp || !okCLI || ratio(totalBytes(cli.Stats), totalBytes(op.Stats)) >= bytesFactor {
			continue
		}
		least := minimum(r.Settings, s.N, FirstRevision, op.Stats).bytes
		noRoom = noRoom || ratio(totalBytes(cli.Stats), least) < bytesFactor
		parts = append(parts, fmt.Sprintf("N = %s: the operator %s, of which %s its own log in, uploads, owner marks and "+
			"creates (the minimum) and %s reads (%s of them NS and VNF records); the CLI pattern %s, %s the minimum",
			formatCount(int64(s.N)), formatBytes(uint64(totalBytes(op.Stats))), formatBytes(uint64(least)),
			formatBytes(uint64(max(totalBytes(op.Stats)-least, 0))), formatBytes(uint64(recordBytes(op))),
			formatBytes(uint64(totalBytes(cli.Stats))), formatRatio(totalBytes(cli.Stats), least)))
	}
	if len(parts) == 0 {
		return notMeasured
	}
	why := "The creates' bodies are what any client sends, the CLI pattern the same ones: " + strings.Join(parts, "; ") + "."
	if noRoom {
		why += " Where the CLI pattern's bytes are under 10x the minimum, no client could send 10x fewer: without --wait " +
			"the CLI pattern reads only a few short lists per create, which at small N weigh less than nine times the " +
			"creates themselves."
	}
	if _, m, ok := r.largest(FirstRevision); ok && observationCount(m) > 1 {
		why += " " + secondObservation
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
	why := "A new revision reads the NS and VNF records of the instances whose declaration changed only, about 8 kB " +
		"each, and OSM's operations; OSM's descriptor, VIM account and package lists only when the revision's " +
		"references differ from those the last apply checked (status.inventory.referencesDigest); the CLI pattern " +
		"lists every NS record twice per changed instance, so its cost grows as N², the operator's as the changed " +
		"instances: " + strings.Join(parts, "; ") + "."
	if _, m, ok := r.largest(ChangedValues); ok && observationCount(m) > 1 {
		why += " " + secondObservation + " " + lighterConfirmation
	}
	return why + " Where it misses, N is small: the CLI pattern's lists are short, and the operator's reads that do not " +
		"grow with N weigh more than a tenth of them."
}

// whyRequestsBAgainstCLI explains B's requests against the CLI pattern's at the smallest size
// where the operator sent more: the operator's reads are a cost per revision, the CLI's per
// changed instance.
func whyRequestsBAgainstCLI(r *Report) string {
	for _, s := range r.Sizes {
		op, okOp := s.Operator[ChangedValues]
		cli, okCLI := s.CLI[ChangedValues]
		if !okOp || !okCLI || op.Stats.Requests <= cli.Stats.Requests {
			continue
		}
		changed := int64(len(s.Changed))
		perCommand := cli.Stats.Requests / max(changed, 1)
		reads := op.Stats.Requests - op.Stats.MutatingRequests
		why := fmt.Sprintf("At N = %s, %d instance(s) changed: the CLI pattern sent %d requests, %d per changed instance (a "+
			"token, the NS instance list twice, the action); the operator sent %d, %d operation(s) and %d reads: it %s. "+
			"Its reads are a cost per revision, the CLI's grow with the changed instances", formatCount(int64(s.N)), changed,
			cli.Stats.Requests, perCommand, op.Stats.Requests, op.Stats.MutatingRequests, reads, observations(op))
		if perCommand > 1 {
			// c changed instances cost the operator c + reads, the CLI c·perCommand.
			breakEven := (reads + perCommand - 2) / (perCommand - 1)
			why += fmt.Sprintf(", so the operator sends no more from %d changed instance(s) on", breakEven)
		}
		return why + fmt.Sprintf(". To send no more for %d changed instance(s), the operator would have to plan and confirm "+
			"them in %d reads, where it read %s.", changed, cli.Stats.Requests-op.Stats.MutatingRequests, readsByRoute(op.Stats))
	}
	return notMeasured
}

// whyDriftBytes breaks down what a drift check read per declared instance, at each size.
func whyDriftBytes(r *Report) string {
	var parts []string
	for _, s := range r.Sizes {
		m, ok := s.Operator[DriftCheck]
		if !ok {
			continue
		}
		n := int64(s.N)
		others := totalBytes(m.Stats) - recordBytes(m)
		parts = append(parts, fmt.Sprintf("N = %s: %s per instance, of which NS records %s, VNF records %s and the other "+
			"lists (descriptors, VIM accounts, operations) %s", formatCount(n), formatBytes(uint64(totalBytes(m.Stats)/n)),
			formatBytes(uint64(endpointBytes(m, nsListRoute)/n)), formatBytes(uint64(endpointBytes(m, vnfListRoute)/n)),
			formatBytes(uint64(others/n))))
	}
	return "A drift check reads the NS and the VNF record of every declared instance, whole (the NBI has no field " +
		"selection), and the lists the references are checked against, whose cost per instance falls as N grows: " +
		strings.Join(parts, "; ") + ". Records read more than once, or lists that grow with the instances of other " +
		"OsmDeployments, would show here; reading only the VNF records when nothing changed in Git (they carry the " +
		"live values) would save the NS records' share."
}

// apiBucket is one client-side limiter of --kube-api-qps: controller-runtime gives each client
// a limiter per resource, and the manager has two clients, the cached one (whose reads the
// informers answer, so only its writes reach the API server) and the uncached reader.
type apiBucket struct {
	resource string
	reads    bool
}

// busiestBucket is the limiter the operator's requests of a fleet weighed most on, with its
// requests: the one that paces the fleet.
func busiestBucket(f FleetResult) (apiBucket, int64) {
	counts := map[apiBucket]int64{}
	for key, n := range f.OperatorAPIRequests {
		method, resource, _ := strings.Cut(key, " ")
		resource, _, _ = strings.Cut(resource, "/") // a subresource shares its resource's client
		counts[apiBucket{resource: resource, reads: method == "GET"}] += n
	}
	var busiest apiBucket
	var most int64
	for _, bucket := range slices.SortedFunc(maps.Keys(counts), func(a, b apiBucket) int {
		return cmp.Or(cmp.Compare(a.resource, b.resource), cmp.Compare(fmt.Sprint(a.reads), fmt.Sprint(b.reads)))
	}) {
		if counts[bucket] > most {
			busiest, most = bucket, counts[bucket]
		}
	}
	return busiest, most
}

func whyFleetReady(r *Report, f FleetResult) string {
	bucket, requests := busiestBucket(f)
	kind := "writes (creates, patches, deletes)"
	if bucket.reads {
		kind = "uncached reads"
	}
	perDeployment := float64(requests) / float64(max(f.Deployments, 1))
	why := fmt.Sprintf("Each OsmDeployment reads only its own NS instances, so the NBI traffic grows as D·n (%s NBI requests, %s "+
		"received). ", formatCount(f.Stats.Requests), formatBytes(uint64(f.Stats.BytesSent)))
	busiest := fmt.Sprintf("the %s of %s, %.1f per OsmDeployment, %s in all", kind, bucket.resource, perDeployment, formatCount(requests))
	if bucket.resource == "leases" {
		busiest += " (the claims of the NS instance names: one Lease per name, created before a create is sent, so that no " +
			"two OsmDeployments create one name in an OSM; the API server refuses the second create of one object, never of " +
			"one name among several, so each name costs one request; plans read them from the manager's cache)"
	}
	cpu, cpuFloor := machineCPU(r, f.Measurement)
	took := f.AllReady
	if took == 0 {
		took = f.Usage.Wall
	}
	// What the fleet waits for when neither floor is near the time it took.
	reconciles := fmt.Sprintf("%d reconciles at once (--concurrent) take each OsmDeployment through its claims, creates, "+
		"polls and status writes; a CPU profile of the fleets (osmops-bench --fleet-cpu-profile) shows where the operator's "+
		"time goes.", r.Settings.MaxConcurrentReconciles)
	qps, burst := r.Settings.KubeAPIQPS, r.Settings.KubeAPIBurst
	if qps < 0 || r.ClientUnlimited {
		why += fmt.Sprintf("The manager had no client-side limit of API server requests (%s); its busiest client and resource "+
			"were %s. ", unlimitedBecause(r, qps), busiest)
		if !canPace(cpuFloor, took) {
			return why + fmt.Sprintf("Nor is it paced by %s, far less than the %s it took: ", cpu, formatDuration(took)) + reconciles
		}
		return why + "What paces the fleet is " + cpu + "."
	}
	limiterFloor := clientLimiterFloor(requests, qps, burst)
	limiter := fmt.Sprintf("the manager's client-side limit of API server requests, one limiter per client and resource: its "+
		"busiest were %s, which --kube-api-qps %g (burst %d) lets through in no less than %s", busiest, qps, burst,
		formatDuration(limiterFloor))
	switch {
	case !canPace(max(limiterFloor, cpuFloor), took):
		// Neither floor can be what the fleet waited for: say so, with what was measured.
		return why + fmt.Sprintf("It is paced neither by %s, nor by %s, both far less than the %s it took: ", limiter, cpu,
			formatDuration(took)) + reconciles
	case limiterFloor >= cpuFloor:
		return why + "What paces the fleet is " + limiter + ". Next comes " + cpu + "."
	}
	return why + "What paces the fleet is " + cpu + ". Next comes " + limiter + "."
}

// unlimitedBecause says why the manager of a report ran without a client-side limiter.
func unlimitedBecause(r *Report, qps float32) string {
	if r.ClientUnlimited {
		return "the API server has priority and fairness, and the manager then none, as cmd/main.go's client configuration"
	}
	return fmt.Sprintf("--kube-api-qps %g", qps)
}

// clientLimiterFloor is the least time client-go's token bucket of qps and burst takes to let
// requests through: none when qps is negative (no limiter), client-go's defaults for zero.
func clientLimiterFloor(requests int64, qps float32, burst int) time.Duration {
	switch {
	case qps < 0:
		return 0
	case qps == 0:
		qps = rest.DefaultQPS
	}
	if burst <= 0 {
		burst = rest.DefaultBurst
	}
	return time.Duration(float64(max(requests-int64(burst), 0)) / float64(qps) * float64(time.Second))
}

// canPace tells whether a floor (the least time a limiter or the machine's cores allow) can be
// what a measurement waited for, which took: one under half of it leaves most of the time to
// something else.
func canPace(floor, took time.Duration) bool { return floor >= took/2 }

// machineCPU says what CPU time the processes of the machine spent during a measurement, and
// the least time the machine's cores take to run it.
func machineCPU(r *Report, m Measurement) (string, time.Duration) {
	total := m.Usage.CPU
	spent := []string{"the operator " + formatDuration(m.Usage.CPU)}
	for _, command := range slices.Sorted(maps.Keys(m.ProcessCPU)) {
		total += m.ProcessCPU[command]
		spent = append(spent, fmt.Sprintf("%s %s", command, formatDuration(m.ProcessCPU[command])))
	}
	floor := total / time.Duration(max(r.Machine.Cores, 1))
	return fmt.Sprintf("the machine's CPU: its processes used %s of CPU meanwhile (%s), which its %d cores run in no less "+
		"than %s", formatDuration(total), strings.Join(spent, ", "), r.Machine.Cores, formatDuration(floor)), floor
}

func whyFleetMemory(r *Report, f FleetResult) string {
	return fmt.Sprintf("The informers cache every OsmDeployment (%s) and GitRepository with their status, the revision "+
		"cache holds the parsed revision each OsmDeployment applied, and each of the %d reconciles at once holds the "+
		"records of its own NS instances; a heap profile of the run (go tool pprof) shows which dominates.",
		formatCount(int64(f.Deployments)), r.Settings.MaxConcurrentReconciles)
}

// whyGoBenchmark explains a missed Go benchmark target, by benchmark name.
var whyGoBenchmark = map[string]string{
	"BenchmarkCompute10000Instances": "gitops.Load computes each instance's digest and canonical values once, and " +
		"the observation holds one record per NS instance (its NS record, owner, VNFs and KDUs laid out together), " +
		"which a plan finds once by name and reads in place; live values equal to the declared ones compare as " +
		"bytes. What remains is mostly the first read of each instance's declaration and record (cache misses), the " +
		"JSON decoding of the live values that differ from the declared ones (10% of the instances here), the " +
		"plan's own inventory and actions, and GC; on a 2-core machine shared with other work the time follows the " +
		"load, so compare it with a run of the code before in the same minute.",
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

// closenessSample is the profiled run an explanation describes: B at the smallest size, else
// the first run.
func closenessSample(r *Report) (profiled, bool) {
	runs := r.profiledRuns()
	if i := slices.IndexFunc(runs, func(run profiled) bool { return run.scenario == ChangedValues }); i >= 0 {
		return runs[i], true
	}
	if len(runs) == 0 {
		return profiled{}, false
	}
	return runs[0], true
}

func whyCompletedToReady(r *Report) string {
	run, ok := closenessSample(r)
	if !ok {
		return notMeasured + " Run with `--lcm-profile real`."
	}
	c := run.m.Closeness
	return fmt.Sprintf("In %s at N = %d the last operation's end reached Ready %s after OSM's COMPLETED, and the next "+
		"read of the operations came %s after an operation's end at the median, %s at p99, with the reconciler's poll "+
		"schedule between %s and %s: an end waits for the next poll, then for the confirmation and the status write. "+
		"Until operations of a type have been seen end on that OSM they are polled every %s; after, a tenth past their "+
		"usual end and then every %s, so the end of a first operation of its type is what misses %s, and that of one "+
		"much shorter than its type's usual (a scale-down after a scale-up) is seen at the next poll of the interval.",
		run.scenario, run.n,
		formatDuration(percentile(c.CompletedToReady, 99)), formatDuration(percentile(c.CompletedToPoll, 50)),
		formatDuration(percentile(c.CompletedToPoll, 99)), formatDuration(r.Settings.ProfilePollMinInterval),
		formatDuration(r.Settings.ProfilePollInterval), formatDuration(r.Settings.ProfilePollInterval),
		formatDuration(r.Settings.ProfilePollMinInterval), formatDuration(completedToReadyTarget))
}

func whyRequestsPerOperation(r *Report) string {
	run, ok := closenessSample(r)
	if !ok {
		return notMeasured + " Run with `--lcm-profile real`."
	}
	polls := endpointRequests(run.m.Stats, "GET", operationsListRoute)
	return fmt.Sprintf("In %s at N = %d the operator sent %d requests for %d operation(s), %d of them reads of the "+
		"operations (`%s`), on a poll schedule between %s and %s while OSM ran them for %s: each poll costs a "+
		"request, and the schedule's short polls past an operation type's usual end add one or two.", run.scenario, run.n,
		run.m.Stats.Requests, run.m.Closeness.Operations, polls, operationsListRoute, formatDuration(r.Settings.ProfilePollMinInterval),
		formatDuration(r.Settings.ProfilePollInterval), formatDuration(run.m.Closeness.OSMTime))
}

func whyClosenessRatio(r *Report) string {
	run, ok := closenessSample(r)
	if !ok {
		return notMeasured + " Run with `--lcm-profile real`."
	}
	c := run.m.Closeness
	return fmt.Sprintf("In %s at N = %d the operator took %s from the artifact to Ready against OSM's own %s: its first "+
		"changing request came %s after the artifact, and the last operation's end reached Ready %s after OSM's "+
		"COMPLETED; the rest is OSM's. The second is the poll's wait (see the target on COMPLETED to Ready).",
		run.scenario, run.n, formatDuration(c.OperatorTime), formatDuration(c.OSMTime), formatDuration(percentile(c.FirstRequest, 50)),
		formatDuration(percentile(c.CompletedToReady, 99)))
}
