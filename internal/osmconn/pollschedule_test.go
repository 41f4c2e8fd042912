package osmconn

import (
	"fmt"
	"testing"
	"time"

	"github.com/osmops/osmops/internal/engine"
)

// learnt is a learner that saw the durations of each type end.
func learnt(seen map[string][]time.Duration) *operationDurations {
	d := &operationDurations{}
	for opType, durations := range seen {
		for _, took := range durations {
			d.learn(opType, took)
		}
	}
	return d
}

func TestPollScheduleWaitsForTheUsualEnd(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	schedule := pollSchedule{short: time.Second, long: 5 * time.Second}
	upgrade := engine.OperationRecord{Type: "action", StartTime: start}
	instantiate := engine.OperationRecord{Type: "instantiate", StartTime: start}
	fourSeconds := []time.Duration{4 * time.Second, 4 * time.Second, 4 * time.Second}
	for _, tc := range []struct {
		name    string
		seen    map[string][]time.Duration
		pending []engine.OperationRecord
		after   time.Duration // since start
		want    time.Duration
	}{
		{"no history: the poll interval", nil, []engine.OperationRecord{upgrade}, 0, 5 * time.Second},
		{"no history, still running: the poll interval", nil, []engine.OperationRecord{upgrade}, 5 * time.Second, 5 * time.Second},
		{"upgrades of 4 s: first poll a tenth past 4 s", map[string][]time.Duration{"action": fourSeconds},
			[]engine.OperationRecord{upgrade}, 0, 4400 * time.Millisecond},
		{"upgrades of 4 s, not ended at the first poll: the short interval", map[string][]time.Duration{"action": fourSeconds},
			[]engine.OperationRecord{upgrade}, 4400 * time.Millisecond, time.Second},
		{"upgrades of 4 s, a poll interval past the usual end: the poll interval again", map[string][]time.Duration{"action": fourSeconds},
			[]engine.OperationRecord{upgrade}, 9500 * time.Millisecond, 5 * time.Second},
		{"the history of another type does not time this one", map[string][]time.Duration{"action": fourSeconds},
			[]engine.OperationRecord{instantiate}, 0, 5 * time.Second},
		{"the soonest of the pending operations", map[string][]time.Duration{"action": fourSeconds, "instantiate": {3 * time.Second}},
			[]engine.OperationRecord{upgrade, instantiate}, 0, 3300 * time.Millisecond},
		{"long operations: every poll interval until near their end", map[string][]time.Duration{"instantiate": {60 * time.Second}},
			[]engine.OperationRecord{instantiate}, 10 * time.Second, 5 * time.Second},
		{"long operations, near their end: at it", map[string][]time.Duration{"instantiate": {60 * time.Second}},
			[]engine.OperationRecord{instantiate}, 63 * time.Second, 3 * time.Second},
		{"hostile: operations that take no time are not polled faster than the short interval",
			map[string][]time.Duration{"action": {time.Nanosecond, time.Millisecond}}, []engine.OperationRecord{upgrade}, 0, time.Second},
		{"hostile: operations that take forever are polled every poll interval",
			map[string][]time.Duration{"action": {1 << 62, 1 << 62}}, []engine.OperationRecord{upgrade}, 0, 5 * time.Second},
		{"hostile: negative durations teach nothing", map[string][]time.Duration{"action": {-time.Hour}},
			[]engine.OperationRecord{upgrade}, 0, 5 * time.Second},
		{"an operation started in the future is polled every poll interval", map[string][]time.Duration{"action": fourSeconds},
			[]engine.OperationRecord{upgrade}, -time.Hour, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := schedule.next(tc.pending, start.Add(tc.after), learnt(tc.seen).usual)
			if got != tc.want {
				t.Errorf("next poll in %s, want %s", got, tc.want)
			}
		})
	}
}

func TestOperationDurationsAreBounded(t *testing.T) {
	d := &operationDurations{}
	for i := range 3 * learntTypes {
		d.learn(fmt.Sprintf("type-%d", i), time.Second)
	}
	if len(d.byType) != learntTypes {
		t.Errorf("%d types learnt, want at most %d", len(d.byType), learntTypes)
	}
	if _, known := d.usual(fmt.Sprintf("type-%d", learntTypes)); known {
		t.Errorf("a type past the bound was learnt")
	}

	// Only the last learntWindow durations count: a change of OSM's pace is followed.
	for range learntWindow {
		d.learn("type-0", time.Minute)
	}
	for range learntWindow {
		d.learn("type-0", 2*time.Second)
	}
	if usual, _ := d.usual("type-0"); usual != 2*time.Second {
		t.Errorf("usual duration %s after a window of 2s, want 2s", usual)
	}

	// The upper quartile: most operations have ended at their first poll.
	d = &operationDurations{}
	d.learn("action", 0) // unknown: teaches nothing
	for _, took := range []time.Duration{time.Second, time.Second, time.Second, 9 * time.Second} {
		d.learn("action", took)
	}
	if usual, _ := d.usual("action"); usual != 9*time.Second {
		t.Errorf("usual duration of 1s (x4) and 9s: %s, want the upper quartile 9s", usual)
	}

	d.learn("terminate", 1<<62)
	if usual, _ := d.usual("terminate"); usual != longestLearnt {
		t.Errorf("a duration past %s learnt as %s", longestLearnt, usual)
	}
}

func TestPollScheduleOnTick(t *testing.T) {
	origin := time.Unix(1_700_000_000, 0)
	schedule := pollSchedule{short: time.Second, long: 5 * time.Second}
	for _, tc := range []struct {
		name     string
		schedule pollSchedule
		now      time.Duration // since origin
		wait     time.Duration
		want     time.Duration
		aligned  bool
	}{
		{"on a tick already", schedule, 10 * time.Second, 2 * time.Second, 2 * time.Second, true},
		{"the next tick", schedule, 10*time.Second + 300*time.Millisecond, 4400 * time.Millisecond, 4700 * time.Millisecond, true},
		{"the short interval: the next tick", schedule, 10*time.Second + 300*time.Millisecond, time.Second, 1700 * time.Millisecond, true},
		{"the poll interval: the tick before", schedule, 10*time.Second + 300*time.Millisecond, 5 * time.Second, 4700 * time.Millisecond, true},
		{"the poll interval, later: the tick of the coarser grid", schedule, 12*time.Second + 300*time.Millisecond, 5 * time.Second, 2700 * time.Millisecond, true},
		{"the poll interval, the coarser grid's tick too soon: the first tick past the short interval", schedule,
			14*time.Second + 500*time.Millisecond, 5 * time.Second, 1500 * time.Millisecond, true},
		{"from which the next poll reaches the coarser grid", schedule, 16*time.Second + 10*time.Millisecond, 5 * time.Second, 3990 * time.Millisecond, true},
		{"the coarser grid is of a multiple of the short interval", pollSchedule{short: 2 * time.Second, long: 5 * time.Second},
			11*time.Second + 300*time.Millisecond, 5 * time.Second, 4700 * time.Millisecond, true},
		{"before the origin", schedule, -300 * time.Millisecond, time.Second, 1300 * time.Millisecond, true},
		{"no tick between the short and the poll interval", pollSchedule{short: time.Second, long: time.Second},
			300 * time.Millisecond, time.Second, time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, aligned := tc.schedule.onTick(tc.wait, origin.Add(tc.now), origin)
			if got != tc.want || aligned != tc.aligned {
				t.Errorf("onTick: %s (aligned %t), want %s (%t)", got, aligned, tc.want, tc.aligned)
			}
			if aligned && (tc.now+got)%tc.schedule.short != 0 {
				t.Errorf("now+%s is not on a tick", got)
			}
			if got < tc.schedule.short || got > tc.schedule.long {
				t.Errorf("%s is out of the schedule's bounds", got)
			}
		})
	}
}

func TestJustSentOperations(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	schedule := pollSchedule{short: time.Second, long: 5 * time.Second}
	op := func(ago time.Duration) engine.OperationRecord {
		return engine.OperationRecord{StartTime: now.Add(-ago)}
	}
	for _, tc := range []struct {
		name    string
		pending []engine.OperationRecord
		want    bool
	}{
		{"all sent now", []engine.OperationRecord{op(0), op(200 * time.Millisecond)}, true},
		{"one sent a poll ago", []engine.OperationRecord{op(0), op(time.Second)}, false},
		{"none", nil, false},
	} {
		if got := schedule.justSent(tc.pending, now); got != tc.want {
			t.Errorf("%s: justSent = %t, want %t", tc.name, got, tc.want)
		}
	}
}
