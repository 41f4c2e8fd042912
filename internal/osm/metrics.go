package osm

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The metrics of every Client, labelled by cluster (WithMetricsLabel), HTTP
// method, route template (never a raw id) and, for requests and durations,
// status code ("error" when no answer came).
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "osmops_nbi_requests_total",
		Help: "Requests sent to OSM NBIs.",
	}, []string{"cluster", "method", "route", "code"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "osmops_nbi_request_duration_seconds",
		Help:    "Time from sending a request to an OSM NBI to having read its answer.",
		Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"cluster", "method", "route", "code"})
	requestBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "osmops_nbi_request_bytes_total",
		Help: "Bytes of request bodies sent to OSM NBIs.",
	}, []string{"cluster", "method", "route"})
	responseBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "osmops_nbi_response_bytes_total",
		Help: "Bytes of answer bodies received from OSM NBIs.",
	}, []string{"cluster", "method", "route"})
)

func init() {
	metrics.Registry.MustRegister(requestsTotal, requestDuration, requestBytes, responseBytes)
}

// clientMetrics are the metrics of one Client.
type clientMetrics struct {
	cluster string
}

// observe records one request; status 0 means no answer came.
func (m clientMetrics) observe(req request, status, sent, received int, duration time.Duration) {
	code := "error"
	if status != 0 {
		code = strconv.Itoa(status)
	}
	requestsTotal.WithLabelValues(m.cluster, req.method, req.route, code).Inc()
	requestDuration.WithLabelValues(m.cluster, req.method, req.route, code).Observe(duration.Seconds())
	requestBytes.WithLabelValues(m.cluster, req.method, req.route).Add(float64(sent))
	responseBytes.WithLabelValues(m.cluster, req.method, req.route).Add(float64(received))
}
