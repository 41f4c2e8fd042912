package devstack

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/osmops/osmops/internal/nbisim"
)

// This file is the harness's one way to run the NBI simulator as a process (cmd/osm-nbi-sim),
// in a stack or on its own (the bench), and the stack's only contact with its control API
// (/sim/v1): the few typed calls the demo and the end-to-end tests need. Their types are their
// own, decoded from the JSON the simulator serves, so that the end-to-end tests check the wire
// format rather than share the server's Go types; the HTTP call is nbisim's ControlClient.

// Simulator is an NBI simulator process (cmd/osm-nbi-sim) and a client of its control API.
type Simulator struct {
	*Process
	url    string
	client *http.Client
}

// SimulatorOptions configure a simulator started on its own, outside a Stack.
type SimulatorOptions struct {
	// Binary is the path of cmd/osm-nbi-sim.
	Binary string
	// WorkDir holds the simulator's log and pid file.
	WorkDir string
	// Args are its flags other than --listen.
	Args []string
	// Log receives a line when it starts and stops; nil discards them.
	Log io.Writer
}

// StartSimulator starts a simulator on its own on a free loopback port and waits until it
// serves; Stop stops it.
func StartSimulator(ctx context.Context, o SimulatorOptions) (*Simulator, error) {
	home, err := newProcessHome(o.WorkDir, o.Log)
	if err != nil {
		return nil, err
	}
	port, err := freePort(PartSimulator)
	if err != nil {
		return nil, err
	}
	sim := home.newSimulator(SimulatorName, o.Binary, port, o.Args)
	if err := sim.start(ctx); err != nil {
		// A simulator that never became ready may still run.
		return nil, errors.Join(err, sim.Stop())
	}
	return sim, nil
}

// newSimulator is a simulator named name (which names its log) on port, not yet started.
func (h processHome) newSimulator(name, binary string, port int, args []string) *Simulator {
	url := "http://" + hostPort(port)
	return &Simulator{
		Process: h.newProcess(name, binary, append([]string{"--listen=" + hostPort(port)}, args...), nil, url+"/osm/version"),
		url:     url,
		client:  &http.Client{Timeout: 30 * time.Second},
	}
}

// URL returns the simulator's base URL, for an OsmCluster's spec.url (the NBI is under /osm).
func (s *Simulator) URL() string { return s.url }

// SimStats are the simulator's request counters since it started or its stats were reset.
type SimStats struct {
	Requests         int64              `json:"requests"`
	MutatingRequests int64              `json:"mutatingRequests"`
	ReadRequests     int64              `json:"readRequests"`
	BytesReceived    int64              `json:"bytesReceived"`
	BytesSent        int64              `json:"bytesSent"`
	Endpoints        []SimEndpointStats `json:"endpoints"`
}

// SimEndpointStats count the requests of one route template, method and status.
type SimEndpointStats struct {
	Route    string `json:"route"`
	Method   string `json:"method"`
	Status   int    `json:"status"`
	Requests int64  `json:"requests"`
}

// SimRequest is one entry of the simulator's request log.
type SimRequest struct {
	Time     time.Time     `json:"time"`
	Method   string        `json:"method"`
	Path     string        `json:"path"`
	Route    string        `json:"route"`
	Status   int           `json:"status"`
	Duration time.Duration `json:"durationNs"`
}

// SimState is the simulator's state dump: what OSM holds.
type SimState struct {
	NSInstances []SimNSInstance `json:"nsInstances"`
	Packages    []SimPackage    `json:"packages"`
}

// SimNSInstance is an NS instance in the state dump.
type SimNSInstance struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	NsdID      string         `json:"nsdId"`
	NsState    string         `json:"nsState"`
	KDUs       []SimKDU       `json:"kdus"`
	Operations []SimOperation `json:"operations"`
}

// SimOperation is an LCM operation of an NS instance in the state dump.
type SimOperation struct {
	ID string `json:"id"`
	// Type is instantiate, action, scale, update or terminate.
	Type string `json:"type"`
	// Primitive is an action's primitive, e.g. upgrade.
	Primitive string `json:"primitive"`
	// State is PROCESSING, COMPLETED, FAILED...
	State string `json:"state"`
	// ErrorMessage is OSM's message of a failed operation.
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// SimKDU is a KDU of an NS instance in the state dump, with the Helm values it runs with.
type SimKDU struct {
	MemberVnfIndex string `json:"memberVnfIndex"`
	Name           string `json:"name"`
	// Model is the chart the KDU's Helm release runs.
	Model  string         `json:"model"`
	Params map[string]any `json:"params"`
}

// SimPackage is a VNF or NS package in the state dump.
type SimPackage struct {
	ID           string `json:"id"`
	Kind         string `json:"kind"`
	DescriptorID string `json:"descriptorId"`
	Revision     int    `json:"revision"`
}

// SimFault is a fault the simulator injects into the NBI requests it matches: latency, an
// error status or a dropped connection.
type SimFault struct {
	// Method and PathPrefix select the requests; empty matches all.
	Method     string `json:"method,omitempty"`
	PathPrefix string `json:"pathPrefix,omitempty"`
	// Latency delays the answer, as a Go duration ("250ms").
	Latency string `json:"latency,omitempty"`
	// Status answers with this error status instead (500, 502, 503, 429...).
	Status int `json:"status,omitempty"`
	// Reset drops the connection without an answer.
	Reset bool `json:"reset,omitempty"`
	// Rate is the share of matching requests hit, from 0 to 1; 0 means all.
	Rate float64 `json:"rate,omitempty"`
	// Count limits the fault to the next Count matching requests; 0 means no limit.
	Count int `json:"count,omitempty"`
}

// SimOperationFailure makes the LCM operations it matches end FAILED instead of completing,
// as OSM does when a deployment goes wrong.
type SimOperationFailure struct {
	// Operation is an operation type (instantiate, terminate, action...) or an action's
	// primitive (upgrade...); empty matches all.
	Operation string `json:"operation,omitempty"`
	// NSName limits the failure to the NS instances of that name; empty matches all.
	NSName string `json:"nsName,omitempty"`
	// State is the final state, FAILED (the default) or FAILED_TEMP.
	State string `json:"state,omitempty"`
	// Message is OSM's error message of the failed operation; the simulator has a default.
	Message string `json:"message,omitempty"`
	// Count limits the failure to the next Count matching operations; 0 means no limit.
	Count int `json:"count,omitempty"`
}

// Version returns the version the NBI reports at /osm/version.
func (s *Simulator) Version(ctx context.Context) (string, error) {
	var answer struct {
		Version string `json:"version"`
	}
	err := s.Call(ctx, http.MethodGet, "/osm/version", nil, &answer)
	return answer.Version, err
}

// Stats returns the request counters.
func (s *Simulator) Stats(ctx context.Context) (SimStats, error) {
	var stats SimStats
	err := s.Call(ctx, http.MethodGet, "/sim/v1/stats", nil, &stats)
	return stats, err
}

// ResetStats zeroes the request counters and empties the request log.
func (s *Simulator) ResetStats(ctx context.Context) error {
	return s.Call(ctx, http.MethodDelete, "/sim/v1/stats", nil, nil)
}

// RequestLog returns the last requests the simulator served, oldest first.
func (s *Simulator) RequestLog(ctx context.Context) ([]SimRequest, error) {
	var requests []SimRequest
	err := s.Call(ctx, http.MethodGet, "/sim/v1/requests", nil, &requests)
	return requests, err
}

// State returns the state dump.
func (s *Simulator) State(ctx context.Context) (SimState, error) {
	var state SimState
	err := s.Call(ctx, http.MethodGet, "/sim/v1/state", nil, &state)
	return state, err
}

// AddFault makes the simulator inject fault.
func (s *Simulator) AddFault(ctx context.Context, fault SimFault) error {
	return s.Call(ctx, http.MethodPost, "/sim/v1/faults", fault, nil)
}

// ClearFaults removes every fault.
func (s *Simulator) ClearFaults(ctx context.Context) error {
	return s.Call(ctx, http.MethodDelete, "/sim/v1/faults", nil, nil)
}

// FailOperations makes the operations that failure matches, from the next one created on, fail.
func (s *Simulator) FailOperations(ctx context.Context, failure SimOperationFailure) error {
	return s.Call(ctx, http.MethodPost, "/sim/v1/operation-failures", failure, nil)
}

// Call sends a control API request, in as JSON (nil: no body), and decodes the JSON answer
// into out (nil: ignore it). It serves those who read answers into types of their own: the
// bench reads the counters into nbisim's, which its report is made of.
func (s *Simulator) Call(ctx context.Context, method, path string, in, out any) error {
	return nbisim.ControlClient{URL: s.url, HTTPClient: s.client}.Call(ctx, method, path, in, out)
}
