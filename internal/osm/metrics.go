package osm

import (
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the NBI clients' metrics, labelled by cluster (WithMetrics), HTTP method, route
// template (never a raw id) and, for requests and durations, status code (statusLabel: a fixed
// set, whatever an NBI answers). One Metrics serves every Client of a process.
type Metrics struct {
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	requestBytes  *prometheus.CounterVec
	responseBytes *prometheus.CounterVec
}

// NewMetrics makes the NBI clients' metrics and registers them with registerer; it panics if
// they are registered there already.
func NewMetrics(registerer prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "osmops_nbi_requests_total",
			Help: "Requests sent to OSM NBIs.",
		}, []string{"cluster", "method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "osmops_nbi_request_duration_seconds",
			Help:    "Time from sending a request to an OSM NBI to having read its answer.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"cluster", "method", "route", "code"}),
		requestBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "osmops_nbi_request_bytes_total",
			Help: "Bytes of request bodies sent to OSM NBIs.",
		}, []string{"cluster", "method", "route"}),
		responseBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "osmops_nbi_response_bytes_total",
			Help: "Bytes of answer bodies received from OSM NBIs.",
		}, []string{"cluster", "method", "route"}),
	}
	registerer.MustRegister(m.requests, m.duration, m.requestBytes, m.responseBytes)
	return m
}

// WithMetrics makes the Client record its requests in m, with cluster as the value of the
// `cluster` label, to tell OSM clusters apart. Without it the Client records nothing.
func WithMetrics(m *Metrics, cluster string) Option {
	return func(s *settings) error {
		s.metrics = clientMetrics{Metrics: m, cluster: cluster}
		return nil
	}
}

// clientMetrics are the metrics of one Client; a nil Metrics records nothing.
type clientMetrics struct {
	*Metrics
	cluster string
}

// observe records one request; status 0 means no answer came.
func (m clientMetrics) observe(req request, status, sent, received int, duration time.Duration) {
	if m.Metrics == nil {
		return
	}
	code := statusLabel(status)
	m.requests.WithLabelValues(m.cluster, req.method, req.route, code).Inc()
	m.duration.WithLabelValues(m.cluster, req.method, req.route, code).Observe(duration.Seconds())
	m.requestBytes.WithLabelValues(m.cluster, req.method, req.route).Add(float64(sent))
	m.responseBytes.WithLabelValues(m.cluster, req.method, req.route).Add(float64(received))
}

// knownStatuses are the status codes OSM's NBI answers with (osm_nbi's HTTPStatus uses, and
// the web server's own 413 and 429 apart from them): each is a label value of its own.
var knownStatuses = []int{200, 201, 202, 204, 400, 401, 403, 404, 405, 406, 409, 413, 415, 416, 422, 429, 500, 501, 502, 503, 504}

// statusLabel is the `code` label of an answer's status: the code itself when OSM's NBI uses
// it, its class ("1xx" to "5xx") otherwise, "other" outside 100-599, and "error" when no answer
// came (status 0). An NBI answering with many codes makes no more series than these.
func statusLabel(status int) string {
	switch {
	case status == 0:
		return "error"
	case slices.Contains(knownStatuses, status):
		return strconv.Itoa(status)
	case status >= 100 && status < 600:
		return strconv.Itoa(status/100) + "xx"
	default:
		return "other"
	}
}
