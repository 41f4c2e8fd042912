package bench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/osmops/osmops/internal/nbisim"
)

// Verdict is the outcome of one target.
type Verdict struct {
	// Target is the figure to meet, Measured what this run measured.
	Target   string
	Measured string
	// Pass is false when the target was missed or could not be measured.
	Pass bool
	// Why explains a miss and what would close it; empty on a pass.
	Why string
}

// The targets' fixed figures.
const (
	requestAllowance   = 8
	fastApplyInstances = 1000
	fastApplyWall      = 3 * time.Second
	bytesFactor        = 10.0
	fleetMemory        = 200 << 20
	// driftBytesPerInstance bounds what a drift check reads per declared instance: OSM serves
	// about 8 kB of records for each (its NS record and its VNF record, whole: the NBI has no
	// field selection), which a check must read to see drift; the rest leaves room for the
	// descriptor and VIM account lists at small N, and a check that read more per instance
	// (a record twice, or lists that grow as N²) would miss it.
	driftBytesPerInstance = 10 << 10
)

// Evaluate checks every target against a report's figures.
func Evaluate(r *Report) []Verdict {
	if r.ClosenessOnly {
		return closenessVerdicts(r)
	}
	verdicts := []Verdict{
		perSize(r, FirstRevision, fmt.Sprintf("A: NBI requests <= N + %d", requestAllowance),
			func(n int, op, _ Measurement) (string, bool) {
				return fmt.Sprint(op.Stats.Requests), op.Stats.Requests <= int64(n+requestAllowance)
			}, whyRequestsA),
		fastApply(r),
		perSize(r, ChangedValues, fmt.Sprintf("B: NBI requests <= 0.1N + %d", requestAllowance),
			func(n int, op, _ Measurement) (string, bool) {
				return fmt.Sprint(op.Stats.Requests), op.Stats.Requests <= int64(Workload{N: n}.Changed()+requestAllowance)
			}, whyRequestsB),
		perSize(r, ChangedValues, "B: NBI requests no more than the CLI pattern's (without --wait)",
			func(_ int, op, cli Measurement) (string, bool) {
				return fmt.Sprintf("%d (CLI %d)", op.Stats.Requests, cli.Stats.Requests), op.Stats.Requests <= cli.Stats.Requests
			}, whyRequestsBAgainstCLI),
		onlyChangedUpgraded(r),
		unchanged(r, "C: zero mutating requests (same revision, drift check)", func(m Measurement) (string, bool) {
			return fmt.Sprint(m.Stats.MutatingRequests), m.Stats.MutatingRequests == 0
		}),
		unchanged(r, fmt.Sprintf("C: at most %d NBI requests, whatever N (same revision, drift check)", requestAllowance), func(m Measurement) (string, bool) {
			return fmt.Sprint(m.Stats.Requests), m.Stats.Requests <= requestAllowance
		}),
		driftBytes(r),
		bytesFewer(r, FirstRevision, whyBytesA),
		bytesFewer(r, ChangedValues, whyBytesB),
	}
	verdicts = append(verdicts, closenessVerdicts(r)...)
	verdicts = append(verdicts, fleetVerdicts(r)...)
	if r.Hostile != nil {
		verdicts = append(verdicts, hostileVerdicts(r.Hostile)...)
	}
	for _, b := range r.GoBenchmarks {
		v := Verdict{
			Target:   fmt.Sprintf("%s in under %s", b.What, formatDuration(b.Target)),
			Measured: formatDuration(b.PerOp),
			Pass:     b.PerOp < b.Target,
			Why:      whyGoBenchmark[b.Name],
		}
		if b.HeapTarget > 0 {
			v.Target = fmt.Sprintf("%s, the heap in use growing by under %s", b.What, formatBytes(b.HeapTarget))
			v.Measured, v.Pass = formatBytes(b.HeapGrowth), b.HeapGrowth < b.HeapTarget
		}
		verdicts = append(verdicts, v)
	}
	return verdicts
}

// size returns the figures of size n, or an empty result.
func (r *Report) size(n int) SizeResult {
	for _, s := range r.Sizes {
		if s.N == n {
			return s
		}
	}
	return SizeResult{N: n}
}

// perSize checks a target on each size; measured is the operator's and the CLI pattern's
// figures of the scenario.
func perSize(r *Report, scenario Scenario, target string, check func(n int, op, cli Measurement) (string, bool), why func(*Report) string) Verdict {
	v := Verdict{Target: target, Pass: len(r.Sizes) > 0}
	var parts []string
	for _, s := range r.Sizes {
		op, hasOp := s.Operator[scenario]
		cli, hasCLI := s.CLI[scenario]
		if !hasOp || !hasCLI {
			parts = append(parts, fmt.Sprintf("N=%d: not measured", s.N))
			v.Pass = false
			continue
		}
		measured, pass := check(s.N, op, cli)
		parts = append(parts, fmt.Sprintf("N=%d: %s", s.N, measured))
		v.Pass = v.Pass && pass
	}
	v.Measured = strings.Join(parts, "; ")
	if !v.Pass {
		v.Why = why(r)
	}
	return v
}

func fastApply(r *Report) Verdict {
	v := Verdict{Target: fmt.Sprintf("A: wall time for N = %d under %s", fastApplyInstances, formatDuration(fastApplyWall)), Measured: "not measured"}
	if m, ok := r.size(fastApplyInstances).Operator[FirstRevision]; ok {
		v.Measured, v.Pass = formatDuration(m.Usage.Wall), m.Usage.Wall < fastApplyWall
	}
	if !v.Pass {
		v.Why = whyWallA(r)
	}
	return v
}

func onlyChangedUpgraded(r *Report) Verdict {
	v := Verdict{Target: "B: only the changed instances get an operation", Pass: len(r.Sizes) > 0}
	var parts []string
	for _, s := range r.Sizes {
		op, ok := s.Operator[ChangedValues]
		operations := endpointRequests(op.Stats, "POST", "/osm/nslcm/v1/ns_instances/{nsInstanceId}/action") +
			endpointRequests(op.Stats, "POST", "/osm/nslcm/v1/ns_instances_content") +
			endpointRequests(op.Stats, "DELETE", "/osm/nslcm/v1/ns_instances_content/{nsInstanceContentId}")
		pass := ok && slices.Equal(s.Changed, s.Upgraded) && operations == int64(len(s.Changed))
		parts = append(parts, fmt.Sprintf("N=%d: %d operation(s), on %d of the %d changed", s.N, operations, countIn(s.Upgraded, s.Changed), len(s.Changed)))
		v.Pass = v.Pass && pass
	}
	v.Measured = strings.Join(parts, "; ")
	if !v.Pass {
		v.Why = "The plan sent an operation to an instance whose values did not change, or missed one: see the tables of scenario B."
	}
	return v
}

// unchanged checks a target on both C measurements (same revision, drift check) of every size.
func unchanged(r *Report, target string, check func(Measurement) (string, bool)) Verdict {
	v := Verdict{Target: target, Pass: len(r.Sizes) > 0}
	var parts []string
	for _, s := range r.Sizes {
		same, okSame := s.Operator[SameRevision]
		drift, okDrift := s.Operator[DriftCheck]
		if !okSame || !okDrift {
			parts = append(parts, fmt.Sprintf("N=%d: not measured", s.N))
			v.Pass = false
			continue
		}
		sameFigure, samePass := check(same)
		driftFigure, driftPass := check(drift)
		parts = append(parts, fmt.Sprintf("N=%d: %s; %s", s.N, sameFigure, driftFigure))
		v.Pass = v.Pass && samePass && driftPass
	}
	v.Measured = strings.Join(parts, "; ")
	if !v.Pass {
		v.Why = "Same revision and drift check must only read: see their tables."
	}
	return v
}

// driftBytes checks what a drift check reads per declared instance, and states what a check
// and a day of checks cost.
func driftBytes(r *Report) Verdict {
	v := Verdict{Target: fmt.Sprintf("C2: bytes per declared instance under %s, whatever N (drift check)", formatBytes(driftBytesPerInstance)), Pass: len(r.Sizes) > 0}
	var parts []string
	for _, s := range r.Sizes {
		m, ok := s.Operator[DriftCheck]
		if !ok {
			parts = append(parts, fmt.Sprintf("N=%d: not measured", s.N))
			v.Pass = false
			continue
		}
		perInstance := totalBytes(m.Stats) / int64(s.N)
		parts = append(parts, fmt.Sprintf("N=%d: %s (%s a check, %s a day)", s.N, formatBytes(uint64(perInstance)),
			formatBytes(uint64(totalBytes(m.Stats))), formatBytes(uint64(checksPerDay*totalBytes(m.Stats)))))
		v.Pass = v.Pass && perInstance < driftBytesPerInstance
	}
	v.Measured = strings.Join(parts, "; ")
	if !v.Pass {
		v.Why = whyDriftBytes(r)
	}
	return v
}

func bytesFewer(r *Report, scenario Scenario, why func(*Report) string) Verdict {
	return perSize(r, scenario, fmt.Sprintf("%s: bytes at least %.0fx fewer than the CLI pattern (without --wait)", scenario, bytesFactor),
		func(_ int, op, cli Measurement) (string, bool) {
			factor := ratio(totalBytes(cli.Stats), totalBytes(op.Stats))
			return fmt.Sprintf("%.1fx", factor), factor >= bytesFactor
		}, why)
}

// fleetVerdicts checks every fleet's memory against one bound, and the time until all are Ready
// of the fleet of separate sources.
func fleetVerdicts(r *Report) []Verdict {
	var verdicts []Verdict
	for _, f := range r.Fleets {
		deployments := formatCount(int64(f.Deployments))
		memory := Verdict{Target: fmt.Sprintf("%s OsmDeployments, %s: operator peak memory under %s", deployments,
			fleetSourceTitles[f.Source], formatBytes(fleetMemory))}
		if f.Error == "" {
			memory.Measured = fmt.Sprintf("%s heap+stack (%s RSS)", formatBytes(f.Usage.PeakHeap), formatBytes(f.Usage.PeakRSS))
			memory.Pass = f.Usage.PeakHeap < fleetMemory
		} else {
			memory.Measured = "not measured: " + f.Error
		}
		if !memory.Pass && f.Error == "" {
			memory.Why = whyFleetMemory(r, f)
		}
		if f.Source != SeparateSources {
			verdicts = append(verdicts, memory)
			continue
		}
		ready := Verdict{Target: fmt.Sprintf("%s OsmDeployments, %s: all Ready within %s of creation", deployments,
			fleetSourceTitles[f.Source], formatDuration(r.Settings.FleetTarget))}
		switch {
		case f.Error != "":
			ready.Measured = "not measured: " + f.Error
		case f.AllReady > 0:
			ready.Measured = "all Ready after " + formatDuration(f.AllReady)
			ready.Pass = f.AllReady <= r.Settings.FleetTarget
		default:
			ready.Measured = fmt.Sprintf("%d/%s Ready after %s, %d/%s after %s (stopped waiting)", f.ReadyByTarget, deployments,
				formatDuration(r.Settings.FleetTarget), f.ReadyAtEnd, deployments, formatDuration(f.Usage.Wall))
		}
		if !ready.Pass && f.Error == "" {
			ready.Why = whyFleetReady(r, f)
		}
		verdicts = append(verdicts, ready, memory)
	}
	return verdicts
}

// endpointRequests counts the requests of one method and route, whatever their status.
func endpointRequests(stats nbisim.Stats, method, route string) int64 {
	var n int64
	for _, e := range stats.Endpoints {
		if e.Method == method && e.Route == route {
			n += e.Requests
		}
	}
	return n
}

func totalBytes(stats nbisim.Stats) int64 { return stats.BytesReceived + stats.BytesSent }

// ratio is a / b, or 0 when b is 0.
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func countIn(names, among []string) int {
	n := 0
	for _, name := range names {
		if slices.Contains(among, name) {
			n++
		}
	}
	return n
}
