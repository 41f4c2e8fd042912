package nbisim

import (
	"bytes"
	"cmp"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/osmops/osmops/internal/nbisim/python"
)

// maxBodyBytes bounds a request body; CherryPy's own default limit is 100 MB.
const maxBodyBytes = 100 << 20

// Server is the simulated NBI, an http.Handler. Create it with New.
type Server struct {
	cfg Config
	// The project and user never change, not even on Reset, so that ids
	// seen in one test phase stay valid in the next.
	projectID, userID string
	projectCreated    time.Time
	control           http.Handler

	// roleIDs are the _ids of OSM's default roles, by name.
	roleIDs map[string]string

	mu     sync.Mutex
	db     *database
	tokens map[string]*token
	// account is the configured user (Config.Username), made again by Reset with the same _id.
	account        *userRecord
	operationDelay time.Duration
	pickupDelay    time.Duration
	// pickupInterval is Config.PickupInterval; lastPickup when LCM last took an operation up.
	pickupInterval time.Duration
	lastPickup     time.Time
	// autoremoveDelay is Config.AutoremoveDelay.
	autoremoveDelay time.Duration
	queuePoll       time.Duration
	queueTimeout    time.Duration
	tokenLifetime   time.Duration
	held            bool
	pending         operationQueue
	operationSeq    uint64
	faults          countedRules[Fault]
	failures        countedRules[OperationFailure]
	random          *rand.Rand
	stats           *statsRecorder
}

// New returns a simulated NBI configured by cfg (see Config for defaults).
func New(cfg Config) *Server {
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:             cfg,
		projectID:       cmp.Or(cfg.ProjectID, uuid.NewString()),
		userID:          uuid.NewString(),
		roleIDs:         map[string]string{},
		projectCreated:  cfg.Clock(),
		operationDelay:  cfg.OperationDelay,
		pickupDelay:     max(cfg.PickupDelay, 0),
		pickupInterval:  max(cfg.PickupInterval, 0),
		autoremoveDelay: max(cfg.AutoremoveDelay, 0),
		queuePoll:       cfg.QueuePollInterval,
		queueTimeout:    cfg.QueueTimeout,
		tokenLifetime:   cfg.TokenLifetime,
		random:          rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed)),
		stats:           newStatsRecorder(cfg.RequestLogSize),
	}
	for _, role := range defaultRoles {
		s.roleIDs[role] = uuid.NewString()
	}
	s.control = s.controlHandler()
	s.resetLocked()
	return s
}

func (s *Server) now() time.Time { return s.cfg.Clock() }

// call is one NBI request as the handlers see it.
type call struct {
	request *http.Request
	params  []string
	body    []byte
	now     time.Time
	token   *token
}

func (c *call) param(i int) string { return c.params[i] } //nolint:unparam // routes hold one parameter today; the index keeps the router general

// jsonBody parses the request body as the NBI does for JSON: an empty body
// is an empty object, a malformed one a 400.
func (c *call) jsonBody() (any, *nbiError) {
	if len(bytes.TrimSpace(c.body)) == 0 {
		return &python.Dict{}, nil
	}
	value, err := python.ParseJSON(c.body)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "Invalid json format %v", err)
	}
	return value, nil
}

// jsonObject is jsonBody for the bodies that must be objects; another
// value fails the schema's type check.
func (c *call) jsonObject() (*python.Dict, *nbiError) {
	value, err := c.jsonBody()
	if err != nil {
		return nil, err
	}
	if problem := objectSchema.validate(value); problem != nil {
		return nil, errorf(http.StatusUnprocessableEntity, "%s", problem.formatError())
	}
	return value.(*python.Dict), nil
}

// ServeHTTP serves the NBI under /osm and the control API under /sim/v1.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, controlPrefix) {
		s.serveControl(w, r)
		return
	}
	started := time.Now()
	body, readErr := readBody(r)
	spec, params, routeErr := routeOf(r)
	record := RequestRecord{
		Time:          s.now(),
		Method:        r.Method,
		Path:          loggedPath(r),
		Route:         UnmatchedRoute,
		BytesReceived: int64(len(body)),
	}
	if spec != nil {
		record.Route = spec.Path
	}

	fault := s.triggerFaults(r.Method, r.URL.Path)
	if fault.latency > 0 {
		s.cfg.Sleep(r.Context(), fault.latency)
	}
	if fault.reset {
		record.Duration = time.Since(started)
		s.finish(record)
		resetConnection(w)
		return
	}

	var answer response
	switch {
	case fault.status != 0:
		answer = injectedError(fault.status)
	case readErr != nil:
		answer = readErr.response()
	case routeErr != nil:
		answer = routeErr.response()
	default:
		answer = s.handle(spec, &call{request: r, params: params, body: body, now: record.Time})
	}
	record.Status = answer.status
	record.BytesSent = writeResponse(w, answer)
	record.Duration = time.Since(started)
	s.finish(record)
}

// handle runs a route's handler under the lock, after moving due
// operations forward and checking the token.
func (s *Server) handle(spec *routeSpec, c *call) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(c.now)
	if !spec.public {
		t, err := s.authorize(c.request, c.now)
		if err != nil {
			return err.response()
		}
		c.token = t
	}
	answer, err := spec.handle(s, c)
	if err != nil {
		return err.response()
	}
	return answer
}

func (s *Server) finish(record RequestRecord) {
	s.stats.record(record)
	if s.cfg.OnRequest != nil {
		s.cfg.OnRequest(record)
	}
}

// readBody reads the whole body, whatever the route, so that the bytes a
// client sent are counted even when the request is refused.
func readBody(r *http.Request) ([]byte, *nbiError) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	switch {
	case err != nil:
		return body, errorf(http.StatusBadRequest, "invalid upload transaction sequence: '%v'", err)
	case len(body) > maxBodyBytes:
		return body, errorf(http.StatusRequestEntityTooLarge, "The entity sent with the request exceeds the maximum allowed bytes.")
	}
	return body, nil
}

// tokenPathPrefix starts the one URL that holds a token (logging out by id).
const tokenPathPrefix = "/osm/admin/v1/tokens/"

// loggedPath is the request's path and query for the logs, with a token in
// the path replaced by the parameter name: a token must never be logged.
func loggedPath(r *http.Request) string {
	if strings.HasPrefix(r.URL.Path, tokenPathPrefix) {
		return tokenPathPrefix + "{tokenId}"
	}
	if strings.TrimSuffix(r.URL.Path, "/") == strings.TrimSuffix(tokenPathPrefix, "/") && r.URL.Query().Has("_id") {
		// ?_id= names the token as the path would (see routeOf).
		query := r.URL.Query()
		query.Del("_id")
		logged := r.URL.Path + "?_id={tokenId}"
		if rest := query.Encode(); rest != "" {
			logged += "&" + rest
		}
		return logged
	}
	if r.URL.RawQuery != "" {
		return r.URL.Path + "?" + r.URL.RawQuery
	}
	return r.URL.Path
}

// writeResponse sends answer and returns the number of body bytes sent.
func writeResponse(w http.ResponseWriter, answer response) int64 {
	maps.Copy(w.Header(), answer.header)
	if answer.contentType != "" {
		w.Header().Set("Content-Type", answer.contentType)
	}
	w.WriteHeader(answer.status)
	var sent int64
	for _, part := range answer.body {
		n, err := w.Write(part)
		sent += int64(n)
		if err != nil {
			break
		}
	}
	return sent
}

// resetConnection drops the connection without an answer, as a crashed
// proxy or NBI would.
func resetConnection(w http.ResponseWriter) {
	if hijacker, ok := w.(http.Hijacker); ok {
		if conn, _, err := hijacker.Hijack(); err == nil {
			if tcp, isTCP := conn.(*net.TCPConn); isTCP {
				_ = tcp.SetLinger(0) // a reset (RST) rather than an orderly close
			}
			_ = conn.Close()
			return
		}
	}
	// HTTP/2 and recorders cannot be hijacked; this makes net/http abort
	// the stream or connection without logging.
	panic(http.ErrAbortHandler)
}
