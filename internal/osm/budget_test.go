package osm

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// One reconcile's list answers share its memory budget: what one list keeps is spent, the next
// list gets what is left, and a list that would keep more is refused, not held.
func TestListsShareTheMemoryBudgetOfTheirContext(t *testing.T) {
	// About 100 VIM accounts of 4 KiB: some 450 KiB held, as the records are counted.
	var records []string
	for i := range 100 {
		records = append(records, fmt.Sprintf(`{"_id": "vim-%d", "name": "%s"}`, i, strings.Repeat("n", 4<<10)))
	}
	list := "[" + strings.Join(records, ",") + "]"
	client := newFakeNBI(t, answer(http.StatusOK, list)).client(t)

	budget := NewMemoryBudget(1 << 20)
	ctx := WithMemoryBudget(t.Context(), budget)
	for i := range 2 {
		if got, err := client.ListVIMAccounts(ctx); err != nil || len(got) != 100 {
			t.Fatalf("list %d within the budget: %d records, %v", i+1, len(got), err)
		}
	}
	want := "the records OSM answered take more than the 1048576 bytes of memory one reconcile may hold"
	if _, err := client.ListVIMAccounts(ctx); err == nil || !strings.HasSuffix(err.Error(), want) || IsTransient(err) {
		t.Errorf("a third list: %v, want %q, not transient", err, want)
	}
	if left := budget.available(1 << 30); left < 0 || left >= 1<<20/3 {
		t.Errorf("left of the budget after two lists: %d bytes", left)
	}

	// Another reconcile has a budget of its own, and a request without one has none.
	if _, err := client.ListVIMAccounts(WithMemoryBudget(t.Context(), NewMemoryBudget(1<<20))); err != nil {
		t.Errorf("another budget: %v", err)
	}
	if _, err := client.ListVIMAccounts(t.Context()); err != nil {
		t.Errorf("no budget: %v", err)
	}
}
