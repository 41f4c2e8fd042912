package devstack

import (
	"fmt"
	"net"
	"strconv"
)

// Names of the stack's parts, as errors and progress lines call them.
const (
	PartAPIServer       = "Kubernetes API server"
	PartGitServer       = "Git server"
	PartSimulator       = "NBI simulator"
	PartSourceStorage   = "source-controller artifact storage"
	PartSourceMetrics   = "source-controller metrics"
	PartSourceHealth    = "source-controller health probes"
	PartOperatorMetrics = "operator metrics"
	PartOperatorHealth  = "operator health probes"
)

// loopback is the only address the stack listens on: nothing of it is reachable from outside.
const loopback = "127.0.0.1"

// Ports are the loopback TCP ports of the stack's parts. A zero field means any free port, as
// the tests want; the demo sets fixed ones so that its URLs stay the same from one run to the
// next. etcd's ports are always picked by envtest.
type Ports struct {
	APIServer       int
	Git             int
	Simulator       int
	SourceStorage   int
	SourceMetrics   int
	SourceHealth    int
	OperatorMetrics int
	OperatorHealth  int
}

// PortField is one field of Ports with the part that uses it.
type PortField struct {
	Part string
	Port *int
}

// Fields lists every port with its part, in a fixed order, so that callers (the demo's
// environment variables, the checks below) handle them all alike.
func (p *Ports) Fields() []PortField {
	return []PortField{
		{PartAPIServer, &p.APIServer},
		{PartGitServer, &p.Git},
		{PartSimulator, &p.Simulator},
		{PartSourceStorage, &p.SourceStorage},
		{PartSourceMetrics, &p.SourceMetrics},
		{PartSourceHealth, &p.SourceHealth},
		{PartOperatorMetrics, &p.OperatorMetrics},
		{PartOperatorHealth, &p.OperatorHealth},
	}
}

// PortTakenError says that a fixed port of a part is already in use.
type PortTakenError struct {
	Port int
	Part string
}

// Error says which port of which part is taken.
func (e *PortTakenError) Error() string {
	return fmt.Sprintf("port %d (%s) is taken: stop what uses it or choose another port", e.Port, e.Part)
}

// Resolve checks that every fixed port is free and picks a free port for each zero one. All
// ports are held open until every one is known, so that no two parts get the same port.
func (p Ports) Resolve() (Ports, error) {
	resolved := p
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for _, field := range resolved.Fields() {
		l, err := listen(*field.Port, field.Part)
		if err != nil {
			return Ports{}, err
		}
		listeners = append(listeners, l)
		*field.Port = l.Addr().(*net.TCPAddr).Port
	}
	return resolved, nil
}

// listen listens on the loopback port of part, or on a free one when port is 0.
func listen(port int, part string) (net.Listener, error) {
	l, err := net.Listen("tcp", hostPort(port))
	switch {
	case err != nil && port != 0:
		return nil, &PortTakenError{Port: port, Part: part}
	case err != nil:
		return nil, fmt.Errorf("no free port for the %s: %w", part, err)
	}
	return l, nil
}

// freePort returns a loopback port that was free a moment ago, for a process to listen on.
func freePort(part string) (int, error) {
	l, err := listen(0, part)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// hostPort is the loopback address of port.
func hostPort(port int) string {
	return net.JoinHostPort(loopback, strconv.Itoa(port))
}
