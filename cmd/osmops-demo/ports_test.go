package main

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/testing/devstack"
)

func TestDemoPorts(t *testing.T) {
	defaults := devstack.Ports{
		APIServer: 16443, Git: 18080, Simulator: 9999, SourceStorage: 19090, SourceMetrics: 19091,
		SourceHealth: 19092, OperatorMetrics: 18082, OperatorHealth: 18081,
	}
	withNBI := defaults
	withNBI.Simulator = 10999
	tests := []struct {
		name    string
		env     map[string]string
		want    devstack.Ports
		wantErr string
	}{
		{name: "defaults", want: defaults},
		{name: "override", env: map[string]string{"OSMOPS_DEMO_NBI_PORT": "10999"}, want: withNBI},
		{name: "not a number", env: map[string]string{"OSMOPS_DEMO_GIT_PORT": "http"},
			wantErr: `OSMOPS_DEMO_GIT_PORT="http": want a port number from 1 to 65535`},
		{name: "out of range", env: map[string]string{"OSMOPS_DEMO_APISERVER_PORT": "70000"},
			wantErr: `OSMOPS_DEMO_APISERVER_PORT="70000": want a port number from 1 to 65535`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := demoPorts(func(key string) string { return tt.env[key] })
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEveryPortHasASetting(t *testing.T) {
	var ports devstack.Ports
	for _, field := range ports.Fields() {
		if portSettings[field.Part].env == "" {
			t.Errorf("no environment variable for the %s port", field.Part)
		}
	}
	for _, site := range laterSites {
		if portSettings[devstack.SimulatorPart(site)].env == "" {
			t.Errorf("no environment variable for the port of the simulator of site %s", site)
		}
	}
}

func TestLaterSitePorts(t *testing.T) {
	port, err := demoPort(devstack.SimulatorPart("canary"), func(string) string { return "" })
	if err != nil || port != 9998 {
		t.Errorf("canary's port = %d, %v; want 9998", port, err)
	}
	port, err = demoPort(devstack.SimulatorPart("region"), func(key string) string {
		return map[string]string{"OSMOPS_DEMO_REGION_NBI_PORT": "10997"}[key]
	})
	if err != nil || port != 10997 {
		t.Errorf("region's port = %d, %v; want 10997", port, err)
	}
	err = explainPortTaken(&devstack.PortTakenError{Port: 9998, Part: devstack.SimulatorPart("canary")})
	want := "port 9998 (NBI simulator canary) is taken: set OSMOPS_DEMO_CANARY_NBI_PORT or stop what uses it"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestExplainPortTaken(t *testing.T) {
	err := explainPortTaken(&devstack.PortTakenError{Port: 9999, Part: devstack.PartSimulator})
	want := "port 9999 (NBI simulator) is taken: set OSMOPS_DEMO_NBI_PORT or stop what uses it"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	other := errors.New("something else")
	if got := explainPortTaken(other); got != other {
		t.Errorf("explainPortTaken changed an unrelated error: %v", got)
	}
}
