package bench

import (
	"fmt"
	"strings"
	"time"
)

// The closeness targets of issue 30, and the operator's requests per operation today: on OSM
// 19's real LCM (../shared/real-osm), at its default 5 s poll, 24 requests for A's ten
// instantiations and 8 for B's one value change.
const (
	completedToReadyTarget = time.Second
	closenessRatioTarget   = 1.1
	// closenessSizeA is the size at which A's ratio has a target (B's has one at every size).
	closenessSizeA = 10
)

var requestsPerOperationToday = map[Scenario]float64{FirstRevision: 2.4, ChangedValues: 8, Reverted: 8}

// closenessScenarios are the scenarios whose Closeness is measured.
var closenessScenarios = []Scenario{FirstRevision, ChangedValues, Reverted}

// profiled is one measured Closeness: its size, scenario and figures.
type profiled struct {
	n        int
	scenario Scenario
	m        Measurement
}

// profiledRuns lists the Closeness measured, by size then scenario.
func (r *Report) profiledRuns() []profiled {
	var runs []profiled
	for _, s := range r.Sizes {
		for _, scenario := range closenessScenarios {
			if m, ok := s.Profiled[scenario]; ok && m.Closeness != nil {
				runs = append(runs, profiled{s.N, scenario, m})
			}
		}
	}
	return runs
}

// closenessVerdicts checks the closeness targets on every profiled run.
func closenessVerdicts(r *Report) []Verdict {
	against := r.Settings.closenessAgainst()
	check := func(target string, applies func(profiled) bool, figure func(profiled) (string, bool), why func(*Report) string) Verdict {
		v := Verdict{Target: fmt.Sprintf("%s (%s)", target, against)}
		var parts []string
		allPass := true
		for _, run := range r.profiledRuns() {
			if !applies(run) {
				continue
			}
			measured, pass := figure(run)
			parts = append(parts, fmt.Sprintf("%s N=%d: %s", run.scenario, run.n, measured))
			allPass = allPass && pass
		}
		v.Measured, v.Pass = strings.Join(parts, "; "), len(parts) > 0 && allPass
		if len(parts) == 0 {
			v.Measured = "not measured"
		}
		if !v.Pass {
			v.Why = why(r)
		}
		return v
	}
	always := func(profiled) bool { return true }
	return []Verdict{
		check(fmt.Sprintf("A, B, B2: an operation's end reaches Ready within %s of OSM's COMPLETED (p99)", formatDuration(completedToReadyTarget)), always,
			func(run profiled) (string, bool) {
				p99 := percentile(run.m.Closeness.CompletedToReady, 99)
				return formatDuration(p99), len(run.m.Closeness.CompletedToReady) > 0 && p99 <= completedToReadyTarget
			}, whyCompletedToReady),
		check(fmt.Sprintf("A, B, B2: requests per operation at or under today's (A %g, B and B2 %g)",
			requestsPerOperationToday[FirstRevision], requestsPerOperationToday[ChangedValues]), always,
			func(run profiled) (string, bool) {
				perOperation := run.m.Closeness.RequestsPerOperation(run.m.Stats.Requests)
				return fmt.Sprintf("%.1f", perOperation), run.m.Closeness.Operations > 0 && perOperation <= requestsPerOperationToday[run.scenario]
			}, whyRequestsPerOperation),
		check(fmt.Sprintf("A at N = %d, B, B2: time from the artifact to Ready within %gx OSM's own time", closenessSizeA, closenessRatioTarget),
			func(run profiled) bool { return run.scenario != FirstRevision || run.n == closenessSizeA },
			func(run profiled) (string, bool) {
				ratio := run.m.Closeness.Ratio()
				return fmt.Sprintf("%.2fx", ratio), ratio > 0 && ratio <= closenessRatioTarget
			}, whyClosenessRatio),
	}
}

// renderCloseness writes the section of the runs against the simulator with the LCM profile.
func renderCloseness(md *markdown, r *Report) {
	s := r.Settings
	md.heading("How close to OSM's own time")
	if s.LCMProfile == "" || len(s.ProfileSizes) == 0 {
		md.line("Not run (`--lcm-profile` empty or `--lcm-profile-sizes` none).")
		return
	}
	if s.RealOSM != "" {
		md.line("The operator's A, B and B2 at N = %s, against OSM's own NBI and LCM driving real Helm (`../shared/real-osm`),",
			joinInts(s.ProfileSizes))
		md.line("through a proxy that counts and logs the operator's requests as the simulator does; see [Method](#method).")
	} else {
		md.line("The operator's A, B and B2 at N = %s, each on a fresh simulator whose LCM takes the times of the %q profile",
			joinInts(s.ProfileSizes), s.LCMProfile)
		md.line("(docs/fidelity.md, \"LCM's times\"); see [Method](#method).")
	}
	md.line("B2 runs after D: the revert of B's change, once the poll schedule has seen an upgrade end on that OSM (B's), as")
	md.line("on a manager that has run for a while. *First request*: from the artifact being served to the")
	md.line("first request that changes OSM, per OsmDeployment (one here). *COMPLETED to Ready*: from OSM's end of the last")
	md.line("operation of the revision (Ready waits for every one) to the OsmDeployment's Ready on that revision, per")
	md.line("OsmDeployment. *COMPLETED to next poll*: from OSM marking an operation COMPLETED to the next read of the operations")
	md.line("reaching OSM, per operation: when the operator could first know. *OSM's own time*: from the first changing request")
	md.line("to the last operation's end, the floor of any client; *ratio*: the operator's time from the artifact to Ready over it.")
	md.line("")
	runs := r.profiledRuns()
	if len(runs) == 0 {
		md.line("Not measured.")
		return
	}
	md.row("N", "scenario", "operations", "first request p50, p99", "COMPLETED to Ready p50, p99", "COMPLETED to next poll p50, p99",
		"requests per operation", "OSM's own time", "artifact to Ready", "ratio")
	md.row("---:", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:")
	for _, run := range runs {
		c := run.m.Closeness
		ratio := "–"
		if c.Ratio() > 0 {
			ratio = fmt.Sprintf("%.2fx", c.Ratio())
		}
		md.row(formatCount(int64(run.n)), string(run.scenario), fmt.Sprint(c.Operations), percentiles(c.FirstRequest),
			percentiles(c.CompletedToReady), percentiles(c.CompletedToPoll), fmt.Sprintf("%.1f (%d requests)", c.RequestsPerOperation(run.m.Stats.Requests), run.m.Stats.Requests),
			formatDuration(c.OSMTime), formatDuration(c.OperatorTime), ratio)
	}
}

// percentiles writes the p50 and p99 of durations, or "–" of none.
func percentiles(durations []time.Duration) string {
	if len(durations) == 0 {
		return "–"
	}
	return formatDuration(percentile(durations, 50)) + ", " + formatDuration(percentile(durations, 99))
}

// closenessAgainst says what the closeness runs ran against.
func (s Settings) closenessAgainst() string {
	if s.RealOSM != "" {
		return "OSM's own LCM"
	}
	return fmt.Sprintf("LCM profile %q", s.LCMProfile)
}

// closenessMethod is the Method paragraph of the closeness runs.
func closenessMethod(s Settings) string {
	poll := fmt.Sprintf("These runs have a manager of their own, started after the others with the poll the manager runs by "+
		"default (`--operation-poll-interval` %s, `--operation-poll-min-interval` %s): its schedule learns each operation "+
		"type's usual end on that OSM from the operations it sees end, so A's first instantiations are polled at the "+
		"interval and B's upgrade on what A taught.", formatDuration(s.ProfilePollInterval), formatDuration(s.ProfilePollMinInterval))
	if s.RealOSM != "" {
		return fmt.Sprintf("**How close to OSM.** At N = %s the operator runs the scenarios against OSM's release-19 NBI and "+
			"real LCM with real Helm into a Kubernetes API with kwok nodes (`../shared/real-osm`, started afresh), VIM "+
			"account %s. A proxy in front of the NBI (`nbisim.RecordingProxy`) counts and logs the operator's requests with "+
			"the simulator's routes; OSM's operation records (`startTime`, and `statusEnteredTime` once ended, read from "+
			"the NBI after each scenario by a session the proxy does not see) say when OSM accepted and ended each. The "+
			"benchmark notes when the artifact was served and when the informer saw Ready, as against the simulator. "+
			"Percentiles are nearest-rank. %s To run it again: start `../shared/real-osm` (its README: `k8s-up.sh`, "+
			"`charts-up.sh`, then `osm-up.sh`, which starts OSM with a fresh database), then `go run ./cmd/osmops-bench "+
			"--only closeness --real-osm http://127.0.0.1:22999 --real-osm-password-file FILE --out "+
			"docs/benchmarks-real-osm.md` (FILE holds admin's password); a run leaves its NS instances in OSM, so "+
			"`osm-up.sh stop` and `osm-up.sh` come before the next.", joinInts(s.ProfileSizes), s.RealOSMVIMAccount, poll)
	}
	return fmt.Sprintf("**How close to OSM.** At N = %s the operator runs the scenarios once more against a simulator started "+
		"with `--lcm-profile %s` (`nbisim.LCMProfiles`): LCM takes an accepted operation up after 1 s and at most one "+
		"every 2 s, as OSM 19's message bus does, and runs each type for the time measured on OSM's real LCM with real "+
		"Helm (`../shared/real-osm`), so that OSM's own time is about what it was there (one value change 4 s, ten "+
		"instantiations 25 s). The simulator's request log (`/sim/v1/requests`, zeroed with the counters, %s requests "+
		"long) gives the time each request arrived, and its state (`/sim/v1/state`) when each operation was accepted and "+
		"when LCM marked it COMPLETED or FAILED; the benchmark notes when the artifact was served (A: the OsmDeployment's "+
		"creation, the artifact being there before; B: the GitRepository's new artifact written) and when the informer "+
		"saw Ready with that revision. Percentiles are nearest-rank. %s",
		joinInts(s.ProfileSizes), s.LCMProfile, formatCount(closeRequestLog), poll)
}
