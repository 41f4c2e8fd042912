package bench

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
)

// nbiEndpoint is the NBI a scenario runs against, with its counters, request log and state: a
// simulator process, or OSM's own NBI behind a recording proxy (RealOSM).
type nbiEndpoint interface {
	URL() string
	Stats(ctx context.Context) (nbisim.Stats, error)
	ResetStats(ctx context.Context) error
	RequestLog(ctx context.Context) ([]nbisim.RequestRecord, error)
	State(ctx context.Context) (nbisim.State, error)
	Stop() error
}

// RealOSM is OSM's own NBI and LCM (../shared/real-osm) standing in for the simulator: the
// operator reaches it through a RecordingProxy on loopback, which counts and logs what it sends
// as the simulator does; the state is read from the NBI itself (the NS instances and their
// operations, whose startTime and statusEnteredTime say when OSM accepted and ended each), with
// a session of its own that the proxy does not count.
type RealOSM struct {
	proxy    *nbisim.RecordingProxy
	server   *http.Server
	listener net.Listener
	nbi      *osm.Client
}

// StartRealOSM starts the recording proxy in front of the NBI at nbiURL (http://host:port) and
// checks that credentials log in there.
func StartRealOSM(ctx context.Context, nbiURL string, credentials osm.Credentials) (*RealOSM, error) {
	upstream, err := url.Parse(nbiURL)
	if err != nil {
		return nil, err
	}
	nbi, err := osm.NewClient(nbiURL, credentials)
	if err != nil {
		return nil, err
	}
	if _, err := nbi.GetProject(ctx); err != nil {
		return nil, err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &RealOSM{proxy: nbisim.NewRecordingProxy(upstream, closeRequestLog), listener: listener, nbi: nbi}
	r.server = &http.Server{Handler: r.proxy, ReadHeaderTimeout: time.Minute}
	go func() { _ = r.server.Serve(listener) }()
	return r, nil
}

// URL is the proxy's: what the OsmCluster is given.
func (r *RealOSM) URL() string { return "http://" + r.listener.Addr().String() }

// Stats returns the proxy's counters.
func (r *RealOSM) Stats(context.Context) (nbisim.Stats, error) { return r.proxy.Stats(), nil }

// ResetStats zeroes the proxy's counters and log.
func (r *RealOSM) ResetStats(context.Context) error {
	r.proxy.ResetStats()
	return nil
}

// RequestLog returns the proxy's log.
func (r *RealOSM) RequestLog(context.Context) ([]nbisim.RequestRecord, error) {
	return r.proxy.RequestLog(), nil
}

// State reads the NS instances OSM holds and their operations, as the simulator's state
// summarises them: what the closeness and the upgraded instances are measured on.
func (r *RealOSM) State(ctx context.Context) (nbisim.State, error) {
	instances, err := r.nbi.ListNSInstances(ctx)
	if err != nil {
		return nbisim.State{}, err
	}
	ids := make([]string, len(instances))
	for i, ns := range instances {
		ids[i] = ns.ID
	}
	operations, err := r.nbi.ListNSOperations(ctx, ids...)
	if err != nil {
		return nbisim.State{}, err
	}
	return realState(instances, operations), nil
}

// realState is State of OSM's records: each operation accepted at its startTime and ended at
// its statusEnteredTime once done.
func realState(instances []osm.NSInstance, operations []osm.Operation) nbisim.State {
	byInstance := map[string][]nbisim.OperationState{}
	for _, op := range operations {
		state := nbisim.OperationState{ID: op.ID, Type: op.LCMOperationType, State: op.OperationState, Accepted: op.StartedAt()}
		state.Primitive, _ = op.OperationParams["primitive"].(string)
		if op.Done() {
			ended := op.StatusEnteredAt()
			state.Ended = &ended
		}
		byInstance[op.NSInstanceID] = append(byInstance[op.NSInstanceID], state)
	}
	var state nbisim.State
	for _, ns := range instances {
		state.NSInstances = append(state.NSInstances, nbisim.NSInstanceState{ID: ns.ID, Name: ns.Name, NSState: ns.NSState,
			Operations: byInstance[ns.ID]})
	}
	return state
}

// Stop closes the proxy.
func (r *RealOSM) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.server.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
