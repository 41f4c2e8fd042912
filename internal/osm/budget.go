package osm

import (
	"context"
	"fmt"
	"sync"
)

// MemoryBudget bounds the memory the records of OSM's list answers hold, over every request
// made with one context: a reconcile keeps the lists it read (descriptors, VIM accounts, NS and
// VNF records, operations) until it ends, and an NBI may fill each record with fields the
// operator reads. Giving each reconcile a budget bounds what a manager holds by its workers
// times the budget, whatever each tenant's OSM answers.
type MemoryBudget struct {
	mu    sync.Mutex
	limit int64
	left  int64
}

// NewMemoryBudget returns a budget of limit bytes.
func NewMemoryBudget(limit int64) *MemoryBudget {
	return &MemoryBudget{limit: limit, left: limit}
}

type budgetKey struct{}

// WithMemoryBudget returns a context whose list requests spend budget.
func WithMemoryBudget(ctx context.Context, budget *MemoryBudget) context.Context {
	return context.WithValue(ctx, budgetKey{}, budget)
}

func budgetOf(ctx context.Context) *MemoryBudget {
	budget, _ := ctx.Value(budgetKey{}).(*MemoryBudget)
	return budget
}

// available is what is left of the budget; unbounded (max) without one.
func (b *MemoryBudget) available(max int64) int64 {
	if b == nil {
		return max
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return min(max, b.left)
}

// spend takes held bytes from the budget, or says that they do not fit.
func (b *MemoryBudget) spend(held int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if held > b.left {
		return b.exceeded()
	}
	b.left -= held
	return nil
}

func (b *MemoryBudget) exceeded() error {
	return fmt.Errorf("the records OSM answered take more than the %d bytes of memory one reconcile may hold", b.limit)
}
