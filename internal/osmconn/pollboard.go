package osmconn

// One poll request per OsmCluster per tick. The OsmDeployments whose operations OSM runs are
// requeued on their connection's tick grid (pollSchedule.onTick) and leave their pending
// operations on the connection as they do (expect). The first of them to check its operations
// at or after a tick asks OSM once for the operations of every OsmDeployment due by then; the
// others due at that tick take their part of that answer, waiting for it while it is in flight,
// including those the namespace's share of the workers puts back in the queue for a while. Each
// sees only the operations it asked for. A reconcile that checks before its tick, or without
// one (woken by a change, a deletion's polls), asks OSM anew, with those due.

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/osm"
)

const (
	// maxPollBatch bounds the operations that one request asks for on behalf of others: OSM's
	// ids are UUIDs, 37 bytes each in the NBI filter, so that a hundred are asked by id
	// (osm.memberFilter's 4000 bytes) rather than by listing every unfinished operation since
	// the oldest. Those of the caller are always asked, however many.
	maxPollBatch = 100
	// pollRequestTimeouts bounds a poll request, which no caller's context cancels, by this
	// many NBI request timeouts: a login, the request, and its retry with a renewed token.
	pollRequestTimeouts = 3
	// expectedFor is how long past its tick the board keeps what an OsmDeployment that did not
	// come (deleted, or put back in the queue) waits for, and the answer asked for it: longer
	// than the share's retry and the work queue's first back-offs.
	expectedFor = time.Minute
)

// operationPolls is the poll board of one connection. What it holds is bounded by the
// OsmDeployments of the OsmCluster and the operations in their status, and goes with the
// connection; no goroutine outlives the request it sends, which ends within its timeout.
type operationPolls struct {
	mu       sync.Mutex
	expected map[types.NamespacedName]*expectedPoll
}

// pollLimits bound a request of the board, which no caller's context bounds: its timeout, and
// the memory its answer may hold (osm.MemoryBudget, as each reconcile's: 0 for none).
type pollLimits struct {
	timeout      time.Duration
	answerMemory int64
}

// expectedPoll is an OsmDeployment that polls at tick: what to ask for it
// (engine.OperationsQuery), and the request that asked for it since.
type expectedPoll struct {
	tick     time.Time
	since    time.Time
	ids      []string
	servedBy *pollRequest
}

// pollRequest is one ListOperationsSince sent for the OsmDeployments of a connection.
type pollRequest struct {
	since time.Time
	asked map[string]bool
	done  chan struct{}
	// answer and err are set before done is closed.
	answer []osm.Operation
	err    error
}

// expect leaves the pending operations of the OsmDeployment key for the request of tick.
func (p *operationPolls) expect(key types.NamespacedName, pending []engine.OperationRecord, tick time.Time) {
	since, ids := engine.OperationsQuery(pending)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(ids) == 0 {
		delete(p.expected, key)
		return
	}
	if p.expected == nil {
		p.expected = map[types.NamespacedName]*expectedPoll{}
	}
	p.expected[key] = &expectedPoll{tick: tick, since: since, ids: ids}
}

// check returns what OSM reports of the pending operations of the OsmDeployment key at now,
// as osm.Client.ListOperationsSince does: from the request that asked for them at or after the
// OsmDeployment's tick, else from a new one, sent within limits. A caller
// whose ctx ends stops waiting; the request goes on for the others. A request that fails
// fails for every caller of its tick; the work queue's retry, with no tick, asks again.
func (p *operationPolls) check(ctx context.Context, nbi engine.OSM, limits pollLimits, key types.NamespacedName,
	pending []engine.OperationRecord, now time.Time) ([]osm.Operation, error) {
	since, ids := engine.OperationsQuery(pending)
	if len(ids) == 0 {
		return nil, nil
	}
	req := p.join(nbi, limits, key, since, ids, now)
	select {
	case <-req.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if req.err != nil {
		return nil, req.err
	}
	return req.part(ids), nil
}

// join returns the request that answers the OsmDeployment key: the one that asked for it since
// its tick, or a new one, which asks for key's operations and for those of the OsmDeployments
// due by now that no request asked for yet.
func (p *operationPolls) join(nbi engine.OSM, limits pollLimits, key types.NamespacedName, since time.Time, ids []string,
	now time.Time) *pollRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.expected[key]; ok {
		delete(p.expected, key)
		if e.servedBy != nil && e.servedBy.asks(ids) {
			return e.servedBy
		}
	}
	r := &pollRequest{since: since, asked: make(map[string]bool, len(ids)), done: make(chan struct{})}
	for _, id := range ids {
		r.asked[id] = true
	}
	deployments := 1
	for other, e := range p.expected {
		switch {
		case now.Sub(e.tick) > expectedFor:
			delete(p.expected, other)
		case e.servedBy != nil || e.tick.After(now) || len(r.asked)+len(e.ids) > maxPollBatch:
		default:
			for _, id := range e.ids {
				r.asked[id] = true
			}
			r.since = minTime(r.since, e.since)
			e.servedBy = r
			deployments++
		}
	}
	pollBatchSize.Observe(float64(deployments))
	go r.send(nbi, limits)
	return r
}

// send asks OSM, with a context of its own: the callers that wait may give up one by one.
func (r *pollRequest) send(nbi engine.OSM, limits pollLimits) {
	defer close(r.done)
	ctx, cancel := context.WithTimeout(WithAnswerBudget(context.Background(), limits.answerMemory), limits.timeout)
	defer cancel()
	r.answer, r.err = nbi.ListOperationsSince(ctx, r.since, slices.Sorted(maps.Keys(r.asked))...)
}

// asks tells whether the request asked for every one of ids.
func (r *pollRequest) asks(ids []string) bool {
	for _, id := range ids {
		if !r.asked[id] {
			return false
		}
	}
	return true
}

// part is what the answer says of ids, and nothing of the other OsmDeployments' operations.
func (r *pollRequest) part(ids []string) []osm.Operation {
	wanted := make(map[string]bool, len(ids))
	for _, id := range ids {
		wanted[id] = true
	}
	var part []osm.Operation
	for _, op := range r.answer {
		if wanted[op.ID] {
			part = append(part, op)
		}
	}
	return part
}

// CheckOperations returns what OSM reports of the pending operations of the OsmDeployment key
// at now (operationPolls.check), an answer holding at most answerMemory (0: no bound).
func (c *Connection) CheckOperations(ctx context.Context, answerMemory int64, key types.NamespacedName,
	pending []engine.OperationRecord, now time.Time) ([]osm.Operation, error) {
	return c.polls.check(ctx, c.NBI, pollLimits{timeout: c.pollTimeout(), answerMemory: answerMemory}, key, pending, now)
}

// WithAnswerBudget gives a reconcile its budget of the memory OSM's list answers may hold
// (osm.MemoryBudget), so that what a manager holds is bounded by its workers times limit,
// whatever each tenant's OSM answers. No budget when limit is 0.
func WithAnswerBudget(ctx context.Context, limit int64) context.Context {
	if limit <= 0 {
		return ctx
	}
	return osm.WithMemoryBudget(ctx, osm.NewMemoryBudget(limit))
}

// pollBatchSize: a poll request asks for the operations of the OsmDeployments of one OsmCluster
// due at one tick; bounded by maxPollBatch operations.
var pollBatchSize = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "osmops_operation_poll_batch_size",
	Help:    "OsmDeployments whose pending OSM operations one poll request (GET ns_lcm_op_occs) asked for: those of one OsmCluster due at one tick.",
	Buckets: prometheus.ExponentialBuckets(1, 2, 8),
})

func init() { ctrlmetrics.Registry.MustRegister(pollBatchSize) }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
