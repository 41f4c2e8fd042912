package devstack

import (
	"net"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolvePicksDistinctFreePorts(t *testing.T) {
	ports, err := Ports{}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]string{}
	for _, field := range ports.Fields() {
		if *field.Port == 0 {
			t.Errorf("%s: no port picked", field.Part)
		}
		if other, taken := seen[*field.Port]; taken {
			t.Errorf("%s and %s both got port %d", field.Part, other, *field.Port)
		}
		seen[*field.Port] = field.Part
	}
}

func TestResolveKeepsFixedPorts(t *testing.T) {
	free, err := freePort(PartGitServer)
	if err != nil {
		t.Fatal(err)
	}
	ports, err := Ports{Git: free}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if ports.Git != free {
		t.Errorf("Git port = %d, want the fixed %d", ports.Git, free)
	}
}

func TestResolveNamesTheTakenPortAndItsPart(t *testing.T) {
	busy, err := net.Listen("tcp", hostPort(0))
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port

	_, err = Ports{Simulator: port}.Resolve()
	taken, ok := err.(*PortTakenError)
	if !ok {
		t.Fatalf("Resolve() error = %v, want a *PortTakenError", err)
	}
	if diff := cmp.Diff(&PortTakenError{Port: port, Part: PartSimulator}, taken); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	want := "port " + strconv.Itoa(port) + " (NBI simulator) is taken: stop what uses it or choose another port"
	if err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
}

func TestStartSimulatorAtNamesTheTakenPortAndItsSite(t *testing.T) {
	busy, err := net.Listen("tcp", hostPort(0))
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port

	// The port is checked before anything starts, so a stack of nothing will do.
	_, err = (&Stack{}).StartSimulatorAt(boundedContext(t), "canary", port)
	taken, ok := err.(*PortTakenError)
	if !ok {
		t.Fatalf("StartSimulatorAt() error = %v, want a *PortTakenError", err)
	}
	if diff := cmp.Diff(&PortTakenError{Port: port, Part: "NBI simulator canary"}, taken); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}
