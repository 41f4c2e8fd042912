package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/osmops/osmops/internal/testing/devstack"
)

// portSetting is a fixed port of the demo and the environment variable that overrides it.
type portSetting struct {
	env         string
	defaultPort int
}

// portSettings are the demo's ports by part. Fixed ports keep the URLs the demo prints the same
// from one run to the next; 9999 is the port of OSM's own NBI.
var portSettings = map[string]portSetting{
	devstack.PartAPIServer:       {"OSMOPS_DEMO_APISERVER_PORT", 16443},
	devstack.PartGitServer:       {"OSMOPS_DEMO_GIT_PORT", 18080},
	devstack.PartSimulator:       {"OSMOPS_DEMO_NBI_PORT", 9999},
	devstack.PartSourceStorage:   {"OSMOPS_DEMO_SOURCE_STORAGE_PORT", 19090},
	devstack.PartSourceMetrics:   {"OSMOPS_DEMO_SOURCE_METRICS_PORT", 19091},
	devstack.PartSourceHealth:    {"OSMOPS_DEMO_SOURCE_HEALTH_PORT", 19092},
	devstack.PartOperatorMetrics: {"OSMOPS_DEMO_OPERATOR_METRICS_PORT", 18082},
	devstack.PartOperatorHealth:  {"OSMOPS_DEMO_OPERATOR_HEALTH_PORT", 18081},
	// The simulators of the later sites (laterSites), beside OSM's port.
	devstack.SimulatorPart("canary"): {"OSMOPS_DEMO_CANARY_NBI_PORT", 9998},
	devstack.SimulatorPart("region"): {"OSMOPS_DEMO_REGION_NBI_PORT", 9997},
}

// demoPorts returns the demo's ports: the defaults, overridden by the environment variables
// that getenv returns.
func demoPorts(getenv func(string) string) (devstack.Ports, error) {
	var ports devstack.Ports
	for _, field := range ports.Fields() {
		port, err := demoPort(field.Part, getenv)
		if err != nil {
			return devstack.Ports{}, err
		}
		*field.Port = port
	}
	return ports, nil
}

// demoPort returns the port of part: its default, or its environment variable's value.
func demoPort(part string, getenv func(string) string) (int, error) {
	setting := portSettings[part]
	value := getenv(setting.env)
	if value == "" {
		return setting.defaultPort, nil
	}
	port, err := strconv.Atoi(value)
	if err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("%s=%q: want a port number from 1 to 65535", setting.env, value)
	}
	return port, nil
}

// explainPortTaken rewords the error of a taken port to name the variable that moves it.
func explainPortTaken(err error) error {
	var taken *devstack.PortTakenError
	if !errors.As(err, &taken) {
		return err
	}
	return fmt.Errorf("port %d (%s) is taken: set %s or stop what uses it", taken.Port, taken.Part, portSettings[taken.Part].env)
}
