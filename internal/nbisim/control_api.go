package nbisim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// controlPrefix starts the URLs of the control API, which needs no token.
const controlPrefix = "/sim/v1/"

// The control API's JSON forms of Fault and Settings write durations as
// Go duration strings ("250ms").

type faultJSON struct {
	Method     string  `json:"method,omitempty"`
	PathPrefix string  `json:"pathPrefix,omitempty"`
	Latency    string  `json:"latency,omitempty"`
	Status     int     `json:"status,omitempty"`
	Reset      bool    `json:"reset,omitempty"`
	Rate       float64 `json:"rate,omitempty"`
	Count      int     `json:"count,omitempty"`
}

type settingsJSON struct {
	OperationDelay string `json:"operationDelay,omitempty"`
	TokenLifetime  string `json:"tokenLifetime,omitempty"`
	OperationsHeld bool   `json:"operationsHeld"`
}

// MarshalJSON writes the fault in the control API's form, the latency as a Go duration.
func (f Fault) MarshalJSON() ([]byte, error) {
	out := faultJSON{Method: f.Method, PathPrefix: f.PathPrefix, Status: f.Status, Reset: f.Reset, Rate: f.Rate, Count: f.Count}
	if f.Latency > 0 {
		out.Latency = f.Latency.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the control API's form of a fault, refusing unknown fields as the rest
// of the control API does.
func (f *Fault) UnmarshalJSON(data []byte) error {
	var in faultJSON
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&in); err != nil {
		return err
	}
	*f = Fault{Method: in.Method, PathPrefix: in.PathPrefix, Status: in.Status, Reset: in.Reset, Rate: in.Rate, Count: in.Count}
	if in.Latency != "" {
		latency, err := time.ParseDuration(in.Latency)
		if err != nil {
			return fmt.Errorf("fault: latency: %w", err)
		}
		f.Latency = latency
	}
	return nil
}

func (s *Server) controlHandler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h func(*http.Request) (int, any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			status, body, err := h(r)
			if err != nil {
				status, body = http.StatusBadRequest, map[string]string{"error": err.Error()}
			}
			writeControlAnswer(w, status, body)
		})
	}
	noBody := func(action func()) func(*http.Request) (int, any, error) {
		return func(*http.Request) (int, any, error) {
			action()
			return http.StatusNoContent, nil, nil
		}
	}
	ok := func(read func() any) func(*http.Request) (int, any, error) {
		return func(*http.Request) (int, any, error) { return http.StatusOK, read(), nil }
	}

	handle("GET /sim/v1/stats", ok(func() any { return s.Stats() }))
	handle("DELETE /sim/v1/stats", noBody(s.ResetStats))
	handle("GET /sim/v1/requests", ok(func() any { return s.RequestLog() }))
	handle("GET /sim/v1/state", ok(func() any { return s.State() }))
	handle("DELETE /sim/v1/state", noBody(s.Reset))

	handle("GET /sim/v1/faults", ok(func() any {
		return append([]Fault{}, s.Faults()...)
	}))
	handle("POST /sim/v1/faults", func(r *http.Request) (int, any, error) {
		var f Fault
		if err := decodeControlBody(r, &f); err != nil {
			return 0, nil, err
		}
		return http.StatusCreated, f, s.AddFault(f)
	})
	handle("DELETE /sim/v1/faults", noBody(s.ClearFaults))

	handle("GET /sim/v1/operation-failures", ok(func() any { return s.OperationFailures() }))
	handle("POST /sim/v1/operation-failures", func(r *http.Request) (int, any, error) {
		var f OperationFailure
		if err := decodeControlBody(r, &f); err != nil {
			return 0, nil, err
		}
		return http.StatusCreated, f, s.FailOperations(f)
	})
	handle("DELETE /sim/v1/operation-failures", noBody(s.ClearOperationFailures))

	handle("POST /sim/v1/tokens/revoke", ok(func() any { return map[string]int{"revoked": s.RevokeTokens()} }))
	handle("POST /sim/v1/users/unlock", noBody(s.UnlockUser))
	handle("POST /sim/v1/operations/hold", noBody(s.HoldOperations))
	handle("POST /sim/v1/operations/release", noBody(s.ReleaseOperations))
	handle("POST /sim/v1/operations/complete", ok(func() any { return map[string]int{"completed": s.CompleteOperations()} }))

	handle("GET /sim/v1/settings", ok(func() any { return settingsToJSON(s.Settings()) }))
	handle("PATCH /sim/v1/settings", func(r *http.Request) (int, any, error) {
		var in settingsJSON
		if err := decodeControlBody(r, &in); err != nil {
			return 0, nil, err
		}
		if err := s.applySettings(in); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, settingsToJSON(s.Settings()), nil
	})
	return mux
}

func settingsToJSON(settings Settings) settingsJSON {
	return settingsJSON{
		OperationDelay: settings.OperationDelay.String(),
		TokenLifetime:  settings.TokenLifetime.String(),
		OperationsHeld: settings.OperationsHeld,
	}
}

// applySettings changes the settings a PATCH names; holding is changed
// through the operations endpoints.
func (s *Server) applySettings(in settingsJSON) error {
	var delay, lifetime time.Duration
	var err error
	if in.OperationDelay != "" {
		if delay, err = time.ParseDuration(in.OperationDelay); err != nil || delay < 0 {
			return fmt.Errorf("settings: operationDelay %q is not a duration of zero or more", in.OperationDelay)
		}
	}
	if in.TokenLifetime != "" {
		if lifetime, err = time.ParseDuration(in.TokenLifetime); err != nil || lifetime <= 0 {
			return fmt.Errorf("settings: tokenLifetime %q is not a positive duration", in.TokenLifetime)
		}
	}
	if in.OperationDelay != "" {
		s.SetOperationDelay(delay)
	}
	if in.TokenLifetime != "" {
		s.SetTokenLifetime(lifetime)
	}
	return nil
}

func decodeControlBody(r *http.Request, into any) error {
	decoder := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(into); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	return nil
}

func writeControlAnswer(w http.ResponseWriter, status int, body any) {
	if body == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", jsonContentType)
	w.WriteHeader(status)
	_, _ = w.Write(encodeJSON(body, ""))
}

// serveControl serves the control API and reports the request to
// Config.OnRequest; it is not counted in the NBI's stats.
func (s *Server) serveControl(w http.ResponseWriter, r *http.Request) {
	started := time.Now()
	recorder := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	s.control.ServeHTTP(recorder, r)
	if s.cfg.OnRequest != nil {
		s.cfg.OnRequest(RequestRecord{
			Time: s.now(), Method: r.Method, Path: loggedPath(r), Route: r.Pattern,
			Status: recorder.status, Duration: time.Since(started), BytesSent: recorder.sent,
		})
	}
}

// statusRecorder notes the status and size of a control answer for the log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	sent   int64
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	n, err := r.ResponseWriter.Write(b)
	r.sent += int64(n)
	return n, err
}
