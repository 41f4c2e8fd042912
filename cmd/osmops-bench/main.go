// Command osmops-bench runs the benchmark of `make bench`: the scenarios A to D through the
// real reconcilers and through the `osm` CLI's request pattern, each against an NBI simulator
// process, the 1,000-OsmDeployment runs (separate sources, one shared source), the hostile
// tenants at the documented bounds (alone with --only hostile) and the Go
// benchmarks of hot functions and memory bounds, and writes the report (docs/benchmarks.md). It exits 0 when the report is written, whether the
// targets are met or not; 1 when a part of the run could not be measured.
//
// It needs the envtest binaries (KUBEBUILDER_ASSETS, or `make envtest`), the simulator binary
// and `go` (for `go test -bench`), and runs from the repository root.
//
// The benchmark lives in internal/bench; no product package imports either.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	flag "github.com/spf13/pflag"

	"github.com/osmops/osmops/internal/bench"
	"github.com/osmops/osmops/internal/controller"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmconn"
	"github.com/osmops/osmops/internal/testing/openldap"
	"github.com/osmops/osmops/internal/testing/testenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	incomplete, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "osmops-bench:", err)
		os.Exit(1)
	case incomplete:
		fmt.Fprintln(os.Stderr, "osmops-bench: parts of the run failed; the report says which")
		os.Exit(1)
	}
}

// options are the command line's settings.
type options struct {
	settings    bench.Settings
	out         string
	operatorLog string
	// fleetCPUProfile is the file of a CPU profile of the process while the fleets run.
	fleetCPUProfile string
	command         string
	goBenchmarks    bool
	// onlyHostile runs the hostile tenants scenario alone; onlyCloseness the runs against the
	// simulator with the LCM profile.
	onlyHostile, onlyCloseness bool
	// realOSMUser and realOSMPasswordFile are the credentials of --real-osm.
	realOSMUser, realOSMPasswordFile string
}

func parseOptions(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	s := &o.settings
	flags := flag.NewFlagSet("osmops-bench", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&o.out, "out", "docs/benchmarks.md", "the report to write")
	flags.StringVar(&s.SimulatorBinary, "simulator", "bin/osm-nbi-sim", "the NBI simulator binary (go build ./cmd/osm-nbi-sim)")
	flags.StringVar(&o.operatorLog, "operator-log", "", "file for the reconcilers' error logs (default: standard error)")
	flags.StringVar(&o.fleetCPUProfile, "fleet-cpu-profile", "", "file for a CPU profile of the operator while the fleets run (go tool pprof)")
	flags.StringVar(&o.command, "command", "make bench", "the command the report says reproduces it")
	flags.BoolVar(&o.goBenchmarks, "go-benchmarks", true, "run the Go benchmarks of hot functions and memory bounds")
	flags.IntSliceVar(&s.Sizes, "sizes", []int{10, 100, 1000}, "numbers of NS instances of the single-repository scenarios")
	flags.DurationVar(&s.Latency, "latency", 5*time.Millisecond, "latency injected into every NBI request")
	flags.DurationVar(&s.OperationDelay, "operation-delay", 100*time.Millisecond, "how long each simulated LCM operation runs")
	flags.DurationVar(&s.OperationPollInterval, "operation-poll-interval", 100*time.Millisecond, "the reconciler's poll of pending operations")
	flags.DurationVar(&s.CLIPollInterval, "cli-poll-interval", 5*time.Second, "the CLI pattern's --wait poll (osmclient's is 5 s)")
	flags.IntSliceVar(&s.CLIWaitSizes, "cli-wait-sizes", []int{10, 100}, "the sizes at which the CLI pattern also runs with --wait (each round of commands then lasts a poll)")
	flags.IntVar(&s.MaxConcurrentRequests, "max-concurrent-requests", 32, "the OsmCluster's maxConcurrentRequests, and the CLI pattern's commands at once")
	flags.IntVar(&s.MaxConcurrentReconciles, "concurrent", 4, "the manager's --concurrent")
	flags.Float32Var(&s.KubeAPIQPS, "kube-api-qps", 100, "the manager's --kube-api-qps")
	flags.IntVar(&s.KubeAPIBurst, "kube-api-burst", 300, "the manager's --kube-api-burst")
	flags.DurationVar(&s.DriftInterval, "drift-interval", 2*time.Second, "the OsmDeployment interval that triggers the measured drift check")
	fleets := flags.StringSlice("fleets", []string{string(bench.SeparateSources), string(bench.SharedSource)},
		"the fleets to run: separate (each OsmDeployment its own GitRepository), shared (all on one GitRepository)")
	flags.IntVar(&s.FleetDeployments, "fleet-deployments", 1000, "OsmDeployments of each fleet run")
	flags.IntVar(&s.FleetInstances, "fleet-instances", 10, "NS instances of each fleet OsmDeployment")
	flags.DurationVar(&s.FleetTarget, "fleet-target", 30*time.Second, "the target for the whole fleet to be Ready (issue 30)")
	flags.DurationVar(&s.FleetTimeout, "fleet-timeout", 2*time.Minute, "when to stop waiting for the fleet")
	flags.StringVar(&s.LCMProfile, "lcm-profile", "real", `the simulator's LCM times of the runs that measure how close the operator `+
		`comes to OSM's own time ("real": OSM 19's as measured; "" for none)`)
	flags.IntSliceVar(&s.ProfileSizes, "lcm-profile-sizes", []int{10}, "the sizes run again against the simulator with --lcm-profile "+
		"(one of its operations is taken up every 2 s: N = 100 takes OSM over 200 s)")
	flags.DurationVar(&s.ProfilePollInterval, "lcm-profile-poll-interval", controller.DefaultOperationPollInterval,
		"the reconciler's --operation-poll-interval in the runs with --lcm-profile (a manager of their own)")
	flags.DurationVar(&s.ProfilePollMinInterval, "lcm-profile-poll-min-interval", osmconn.DefaultOperationPollMinInterval,
		"the reconciler's --operation-poll-min-interval in the runs with --lcm-profile")
	flags.StringVar(&s.RealOSM, "real-osm", "", "with --only closeness: the URL of OSM's own NBI and LCM (../shared/real-osm, "+
		"http://127.0.0.1:22999) to run against instead of a simulator; start it afresh before each run (names are reused)")
	flags.StringVar(&s.RealOSMVIMAccount, "real-osm-vim-account", "mylocation1", "the VIM account (with a K8s cluster) the NS instances name on --real-osm")
	flags.StringVar(&o.realOSMUser, "real-osm-user", "admin", "the user and project the operator logs in to --real-osm with")
	flags.StringVar(&o.realOSMPasswordFile, "real-osm-password-file", "", "the file holding that user's password (required with --real-osm)")
	flags.DurationVar(&s.ScenarioTimeout, "scenario-timeout", 5*time.Minute, "the bound of each scenario")
	only := flags.String("only", "", `run one part alone: "hostile" (the hostile tenants at the documented bounds) or "closeness" `+
		`(the runs with --lcm-profile); write it elsewhere with --out`)
	if err := flags.Parse(args); err != nil {
		return nil, err
	}
	switch *only {
	case "":
	case "hostile":
		o.onlyHostile, o.goBenchmarks = true, false
	case "closeness":
		o.onlyCloseness, o.goBenchmarks = true, false
		if s.LCMProfile == "" || len(s.ProfileSizes) == 0 {
			return nil, errors.New("--only closeness needs --lcm-profile and --lcm-profile-sizes")
		}
	default:
		return nil, fmt.Errorf("--only: %q is neither \"hostile\" nor \"closeness\"", *only)
	}
	if s.RealOSM != "" && (!o.onlyCloseness || o.realOSMPasswordFile == "") {
		return nil, errors.New("--real-osm needs --only closeness and --real-osm-password-file")
	}
	if flags.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(flags.Args(), " "))
	}
	if s.FleetTimeout > s.ScenarioTimeout {
		return nil, fmt.Errorf("--fleet-timeout %s must not exceed --scenario-timeout %s", s.FleetTimeout, s.ScenarioTimeout)
	}
	for _, n := range s.Sizes {
		if n < 2 {
			return nil, fmt.Errorf("--sizes: %d is too small: 10%% of the instances change and 10%% go", n)
		}
	}
	for _, n := range s.ProfileSizes {
		if !o.onlyCloseness && !slices.Contains(s.Sizes, n) {
			return nil, fmt.Errorf("--lcm-profile-sizes: %d is not one of --sizes", n)
		}
	}
	for _, n := range s.CLIWaitSizes {
		if !slices.Contains(s.Sizes, n) {
			return nil, fmt.Errorf("--cli-wait-sizes: %d is not one of --sizes", n)
		}
	}
	for _, fleet := range *fleets {
		if !slices.Contains(bench.FleetSources, bench.FleetSource(fleet)) {
			return nil, fmt.Errorf("--fleets: %q is neither %q nor %q", fleet, bench.SeparateSources, bench.SharedSource)
		}
		s.Fleets = append(s.Fleets, bench.FleetSource(fleet))
	}
	return o, nil
}

// run measures everything and writes the report; incomplete says whether a part failed.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (incomplete bool, err error) {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return false, err
	}
	started := time.Now()
	report := &bench.Report{Started: started, Command: o.command, Settings: o.settings, Machine: describeMachine(ctx), ClosenessOnly: o.onlyCloseness}
	if o.goBenchmarks {
		fmt.Fprintln(stderr, "Go benchmarks (the machine is otherwise idle)...")
		if report.GoBenchmarks, err = bench.RunGoBenchmarks(ctx, testenv.RepoRoot(), stderr); err != nil {
			report.Errors = append(report.Errors, "Go benchmarks: "+err.Error())
		}
	}
	if err := measureScenarios(ctx, o, report, stderr); err != nil {
		return false, err
	}
	report.Duration = time.Since(started)
	out, err := os.Create(o.out)
	if err != nil {
		return false, err
	}
	if err := errors.Join(bench.Render(out, report), out.Close()); err != nil {
		return false, err
	}
	missed := 0
	for _, v := range bench.Evaluate(report) {
		if !v.Pass {
			missed++
			fmt.Fprintf(stdout, "missed: %s (%s)\n", v.Target, v.Measured)
		}
	}
	fmt.Fprintf(stdout, "wrote %s in %s; %d target(s) missed\n", o.out, report.Duration.Round(time.Second), missed)
	return len(report.Errors) > 0, nil
}

// measureScenarios runs the scenarios of every size, the fleets and the hostile tenants on one
// operator, then the runs with the LCM profile on another, which polls as the manager does by
// default.
func measureScenarios(ctx context.Context, o *options, report *bench.Report, stderr io.Writer) error {
	operatorLog := stderr
	if o.operatorLog != "" {
		file, err := os.Create(o.operatorLog)
		if err != nil {
			return err
		}
		defer file.Close()
		operatorLog = file
	}
	packages, err := openldap.PackageFiles(openldap.PackageNames...)
	if err != nil {
		return err
	}
	meter, err := bench.StartMeter(50 * time.Millisecond)
	if err != nil {
		return err
	}
	defer meter.Stop()
	credentials := osm.Credentials{Username: "osmops-bench", Password: rand.Text(), Project: "admin"}
	if o.settings.RealOSM != "" {
		password, err := os.ReadFile(o.realOSMPasswordFile)
		if err != nil {
			return err
		}
		credentials = osm.Credentials{Username: o.realOSMUser, Password: strings.TrimSpace(string(password)), Project: o.realOSMUser}
	}
	onOperator := func(opts bench.OperatorOptions, measure func(*bench.Bench) error) error {
		fmt.Fprintln(stderr, "starting envtest and the reconcilers...")
		opts.MaxConcurrentReconciles, opts.KubeAPIQPS, opts.KubeAPIBurst = o.settings.MaxConcurrentReconciles, o.settings.KubeAPIQPS, o.settings.KubeAPIBurst
		opts.AnswerMemory, opts.Log = bench.ManagerAnswerMemory, operatorLog
		operator, err := bench.StartOperator(ctx, opts)
		if err != nil {
			return err
		}
		defer func() { _ = operator.Stop() }()
		report.ClientUnlimited = operator.ClientUnlimited()
		return measure(&bench.Bench{Settings: o.settings, Operator: operator, Meter: meter, Packages: packages,
			Credentials: credentials, Progress: stderr})
	}
	if !o.onlyCloseness {
		err := onOperator(bench.OperatorOptions{OperationPollInterval: o.settings.OperationPollInterval}, func(b *bench.Bench) error {
			if o.onlyHostile {
				return measureHostile(ctx, b, report)
			}
			measureSizes(ctx, b, report, o.fleetCPUProfile)
			return measureHostile(ctx, b, report)
		})
		if err != nil || o.onlyHostile || o.settings.LCMProfile == "" {
			return err
		}
	}
	return onOperator(bench.OperatorOptions{OperationPollInterval: o.settings.ProfilePollInterval,
		OperationPollMinInterval: o.settings.ProfilePollMinInterval}, func(b *bench.Bench) error {
		measureCloseness(ctx, b, report)
		return ctx.Err()
	})
}

// measureSizes runs the scenarios of every size and the fleets, with a CPU profile of the fleets
// in cpuProfile when it is not empty.
func measureSizes(ctx context.Context, b *bench.Bench, report *bench.Report, cpuProfile string) {
	for _, n := range b.Settings.Sizes {
		result := b.RunSize(ctx, n)
		for _, e := range result.Errors {
			report.Errors = append(report.Errors, fmt.Sprintf("N=%d %s", n, e))
		}
		report.Sizes = append(report.Sizes, result)
	}
	if b.Settings.FleetDeployments > 0 {
		stopProfile, err := startCPUProfile(cpuProfile)
		if err != nil {
			report.Errors = append(report.Errors, err.Error())
		}
		report.Fleets, err = b.RunFleets(ctx)
		stopProfile()
		if err != nil {
			report.Errors = append(report.Errors, err.Error())
		}
		for _, fleet := range report.Fleets {
			if fleet.Error != "" {
				report.Errors = append(report.Errors, fmt.Sprintf("fleet of %s sources: %s", fleet.Source, fleet.Error))
			}
		}
	}
}

// measureCloseness runs the sizes with the LCM profile, each into the size's result.
func measureCloseness(ctx context.Context, b *bench.Bench, report *bench.Report) {
	for _, n := range b.Settings.ProfileSizes {
		result := b.RunCloseness(ctx, n)
		for _, e := range result.Errors {
			report.Errors = append(report.Errors, fmt.Sprintf("N=%d %s", n, e))
		}
		i := slices.IndexFunc(report.Sizes, func(s bench.SizeResult) bool { return s.N == n })
		if i < 0 {
			report.Sizes = append(report.Sizes, result)
			continue
		}
		report.Sizes[i].Profiled = result.Profiled
	}
}

// measureHostile runs the hostile tenants, last: it mutes the operator's logs.
func measureHostile(ctx context.Context, b *bench.Bench, report *bench.Report) error {
	hostile := b.RunHostile(ctx)
	report.Hostile = &hostile
	if hostile.Error != "" {
		report.Errors = append(report.Errors, "hostile tenants: "+hostile.Error)
	}
	return ctx.Err()
}

// describeMachine says what the run ran on; what cannot be read is left empty.
func describeMachine(ctx context.Context) bench.Machine {
	m := bench.Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version()}
	if fs, err := procfs.NewDefaultFS(); err == nil {
		if cpus, err := fs.CPUInfo(); err == nil && len(cpus) > 0 {
			m.CPU = cpus[0].ModelName
		}
		if memory, err := fs.Meminfo(); err == nil && memory.MemTotalBytes != nil {
			m.Memory = *memory.MemTotalBytes
		}
		if load, err := fs.LoadAvg(); err == nil {
			m.LoadAverage = fmt.Sprintf("%.2f, %.2f, %.2f", load.Load1, load.Load5, load.Load15)
		}
	}
	if release, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(release))
	}
	if commit, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(commit))
		if status, err := exec.CommandContext(ctx, "git", "status", "--porcelain").Output(); err == nil && len(status) > 0 {
			m.Commit += " with uncommitted changes"
		}
	}
	return m
}

// startCPUProfile profiles the process into path until the returned function is called; an
// empty path profiles nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	file, err := os.Create(path)
	if err != nil {
		return func() {}, fmt.Errorf("--fleet-cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(file); err != nil {
		_ = file.Close()
		return func() {}, fmt.Errorf("--fleet-cpu-profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = file.Close()
	}, nil
}
