package controller

import (
	"math/rand"
	"sync"
	"time"

	"github.com/fluxcd/pkg/runtime/jitter"
)

// jitterOr is a reconciler's jitter function: fn, which tests inject, else Flux's interval
// jitter, which the manager's --interval-jitter flag sets.
func jitterOr(fn jitter.Duration) jitter.Duration {
	if fn != nil {
		return fn
	}
	return jitter.JitteredIntervalDuration
}

// lockedSource is a math/rand source that reconcile workers may share. Flux's interval jitter
// draws from one *rand.Rand, and the one it makes when given nil has a source that is not safe
// for concurrent use: every worker computing a requeue at once is a data race.
type lockedSource struct {
	mu     sync.Mutex
	source rand.Source64
}

// NewJitterRand returns a *rand.Rand for Flux's interval jitter that reconcile workers may
// call at once.
func NewJitterRand() *rand.Rand {
	return rand.New(&lockedSource{source: rand.NewSource(time.Now().UnixNano()).(rand.Source64)})
}

func (s *lockedSource) Int63() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.source.Int63()
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.source.Uint64()
}

func (s *lockedSource) Seed(seed int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.source.Seed(seed)
}
