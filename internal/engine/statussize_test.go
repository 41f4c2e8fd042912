package engine

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Reasons keep their full length while the inventory is small, and share maxInventoryReasons
// once it is large; none is cut inside a rune.
func TestBoundReasonsSharesTheBudget(t *testing.T) {
	long := strings.Repeat("é", 600) // 1,200 bytes
	for _, tc := range []struct{ entries, want int }{{1, maxReason}, {maxInventoryReasons / maxReason, maxReason}, {1000, maxInventoryReasons / 1000}, {100000, 0}} {
		inventory := &Inventory{NsInstances: make([]InstanceRecord, tc.entries)}
		for i := range inventory.NsInstances {
			inventory.NsInstances[i].Reason = long
		}
		BoundReasons(inventory)
		got := inventory.NsInstances[tc.entries-1].Reason
		if len(got) > tc.want || len(got) < tc.want-4 || !utf8.ValidString(got) {
			t.Errorf("%d entries: a reason of %d bytes (valid UTF-8: %t), want about %d", tc.entries, len(got), utf8.ValidString(got), tc.want)
		}
	}
}
