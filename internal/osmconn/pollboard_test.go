package osmconn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"

	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/osm"
)

// heldOSM answers each request for operations once the test releases it, with every operation
// asked for PROCESSING but those in completed (absent from the answer, as OSM lists them), and
// one not asked for, as an NBI asked by time rather than by id lists (osm.listMembers).
type heldOSM struct {
	engine.OSM
	completed map[string]bool
	err       error
	// started receives the ids of each request as it arrives; release lets one answer.
	started chan []string
	release chan struct{}
	mu      sync.Mutex
	sent    int
	// cancelled records whether a request's context had ended when it answered.
	cancelled []bool
}

func newHeldOSM() *heldOSM {
	return &heldOSM{started: make(chan []string, 16), release: make(chan struct{})}
}

func (o *heldOSM) ListOperationsSince(ctx context.Context, _ time.Time, ids ...string) ([]osm.Operation, error) {
	o.mu.Lock()
	o.sent++
	o.mu.Unlock()
	o.started <- ids
	<-o.release
	o.mu.Lock()
	o.cancelled = append(o.cancelled, ctx.Err() != nil)
	o.mu.Unlock()
	if o.err != nil {
		return nil, o.err
	}
	answer := []osm.Operation{{ID: "not-asked", OperationState: osm.OperationProcessing}}
	for _, id := range ids {
		if !o.completed[id] {
			answer = append(answer, osm.Operation{ID: id, OperationState: osm.OperationProcessing})
		}
	}
	return answer, nil
}

// requests is how many requests arrived so far.
func (o *heldOSM) requests() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sent
}

// pendingOf is the pending operations of the OsmDeployment named name: a running one and a
// completed one.
func pendingOf(name string, start time.Time) []engine.OperationRecord {
	return []engine.OperationRecord{
		{ID: name + "-running", Type: "action", StartTime: start},
		{ID: name + "-completed", Type: "action", StartTime: start},
	}
}

// deploymentKey names the OsmDeployment i of the tests.
func deploymentKey(i int) types.NamespacedName {
	return types.NamespacedName{Namespace: "tenant", Name: fmt.Sprintf("d%d", i)}
}

// testPollLimits bound the requests of the tests' boards.
var testPollLimits = pollLimits{timeout: time.Minute, answerMemory: 1 << 20}

type pollAnswer struct {
	ops []osm.Operation
	err error
}

// checkAll checks the operations of OsmDeployments 0..n-1 at once, at now, each with its own
// context, and returns each one's answer once all have one.
func checkAll(p *operationPolls, nbi engine.OSM, contexts []context.Context, start, now time.Time) []pollAnswer {
	answers := make([]pollAnswer, len(contexts))
	var wg sync.WaitGroup
	for i, ctx := range contexts {
		wg.Go(func() {
			ops, err := p.check(ctx, nbi, testPollLimits, deploymentKey(i), pendingOf(deploymentKey(i).Name, start), now)
			answers[i] = pollAnswer{ops, err}
		})
	}
	wg.Wait()
	return answers
}

// expectAll leaves the operations of OsmDeployments 0..n-1 for tick.
func expectAll(p *operationPolls, n int, start, tick time.Time) []context.Context {
	contexts := make([]context.Context, n)
	for i := range n {
		p.expect(deploymentKey(i), pendingOf(deploymentKey(i).Name, start), tick)
		contexts[i] = context.Background()
	}
	return contexts
}

func TestOperationPollsOneRequestPerTick(t *testing.T) {
	const n = 5
	start := time.Unix(1_700_000_000, 0)
	tick := start.Add(10 * time.Second)
	nbi := newHeldOSM()
	nbi.completed = map[string]bool{}
	for i := range n {
		nbi.completed[deploymentKey(i).Name+"-completed"] = true
	}
	p := &operationPolls{}
	contexts := expectAll(p, n, start, tick)
	servedBefore := batchSizes()

	// The first to come asks for all of them; the answer is released once it is asked.
	go func() {
		<-nbi.started
		close(nbi.release)
	}()
	answers := checkAll(p, nbi, contexts, start, tick.Add(time.Millisecond))

	if got := nbi.requests(); got != 1 {
		t.Fatalf("%d requests for %d OsmDeployments due at one tick, want 1", got, n)
	}
	if served := batchSizes(); served.GetSampleCount() != servedBefore.GetSampleCount()+1 || served.GetSampleSum() != servedBefore.GetSampleSum()+n {
		t.Errorf("osmops_operation_poll_batch_size: %d requests for %g OsmDeployments, want one more, for %d more",
			served.GetSampleCount()-servedBefore.GetSampleCount(), served.GetSampleSum()-servedBefore.GetSampleSum(), n)
	}
	for i, a := range answers {
		name := deploymentKey(i).Name
		if a.err != nil {
			t.Fatalf("%s: %v", name, a.err)
		}
		// Its own running operation, nothing of the others'.
		if len(a.ops) != 1 || a.ops[0].ID != name+"-running" {
			t.Errorf("%s sees %v, want only %s-running", name, a.ops, name)
		}
		running, finished := engine.ClassifyOperations(pendingOf(name, start), a.ops)
		if len(running) != 1 || len(finished) != 1 || finished[0].Operation.ID != name+"-completed" {
			t.Errorf("%s: running %v, finished %v", name, running, finished)
		}
	}
}

// batchSizes reads the osmops_operation_poll_batch_size histogram.
func batchSizes() *dto.Histogram {
	var m dto.Metric
	if err := pollBatchSize.Write(&m); err != nil {
		panic(err)
	}
	return m.GetHistogram()
}

func TestOperationPollsAskAgainAtTheNextTick(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	tick := start.Add(10 * time.Second)
	nbi := newHeldOSM()
	close(nbi.release)
	p := &operationPolls{}
	check := func(i int, now time.Time) {
		t.Helper()
		if _, err := p.check(context.Background(), nbi, testPollLimits, deploymentKey(i), pendingOf(deploymentKey(i).Name, start), now); err != nil {
			t.Fatal(err)
		}
	}
	expectAll(p, 2, start, tick)
	check(0, tick)
	check(1, tick.Add(time.Second)) // put back in the queue: the answer of its tick serves
	if got := nbi.requests(); got != 1 {
		t.Fatalf("%d requests, want 1", got)
	}

	// A tick after the request: a new one. A check with no tick (woken by a change): a new one.
	expectAll(p, 1, start, tick.Add(2*time.Second))
	check(0, tick.Add(2*time.Second))
	check(1, tick.Add(2*time.Second))
	if got := nbi.requests(); got != 3 {
		t.Fatalf("%d requests, want 3", got)
	}
	// A check before its tick does not take an answer older than now.
	expectAll(p, 1, start, tick.Add(time.Hour))
	check(0, tick.Add(3*time.Second))
	if got := nbi.requests(); got != 4 {
		t.Fatalf("%d requests, want 4", got)
	}
}

func TestOperationPollsFailForEveryCallerOfTheRequest(t *testing.T) {
	const n = 3
	start := time.Unix(1_700_000_000, 0)
	tick := start.Add(10 * time.Second)
	nbi := newHeldOSM()
	nbi.err = errors.New("NBI unavailable")
	p := &operationPolls{}
	contexts := expectAll(p, n, start, tick)
	go func() {
		<-nbi.started
		close(nbi.release)
	}()
	for i, a := range checkAll(p, nbi, contexts, start, tick) {
		if !errors.Is(a.err, nbi.err) {
			t.Errorf("%s: error %v, want %v", deploymentKey(i), a.err, nbi.err)
		}
	}
	if got := nbi.requests(); got != 1 {
		t.Fatalf("%d requests, want 1", got)
	}
	// The work queue retries: the check asks again.
	nbi.err = nil
	if _, err := p.check(context.Background(), nbi, testPollLimits, deploymentKey(0), pendingOf("d0", start), tick.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := nbi.requests(); got != 2 {
		t.Fatalf("%d requests after a failure, want 2", got)
	}
}

func TestOperationPollsOneCallerCancelled(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	tick := start.Add(10 * time.Second)
	nbi := newHeldOSM()
	p := &operationPolls{}
	expectAll(p, 2, start, tick)

	// d0 sends the request of the tick, then gives up on it while OSM holds the answer.
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := p.check(ctx, nbi, testPollLimits, deploymentKey(0), pendingOf("d0", start), tick)
		first <- err
	}()
	<-nbi.started
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled caller: %v, want %v", err, context.Canceled)
	}
	// d1 joins the request in flight, which goes on.
	second := make(chan pollAnswer, 1)
	go func() {
		ops, err := p.check(context.Background(), nbi, testPollLimits, deploymentKey(1), pendingOf("d1", start), tick)
		second <- pollAnswer{ops, err}
	}()
	close(nbi.release)
	if a := <-second; a.err != nil || len(a.ops) != 2 {
		t.Fatalf("the other caller: %v, %v", a.ops, a.err)
	}
	if got := nbi.requests(); got != 1 {
		t.Fatalf("%d requests, want 1", got)
	}
	if nbi.cancelled[0] {
		t.Errorf("the request was cancelled with its first caller")
	}
}

func TestOperationPollsAreBounded(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	tick := start.Add(10 * time.Second)
	nbi := newHeldOSM()
	close(nbi.release)
	p := &operationPolls{}
	// Far more due than one request asks for, and one that never came.
	expectAll(p, maxPollBatch, start, tick)
	gone := types.NamespacedName{Namespace: "tenant", Name: "gone"}
	p.expect(gone, pendingOf("gone", start), tick.Add(-expectedFor-time.Second))

	many := make([]engine.OperationRecord, 3*maxPollBatch)
	for i := range many {
		many[i] = engine.OperationRecord{ID: fmt.Sprintf("own-%d", i), StartTime: start}
	}
	if _, err := p.check(context.Background(), nbi, testPollLimits, types.NamespacedName{Name: "big"}, many, tick); err != nil {
		t.Fatal(err)
	}
	asked := <-nbi.started
	if len(asked) != len(many) || !slices.Contains(asked, "own-0") {
		t.Errorf("asked %d operations, want the caller's own %d and no others past the bound", len(asked), len(many))
	}
	if _, kept := p.expected[gone]; kept {
		t.Errorf("an OsmDeployment that did not come long past its tick is still asked for")
	}

	// Those left out are asked for by the next request.
	if _, err := p.check(context.Background(), nbi, testPollLimits, deploymentKey(0), pendingOf("d0", start), tick); err != nil {
		t.Fatal(err)
	}
	if asked := <-nbi.started; len(asked) != maxPollBatch {
		t.Errorf("asked %d operations, want %d", len(asked), maxPollBatch)
	}
	// Each is asked for once: the others come to the request that asked for them, or ask for
	// those no request asked for yet.
	for i := 1; i < maxPollBatch; i++ {
		if _, err := p.check(context.Background(), nbi, testPollLimits, deploymentKey(i), pendingOf(deploymentKey(i).Name, start), tick); err != nil {
			t.Fatal(err)
		}
	}
	// The big one's, then two for 50 OsmDeployments of 2 operations each.
	if got := nbi.requests(); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
}

// unansweringOSM never answers: a request ends when its context does.
type unansweringOSM struct{ engine.OSM }

func (unansweringOSM) ListOperationsSince(ctx context.Context, _ time.Time, _ ...string) ([]osm.Operation, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A request no caller waits for any more still ends, at its own timeout: nothing outlives the
// connection the pool drops by more than that.
func TestOperationPollsEndAtTheirTimeout(t *testing.T) {
	p := &operationPolls{}
	start := time.Unix(1_700_000_000, 0)
	_, err := p.check(context.Background(), unansweringOSM{}, pollLimits{timeout: time.Millisecond}, deploymentKey(0), pendingOf("d0", start), start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want %v", err, context.DeadlineExceeded)
	}
}
