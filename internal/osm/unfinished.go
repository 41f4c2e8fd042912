package osm

import (
	"context"
	"net/url"
	"strconv"
	"time"
)

// ListOperationsSince returns those of the LCM operations with these ids (any operation when
// no id is given) started since the given time that did not complete, and those of the ids that
// did: what OSM reports of them, their statusEnteredTime telling when each ended, which times the
// first poll of the next ones (the operator's poll schedule). One request answers for any number
// of operations, which is what lets the operator wait for a whole revision cheaply; an operation
// it does not list has completed. When no id is given, or the ids cannot be asked in one filter
// (memberFilter), only the unfinished ones are asked: the completed operations of every tenant
// would swell the answer. It uses the NBI's generic query filters (`field.neq=`, `field.gte=`,
// which OSM's common database layer understands).
func (c *Client) ListOperationsSince(ctx context.Context, since time.Time, ids ...string) ([]Operation, error) {
	_, byID := memberFilter("_id", ids)
	return listMembers(ctx, c, operationsSinceRequest(since, !byID || len(ids) == 0), "_id", ids, func(op *Operation) string { return op.ID })
}

func operationsSinceRequest(since time.Time, unfinishedOnly bool) request {
	query := url.Values{}
	if unfinishedOnly {
		query.Set("operationState.neq", OperationCompleted)
	}
	// Rounded down to the millisecond: rounding up would leave out the operations started
	// in the same millisecond as since.
	query.Set("startTime.gte", strconv.FormatFloat(float64(since.UnixMilli())/1e3, 'f', 3, 64))
	return getRequest("/nslcm/v1/ns_lcm_op_occs", "/nslcm/v1/ns_lcm_op_occs", query)
}

// ListRunningOperations returns the LCM operations of these NS instances that are still
// PROCESSING: the one LCM runs, and those the NBI accepted that LCM has queued behind it or not
// yet taken up, which the NS record does not show (LCM changes it when it starts a task). One
// request for any number of instances.
func (c *Client) ListRunningOperations(ctx context.Context, nsInstanceIDs ...string) ([]Operation, error) {
	if len(nsInstanceIDs) == 0 {
		return nil, nil
	}
	return listMembers(ctx, c, runningOperationsRequest(), "nsInstanceId", nsInstanceIDs, func(op *Operation) string { return op.NSInstanceID })
}

func runningOperationsRequest() request {
	query := url.Values{"operationState": {OperationProcessing}}
	return getRequest("/nslcm/v1/ns_lcm_op_occs", "/nslcm/v1/ns_lcm_op_occs", query)
}
