package osm

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the NBI clients' metrics, labelled by cluster (WithMetrics), HTTP method, route
// template (never a raw id) and, for requests and durations, status code ("error" when no
// answer came). One Metrics serves every Client of a process.
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
	code := "error"
	if status != 0 {
		code = strconv.Itoa(status)
	}
	m.requests.WithLabelValues(m.cluster, req.method, req.route, code).Inc()
	m.duration.WithLabelValues(m.cluster, req.method, req.route, code).Observe(duration.Seconds())
	m.requestBytes.WithLabelValues(m.cluster, req.method, req.route).Add(float64(sent))
	m.responseBytes.WithLabelValues(m.cluster, req.method, req.route).Add(float64(received))
}
