package nbisim

import (
	"testing"
	"time"
)

// LCM takes operations up one per PickupInterval, as OSM 19's message bus reads them, and runs
// each for its type's time; the state tells when each was accepted and when it ended.
func TestLCMTimesByTypeAndPickupPacing(t *testing.T) {
	cfg := Config{PickupDelay: time.Second, PickupInterval: 2 * time.Second,
		OperationDelays: map[string]time.Duration{opInstantiate: 6 * time.Second}}
	h := newLoggedIn(t, cfg)
	_, nsdID := h.onboardOpenLDAP()
	accepted := h.clock.Now()
	first, firstOp := h.createNS(ldapCreateBody("a", nsdID, h.vimID("vim1"), nil))
	second, secondOp := h.createNS(ldapCreateBody("b", nsdID, h.vimID("vim1"), nil))

	nsStates := func() [2]any { return [2]any{h.ns(first)["nsState"], h.ns(second)["nsState"]} }
	h.clock.Step(time.Second)
	if got := nsStates(); got != [2]any{"BUILDING", "NOT_INSTANTIATED"} {
		t.Errorf("after 1 s: %v, want the first taken up only", got)
	}
	h.clock.Step(2 * time.Second)
	if got := nsStates(); got != [2]any{"BUILDING", "BUILDING"} {
		t.Errorf("after 3 s: %v, want both taken up", got)
	}
	h.clock.Step(4 * time.Second) // 7 s: the first ran its 6 s, the second has 2 s left
	if got := nsStates(); got != [2]any{"READY", "BUILDING"} {
		t.Errorf("after 7 s: %v, want the first instantiated", got)
	}

	ended := map[string]*time.Time{}
	for _, ns := range h.sim.State().NSInstances {
		for _, op := range ns.Operations {
			if !op.Accepted.Equal(accepted) {
				t.Errorf("operation %s accepted at %s, want %s", op.ID, op.Accepted, accepted)
			}
			ended[op.ID] = op.Ended
		}
	}
	if want := accepted.Add(7 * time.Second); ended[firstOp] == nil || !ended[firstOp].Equal(want) {
		t.Errorf("first operation ended at %v, want %s", ended[firstOp], want)
	}
	if ended[secondOp] != nil {
		t.Errorf("second operation ended at %s, want still PROCESSING", ended[secondOp])
	}
}

// The "real" profile's times reproduce what OSM 19's LCM took on ../shared/real-osm: ten
// instantiations accepted at once end 25 s later (25.4 s measured by a client polling every
// 0.5 s), a value change 4 s after its action (4.1 s).
func TestRealLCMProfile(t *testing.T) {
	real := LCMProfiles["real"]
	last := real.PickupDelay + 9*real.PickupInterval + real.OperationDelays[opInstantiate]
	if last != 25*time.Second {
		t.Errorf("ten instantiations: %s", last)
	}
	if change := real.PickupDelay + real.OperationDelays[opAction]; change != 4*time.Second {
		t.Errorf("a value change: %s", change)
	}
}
