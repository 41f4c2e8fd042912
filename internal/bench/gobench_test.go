package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseGoBenchmarks(t *testing.T) {
	output := `goos: linux
pkg: github.com/osmops/osmops/internal/gitops
BenchmarkLoad1000DeploymentFiles-2   	      34	  36568642 ns/op	17850937 B/op	  188332 allocs/op
PASS
pkg: github.com/osmops/osmops/internal/engine
BenchmarkCompute10000Instances   	      21	  50084380 ns/op	35232346 B/op	  380202 allocs/op
PASS
pkg: github.com/osmops/osmops/internal/osm
BenchmarkHostileListHeap-2   	       1	13484386582 ns/op	  14729216 heap-B	1606451416 B/op	  5267345 allocs/op
PASS
`
	got, err := ParseGoBenchmarks(strings.NewReader(output))
	if err != nil {
		t.Fatal(err)
	}
	want := []GoBenchmark{
		{GoBenchmarkTarget: GoBenchmarkTargets[0], Iterations: 34, PerOp: 36568642 * time.Nanosecond, BytesPerOp: 17850937, AllocsPerOp: 188332},
		{GoBenchmarkTarget: GoBenchmarkTargets[1], Iterations: 21, PerOp: 50084380 * time.Nanosecond, BytesPerOp: 35232346, AllocsPerOp: 380202},
		{GoBenchmarkTarget: GoBenchmarkTargets[2], Iterations: 1, PerOp: 13484386582 * time.Nanosecond, BytesPerOp: 1606451416, AllocsPerOp: 5267345,
			HeapGrowth: 14729216},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("benchmarks (-want +got):\n%s", diff)
	}
}

func TestParseGoBenchmarksNamesTheMissingOne(t *testing.T) {
	_, err := ParseGoBenchmarks(strings.NewReader("BenchmarkLoad1000DeploymentFiles-2 1 5 ns/op\n"))
	if err == nil || !strings.Contains(err.Error(), "BenchmarkCompute10000Instances") {
		t.Errorf("error = %v, want one naming the missing benchmark", err)
	}
}
