package bench

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// Report is everything docs/benchmarks.md shows.
type Report struct {
	Started  time.Time
	Duration time.Duration
	// Command reproduces the run.
	Command      string
	Machine      Machine
	Settings     Settings
	Sizes        []SizeResult
	Fleet        FleetResult
	GoBenchmarks []GoBenchmark
	// Errors are parts of the run that could not be measured.
	Errors []string
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
	md.line("Written by `%s` on %s (%s); do not edit by hand, run it again. Scenarios A to D run through the real",
		r.Command, r.Started.UTC().Format("2006-01-02 15:04 MST"), formatDuration(r.Duration.Round(time.Second)))
	md.line("reconcilers (controller-runtime manager on envtest) and through a model of the `osm` CLI's request pattern, each")
	md.line("against its own NBI simulator process; see [Method](#method).")
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
	renderFleet(md, r)
	renderGoBenchmarks(md, r)
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
	md.row("NBI latency injected per request", formatDuration(s.Latency))
	md.row("simulator OperationDelay (each LCM operation)", formatDuration(s.OperationDelay))
	md.row("reconciler OperationPollInterval", formatDuration(s.OperationPollInterval))
	md.row("OsmCluster maxConcurrentRequests", fmt.Sprint(s.MaxConcurrentRequests))
	md.row("manager --concurrent, --kube-api-qps, --kube-api-burst", fmt.Sprintf("%d, %g, %d", s.MaxConcurrentReconciles, s.KubeAPIQPS, s.KubeAPIBurst))
	md.row("OsmDeployment interval (drift check: interval set to)", fmt.Sprintf("1h (%s)", formatDuration(s.DriftInterval)))
	md.row("CLI pattern: commands at once, --wait poll", fmt.Sprintf("%d, %s", s.MaxConcurrentRequests, formatDuration(s.CLIPollInterval)))
	md.row("repository sizes N", joinInts(s.Sizes))
	md.row("fleet", fmt.Sprintf("%s OsmDeployments of %d instances", formatCount(int64(s.FleetDeployments)), s.FleetInstances))
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
	if scenario == DriftCheck {
		md.line("The CLI pattern has no drift check: the first generation re-applied everything, so its column is C1's.")
		md.line("The wall time is the drift check reconcile's own duration.")
		md.line("")
	}
	for _, s := range r.Sizes {
		op, hasOp := s.Operator[scenario]
		cli, hasCLI := s.CLI[cliScenario(scenario)]
		if !hasOp || !hasCLI {
			md.line("N = %d: not measured.", s.N)
			md.line("")
			continue
		}
		renderComparison(md, r, s.N, scenario, op, cli)
	}
}

func renderComparison(md *markdown, r *Report, n int, scenario Scenario, op, cli Measurement) {
	floor := minimum(r.Settings, n, scenario, op.Stats)
	md.line("**N = %s**", formatCount(int64(n)))
	md.line("")
	md.row("", "operator", "CLI pattern", "CLI ÷ operator", "minimum")
	md.row("---", "---:", "---:", "---:", "---:")
	counts := []struct {
		what     string
		op, cli  int64
		atLeast  string
		isTotals bool
	}{
		{"NBI requests", op.Stats.Requests, cli.Stats.Requests, formatCount(floor.requests), true},
		{"mutating", op.Stats.MutatingRequests, cli.Stats.MutatingRequests, formatCount(floor.mutating), false},
		{"read", op.Stats.ReadRequests, cli.Stats.ReadRequests, "", false},
		{"session (token)", op.Stats.SessionRequests, cli.Stats.SessionRequests, "", false},
	}
	for _, c := range counts {
		what := c.what
		if !c.isTotals {
			what = "&nbsp;&nbsp;" + what
		}
		md.row(what, formatCount(c.op), formatCount(c.cli), formatRatio(c.cli, c.op), c.atLeast)
	}
	md.row("bytes sent to the NBI", formatBytes(uint64(op.Stats.BytesReceived)), formatBytes(uint64(cli.Stats.BytesReceived)),
		formatRatio(cli.Stats.BytesReceived, op.Stats.BytesReceived), "")
	md.row("bytes received from the NBI", formatBytes(uint64(op.Stats.BytesSent)), formatBytes(uint64(cli.Stats.BytesSent)),
		formatRatio(cli.Stats.BytesSent, op.Stats.BytesSent), "")
	md.row("bytes in all", formatBytes(uint64(totalBytes(op.Stats))), formatBytes(uint64(totalBytes(cli.Stats))),
		formatRatio(totalBytes(cli.Stats), totalBytes(op.Stats)), formatBytes(uint64(floor.bytes)))
	md.row("wall time until Ready", formatDuration(op.Usage.Wall), formatDuration(cli.Usage.Wall),
		formatRatio(int64(cli.Usage.Wall), int64(op.Usage.Wall)), formatDuration(floor.wall))
	md.row("operator CPU time", formatDuration(op.Usage.CPU), "", "", "")
	md.row("operator peak memory: heap+stack (RSS)", fmt.Sprintf("%s (%s)", formatBytes(op.Usage.PeakHeap), formatBytes(op.Usage.PeakRSS)), "", "", "")
	for _, e := range endpointRows(op.Stats, cli.Stats) {
		md.row("&nbsp;&nbsp;`"+e.name+"`", formatCount(e.op), formatCount(e.cli), formatRatio(e.cli, e.op), "")
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

// endpointRow compares the requests of one endpoint.
type endpointRow struct {
	name    string
	op, cli int64
}

// endpointRows lists the endpoints either client used, by method and route, statuses summed.
func endpointRows(op, cli nbisim.Stats) []endpointRow {
	rows := map[string]*endpointRow{}
	add := func(stats nbisim.Stats, count func(*endpointRow, int64)) {
		for _, e := range stats.Endpoints {
			name := e.Method + " " + e.Route
			if rows[name] == nil {
				rows[name] = &endpointRow{name: name}
			}
			count(rows[name], e.Requests)
		}
	}
	add(op, func(r *endpointRow, n int64) { r.op += n })
	add(cli, func(r *endpointRow, n int64) { r.cli += n })
	out := make([]endpointRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func renderFleet(md *markdown, r *Report) {
	f := r.Fleet
	md.heading(fmt.Sprintf("%s OsmDeployments of %d instances on one OSM", formatCount(int64(f.Deployments)), f.InstancesEach))
	md.line("Each OsmDeployment has its own GitRepository; the packages were onboarded beforehand; all share one OsmCluster.")
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
	md.row("operator peak memory: heap+stack (RSS)", fmt.Sprintf("%s (%s)", formatBytes(f.Usage.PeakHeap), formatBytes(f.Usage.PeakRSS)))
	md.row("API server requests (the operator's, and the benchmark's creates)", formatCount(f.APIRequests))
	for _, key := range slices.Sorted(maps.Keys(f.OperatorAPIRequests)) {
		n := f.OperatorAPIRequests[key]
		md.row("&nbsp;&nbsp;operator's `"+key+"`", fmt.Sprintf("%s (%.1f per OsmDeployment)", formatCount(n), float64(n)/float64(max(f.Deployments, 1))))
	}
	md.row("NBI requests (mutating)", fmt.Sprintf("%s (%s)", formatCount(f.Stats.Requests), formatCount(f.Stats.MutatingRequests)))
	md.row("bytes sent to / received from the NBI", fmt.Sprintf("%s / %s", formatBytes(uint64(f.Stats.BytesReceived)), formatBytes(uint64(f.Stats.BytesSent))))
	for _, e := range endpointRows(f.Stats, nbisim.Stats{}) {
		md.row("&nbsp;&nbsp;`"+e.name+"`", formatCount(e.op))
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
			"server and etcd are other processes. Peak memory is the highest `HeapInuse+StackInuse` (and VmRSS) sampled " +
			"every 50 ms, after a GC that returns memory to the system at the start of each scenario.",
		fmt.Sprintf("**CLI pattern.** A fresh simulator with the same settings gets what the `osm` CLI (osmclient) sends, "+
			"command by command: each command logs in anew on new connections; `ns-create` lists all NSDs and "+
			"all VIM accounts and reads the VIM account before the POST; `ns-action` lists every NS instance twice; "+
			"`ns-delete` lists them once; `nfpkg-create`/`nspkg-create` log in and upload; `nfpkg-update`/`nspkg-update` also "+
			"list the packages. One command per instance, %d commands at once (a script with `xargs -P %d`), each with "+
			"`--wait`, which reads `GET ns_lcm_op_occs/{id}` at once and then every %s (osmclient's own pause is 5 s; %s "+
			"is kinder to the CLI). The bodies are the operator's (the same package tarballs and create and upgrade "+
			"requests). A: package creates, then N `ns-create`; B: an `ns-action` upgrade of each changed instance; C: what "+
			"the first generation did for a revision it had already applied, a re-upload of every package and an upgrade of "+
			"every instance; D: an `ns-delete` of each removed instance. The large lists are read and discarded rather than "+
			"searched, so the CLI pattern's wall time is a lower bound.",
			s.MaxConcurrentRequests, s.MaxConcurrentRequests, formatDuration(s.CLIPollInterval), formatDuration(s.CLIPollInterval)),
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
