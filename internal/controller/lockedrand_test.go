package controller

import (
	"math/rand"
	"sync"
	"time"
)

// lockedSource is a math/rand source that the suite's reconcile workers may share: the jitter
// draws from one *rand.Rand, whose default source is not safe for concurrent use.
type lockedSource struct {
	mu     sync.Mutex
	source rand.Source64
}

// newLockedRand returns a *rand.Rand that reconcile workers may call at once.
func newLockedRand() *rand.Rand {
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
