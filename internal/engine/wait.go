package engine

import (
	"fmt"
	"time"

	"github.com/osmops/osmops/internal/osm"
)

// clockSkewMargin widens the time window of the operations query: the start times in status
// come from the operator's clock, OSM's from its own.
const clockSkewMargin = 10 * time.Minute

// Outcome is how a finished operation ended.
type Outcome struct {
	Operation OperationRecord
	Failed    bool
	// TimedOut is an operation given up on: OSM did not finish it in time.
	TimedOut bool
	// Message is OSM's own error text for a failed operation.
	Message string
	// Took is how long OSM ran the operation, as its record says (statusEnteredTime less
	// startTime); 0 when OSM did not list it or its times are not in order.
	Took time.Duration
}

// ExpireOperations gives up on the running operations that started longer than timeout ago:
// OSM may still finish them, but an OsmDeployment that waited for them forever would never
// apply a later revision. They are reported as failed; what OSM makes of them is observed
// again by the next plan.
func ExpireOperations(running []OperationRecord, now time.Time, timeout time.Duration) ([]OperationRecord, []Outcome) {
	var kept []OperationRecord
	var expired []Outcome
	for _, op := range running {
		if now.Sub(op.StartTime) <= timeout {
			kept = append(kept, op)
			continue
		}
		expired = append(expired, Outcome{Operation: op, Failed: true, TimedOut: true,
			Message: fmt.Sprintf("OSM did not finish operation %s within %s; no longer waited for", op.ID, timeout)})
	}
	return kept, expired
}

// OperationsQuery is what to ask OSM about the pending operations in one request
// (osm.Client.ListOperationsSince): their ids, and the start of the oldest, widened by the clock
// skew margin. An operation missing from the answer has COMPLETED (or was removed with its NS
// instance after a terminate): ClassifyOperations reads the answer.
func OperationsQuery(pending []OperationRecord) (since time.Time, ids []string) {
	if len(pending) == 0 {
		return time.Time{}, nil
	}
	since = pending[0].StartTime
	ids = make([]string, len(pending))
	for i, op := range pending {
		if op.StartTime.Before(since) {
			since = op.StartTime
		}
		ids[i] = op.ID
	}
	return since.Add(-clockSkewMargin), ids
}

// ClassifyOperations splits the pending operations by what OSM reports of them. It is a pure
// function: an operation OSM does not list as unfinished has completed.
func ClassifyOperations(pending []OperationRecord, unfinished []osm.Operation) ([]OperationRecord, []Outcome) {
	byID := make(map[string]osm.Operation, len(unfinished))
	for _, op := range unfinished {
		byID[op.ID] = op
	}
	var running []OperationRecord
	var finished []Outcome
	for _, entry := range pending {
		op, listed := byID[entry.ID]
		switch {
		case !listed:
			entry.State = osm.OperationCompleted
			finished = append(finished, Outcome{Operation: entry})
		case !op.Done():
			entry.State = op.OperationState
			running = append(running, entry)
		default:
			entry.State = op.OperationState
			outcome := Outcome{Operation: entry, Failed: !op.Succeeded(), Took: took(op)}
			if outcome.Failed {
				outcome.Message = failureMessage(op)
			}
			finished = append(finished, outcome)
		}
	}
	return running, finished
}

// took is how long OSM ran an ended operation by its record; 0 when a time is missing or the
// end comes before the start (an NBI's answer is not trusted to be in order).
func took(op osm.Operation) time.Duration {
	start, end := op.StartedAt(), op.StatusEnteredAt()
	if start.IsZero() || end.Before(start) {
		return 0
	}
	return end.Sub(start)
}

// failureMessage is OSM's own explanation of a failed operation.
func failureMessage(op osm.Operation) string {
	for _, text := range []string{string(op.ErrorMessage), string(op.DetailedStatus)} {
		if text != "" {
			return text
		}
	}
	return "OSM reports the operation " + op.OperationState + " without a message"
}
