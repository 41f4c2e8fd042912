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
// (/sim/v1): the few typed calls the demo, the end-to-end tests and the bench need, in nbisim's
// own types, over nbisim's ControlClient.

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

// Version returns the version the NBI reports at /osm/version.
func (s *Simulator) Version(ctx context.Context) (string, error) {
	var answer struct {
		Version string `json:"version"`
	}
	err := s.call(ctx, http.MethodGet, "/osm/version", nil, &answer)
	return answer.Version, err
}

// Stats returns the request counters.
func (s *Simulator) Stats(ctx context.Context) (nbisim.Stats, error) {
	var stats nbisim.Stats
	err := s.call(ctx, http.MethodGet, "/sim/v1/stats", nil, &stats)
	return stats, err
}

// ResetStats zeroes the request counters and empties the request log.
func (s *Simulator) ResetStats(ctx context.Context) error {
	return s.call(ctx, http.MethodDelete, "/sim/v1/stats", nil, nil)
}

// RequestLog returns the last requests the simulator served, oldest first.
func (s *Simulator) RequestLog(ctx context.Context) ([]nbisim.RequestRecord, error) {
	var requests []nbisim.RequestRecord
	err := s.call(ctx, http.MethodGet, "/sim/v1/requests", nil, &requests)
	return requests, err
}

// State returns the state dump.
func (s *Simulator) State(ctx context.Context) (nbisim.State, error) {
	var state nbisim.State
	err := s.call(ctx, http.MethodGet, "/sim/v1/state", nil, &state)
	return state, err
}

// AddFault makes the simulator inject fault.
func (s *Simulator) AddFault(ctx context.Context, fault nbisim.Fault) error {
	return s.call(ctx, http.MethodPost, "/sim/v1/faults", fault, nil)
}

// ClearFaults removes every fault.
func (s *Simulator) ClearFaults(ctx context.Context) error {
	return s.call(ctx, http.MethodDelete, "/sim/v1/faults", nil, nil)
}

// FailOperations makes the operations that failure matches, from the next one created on, fail.
func (s *Simulator) FailOperations(ctx context.Context, failure nbisim.OperationFailure) error {
	return s.call(ctx, http.MethodPost, "/sim/v1/operation-failures", failure, nil)
}

// call sends a control API request, in as JSON (nil: no body), and decodes the JSON answer
// into out (nil: ignore it).
func (s *Simulator) call(ctx context.Context, method, path string, in, out any) error {
	return nbisim.ControlClient{URL: s.url, HTTPClient: s.client}.Call(ctx, method, path, in, out)
}
