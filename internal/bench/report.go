package bench

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// Report is everything docs/benchmarks.md shows.
type Report struct {
	Started  time.Time
	Duration time.Duration
	// Command reproduces the run.
	Command  string
	Machine  Machine
	Settings Settings
	Sizes    []SizeResult
	Fleets   []FleetResult
	// Hostile is the hostile tenants scenario's figures, nil when it did not run.
	Hostile      *HostileResult
	GoBenchmarks []GoBenchmark
	// Errors are parts of the run that could not be measured.
	Errors []string
	// ClosenessOnly is a run of the closeness runs alone (--only closeness): only their targets
	// are judged.
	ClosenessOnly bool
	// ClientUnlimited: the manager ran without a client-side limiter of API server requests, its
	// API server having priority and fairness (Operator.ClientUnlimited).
	ClientUnlimited bool
}

// Machine describes where the run happened.
type Machine struct {
	CPU       string
	Cores     int
	Memory    uint64
	Kernel    string
	GoVersion string
	Commit    string
	// LoadAverage is /proc/loadavg's 1-, 5- and 15-minute figures when the run started: other
	// work on the machine shows in the timings.
	LoadAverage string
}

// Render writes the report as Markdown.
func Render(w io.Writer, r *Report) error {
	md := &markdown{}
	md.line("# Benchmarks")
	md.line("")
	md.line("Written by `%s` on %s (%s); do not edit by hand, run it again.",
		r.Command, r.Started.UTC().Format("2006-01-02 15:04 MST"), formatDuration(r.Duration.Round(time.Second)))
	if r.ClosenessOnly {
		md.line("The runs of [How close to OSM's own time](#how-close-to-osms-own-time) alone, through the real reconcilers")
		md.line("(controller-runtime manager on envtest); see [Method](#method).")
	} else {
		md.line("Scenarios A to D run through the real reconcilers (controller-runtime manager on envtest) and through a model")
		md.line("of the `osm` CLI's request pattern, each against its own NBI simulator process; see [Method](#method).")
		md.line("The closeness targets measured on OSM's own LCM are in [benchmarks-real-osm.md](benchmarks-real-osm.md).")
	}
	if len(r.Errors) > 0 {
		md.line("")
		md.line("**Parts of this run failed and are missing:**")
		for _, e := range r.Errors {
			md.line("- %s", e)
		}
	}
	renderTargets(md, r)
	renderSettings(md, r)
	for _, scenario := range Scenarios {
		renderScenario(md, r, scenario)
	}
	renderCloseness(md, r)
	for _, f := range r.Fleets {
		renderFleet(md, r, f)
	}
	if r.Hostile != nil {
		renderHostile(md, r.Hostile)
	}
	if len(r.GoBenchmarks) > 0 {
		renderGoBenchmarks(md, r)
	}
	renderMethod(md, r)
	_, err := io.WriteString(w, md.String())
	return err
}

func renderTargets(md *markdown, r *Report) {
	md.heading("Targets")
	verdicts := Evaluate(r)
	passed := 0
	for _, v := range verdicts {
		if v.Pass {
			passed++
		}
	}
	md.line("%d of %d targets met.", passed, len(verdicts))
	md.line("")
	md.row("target", "measured", "result")
	md.row("---", "---", "---")
	for _, v := range verdicts {
		result := "pass"
		if !v.Pass {
			result = "**miss**"
		}
		md.row(v.Target, v.Measured, result)
	}
	var missed []Verdict
	for _, v := range verdicts {
		if !v.Pass && v.Why != "" {
			missed = append(missed, v)
		}
	}
	if len(missed) == 0 {
		return
	}
	md.heading("Why targets are missed, and what would close them")
	for _, v := range missed {
		md.line("**%s.** %s", v.Target, v.Why)
		md.line("")
	}
}

func renderSettings(md *markdown, r *Report) {
	s, m := r.Settings, r.Machine
	md.heading("Machine and settings")
	md.row("", "")
	md.row("---", "---")
	md.row("machine", fmt.Sprintf("%s, %d cores, %s memory, Linux %s", m.CPU, m.Cores, formatBytes(m.Memory), m.Kernel))
	md.row("load average at the start (1, 5, 15 min)", m.LoadAverage)
	md.row("Go", m.GoVersion)
	md.row("commit", m.Commit)
	md.row("date", r.Started.UTC().Format(time.RFC3339))
	md.row("command", "`"+r.Command+"`")
	if s.RealOSM != "" {
		md.row("closeness runs against", fmt.Sprintf("OSM's own NBI and LCM at %s (VIM account %s), N = %s", s.RealOSM,
			s.RealOSMVIMAccount, joinInts(s.ProfileSizes)))
	} else {
		md.row("NBI latency injected per request", formatDuration(s.Latency))
		md.row("simulator OperationDelay (each LCM operation)", formatDuration(s.OperationDelay))
		md.row("simulator LCM profile (sizes run with it)", fmt.Sprintf("%s (%s)", cmp.Or(s.LCMProfile, "none"), joinInts(s.ProfileSizes)))
	}
	if !r.ClosenessOnly {
		md.row("reconciler OperationPollInterval", formatDuration(s.OperationPollInterval))
	}
	md.row("reconciler poll in the runs with the LCM profile (interval, min interval)",
		formatDuration(s.ProfilePollInterval)+", "+formatDuration(s.ProfilePollMinInterval))
	md.row("OsmCluster maxConcurrentRequests", fmt.Sprint(s.MaxConcurrentRequests))
	limits := fmt.Sprintf("%d, %g, %d", s.MaxConcurrentReconciles, s.KubeAPIQPS, s.KubeAPIBurst)
	if r.ClientUnlimited {
		limits += " (the API server has priority and fairness: the manager has no client-side limit then, as cmd/main.go)"
	}
	md.row("manager --concurrent, --kube-api-qps, --kube-api-burst", limits)
	if r.ClosenessOnly {
		return
	}
	md.row("OsmDeployment interval (drift check: interval set to)", fmt.Sprintf("1h (%s)", formatDuration(s.DriftInterval)))
	md.row("CLI pattern: commands at once, --wait poll (sizes run with --wait)", fmt.Sprintf("%d, %s (%s)", s.MaxConcurrentRequests,
		formatDuration(s.CLIPollInterval), joinInts(s.CLIWaitSizes)))
	md.row("repository sizes N", joinInts(s.Sizes))
	fleets := make([]string, len(s.Fleets))
	for i, source := range s.Fleets {
		fleets[i] = fleetSourceTitles[source]
	}
	md.row("fleets", fmt.Sprintf("%s OsmDeployments of %d instances: %s", formatCount(int64(s.FleetDeployments)), s.FleetInstances, strings.Join(fleets, "; ")))
}

// scenarioTitles say what each scenario does.
var scenarioTitles = map[Scenario]string{
	FirstRevision: "A: first revision (N creates, two packages)",
	ChangedValues: "B: a revision that changes the values of 10% of the instances",
	SameRevision:  "C1: the same revision again (reconcile request)",
	DriftCheck:    "C2: drift check with nothing drifted",
	Pruned:        "D: a revision that removes 10% of the instances, with prune",
}

func renderScenario(md *markdown, r *Report, scenario Scenario) {
	md.heading("Scenario " + scenarioTitles[scenario])
	switch scenario {
	case SameRevision:
		md.line("A CLI user whose repository did not change runs no command: the CLI pattern sends nothing. The operator is")
		md.line("asked to reconcile the revision it has applied (`flux reconcile`), and must only read.")
	case DriftCheck:
		renderDriftCost(md, r)
	default:
		md.line("CLI: the `osm` commands as the CLI runs them by default, without `--wait`: each returns once OSM has accepted its")
		md.line("request, so its wall time ends before OSM's work does. CLI --wait: the same commands with `--wait`, which read the")
		md.line("operation at once and then every %s until it has finished, run at N = %s only (see [Method](#method)).",
			formatDuration(r.Settings.CLIPollInterval), joinInts(r.Settings.CLIWaitSizes))
		md.line("The operator's wall time runs until it reports Ready, OSM's operations done.")
	}
	md.line("")
	for _, s := range r.Sizes {
		op, hasOp := s.Operator[scenario]
		var others []column
		if !unchangedScenario(scenario) {
			cli, hasCLI := s.CLI[scenario]
			hasOp = hasOp && hasCLI
			others = append(others, column{"CLI", cli})
			if wait, ok := s.CLIWait[scenario]; ok {
				others = append(others, column{"CLI --wait", wait})
			}
		}
		if !hasOp {
			md.line("N = %d: not measured.", s.N)
			md.line("")
			continue
		}
		renderComparison(md, r, s.N, scenario, op, others)
	}
}

// unchangedScenario tells the scenarios of an unchanged repository, where the CLI pattern sends
// nothing.
func unchangedScenario(s Scenario) bool { return s == SameRevision || s == DriftCheck }

// checksPerDay is how many drift checks an OsmDeployment makes a day at the default interval.
const checksPerDay = int64(24 * time.Hour / gitopsv1alpha1.DefaultInterval)

// defaultInterval is an OsmDeployment's default interval, in minutes.
func defaultInterval() string { return fmt.Sprintf("%g min", gitopsv1alpha1.DefaultInterval.Minutes()) }

// renderDriftCost states what the drift check costs at each size, and a day of them.
func renderDriftCost(md *markdown, r *Report) {
	md.line("The CLI pattern has no drift check: a CLI user whose repository did not change runs no command and sends nothing")
	md.line("(nor learns what was changed in OSM by hand). What the operator spends instead, for each OsmDeployment and each")
	md.line("interval (the wall time below is the drift check reconcile's own duration):")
	md.line("")
	md.row("N", "NBI requests a check", "mutating", "bytes a check", "bytes per declared instance",
		fmt.Sprintf("a day at the default %s interval (%d checks)", defaultInterval(), checksPerDay))
	md.row("---:", "---:", "---:", "---:", "---:", "---:")
	requests := map[int64]bool{}
	for _, s := range r.Sizes {
		m, ok := s.Operator[DriftCheck]
		if !ok {
			md.row(formatCount(int64(s.N)), "not measured", "", "", "", "")
			continue
		}
		requests[m.Stats.Requests] = true
		md.row(formatCount(int64(s.N)), formatCount(m.Stats.Requests), formatCount(m.Stats.MutatingRequests),
			formatBytes(uint64(totalBytes(m.Stats))), formatBytes(uint64(totalBytes(m.Stats)/int64(s.N))),
			fmt.Sprintf("%s requests, %s", formatCount(checksPerDay*m.Stats.Requests), formatBytes(uint64(checksPerDay*totalBytes(m.Stats)))))
	}
	md.line("")
	if len(requests) == 1 {
		md.line("The requests are the same at every N; the bytes grow as N: the NS and VNF records of every declared instance,")
	} else {
		md.line("The requests vary with N; the bytes grow as N: the NS and VNF records of every declared instance,")
	}
	md.line("which the NBI serves whole (it has no field selection). A day of checks costs the figures above per OsmDeployment.")
}

// column is another client's figures beside the operator's.
type column struct {
	name string
	m    Measurement
}

func renderComparison(md *markdown, r *Report, n int, scenario Scenario, op Measurement, others []column) {
	floor := minimum(r.Settings, n, scenario, op.Stats)
	md.line("**N = %s**", formatCount(int64(n)))
	md.line("")
	header, align := []string{"", "operator"}, []string{"---", "---:"}
	for _, c := range others {
		header = append(header, c.name, c.name+" ÷ operator")
		align = append(align, "---:", "---:")
	}
	md.row(append(header, "minimum")...)
	md.row(append(align, "---:")...)
	compared := func(what string, value func(Measurement) int64, format func(int64) string, least string) {
		cells := []string{what, format(value(op))}
		for _, c := range others {
			cells = append(cells, format(value(c.m)), formatRatio(value(c.m), value(op)))
		}
		md.row(append(cells, least)...)
	}
	operatorOnly := func(what, value string) {
		cells := append([]string{what, value}, make([]string, 2*len(others)+1)...)
		md.row(cells...)
	}
	count := func(v int64) string { return formatCount(v) }
	size := func(v int64) string { return formatBytes(uint64(v)) }
	duration := func(v int64) string { return formatDuration(time.Duration(v)) }
	compared("NBI requests", func(m Measurement) int64 { return m.Stats.Requests }, count, formatCount(floor.requests))
	compared("&nbsp;&nbsp;mutating", func(m Measurement) int64 { return m.Stats.MutatingRequests }, count, formatCount(floor.mutating))
	compared("&nbsp;&nbsp;read", func(m Measurement) int64 { return m.Stats.ReadRequests }, count, "")
	compared("&nbsp;&nbsp;session (token)", func(m Measurement) int64 { return m.Stats.SessionRequests }, count, "")
	compared("bytes sent to the NBI", func(m Measurement) int64 { return m.Stats.BytesReceived }, size, "")
	compared("bytes received from the NBI", func(m Measurement) int64 { return m.Stats.BytesSent }, size, "")
	compared("bytes in all", func(m Measurement) int64 { return totalBytes(m.Stats) }, size, formatBytes(uint64(floor.bytes)))
	if unchangedScenario(scenario) {
		operatorOnly("bytes in all per declared instance", formatBytes(uint64(totalBytes(op.Stats)/int64(n))))
	}
	compared("wall time", func(m Measurement) int64 { return int64(m.Usage.Wall) }, duration, formatDuration(floor.wall))
	operatorOnly("operator CPU time", formatDuration(op.Usage.CPU))
	operatorOnly("operator peak memory: heap+stack (RSS)", fmt.Sprintf("%s (%s)", formatBytes(op.Usage.PeakHeap), formatBytes(op.Usage.PeakRSS)))
	stats := []nbisim.Stats{op.Stats}
	for _, c := range others {
		stats = append(stats, c.m.Stats)
	}
	for _, e := range endpointRows(stats...) {
		cells := []string{"&nbsp;&nbsp;`" + e.name + "`", formatCount(e.requests[0])}
		for i := range others {
			cells = append(cells, formatCount(e.requests[i+1]), formatRatio(e.requests[i+1], e.requests[0]))
		}
		md.row(append(cells, "")...)
	}
	md.line("")
}

// floor is the least any client could send for a scenario.
type floor struct {
	requests, mutating, bytes int64
	wall                      time.Duration
}

// minimum is the physical minimum of a scenario: each change sent once (and, for a first
// revision, one log in), with the bytes the operator's own changes took; the wall time of
// sending them (packages one after the other, NS changes maxConcurrentRequests at a time,
// each taking the injected latency) plus one operation's delay.
func minimum(s Settings, n int, scenario Scenario, operator nbisim.Stats) floor {
	w := Workload{N: n}
	var f floor
	packages, nsChanges := 0, 0
	switch scenario {
	case FirstRevision:
		packages, nsChanges = len(openldap.PackageNames), n
	case ChangedValues, Pruned:
		nsChanges = w.Changed()
	}
	f.mutating = int64(packages + nsChanges)
	f.requests = f.mutating
	rounds := packages + int(math.Ceil(float64(nsChanges)/float64(max(s.MaxConcurrentRequests, 1))))
	if scenario == FirstRevision {
		f.requests++ // log in
		rounds++
	}
	f.wall = time.Duration(rounds) * s.Latency
	if nsChanges > 0 {
		f.wall += s.OperationDelay
	}
	for _, e := range operator.Endpoints {
		mutating := e.Method != "GET" && e.Method != "HEAD"
		if mutating && (scenario == FirstRevision || !strings.HasPrefix(e.Route, "/osm/admin/v1/tokens")) {
			f.bytes += e.BytesReceived + e.BytesSent
		}
	}
	if f.mutating == 0 {
		f.bytes = 0
	}
	return f
}

// endpointRow compares the requests of one endpoint: requests[i] are those of stats[i].
type endpointRow struct {
	name     string
	requests []int64
}

// endpointRows lists the endpoints any client used, by method and route, statuses summed.
func endpointRows(stats ...nbisim.Stats) []endpointRow {
	rows := map[string]*endpointRow{}
	for i, client := range stats {
		for _, e := range client.Endpoints {
			name := e.Method + " " + e.Route
			if rows[name] == nil {
				rows[name] = &endpointRow{name: name, requests: make([]int64, len(stats))}
			}
			rows[name].requests[i] += e.Requests
		}
	}
	out := make([]endpointRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b endpointRow) int { return cmp.Compare(a.name, b.name) })
	return out
}

// fleetSourceTitles say how each fleet is built.
var fleetSourceTitles = map[FleetSource]string{
	SeparateSources: "each on its own GitRepository",
	SharedSource:    "all on one GitRepository",
}

func renderFleet(md *markdown, r *Report, f FleetResult) {
	md.heading(fmt.Sprintf("%s OsmDeployments of %d instances on one OSM, %s", formatCount(int64(f.Deployments)), f.InstancesEach, fleetSourceTitles[f.Source]))
	switch f.Source {
	case SharedSource:
		md.line("All apply one GitRepository (one artifact of %d deployment files whose NS instance names start with `${%s}`);", f.InstancesEach, sharedVariable)
		md.line("each OsmDeployment sets `spec.postBuild.substitute.%s` to its own name, so that their NS instances do not", sharedVariable)
		md.line("conflict in the one OSM. The packages were onboarded beforehand; all share one OsmCluster.")
	default:
		md.line("Each OsmDeployment has its own GitRepository; the packages were onboarded beforehand; all share one OsmCluster.")
	}
	md.line("Times count from the first OsmDeployment's creation.")
	md.line("")
	if f.Error != "" {
		md.line("Not measured: %s", f.Error)
		return
	}
	allReady := "not all Ready when the benchmark stopped waiting"
	if f.AllReady > 0 {
		allReady = formatDuration(f.AllReady)
	}
	md.row("", "")
	md.row("---", "---:")
	md.row("creating the OsmDeployments took", formatDuration(f.Created))
	md.row(fmt.Sprintf("Ready after %s", formatDuration(r.Settings.FleetTarget)), fmt.Sprintf("%s of %s", formatCount(int64(f.ReadyByTarget)), formatCount(int64(f.Deployments))))
	md.row(fmt.Sprintf("Ready after %s", formatDuration(f.Usage.Wall)), fmt.Sprintf("%s of %s", formatCount(int64(f.ReadyAtEnd)), formatCount(int64(f.Deployments))))
	md.row("all Ready after", allReady)
	md.row("operator CPU time", formatDuration(f.Usage.CPU))
	for _, command := range slices.Sorted(maps.Keys(f.ProcessCPU)) {
		md.row("`"+command+"` CPU time", formatDuration(f.ProcessCPU[command]))
	}
	md.row("operator peak memory: heap+stack (RSS)", fmt.Sprintf("%s (%s)", formatBytes(f.Usage.PeakHeap), formatBytes(f.Usage.PeakRSS)))
	md.row("API server requests (the operator's, and the benchmark's creates)", formatCount(f.APIRequests))
	for _, key := range slices.Sorted(maps.Keys(f.OperatorAPIRequests)) {
		n := f.OperatorAPIRequests[key]
		md.row("&nbsp;&nbsp;operator's `"+key+"`", fmt.Sprintf("%s (%.1f per OsmDeployment)", formatCount(n), float64(n)/float64(max(f.Deployments, 1))))
	}
	md.row("NBI requests (mutating)", fmt.Sprintf("%s (%s)", formatCount(f.Stats.Requests), formatCount(f.Stats.MutatingRequests)))
	md.row("bytes sent to / received from the NBI", fmt.Sprintf("%s / %s", formatBytes(uint64(f.Stats.BytesReceived)), formatBytes(uint64(f.Stats.BytesSent))))
	for _, e := range endpointRows(f.Stats) {
		md.row("&nbsp;&nbsp;`"+e.name+"`", formatCount(e.requests[0]))
	}
}

func renderGoBenchmarks(md *markdown, r *Report) {
	md.heading("Go benchmarks of hot functions and memory bounds")
	md.line("`go test -run '^$' -bench -benchmem`, on the same machine before the scenarios.")
	md.line("")
	md.row("benchmark", "what one iteration does", "iterations", "time", "allocated", "allocations", "target")
	md.row("---", "---", "---:", "---:", "---:", "---:", "---:")
	for _, b := range r.GoBenchmarks {
		target := "< " + formatDuration(b.Target)
		if b.HeapTarget > 0 {
			target = fmt.Sprintf("heap in use grew by %s (< %s)", formatBytes(b.HeapGrowth), formatBytes(b.HeapTarget))
		}
		md.row(fmt.Sprintf("`%s` (`%s`)", b.Name, b.Package), b.What, fmt.Sprint(b.Iterations), formatDuration(b.PerOp),
			formatBytes(b.BytesPerOp), formatCount(int64(b.AllocsPerOp)), target)
	}
}

func renderMethod(md *markdown, r *Report) {
	s := r.Settings
	md.heading("Method")
	if r.ClosenessOnly {
		md.line("%s", closenessMethod(s))
		return
	}
	for _, paragraph := range []string{
		fmt.Sprintf("**Operator.** One process runs the real OsmCluster and OsmDeployment reconcilers in a controller-runtime "+
			"manager (the flags of `cmd/main.go` as in the settings) against envtest's kube-apiserver and etcd, and an HTTP "+
			"server that stands for source-controller's artifacts. Each N gets a fresh NBI simulator process "+
			"(`cmd/osm-nbi-sim`, every request delayed by %s, every LCM operation PROCESSING for %s) and a namespace with "+
			"one OsmCluster and one OsmDeployment (prune on) of one GitRepository holding the openldap KNF and NS packages "+
			"of `hack/demo-repo/osm-pkgs` and N deployment files. A revision is published by writing the "+
			"GitRepository's artifact, as source-controller does; C1 sets `reconcile.fluxcd.io/requestedAt`; C2 sets the "+
			"interval to %s and measures the periodic reconcile that follows. The wall time runs from the OsmDeployment's "+
			"creation (A), the artifact's publication (B, D) or the annotation (C1) until the informer sees Ready with "+
			"lastAppliedRevision (or lastHandledReconcileAt) of that request.",
			formatDuration(s.Latency), formatDuration(s.OperationDelay), formatDuration(s.DriftInterval)),
		"**Figures.** NBI requests and bytes (request and answer bodies) are the simulator's own counters (`/sim/v1/stats`), " +
			"zeroed before each scenario; the control API is not counted. CPU time is `getrusage` of the benchmark process, " +
			"whose other work (waiting on the informer, reading the reconcilers' metrics) is light; the simulator, the API " +
			"server and etcd are other processes, the benchmark's children, whose CPU time over each step (scenario or " +
			"fleet) is read from `/proc`: they share the machine's cores with the operator. Peak memory is the highest " +
			"`HeapInuse+StackInuse` (and VmRSS) sampled every 50 ms, after a GC that returns memory to the system at the " +
			"start of each scenario.",
		fmt.Sprintf("**CLI pattern.** A fresh simulator with the same settings gets what the `osm` CLI (osmclient) sends, "+
			"command by command: each command logs in anew on new connections; `ns-create` lists all NSDs and "+
			"all VIM accounts and reads the VIM account before the POST; `ns-action` lists every NS instance twice; "+
			"`ns-delete` lists them once; `nfpkg-create`/`nspkg-create` log in and upload. One command per instance, %d "+
			"commands at once (a script with `xargs -P %d`). The bodies are the operator's (the same package tarballs "+
			"and create and upgrade requests). A: package creates, then N `ns-create`; B: an `ns-action` upgrade of each "+
			"changed instance; D: an `ns-delete` of each removed instance; C: nothing, since a CLI user whose repository "+
			"did not change runs no command. The large lists are read and discarded rather than searched, so the CLI "+
			"pattern's wall time is a lower bound. The CLI column is the CLI's default, without `--wait`: a command "+
			"returns once OSM has accepted its request, and the operations OSM still runs are completed (the simulator's "+
			"control API, unmeasured) before the next scenario, as they would be by the time a user makes the next "+
			"change. The CLI --wait column adds `--wait`, which reads `GET ns_lcm_op_occs/{id}` at once and then every %s "+
			"until the operation has finished (for a delete, until it is gone): osmclient's `wait_for_status`, whose pause "+
			"(`POLLING_TIME_INTERVAL`) is 5 s. With operations shorter than the pause, each `--wait` costs two reads and "+
			"each round of %d commands one pause, so its figures grow with N as the smaller sizes show; it runs at N = %s "+
			"only, each on its own simulator, to keep `make bench` short.",
			s.MaxConcurrentRequests, s.MaxConcurrentRequests, formatDuration(s.CLIPollInterval), s.MaxConcurrentRequests,
			joinInts(s.CLIWaitSizes)),
		fmt.Sprintf("**Drift check cost.** C2's figures are one check of one OsmDeployment; a day of them is %d checks at "+
			"the default interval of %s (`spec.interval`), each OsmDeployment checking on its own.",
			checksPerDay, defaultInterval()),
		fmt.Sprintf("**Fleets.** Each fleet gets its own simulator (the same settings) and namespace with one OsmCluster; "+
			"the packages are uploaded first, then the %s OsmDeployments (prune on) are created, %d at a time, and the "+
			"benchmark waits until all are Ready with their revision, for at most %s. Separate sources: each "+
			"OsmDeployment has its own GitRepository of %d deployment files. Shared source: one GitRepository whose %d "+
			"deployment files name their NS instances `${%s}-NNNN`, and each OsmDeployment sets `%s` to its own name in "+
			"`spec.postBuild.substitute`. The fleets run one after the other on the same operator process; a fleet is "+
			"removed before the next starts (its OsmDeployments, whose deletionPolicy is Orphan, and its GitRepositories "+
			"deleted, and the reconciler's release of them awaited), so that each fleet's memory is its own.",
			formatCount(int64(s.FleetDeployments)), fleetWriters, formatDuration(s.FleetTimeout), s.FleetInstances,
			s.FleetInstances, sharedVariable, sharedVariable),
		closenessMethod(s),
		"**Minimum.** The physical minimum of a scenario: each change sent once (packages, then the NS changes), plus one " +
			"log in for a first revision, with the bytes the operator's own changes took; its wall time is one latency per " +
			"package and per round of maxConcurrentRequests NS changes, plus one operation's delay. Reading what OSM runs, " +
			"which a drift check cannot avoid, is not in it.",
	} {
		md.line("%s", paragraph)
		md.line("")
	}
}

// markdown accumulates the report's lines.
type markdown struct{ strings.Builder }

func (m *markdown) line(format string, args ...any) {
	fmt.Fprintf(m, format, args...)
	m.WriteString("\n")
}

func (m *markdown) heading(title string) {
	m.line("")
	m.line("## %s", title)
	m.line("")
}

func (m *markdown) row(cells ...string) {
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	m.line("| %s |", strings.Join(cells, " | "))
}

// formatBytes writes a size with a binary unit; hand-written, as it is the one formatting need
// and no module of go.mod offers it.
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	value, exponent := float64(n), 0
	for value >= unit && exponent < 4 {
		value /= unit
		exponent++
	}
	return fmt.Sprintf("%.1f %ciB", value, "KMGT"[exponent-1])
}

// formatDuration writes a duration with three significant digits at most.
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	case d >= 1000*time.Second:
		return fmt.Sprintf("%.0f s", d.Seconds()) // %.3g would write 1.11e+03
	default:
		return fmt.Sprintf("%.3g s", d.Seconds())
	}
}

// formatCount writes an integer with thousands separators.
func formatCount(n int64) string {
	digits := fmt.Sprint(n)
	if n < 0 {
		return "-" + formatCount(-n)
	}
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString(",")
		}
		b.WriteRune(d)
	}
	return b.String()
}

// formatRatio writes a / b as a factor, or "–" when b is 0.
func formatRatio(a, b int64) string {
	switch {
	case b == 0:
		return "–"
	case a == 0:
		return "0x"
	}
	factor := float64(a) / float64(b)
	switch {
	case factor >= 10:
		return fmt.Sprintf("%.0fx", factor)
	case factor >= 0.01:
		return fmt.Sprintf("%.2gx", factor)
	default:
		return "< 0.01x"
	}
}

func joinInts(values []int) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = formatCount(int64(v))
	}
	return strings.Join(parts, ", ")
}
