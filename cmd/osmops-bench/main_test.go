package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/bench"
)

func TestParseOptions(t *testing.T) {
	defaults, err := parseOptions(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := defaults.settings
	got := []any{s.Sizes, s.Latency, s.OperationDelay, s.OperationPollInterval, s.CLIPollInterval, s.CLIWaitSizes, s.MaxConcurrentRequests,
		s.Fleets, s.FleetDeployments, s.FleetInstances, s.FleetTarget, s.LCMProfile, s.ProfileSizes, s.ProfilePollInterval, s.ProfilePollMinInterval, defaults.out}
	want := []any{[]int{10, 100, 1000}, 5 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 5 * time.Second, []int{10, 100}, 32,
		[]bench.FleetSource{bench.SeparateSources, bench.SharedSource}, 1000, 10, 30 * time.Second, "real", []int{10},
		5 * time.Second, time.Second, "docs/benchmarks.md"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if defaults.onlyHostile || !defaults.goBenchmarks {
		t.Errorf("by default everything runs: onlyHostile %v, goBenchmarks %v", defaults.onlyHostile, defaults.goBenchmarks)
	}
	hostile, err := parseOptions([]string{"--only=hostile"}, io.Discard)
	if err != nil || !hostile.onlyHostile || hostile.goBenchmarks {
		t.Errorf("--only=hostile: %+v, %v; want the hostile tenants alone", hostile, err)
	}
	closeness, err := parseOptions([]string{"--only=closeness", "--lcm-profile-sizes=20"}, io.Discard)
	if err != nil || !closeness.onlyCloseness || closeness.goBenchmarks {
		t.Errorf("--only=closeness: %+v, %v; want the runs with the LCM profile alone, at sizes of their own", closeness, err)
	}

	for _, tt := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--sizes=10,1"}, "--sizes: 1 is too small"},
		{[]string{"--fleet-timeout=10m", "--scenario-timeout=5m"}, "--fleet-timeout 10m0s must not exceed --scenario-timeout 5m0s"},
		{[]string{"extra"}, "unexpected arguments: extra"},
		{[]string{"--sizes=10", "--cli-wait-sizes=100"}, "--cli-wait-sizes: 100 is not one of --sizes"},
		{[]string{"--fleets=shared,mixed"}, `--fleets: "mixed" is neither "separate" nor "shared"`},
		{[]string{"--latency=soon"}, `invalid argument "soon"`},
		{[]string{"--only=fleets"}, `--only: "fleets" is neither "hostile" nor "closeness"`},
		{[]string{"--sizes=100", "--lcm-profile-sizes=10"}, "--lcm-profile-sizes: 10 is not one of --sizes"},
		{[]string{"--only=closeness", "--lcm-profile="}, "--only closeness needs --lcm-profile and --lcm-profile-sizes"},
	} {
		_, err := parseOptions(tt.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("parseOptions(%q) error = %v, want one with %q", tt.args, err, tt.wantErr)
		}
	}
}
