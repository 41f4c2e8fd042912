package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
)

// Scenario names one of the benchmark's scenarios, A to D: the steps of one repository's life.
type Scenario string

// The scenarios, in the order they run on one repository.
const (
	// FirstRevision is A: N creates and two packages.
	FirstRevision Scenario = "A"
	// ChangedValues is B: a revision that changes the values of 10% of the instances.
	ChangedValues Scenario = "B"
	// SameRevision is C1: the same revision again, on a reconcile request.
	SameRevision Scenario = "C1"
	// DriftCheck is C2: the periodic drift check, with nothing drifted.
	DriftCheck Scenario = "C2"
	// Pruned is D: a revision that removes 10% of the instances, with prune.
	Pruned Scenario = "D"
	// Reverted is B2, run with the LCM profile only, after D: the revert of B's change, when the
	// poll schedule has seen an upgrade end on that OSM (B's), as a manager that has run for a
	// while has.
	Reverted Scenario = "B2"
)

// Scenarios lists the scenarios in their order.
var Scenarios = []Scenario{FirstRevision, ChangedValues, SameRevision, DriftCheck, Pruned}

// Settings are the benchmark's parameters; the report records them.
type Settings struct {
	// Sizes are the numbers of NS instances of the single-repository scenarios.
	Sizes []int
	// Latency is injected into every NBI request; OperationDelay is how long each OSM
	// operation runs.
	Latency        time.Duration
	OperationDelay time.Duration
	// OperationPollInterval is the reconciler's; CLIPollInterval the CLI model's --wait.
	OperationPollInterval time.Duration
	CLIPollInterval       time.Duration
	// CLIWaitSizes are the sizes at which the CLI model also runs with --wait: at the CLI's
	// 5 s poll each round of commands lasts 5 s, and its figures grow with N as the
	// smaller sizes show.
	CLIWaitSizes []int
	// MaxConcurrentRequests is the OsmCluster's bound, and the CLI model's commands at once.
	MaxConcurrentRequests int
	// MaxConcurrentReconciles, KubeAPIQPS and KubeAPIBurst are the manager's flags.
	MaxConcurrentReconciles int
	KubeAPIQPS              float32
	KubeAPIBurst            int
	// DriftInterval is the OsmDeployment interval that makes the drift check happen.
	DriftInterval time.Duration
	// FleetDeployments OsmDeployments of FleetInstances instances each share one OSM, once for
	// each of Fleets; FleetTarget is the target for all of them to be Ready, FleetTimeout when
	// to stop waiting.
	Fleets           []FleetSource
	FleetDeployments int
	FleetInstances   int
	FleetTarget      time.Duration
	FleetTimeout     time.Duration
	// LCMProfile names the simulator's LCM times (nbisim.LCMProfiles) of the operator's runs
	// at ProfileSizes, which measure how close it comes to OSM's own time (Closeness): "real"
	// for OSM 19's; empty for none.
	LCMProfile   string
	ProfileSizes []int
	// RealOSM, when set, is the URL of OSM's own NBI and LCM (../shared/real-osm) that the runs
	// at ProfileSizes go to instead of a simulator with LCMProfile, through a recording proxy
	// (RealOSM); RealOSMVIMAccount is the VIM account their NS instances name there.
	RealOSM           string
	RealOSMVIMAccount string
	// ProfilePollInterval and ProfilePollMinInterval are the reconciler's poll in those runs
	// (--operation-poll-interval, --operation-poll-min-interval): the manager's defaults, on a
	// manager of their own, so that the poll schedule is measured as it runs in production.
	ProfilePollInterval    time.Duration
	ProfilePollMinInterval time.Duration
	// ScenarioTimeout bounds each scenario.
	ScenarioTimeout time.Duration
	// SimulatorBinary is the path of cmd/osm-nbi-sim.
	SimulatorBinary string
}

// Measurement is one client's figures for one scenario.
type Measurement struct {
	Stats nbisim.Stats
	Usage Usage
	// Closeness is measured on the operator's A and B, nil elsewhere.
	Closeness *Closeness
	// ProcessCPU is the CPU time the benchmark's child processes spent meanwhile, by command
	// (ChildCPU): the API server, etcd and the simulators run on the operator's cores.
	ProcessCPU map[string]time.Duration
}

// SizeResult holds the figures of one repository size.
type SizeResult struct {
	N int
	// Operator, CLI and CLIWait map each scenario that ran to its figures: the operator's, the
	// CLI model's without --wait (the CLI's default) and with it (nil when not run at this
	// size). The CLI model has no C: a CLI user whose repository did not change sends nothing.
	Operator map[Scenario]Measurement
	CLI      map[Scenario]Measurement
	CLIWait  map[Scenario]Measurement
	// Profiled are the operator's figures against the simulator with Settings.LCMProfile (nil
	// when not run at this size).
	Profiled map[Scenario]Measurement
	// Changed are the instances B changes; Upgraded those OSM ran an upgrade on.
	Changed  []string
	Upgraded []string
	// Errors say what could not be measured.
	Errors []string
}

// Bench runs the scenarios on one operator.
type Bench struct {
	Settings Settings
	Operator *Operator
	Meter    *Meter
	// Packages are the package source files of every repository (openldap.PackageFiles).
	Packages map[string]string
	// Credentials are the simulators' and the OsmClusters'.
	Credentials osm.Credentials
	// Progress receives a line per scenario.
	Progress io.Writer
}

// repository names the GitRepository and the OsmDeployment of the single-repository runs.
const repository = "ldap"

// RunSize runs every scenario with n instances, through the operator and through the CLI
// model, each against a fresh simulator.
func (b *Bench) RunSize(ctx context.Context, n int) SizeResult {
	result := SizeResult{N: n}
	workload := Workload{N: n, Prefix: repository}
	result.Changed = workload.ChangedNames()
	var err error
	if result.Operator, result.Upgraded, err = b.runOperator(ctx, workload, ""); err != nil {
		result.Errors = append(result.Errors, "operator: "+err.Error())
	}
	if result.CLI, err = b.runCLI(ctx, workload, false); err != nil {
		result.Errors = append(result.Errors, "CLI pattern: "+err.Error())
	}
	if slices.Contains(b.Settings.CLIWaitSizes, n) {
		if result.CLIWait, err = b.runCLI(ctx, workload, true); err != nil {
			result.Errors = append(result.Errors, "CLI pattern with --wait: "+err.Error())
		}
	}
	return result
}

// RunCloseness runs the scenarios with n instances through the operator against the simulator
// with Settings.LCMProfile (SizeResult.Profiled): b's Operator polls as the manager does by
// default (Settings.ProfilePollInterval).
func (b *Bench) RunCloseness(ctx context.Context, n int) SizeResult {
	workload := b.Settings.closenessWorkload(n)
	result := SizeResult{N: n, Changed: workload.ChangedNames()}
	var err error
	if result.Profiled, _, err = b.runOperator(ctx, workload, b.Settings.LCMProfile); err != nil {
		result.Errors = append(result.Errors, fmt.Sprintf("operator, LCM profile %s: %s", b.Settings.LCMProfile, err))
	}
	return result
}

// closenessWorkload is the workload of the runs with the LCM profile at n: its NS instances name
// the VIM account of the OSM they run on, OSM's own (RealOSMVIMAccount) or the simulator's
// (VIMAccount): the operator refuses a revision that names a VIM account its OSM lacks.
func (s Settings) closenessWorkload(n int) Workload {
	w := Workload{N: n, Prefix: repository}
	if s.RealOSM != "" {
		w.VIMAccount = s.RealOSMVIMAccount
	}
	return w
}

// startSimulator starts a simulator with the bench's settings and the LCM profile, if any.

func (b *Bench) startSimulator(ctx context.Context, lcmProfile string) (*Simulator, error) {
	return StartSimulator(ctx, SimulatorOptions{
		Binary: b.Settings.SimulatorBinary, Credentials: b.Credentials, VIMAccount: VIMAccount,
		OperationDelay: b.Settings.OperationDelay, Latency: b.Settings.Latency, LCMProfile: lcmProfile,
	})
}

// step is a measured piece of work.
type step func(ctx context.Context) (span, error)

// span is a step's own figures where the window's would not do (the wall time ends at Ready,
// or the step measures one reconcile within a longer wait); zero fields take the window's.
// served and ready, when set, are when the step's artifact was served to the OsmDeployment
// and when it was Ready with it: the step's Closeness is then measured.
type span struct {
	wall, cpu     time.Duration
	served, ready time.Time
}

// measure runs a step with the simulator's counters zeroed and the meter's window open.
func (b *Bench) measure(ctx context.Context, sim nbiEndpoint, label string, run step) (Measurement, error) {
	if err := sim.ResetStats(ctx); err != nil {
		return Measurement{}, err
	}
	processesBefore, err := ChildCPU()
	if err != nil {
		return Measurement{}, fmt.Errorf("%s: %w", label, err)
	}
	window := b.Meter.Start()
	stepCtx, cancel := context.WithTimeout(ctx, b.Settings.ScenarioTimeout)
	own, err := run(stepCtx)
	cancel()
	usage := b.Meter.Measure(window)
	processesAfter, cpuErr := ChildCPU()
	err = errors.Join(err, cpuErr)
	if own.wall > 0 {
		usage.Wall = own.wall
	}
	if own.cpu > 0 {
		usage.CPU = own.cpu
	}
	stats, statsErr := sim.Stats(ctx)
	if err = errors.Join(err, statsErr); err != nil {
		return Measurement{}, fmt.Errorf("%s: %w", label, err)
	}
	var closeness *Closeness
	if !own.ready.IsZero() {
		if closeness, err = readCloseness(ctx, sim, own); err != nil {
			return Measurement{}, fmt.Errorf("%s: %w", label, err)
		}
	}
	fmt.Fprintf(b.Progress, "%-24s %6d requests (%5d mutating), %10d bytes, %9s wall, %9s CPU\n", label,
		stats.Requests, stats.MutatingRequests, stats.BytesReceived+stats.BytesSent, usage.Wall.Round(time.Millisecond), usage.CPU.Round(time.Millisecond))
	return Measurement{Stats: stats, Usage: usage, Closeness: closeness, ProcessCPU: cpuSince(processesBefore, processesAfter)}, nil
}

// readCloseness measures a step's Closeness from the simulator's request log (zeroed with its
// stats as the step began) and its operations.
func readCloseness(ctx context.Context, sim nbiEndpoint, own span) (*Closeness, error) {
	requests, err := sim.RequestLog(ctx)
	if err != nil {
		return nil, err
	}
	state, err := sim.State(ctx)
	if err != nil {
		return nil, err
	}
	c := measureCloseness(own.served, own.ready, requests, stateOperations(state))
	return &c, nil
}

// timed runs work and returns how long it took.
func timed(ctx context.Context, work func(context.Context) error) (span, error) {
	started := time.Now()
	err := work(ctx)
	return span{wall: time.Since(started)}, err
}

// runOperator drives the scenarios through the real reconcilers, against a simulator with the
// LCM profile if one is named.
func (b *Bench) runOperator(ctx context.Context, w Workload, lcmProfile string) (map[Scenario]Measurement, []string, error) {
	var sim nbiEndpoint
	var err error
	if lcmProfile != "" && b.Settings.RealOSM != "" {
		sim, err = StartRealOSM(ctx, b.Settings.RealOSM, b.Credentials)
	} else {
		sim, err = b.startSimulator(ctx, lcmProfile)
	}
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = sim.Stop() }()
	// Closeness is measured against the LCM's times only (the profile's or OSM's own), whose
	// request log is long.
	withCloseness := lcmProfile != ""
	namespace := fmt.Sprintf("bench-%d", w.N)
	if withCloseness {
		namespace += "-lcm-" + lcmProfile
	}
	tenant, err := b.Operator.NewTenant(ctx, TenantOptions{
		Namespace: namespace, NBI: sim.URL(), Credentials: b.Credentials,
		MaxConcurrentRequests: b.Settings.MaxConcurrentRequests,
	})
	if err != nil {
		return nil, nil, err
	}
	results := map[Scenario]Measurement{}
	label := func(s Scenario) string { return fmt.Sprintf("N=%d operator %s", w.N, s) }
	record := func(s Scenario, run step) error {
		m, err := b.measure(ctx, sim, label(s), run)
		if err == nil {
			results[s] = m
		}
		return err
	}

	// A: the GitRepository has its artifact before the OsmDeployment exists; Ready also waits
	// for the OsmCluster's reconcile that the new OsmDeployment triggers, which counts in A.
	first, err := tenant.Publish(ctx, repository, RepositoryFiles(w.First(), b.Packages))
	if err != nil {
		return results, nil, err
	}
	clusterBefore, err := ClusterReconciles()
	if err != nil {
		return results, nil, err
	}
	err = record(FirstRevision, func(ctx context.Context) (span, error) {
		// The artifact is new to the OsmDeployment as it is created.
		served := time.Now()
		untilReady, err := timed(ctx, func(ctx context.Context) error {
			if err := tenant.CreateDeployment(ctx, repository, repository, nil); err != nil {
				return err
			}
			return tenant.WaitApplied(ctx, repository, first)
		})
		if err != nil {
			return span{}, err
		}
		if withCloseness {
			untilReady.served, untilReady.ready = served, served.Add(untilReady.wall)
		}
		return untilReady, tenant.WaitClusterReconciled(ctx, clusterBefore)
	})
	if err != nil {
		return results, nil, err
	}

	// publishAndWait publishes a revision and waits for it; measured says whether to measure
	// its Closeness.
	publishAndWait := func(instances []Instance, measured bool) step {
		return func(ctx context.Context) (span, error) {
			var served, ready time.Time
			own, err := timed(ctx, func(ctx context.Context) error {
				revision, err := tenant.Publish(ctx, repository, RepositoryFiles(instances, b.Packages))
				if err != nil {
					return err
				}
				served = time.Now()
				err = tenant.WaitApplied(ctx, repository, revision)
				ready = time.Now()
				return err
			})
			if measured {
				own.served, own.ready = served, ready
			}
			return own, err
		}
	}
	if err := record(ChangedValues, publishAndWait(w.WithChangedValues(), withCloseness)); err != nil {
		return results, nil, err
	}
	upgraded, err := upgradedInstances(ctx, sim)
	if err != nil {
		return results, nil, err
	}
	err = record(SameRevision, func(ctx context.Context) (span, error) {
		return timed(ctx, func(ctx context.Context) error { return tenant.RequestReconcile(ctx, repository) })
	})
	if err != nil {
		return results, upgraded, err
	}
	if err := b.driftCheck(ctx, tenant, record); err != nil {
		return results, upgraded, err
	}
	if err := record(Pruned, publishAndWait(w.Pruned(), false)); err != nil || !withCloseness {
		return results, upgraded, err
	}
	return results, upgraded, record(Reverted, publishAndWait(w.Reverted(), true))
}

// driftCheck measures one periodic reconcile: it shortens the OsmDeployment's interval, waits
// for the reconcile that the change triggers, measures the next one, then sets the interval
// back. A requeue already scheduled with the short interval may still come (the classic work
// queue keeps it; controller-runtime's priority queue merges it into the interval change's):
// it is given the time to run, unmeasured, before the next scenario.
func (b *Bench) driftCheck(ctx context.Context, tenant *Tenant, record func(Scenario, step) error) error {
	if err := tenant.SetInterval(ctx, repository, b.Settings.DriftInterval); err != nil {
		return err
	}
	before, err := tenant.Reconciles(repository)
	if err != nil {
		return err
	}
	err = record(DriftCheck, func(ctx context.Context) (span, error) {
		wall, cpu, err := tenant.WaitDriftCheck(ctx, repository, before)
		return span{wall: wall, cpu: cpu}, err
	})
	if err != nil {
		return err
	}
	if err := tenant.SetInterval(ctx, repository, quietInterval); err != nil {
		return err
	}
	leftover, cancel := context.WithTimeout(ctx, b.Settings.DriftInterval+time.Second)
	defer cancel()
	// The drift check, the interval change, then maybe the requeue of the drift check.
	err = waitForReconciles(leftover, deploymentReconcilesMetric, deploymentLabels(tenant.namespace, repository), before.Count+3)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return nil
	}
	return err
}

// upgradedInstances returns the names of the NS instances OSM ran an upgrade on.
func upgradedInstances(ctx context.Context, sim nbiEndpoint) ([]string, error) {
	state, err := sim.State(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, ns := range state.NSInstances {
		for _, op := range ns.Operations {
			if op.Type == osm.OperationTypeAction && op.Primitive == "upgrade" {
				names = append(names, ns.Name)
				break
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// runCLI drives the scenarios A, B and D through the CLI model, with or without --wait.
// Without it, OSM still runs the operations when the commands return: they are completed
// (unmeasured) before the next scenario, as they would be by the time a user makes the next
// change.
func (b *Bench) runCLI(ctx context.Context, w Workload, wait bool) (map[Scenario]Measurement, error) {
	sim, err := b.startSimulator(ctx, "")
	if err != nil {
		return nil, err
	}
	defer func() { _ = sim.Stop() }()
	first, err := ParseRevision(RepositoryFiles(w.First(), b.Packages))
	if err != nil {
		return nil, err
	}
	changed, err := ParseRevision(RepositoryFiles(w.WithChangedValues(), b.Packages))
	if err != nil {
		return nil, err
	}
	cli := &CLIPattern{
		NBI: sim.URL(), Credentials: b.Credentials, Wait: wait, PollInterval: b.Settings.CLIPollInterval,
		Parallelism: b.Settings.MaxConcurrentRequests,
	}
	steps := []struct {
		scenario Scenario
		work     func(context.Context) error
	}{
		{FirstRevision, func(ctx context.Context) error {
			if err := cli.CreatePackages(ctx, first.Packages); err != nil {
				return err
			}
			return cli.CreateInstances(ctx, first.NsInstances)
		}},
		{ChangedValues, func(ctx context.Context) error {
			return cli.UpgradeInstances(ctx, instancesNamed(changed.NsInstances, w.ChangedNames()))
		}},
		{Pruned, func(ctx context.Context) error { return cli.DeleteInstances(ctx, w.PrunedNames()) }},
	}
	pattern := "CLI pattern"
	if wait {
		pattern += " --wait"
	}
	results := map[Scenario]Measurement{}
	for _, s := range steps {
		m, err := b.measure(ctx, sim, fmt.Sprintf("N=%d %s %s", w.N, pattern, s.scenario), func(ctx context.Context) (span, error) {
			return span{}, s.work(ctx)
		})
		if err == nil {
			err = sim.CompleteOperations(ctx)
		}
		if err != nil {
			return results, err
		}
		results[s.scenario] = m
	}
	return results, nil
}

func instancesNamed(instances []gitops.NsInstance, names []string) []gitops.NsInstance {
	var out []gitops.NsInstance
	for _, ns := range instances {
		if slices.Contains(names, ns.Name) {
			out = append(out, ns)
		}
	}
	return out
}

// FleetSource says where a fleet's OsmDeployments take their revisions from.
type FleetSource string

const (
	// SeparateSources gives each OsmDeployment its own GitRepository.
	SeparateSources FleetSource = "separate"
	// SharedSource has every OsmDeployment apply one GitRepository: one artifact whose NS
	// instance names hold a variable that each OsmDeployment sets to its own name
	// (spec.postBuild.substitute), so that their NS instances do not conflict in the one OSM.
	SharedSource FleetSource = "shared"
)

// FleetSources are the fleets osmops-bench can run, in their order.
var FleetSources = []FleetSource{SeparateSources, SharedSource}

// sharedVariable is the variable of the shared source's NS instance names.
const sharedVariable = "tenant"

// FleetResult holds the figures of many OsmDeployments sharing one OSM.
type FleetResult struct {
	Source                     FleetSource
	Deployments, InstancesEach int
	// Created is how long creating the OsmDeployments took.
	Created time.Duration
	// AllReady is the time from the first creation until all were Ready; zero when they were
	// not by the timeout.
	AllReady time.Duration
	// ReadyByTarget and ReadyAtEnd count the Ready ones at FleetTarget and when the wait ended.
	ReadyByTarget, ReadyAtEnd int
	// APIRequests counts the requests to the API server while waiting: the operator's, and the
	// benchmark's creates of the OsmDeployments.
	APIRequests int64
	// OperatorAPIRequests are the operator's own, by verb and resource.
	OperatorAPIRequests map[string]int64
	Measurement
	Error string
}

// fleetWriters bounds the benchmark's own concurrent writes to the API server.
const fleetWriters = 8

// RunFleets runs a fleet of each of Settings.Fleets, one after the other, each on its own OSM
// and namespace: FleetDeployments OsmDeployments of FleetInstances instances on one OsmCluster
// (the packages onboarded beforehand), until all are Ready. Each fleet but the last is removed
// before the next starts (its NS instances left in OSM), so that the next one's memory is its
// own. The error says that a removal failed, and the later fleets were not run. It mutes the
// operator's logs when it ends: run it after the scenarios of one repository.
func (b *Bench) RunFleets(ctx context.Context) ([]FleetResult, error) {
	// The OsmDeployments of the last fleet not Ready yet keep reconciling against its stopped
	// simulator.
	defer b.Operator.MuteLogs()
	var results []FleetResult
	for i, source := range b.Settings.Fleets {
		result := FleetResult{Source: source, Deployments: b.Settings.FleetDeployments, InstancesEach: b.Settings.FleetInstances}
		removal := b.runFleet(ctx, &result, i < len(b.Settings.Fleets)-1)
		results = append(results, result)
		if removal != nil {
			return results, fmt.Errorf("removing the fleet of %s sources: %w", source, removal)
		}
	}
	return results, nil
}

// runFleet measures one fleet into result, and then removes it when remove is set; it returns
// the removal's error.
func (b *Bench) runFleet(ctx context.Context, result *FleetResult, remove bool) error {
	sim, err := b.startSimulator(ctx, "")
	if err != nil {
		result.Error = err.Error()
		return nil
	}
	defer func() { _ = sim.Stop() }()
	if err := b.onboardPackages(ctx, sim); err != nil {
		result.Error = err.Error()
		return nil
	}
	tenant, err := b.Operator.NewTenant(ctx, TenantOptions{
		Namespace: "bench-fleet-" + string(result.Source), NBI: sim.URL(), Credentials: b.Credentials,
		MaxConcurrentRequests: b.Settings.MaxConcurrentRequests,
	})
	if err != nil {
		result.Error = err.Error()
		return nil
	}
	if err := b.measureFleet(ctx, sim, tenant, result); err != nil {
		result.Error = err.Error()
	}
	if !remove {
		return nil
	}
	// Not the fleet's timeout: the removal releases every claim the fleet took, a delete per NS
	// instance name (10,000 take 97 s where --kube-api-qps 100 applies: clientLimit).
	removeCtx, cancel := context.WithTimeout(ctx, b.Settings.ScenarioTimeout)
	defer cancel()
	started := time.Now()
	if err := tenant.RemoveDeployments(removeCtx); err != nil {
		return err
	}
	fmt.Fprintf(b.Progress, "removed the fleet (%s) in %s\n", fleetSourceTitles[result.Source], time.Since(started).Round(time.Millisecond))
	return nil
}

// fleetDeployment is one OsmDeployment of a fleet: its name, its GitRepository and the
// variables it substitutes.
type fleetDeployment struct {
	name, repository string
	substitute       map[string]string
}

// publishFleet publishes the fleet's source(s) and returns its OsmDeployments and the revision
// each must apply.
func (b *Bench) publishFleet(ctx context.Context, tenant *Tenant, result *FleetResult) ([]fleetDeployment, map[string]string, error) {
	deployments := make([]fleetDeployment, result.Deployments)
	revisions := make(map[string]string, result.Deployments)
	if result.Source == SharedSource {
		const repository = "fleet"
		files := RepositoryFiles(Workload{N: result.InstancesEach, Prefix: "${" + sharedVariable + "}"}.First(), nil)
		revision, err := tenant.Publish(ctx, repository, files)
		if err != nil {
			return nil, nil, err
		}
		for i := range deployments {
			name := fleetName(i)
			deployments[i] = fleetDeployment{name: name, repository: repository, substitute: map[string]string{sharedVariable: name}}
			revisions[name] = revision
		}
		return deployments, revisions, nil
	}
	published := make([]string, result.Deployments)
	err := forEach(ctx, result.Deployments, func(ctx context.Context, i int) error {
		name := fleetName(i)
		deployments[i] = fleetDeployment{name: name, repository: name}
		var err error
		published[i], err = tenant.Publish(ctx, name, RepositoryFiles(Workload{N: result.InstancesEach, Prefix: name}.First(), nil))
		return err
	})
	for i, d := range deployments {
		revisions[d.name] = published[i]
	}
	return deployments, revisions, err
}

func fleetName(i int) string { return fmt.Sprintf("fleet-%04d", i) }

// measureFleet creates the fleet's OsmDeployments and waits until all are Ready.
func (b *Bench) measureFleet(ctx context.Context, sim *Simulator, tenant *Tenant, result *FleetResult) error {
	deployments, revisions, err := b.publishFleet(ctx, tenant, result)
	if err != nil {
		return err
	}
	label := fmt.Sprintf("%d OsmDeployments, %s", result.Deployments, fleetSourceTitles[result.Source])
	m, err := b.measure(ctx, sim, label, func(ctx context.Context) (span, error) {
		apiBefore, err := metricCount(apiRequestsMetric, nil)
		if err != nil {
			return span{}, err
		}
		operatorBefore := b.Operator.apiCalls.snapshot()
		defer func() {
			if apiAfter, err := metricCount(apiRequestsMetric, nil); err == nil {
				result.APIRequests = int64(apiAfter.Count - apiBefore.Count)
			}
			result.OperatorAPIRequests = b.Operator.apiCalls.since(operatorBefore)
		}()
		started := time.Now()
		if err := forEach(ctx, result.Deployments, func(ctx context.Context, i int) error {
			d := deployments[i]
			return tenant.CreateDeployment(ctx, d.name, d.repository, d.substitute)
		}); err != nil {
			return span{}, err
		}
		result.Created = time.Since(started)
		byTarget, cancel := context.WithDeadline(ctx, started.Add(b.Settings.FleetTarget))
		result.ReadyByTarget, err = tenant.WaitAllApplied(byTarget, revisions)
		cancel()
		if err == nil {
			result.AllReady, result.ReadyAtEnd = time.Since(started), result.ReadyByTarget
			return span{wall: result.AllReady}, nil
		}
		byTimeout, cancel := context.WithDeadline(ctx, started.Add(b.Settings.FleetTimeout))
		defer cancel()
		result.ReadyAtEnd, err = tenant.WaitAllApplied(byTimeout, revisions)
		if err == nil {
			result.AllReady = time.Since(started)
		}
		return span{wall: time.Since(started)}, nil // not all Ready in time is a figure, not a failure
	})
	result.Measurement = m
	return err
}

// onboardPackages uploads the packages once, as a platform team would before tenants deploy.
func (b *Bench) onboardPackages(ctx context.Context, sim *Simulator) error {
	revision, err := ParseRevision(RepositoryFiles(nil, b.Packages))
	if err != nil {
		return err
	}
	nbi, err := osm.NewClient(sim.URL(), b.Credentials)
	if err != nil {
		return err
	}
	for _, pkg := range revision.Packages {
		if _, err := nbi.CreatePackage(ctx, pkg.Package); err != nil {
			return fmt.Errorf("onboarding package %s: %w", pkg.Descriptor.ID, err)
		}
	}
	return nil
}

// forEach runs work for 0..n-1 with fleetWriters at once.
func forEach(ctx context.Context, n int, work func(context.Context, int) error) error {
	group, groupCtx := errgroup.WithContext(ctx)
	group.SetLimit(fleetWriters)
	for i := range n {
		group.Go(func() error { return work(groupCtx, i) })
	}
	return group.Wait()
}
