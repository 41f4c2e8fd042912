package nbisim

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Fault makes matching NBI requests slow, fail or lose their connection.
// Several faults can be active; a request gets the latency of all that
// trigger, the status of the first that has one, and is reset if any says so.
type Fault struct {
	// Method limits the fault to one HTTP method; empty matches any.
	Method string
	// PathPrefix limits the fault to URL paths starting with it; empty matches any.
	PathPrefix string
	// Latency delays the answer.
	Latency time.Duration
	// Status answers with this error status (e.g. 500, 502, 503 or 429)
	// instead of serving the request.
	Status int
	// Reset closes the connection without an answer.
	Reset bool
	// Rate is the probability, in (0, 1], that a matching request triggers
	// the fault, drawn from the seeded random source; 0 means always.
	Rate float64
	// Count makes the fault apply to the next Count triggering requests
	// only; 0 keeps it until the faults are cleared.
	Count int
}

func (f Fault) validate() error {
	var problems []string
	if f.Latency < 0 {
		problems = append(problems, "latency must not be negative")
	}
	if f.Status != 0 && (f.Status < 400 || f.Status > 599) {
		problems = append(problems, fmt.Sprintf("status %d is not an error status (400-599)", f.Status))
	}
	if f.Rate < 0 || f.Rate > 1 {
		problems = append(problems, fmt.Sprintf("rate %v is not a probability (0-1)", f.Rate))
	}
	if f.Count < 0 {
		problems = append(problems, "count must not be negative")
	}
	if f.Latency == 0 && f.Status == 0 && !f.Reset {
		problems = append(problems, "a fault needs a latency, a status or reset")
	}
	if len(problems) > 0 {
		return errors.New("fault: " + strings.Join(problems, "; "))
	}
	return nil
}

func (f Fault) matches(method, path string) bool {
	return (f.Method == "" || strings.EqualFold(f.Method, method)) && strings.HasPrefix(path, f.PathPrefix)
}

// AddFault activates a fault.
func (s *Server) AddFault(f Fault) error {
	if err := f.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.add(f, f.Count)
	return nil
}

// Faults lists the active faults; Count is what remains of each count.
func (s *Server) Faults() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults.list(func(f Fault, remaining int) Fault {
		f.Count = remaining
		return f
	})
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.clear()
}

// triggered is what the faults do to one request.
type triggered struct {
	latency time.Duration
	status  int
	reset   bool
}

func (s *Server) triggerFaults(method, path string) triggered {
	s.mu.Lock()
	defer s.mu.Unlock()
	var effect triggered
	triggering := func(f Fault) bool {
		return f.matches(method, path) && (f.Rate == 0 || s.random.Float64() < f.Rate)
	}
	for _, f := range s.faults.take(triggering, false) {
		effect.latency += f.Latency
		if effect.status == 0 {
			effect.status = f.Status
		}
		effect.reset = effect.reset || f.Reset
	}
	return effect
}

// injectedError is the answer of a fault with a status, in the NBI's format.
func injectedError(status int) response {
	answer := errorf(status, "fault injected by the NBI simulator").response()
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		answer = answer.withHeader("Retry-After", "1")
	}
	return answer
}
