package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/tools/benchmark/parse"
)

// GoBenchmarkTarget is a `go test -bench` benchmark and its target: the time of one
// iteration, or the heap growth it reports.
type GoBenchmarkTarget struct {
	Package string
	Name    string
	// What says what one iteration does, for the report.
	What   string
	Target time.Duration
	// HeapTarget, when set, replaces Target: it bounds the growth of the heap in use that the
	// benchmark reports as its heapGrowthUnit metric.
	HeapTarget uint64
}

// heapGrowthUnit is the unit of the metric (testing.B.ReportMetric) in which a benchmark
// reports how much the heap in use grew.
const heapGrowthUnit = "heap-B"

// GoBenchmarkTargets are the benchmarks the report shows.
var GoBenchmarkTargets = []GoBenchmarkTarget{
	{Package: "./internal/gitops", Name: "BenchmarkLoad1000DeploymentFiles", What: "parse a revision of 1,000 deployment files", Target: 200 * time.Millisecond},
	{Package: "./internal/engine", Name: "BenchmarkCompute10000Instances", What: "plan 10,000 NS instances (10% changed)", Target: 25 * time.Millisecond},
	{Package: "./internal/osm", Name: "BenchmarkHostileListHeap", What: "read each of 6 hostile 1 GiB list answers up to its first bound", HeapTarget: 64 << 20},
}

// GoBenchmark is one benchmark's result.
type GoBenchmark struct {
	GoBenchmarkTarget
	Iterations  int
	PerOp       time.Duration
	BytesPerOp  uint64
	AllocsPerOp uint64
	// HeapGrowth is the heapGrowthUnit metric, for a benchmark with a HeapTarget.
	HeapGrowth uint64
}

// RunGoBenchmarks runs GoBenchmarkTargets with `go test -bench -benchmem` in the module
// folder dir; the command's output goes to log.
func RunGoBenchmarks(ctx context.Context, dir string, log io.Writer) ([]GoBenchmark, error) {
	names := make([]string, 0, len(GoBenchmarkTargets))
	packages := make([]string, 0, len(GoBenchmarkTargets))
	for _, t := range GoBenchmarkTargets {
		names = append(names, t.Name)
		packages = append(packages, t.Package)
	}
	args := append([]string{"test", "-run", "^$", "-bench", "^(" + strings.Join(names, "|") + ")$", "-benchmem", "-count", "1"}, packages...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var output bytes.Buffer
	cmd.Stdout = io.MultiWriter(&output, log)
	cmd.Stderr = log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return ParseGoBenchmarks(&output)
}

// ParseGoBenchmarks reads `go test -bench` output and returns the results of
// GoBenchmarkTargets, in their order; a target the output lacks is an error.
func ParseGoBenchmarks(output io.Reader) ([]GoBenchmark, error) {
	text, err := io.ReadAll(output)
	if err != nil {
		return nil, err
	}
	set, err := parse.ParseSet(bytes.NewReader(text))
	if err != nil {
		return nil, err
	}
	byName := map[string]*parse.Benchmark{}
	for name, runs := range set {
		// The name ends with -GOMAXPROCS when it is above 1.
		base, _, _ := strings.Cut(name, "-")
		byName[base] = runs[len(runs)-1]
	}
	results := make([]GoBenchmark, 0, len(GoBenchmarkTargets))
	for _, target := range GoBenchmarkTargets {
		run, ok := byName[target.Name]
		if !ok {
			return nil, fmt.Errorf("the output of go test has no %s", target.Name)
		}
		result := GoBenchmark{
			GoBenchmarkTarget: target, Iterations: run.N, PerOp: time.Duration(run.NsPerOp),
			BytesPerOp: run.AllocedBytesPerOp, AllocsPerOp: run.AllocsPerOp,
		}
		if target.HeapTarget > 0 {
			if result.HeapGrowth, ok = heapGrowth(text, target.Name); !ok {
				return nil, fmt.Errorf("the output of go test has no %s metric for %s", heapGrowthUnit, target.Name)
			}
		}
		results = append(results, result)
	}
	return results, nil
}

// heapGrowth reads the heapGrowthUnit metric of the benchmark's last result line, which
// parse.ParseSet leaves out: the metrics follow the iterations as value and unit pairs.
func heapGrowth(output []byte, name string) (uint64, bool) {
	var growth uint64
	found := false
	for line := range strings.Lines(string(output)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if base, _, _ := strings.Cut(fields[0], "-"); base != name {
			continue
		}
		for i := 3; i < len(fields); i += 2 {
			if fields[i] != heapGrowthUnit {
				continue
			}
			if value, err := strconv.ParseFloat(fields[i-1], 64); err == nil {
				growth, found = uint64(value), true
			}
		}
	}
	return growth, found
}
