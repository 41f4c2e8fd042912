package bench

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/osmops/osmops/internal/nbisim"
)

// Closeness says how close the operator came to OSM's own time in one scenario, from the
// simulator's request log and the times it records of each operation.
type Closeness struct {
	// FirstRequest holds, per OsmDeployment, the time from its new artifact being served to
	// the first request that changes OSM reaching the simulator (none when none was sent).
	FirstRequest []time.Duration
	// CompletedToReady holds, per OsmDeployment, the time from OSM's end of the last of its
	// operations, which Ready waits for, to its being Ready with the revision.
	CompletedToReady []time.Duration
	// CompletedToPoll holds, per operation OSM COMPLETED, the time from that to the next read of
	// the operations reaching the simulator: when the operator could first know of the end.
	CompletedToPoll []time.Duration
	// Operations counts the operations OSM accepted.
	Operations int
	// OSMTime is OSM's own time: from the first changing request to the last operation's end,
	// the floor any client can reach; OperatorTime is from the artifact to Ready.
	OSMTime      time.Duration
	OperatorTime time.Duration
}

// Ratio is the operator's time over OSM's own, 0 when OSM ran no operation.
func (c Closeness) Ratio() float64 {
	if c.OSMTime <= 0 {
		return 0
	}
	return float64(c.OperatorTime) / float64(c.OSMTime)
}

// RequestsPerOperation is requests over the operations OSM accepted, 0 without any.
func (c Closeness) RequestsPerOperation(requests int64) float64 {
	if c.Operations == 0 {
		return 0
	}
	return float64(requests) / float64(c.Operations)
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of durations, 0 of none.
func percentile(durations []time.Duration, p float64) time.Duration {
	if len(durations) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(durations))
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// measureCloseness reads one OsmDeployment's scenario: its artifact was served at served, and it
// was Ready with it at ready; requests is the simulator's request log since the scenario
// began, operations every operation the simulator holds (those accepted from served on count).
func measureCloseness(served, ready time.Time, requests []nbisim.RequestRecord, operations []nbisim.OperationState) Closeness {
	c := Closeness{OperatorTime: ready.Sub(served)}
	var first, lastEnd time.Time
	for _, r := range requests {
		if changesOSM(r) && !r.Time.Before(served) {
			first = r.Time
			c.FirstRequest = append(c.FirstRequest, first.Sub(served))
			break
		}
	}
	for _, op := range operations {
		if op.Accepted.Before(served) {
			continue
		}
		c.Operations++
		if op.Ended == nil {
			continue
		}
		if op.Ended.After(lastEnd) {
			lastEnd = *op.Ended
		}
		if op.State != "COMPLETED" {
			continue
		}
		if i := slices.IndexFunc(requests, func(r nbisim.RequestRecord) bool {
			return readsOperations(r) && !r.Time.Before(*op.Ended)
		}); i >= 0 {
			c.CompletedToPoll = append(c.CompletedToPoll, requests[i].Time.Sub(*op.Ended))
		}
	}
	if !lastEnd.IsZero() {
		c.CompletedToReady = append(c.CompletedToReady, ready.Sub(lastEnd))
	}
	if !first.IsZero() && lastEnd.After(first) {
		c.OSMTime = lastEnd.Sub(first)
	}
	return c
}

// readsOperations says whether a request reads OSM's operations (the list or one of them).
func readsOperations(r nbisim.RequestRecord) bool {
	return r.Method == "GET" && strings.HasPrefix(r.Route, operationsListRoute)
}

// changesOSM says whether a request changes OSM: a write, not a login.
func changesOSM(r nbisim.RequestRecord) bool {
	switch r.Method {
	case "GET", "HEAD", "OPTIONS":
		return false
	}
	return !strings.HasPrefix(r.Route, "/osm/admin/v1/tokens")
}

// stateOperations lists the operations of every NS instance of a state.
func stateOperations(state nbisim.State) []nbisim.OperationState {
	var operations []nbisim.OperationState
	for _, ns := range state.NSInstances {
		operations = append(operations, ns.Operations...)
	}
	return operations
}
