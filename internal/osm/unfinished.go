package osm

import (
	"context"
	"net/url"
	"strconv"
	"time"
)

// ListUnfinishedOperations returns those of the LCM operations with these ids (any operation
// when no id is given) started since the given time that did not complete: those still running
// and those that failed. One request answers for any number of operations, which is what lets
// the operator wait for a whole revision cheaply; an operation it does not list has completed.
// It uses the NBI's generic query filters (`field.neq=`, `field.gte=`, which OSM's common
// database layer understands).
func (c *Client) ListUnfinishedOperations(ctx context.Context, since time.Time, ids ...string) ([]Operation, error) {
	return listMembers(ctx, c, unfinishedOperationsRequest(since), "_id", ids, func(op *Operation) string { return op.ID })
}

func unfinishedOperationsRequest(since time.Time) request {
	query := url.Values{}
	query.Set("operationState.neq", OperationCompleted)
	// Rounded down to the millisecond: rounding up would leave out the operations started
	// in the same millisecond as since.
	query.Set("startTime.gte", strconv.FormatFloat(float64(since.UnixMilli())/1e3, 'f', 3, 64))
	return getRequest("/nslcm/v1/ns_lcm_op_occs", "/nslcm/v1/ns_lcm_op_occs", query)
}
