package controller

import (
	"sync"
	"time"

	"github.com/fluxcd/pkg/runtime/jitter"
	ctrl "sigs.k8s.io/controller-runtime"
)

// NamespaceShare bounds the workers of one controller that the objects of one namespace (one
// tenant) hold at once. An NBI that accepts connections and never answers holds a worker for
// a whole request timeout: without a bound, one tenant's unanswering OSMs would hold every
// worker and starve every other tenant. A reconcile that finds its namespace's share taken is
// put back in the queue instead of waiting: a worker never blocks on another tenant.
type NamespaceShare struct {
	mu   sync.Mutex
	max  int
	held map[string]int
}

// shareRetry is the wait before a reconcile refused for its namespace's share tries again.
const shareRetry = time.Second

// NewNamespaceShare lets each namespace hold at most limit workers at once.
func NewNamespaceShare(limit int) *NamespaceShare {
	return &NamespaceShare{max: max(limit, 1), held: map[string]int{}}
}

// acquire takes a worker of the namespace's share. It returns a release function, or false
// with the result that puts the reconcile back in the queue. A nil share bounds nothing.
func (s *NamespaceShare) acquire(namespace string) (func(), ctrl.Result, bool) {
	if s == nil {
		return func() {}, ctrl.Result{}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[namespace] >= s.max {
		return nil, ctrl.Result{RequeueAfter: jitter.JitteredIntervalDuration(shareRetry)}, false
	}
	s.held[namespace]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.held[namespace]--; s.held[namespace] == 0 {
			delete(s.held, namespace)
		}
	}, ctrl.Result{}, true
}
