package osmconn

// The poll schedule of OSM operations. An OsmDeployment whose operations run looks at them again
// when operations of their type usually end on that OSM, as learnt from those already seen end
// there (their records' startTime and statusEnteredTime), then every short interval for one
// poll interval, then every poll interval as before. Until one of a type has been seen end, it is
// polled every poll interval, the first time one poll interval after it was sent. No wait is
// longer than the poll interval nor shorter than the short one, whatever an NBI reports: what is
// learnt only times requests, and a restart starts over from the poll interval.

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/osmops/osmops/internal/engine"
)

const (
	// DefaultOperationPollMinInterval is the short interval of the poll schedule: an operation's
	// end is seen within it once operations of its type usually end.
	DefaultOperationPollMinInterval = time.Second
	// learntTypes bounds the operation types learnt per OsmCluster (OSM has about ten).
	learntTypes = 16
	// learntWindow is how many of the last durations of a type are kept.
	learntWindow = 16
	// longestLearnt caps a duration learnt: the longest spec.timeout.
	longestLearnt = 24 * time.Hour
)

// operationDurations is how long one OSM ran the last operations of each type the operator saw
// end. The OsmDeployments of an OsmCluster share it through their Connection, so it is bounded by
// the pool's OsmClusters, times learntTypes, times learntWindow.
type operationDurations struct {
	mu     sync.Mutex
	byType map[string]*durationWindow
}

// durationWindow holds the last learntWindow durations, oldest overwritten first.
type durationWindow struct {
	seen  [learntWindow]time.Duration
	count int
}

// learn records that OSM ran an operation of opType for took; 0 (unknown) teaches nothing.
func (d *operationDurations) learn(opType string, took time.Duration) {
	if took <= 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.byType[opType]
	if w == nil {
		if len(d.byType) >= learntTypes {
			return
		}
		if d.byType == nil {
			d.byType = map[string]*durationWindow{}
		}
		w = &durationWindow{}
		d.byType[opType] = w
	}
	w.seen[w.count%learntWindow] = min(took, longestLearnt)
	w.count++
}

// usual is when operations of opType usually end: the upper quartile of the durations learnt,
// so that most have ended at their first poll. false when none of that type was seen end.
func (d *operationDurations) usual(opType string) (time.Duration, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.byType[opType]
	if w == nil {
		return 0, false
	}
	seen := slices.Clone(w.seen[:min(w.count, learntWindow)])
	slices.Sort(seen)
	return seen[len(seen)*3/4], true
}

// PollSchedule times the polls of pending operations: never sooner than Short, never later
// than Long (--operation-poll-min-interval, --operation-poll-interval; DefaultOperationPollMinInterval
// when Short is 0, and never more than Long).
type PollSchedule struct {
	Short, Long time.Duration
}

// bounds is the schedule as it is kept: Short defaulted and within Long.
func (s PollSchedule) bounds() pollSchedule {
	short := s.Short
	if short <= 0 {
		short = DefaultOperationPollMinInterval
	}
	return pollSchedule{short: min(short, s.Long), long: s.Long}
}

// pollSchedule is a PollSchedule within its bounds.
type pollSchedule struct {
	short, long time.Duration
}

// next is how long to wait before checking the pending operations again, at now, given usual
// (operationDurations.usual): the soonest any of them needs.
func (s pollSchedule) next(pending []engine.OperationRecord, now time.Time, usual func(opType string) (time.Duration, bool)) time.Duration {
	wait := s.long
	for _, op := range pending {
		took, known := usual(op.Type)
		if !known {
			continue
		}
		wait = min(wait, s.wait(op.StartTime, took, now))
	}
	return max(wait, s.short)
}

// wait is the poll schedule of one operation started at start whose type usually takes took:
// every long until its usual end, a tenth past it (Flux's jitter of the requeue, ±5% by default,
// does not bring the poll before it); then every short for one long interval; then every long
// again (an operation far past its usual end costs no more than before).
func (s pollSchedule) wait(start time.Time, took time.Duration, now time.Time) time.Duration {
	untilEnd := start.Add(took + took/10).Sub(now)
	switch {
	case untilEnd > 0:
		return min(max(untilEnd, s.short), s.long)
	case -untilEnd < s.long:
		return s.short
	}
	return s.long
}

// onTick moves a wait of the schedule at now onto the tick grid of a connection: the instants
// origin plus a multiple of short. The OsmDeployments of one OsmCluster that poll on the same
// tick share one request (pollboard.go); each connection's origin (when it was built)
// spreads the ticks of different OSMs. A wait of the poll interval (nothing learnt, or far past
// the usual end) ends on the last tick of a coarser grid, of the largest multiple of short
// within long, so that such polls of one OSM meet whichever tick each started on; when that
// tick is sooner than short, on the first tick past short, from which the next poll reaches
// the coarser grid. A shorter wait ends on the first tick at or after it, or the one before
// when that is past long. false when no tick lies between short and long (the short interval
// is about as long as the long one): the wait is kept as it is.
func (s pollSchedule) onTick(wait time.Duration, now, origin time.Time) (time.Duration, bool) {
	if s.short <= 0 {
		return wait, false
	}
	target := wait
	if wait >= s.long {
		if tick := wait - sinceTick(now.Add(wait), origin, s.long-s.long%s.short); s.within(tick) {
			return tick, true
		}
		// No tick of that grid in reach: the first tick past the short interval, from which
		// the next poll reaches one.
		target = s.short
	}
	return s.onShortTick(target, wait, now, origin)
}

// firstOnTick is onTick for the first poll of operations just sent: on the short grid, whatever
// the wait. On the coarser grid, a first poll of the poll interval came anywhere between the
// short interval and the poll interval after the operations started, most often before an
// operation of a few seconds ended, which then waited for the next poll; on the short grid it
// comes when a plain poll of that interval would, and shares its request with the
// OsmDeployments of that OSM that sent theirs in the same short interval. The polls after it
// meet on the coarser grid as before.
func (s pollSchedule) firstOnTick(wait time.Duration, now, origin time.Time) (time.Duration, bool) {
	if s.short <= 0 {
		return wait, false
	}
	return s.onShortTick(wait, wait, now, origin)
}

// onShortTick is the first tick of the short grid at or after target, or the one before when
// that is past long; wait, unaligned, when that tick is not between short and long.
func (s pollSchedule) onShortTick(target, wait time.Duration, now, origin time.Time) (time.Duration, bool) {
	tick := target
	if past := sinceTick(now.Add(target), origin, s.short); past > 0 {
		tick += s.short - past
	}
	if tick > s.long {
		tick -= s.short
	}
	if !s.within(tick) {
		return wait, false
	}
	return tick, true
}

// within tells whether a wait is between the schedule's bounds.
func (s pollSchedule) within(d time.Duration) bool { return d >= s.short && d <= s.long }

// justSent tells whether every pending operation started less than the short interval before
// now: sent by this reconcile, not polled yet (polls are at least that far apart).
func (s pollSchedule) justSent(pending []engine.OperationRecord, now time.Time) bool {
	for _, op := range pending {
		if now.Sub(op.StartTime) >= s.short {
			return false
		}
	}
	return len(pending) > 0
}

// sinceTick is how long at is past the last tick of the grid origin plus a multiple of spacing.
func sinceTick(at, origin time.Time, spacing time.Duration) time.Duration {
	past := at.Sub(origin) % spacing
	if past < 0 {
		past += spacing
	}
	return past
}

// NextPoll is how long to wait, at now, before the OsmDeployment key checks its pending
// operations again: on the schedule learnt from this OSM, moved onto the connection's tick grid
// when onTick (a requeue there must not be jittered: the OsmDeployments of that OSM polling on
// one tick share one request), where it leaves its operations for the request of that tick
// (operationPolls.expect). now is the real time, as the operations' start times are.
func (c *Connection) NextPoll(given PollSchedule, key types.NamespacedName, pending []engine.OperationRecord, now time.Time) (
	wait time.Duration, onTick bool) {
	schedule := given.bounds()
	wait = schedule.next(pending, now, c.durations.usual)
	align := schedule.onTick
	if schedule.justSent(pending, now) {
		align = schedule.firstOnTick
	}
	wait, onTick = align(wait, now, c.PollOrigin)
	c.polls.expect(key, pending, now.Add(wait))
	return wait, onTick
}

// Learn records that this OSM ran an operation of opType for took: the poll schedule of the
// next ones of that type.
func (c *Connection) Learn(opType string, took time.Duration) { c.durations.learn(opType, took) }
