package nbisim

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// UnmatchedRoute is the route of a request that matched no route.
const UnmatchedRoute = "(unmatched)"

// RequestRecord is one NBI request as the request log keeps it.
type RequestRecord struct {
	// Time is when the request arrived, by the configured clock.
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	// Path is the URL path and query; the path that holds a token shows
	// {tokenId} instead.
	Path string `json:"path"`
	// Route is the matched route's template, or UnmatchedRoute.
	Route string `json:"route"`
	// Status is the answer's status; 0 when the connection was reset.
	Status int `json:"status"`
	// Duration is the wall-clock time the request took, injected latency included.
	Duration      time.Duration `json:"durationNs"`
	BytesReceived int64         `json:"bytesReceived"`
	BytesSent     int64         `json:"bytesSent"`
}

// Stats counts NBI requests (the control API is not counted) since the
// server started or stats were last reset. Byte counts are those of the
// bodies as sent on the wire.
type Stats struct {
	Requests int64 `json:"requests"`
	// MutatingRequests are the POST, PUT, PATCH and DELETE requests that may change OSM's
	// state; SessionRequests the token requests (log in, log out), which change none;
	// ReadRequests the others.
	MutatingRequests int64 `json:"mutatingRequests"`
	SessionRequests  int64 `json:"sessionRequests"`
	ReadRequests     int64 `json:"readRequests"`
	BytesReceived    int64 `json:"bytesReceived"`
	BytesSent        int64 `json:"bytesSent"`
	// Endpoints splits the counts by route, method and status, sorted.
	Endpoints []EndpointStats `json:"endpoints"`
}

// EndpointStats counts the requests of one route, method and status.
type EndpointStats struct {
	Route         string `json:"route"`
	Method        string `json:"method"`
	Status        int    `json:"status"`
	Requests      int64  `json:"requests"`
	BytesReceived int64  `json:"bytesReceived"`
	BytesSent     int64  `json:"bytesSent"`
}

type endpointKey struct {
	route, method string
	status        int
}

// statsRecorder holds the counters and the bounded request log, under a lock of its own: the
// simulator and the recording proxy count alike.
type statsRecorder struct {
	mu        sync.Mutex
	totals    Stats
	endpoints map[endpointKey]*EndpointStats
	log       []RequestRecord
	// next is where the next record goes once the log is full.
	next    int
	logSize int
}

func newStatsRecorder(logSize int) *statsRecorder {
	return &statsRecorder{endpoints: map[endpointKey]*EndpointStats{}, logSize: logSize}
}

func (r *statsRecorder) record(record RequestRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.totals.Requests++
	switch {
	case strings.HasPrefix(record.Route, tokensRoute):
		r.totals.SessionRequests++
	case isMutating(record.Method):
		r.totals.MutatingRequests++
	default:
		r.totals.ReadRequests++
	}
	r.totals.BytesReceived += record.BytesReceived
	r.totals.BytesSent += record.BytesSent
	key := endpointKey{record.Route, record.Method, record.Status}
	endpoint := r.endpoints[key]
	if endpoint == nil {
		endpoint = &EndpointStats{Route: record.Route, Method: record.Method, Status: record.Status}
		r.endpoints[key] = endpoint
	}
	endpoint.Requests++
	endpoint.BytesReceived += record.BytesReceived
	endpoint.BytesSent += record.BytesSent

	if len(r.log) < r.logSize {
		r.log = append(r.log, record)
		return
	}
	r.log[r.next] = record
	r.next = (r.next + 1) % r.logSize
}

// tokensRoute is the prefix of the session routes.
const tokensRoute = "/osm/admin/v1/tokens"

func isMutating(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

func (r *statsRecorder) snapshot() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	stats := r.totals
	stats.Endpoints = make([]EndpointStats, 0, len(r.endpoints))
	for _, endpoint := range r.endpoints {
		stats.Endpoints = append(stats.Endpoints, *endpoint)
	}
	slices.SortFunc(stats.Endpoints, func(a, b EndpointStats) int {
		return cmp.Or(cmp.Compare(a.Route, b.Route), cmp.Compare(a.Method, b.Method), cmp.Compare(a.Status, b.Status))
	})
	return stats
}

// requests returns the log, oldest first.
func (r *statsRecorder) requests() []RequestRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(slices.Clone(r.log[r.next:]), r.log[:r.next]...)
}

func (r *statsRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.totals, r.endpoints, r.log, r.next = Stats{}, map[endpointKey]*EndpointStats{}, nil, 0
}

// Stats returns the request counters.
func (s *Server) Stats() Stats {
	return s.stats.snapshot()
}

// RequestLog returns the last requests (at most Config.RequestLogSize), oldest first.
func (s *Server) RequestLog() []RequestRecord {
	return s.stats.requests()
}

// ResetStats zeroes the counters and empties the request log.
func (s *Server) ResetStats() {
	s.stats.reset()
}
