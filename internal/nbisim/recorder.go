package nbisim

import (
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// RecordingProxy forwards every request to another NBI (OSM's own) and counts and logs them as
// the simulator counts and logs its own (Stats, RequestLog, routes by the simulator's route
// templates), so that what a client sends to a real OSM is measured like what it sends to the
// simulator (the benchmark's runs on ../shared/real-osm).
type RecordingProxy struct {
	proxy *httputil.ReverseProxy
	stats *statsRecorder
}

// NewRecordingProxy forwards to upstream (scheme and host; the request's path is kept) and keeps
// the last logSize requests.
func NewRecordingProxy(upstream *url.URL, logSize int) *RecordingProxy {
	target := &url.URL{Scheme: upstream.Scheme, Host: upstream.Host}
	return &RecordingProxy{proxy: httputil.NewSingleHostReverseProxy(target), stats: newStatsRecorder(logSize)}
}

// ServeHTTP forwards r and records it once the answer is written.
func (p *RecordingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	record := RequestRecord{Time: time.Now(), Method: r.Method, Path: loggedPath(r), Route: UnmatchedRoute}
	if spec, _, err := routeOf(r); err == nil && spec != nil {
		record.Route = spec.Path
	}
	body := &countingReader{ReadCloser: r.Body}
	if r.Body != nil {
		r.Body = body
	}
	answer := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	p.proxy.ServeHTTP(answer, r)
	record.Status, record.BytesSent, record.BytesReceived = answer.status, answer.sent, body.bytes
	record.Duration = time.Since(record.Time)
	p.stats.record(record)
}

// Stats returns the request counters.
func (p *RecordingProxy) Stats() Stats { return p.stats.snapshot() }

// RequestLog returns the last requests, oldest first.
func (p *RecordingProxy) RequestLog() []RequestRecord { return p.stats.requests() }

// ResetStats zeroes the counters and empties the request log.
func (p *RecordingProxy) ResetStats() { p.stats.reset() }

// countingReader counts the bytes of a request body as the proxy reads it.
type countingReader struct {
	io.ReadCloser
	bytes int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.ReadCloser.Read(b)
	c.bytes += int64(n)
	return n, err
}
