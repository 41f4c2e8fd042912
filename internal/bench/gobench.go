package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/tools/benchmark/parse"
)

// GoBenchmarkTarget is a `go test -bench` benchmark of a hot pure function and its target.
type GoBenchmarkTarget struct {
	Package string
	Name    string
	// What says what one iteration does, for the report.
	What   string
	Target time.Duration
}

// GoBenchmarkTargets are the benchmarks the report shows.
var GoBenchmarkTargets = []GoBenchmarkTarget{
	{Package: "./internal/gitops", Name: "BenchmarkLoad1000DeploymentFiles", What: "parse a revision of 1,000 deployment files", Target: 200 * time.Millisecond},
	{Package: "./internal/engine", Name: "BenchmarkCompute10000Instances", What: "plan 10,000 NS instances (10% changed)", Target: 50 * time.Millisecond},
}

// GoBenchmark is one benchmark's result.
type GoBenchmark struct {
	GoBenchmarkTarget
	Iterations  int
	PerOp       time.Duration
	BytesPerOp  uint64
	AllocsPerOp uint64
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
	set, err := parse.ParseSet(output)
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
		results = append(results, GoBenchmark{
			GoBenchmarkTarget: target, Iterations: run.N, PerOp: time.Duration(run.NsPerOp),
			BytesPerOp: run.AllocedBytesPerOp, AllocsPerOp: run.AllocsPerOp,
		})
	}
	return results, nil
}
