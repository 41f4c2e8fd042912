package osm

import (
	"context"
	"errors"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/osmops/osmops/internal/printable"
)

// AuditMessage is the message of the audit line the Client logs for each change it sends to
// OSM: a log store keeps the audit trail by filtering on it (docs/operations.md, Audit trail).
const AuditMessage = "osm change"

// maxAuditIDBytes bounds an id OSM answered in the audit line: OSM's are UUIDs; a longer one is
// a hostile NBI writing into the operator's logs.
const maxAuditIDBytes = 64

// ChangeOrigin is what the changes sent with a context are made for, named in their audit lines.
type ChangeOrigin struct {
	// Deployment is the OsmDeployment, as namespace/name.
	Deployment string
	// Revision is the source revision applied.
	Revision string
	// PlanDigest identifies the plan the change belongs to.
	PlanDigest string
}

type changeOriginKey struct{}

// WithChangeOrigin returns a context whose changes sent to OSM are audited as made for origin.
func WithChangeOrigin(ctx context.Context, origin ChangeOrigin) context.Context {
	return context.WithValue(ctx, changeOriginKey{}, origin)
}

func changeOriginOf(ctx context.Context) ChangeOrigin {
	origin, _ := ctx.Value(changeOriginKey{}).(ChangeOrigin)
	return origin
}

// WithAuditCluster names the OsmCluster (namespace/name) the Client serves in its audit lines.
func WithAuditCluster(cluster string) Option {
	return func(s *settings) error {
		s.auditCluster = cluster
		return nil
	}
}

// changes tells whether a request of method may change what OSM holds.
func changes(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// auditedAnswer is a decoded answer to a change that names what OSM made of it.
type auditedAnswer interface {
	// auditIDs returns the id of what OSM created and the id of the LCM operation it started.
	auditIDs() (created, operation string)
}

func (a *idAnswer) auditIDs() (string, string)          { return a.ID, "" }
func (a *operationAnswer) auditIDs() (string, string)   { return "", a.ID }
func (a *deletionAnswer) auditIDs() (string, string)    { return "", a.ID }
func (a *NSInstanceCreated) auditIDs() (string, string) { return a.ID, a.OperationID }

// sentChange is what the audit line tells of one change sent to OSM.
type sentChange struct {
	req request
	// attempts is how many times it was sent: 2 when OSM refused the token and it was sent again
	// with a new one.
	attempts int
	// status is OSM's HTTP status of the last attempt, 0 without an answer.
	status   int
	answer   any
	err      error
	duration time.Duration
}

// audit logs the one audit line of a change: where it went, what for and what OSM answered;
// never its body nor its query, which may carry values from Secrets, and every text from OSM
// made printable.
func (c *Client) audit(ctx context.Context, sent sentChange) {
	origin := changeOriginOf(ctx)
	keys := []any{
		"osmCluster", c.auditCluster,
		"osmDeployment", origin.Deployment,
		"revision", origin.Revision,
		"planDigest", origin.PlanDigest,
		"method", sent.req.method,
		"path", printable.String(c.displayPath(sent.req)),
		"status", sent.status,
		"outcome", auditOutcome(sent.err),
		"attempts", sent.attempts,
		"durationSeconds", sent.duration.Seconds(),
	}
	if answered, ok := sent.answer.(auditedAnswer); ok && sent.err == nil {
		created, operation := answered.auditIDs()
		if created != "" {
			keys = append(keys, "id", auditID(created))
		}
		if operation != "" {
			keys = append(keys, "operationId", auditID(operation))
		}
	}
	log.FromContext(ctx).Info(AuditMessage, keys...)
}

// auditOutcome names the kind of an answer, never its text, which may quote what was sent.
func auditOutcome(err error) string {
	var auth *AuthError
	var refused *APIError
	switch {
	case err == nil:
		return "accepted"
	case errors.As(err, &auth):
		// The token was refused and a new one could not be had: not sent again.
		return "not authenticated"
	case errors.As(err, &refused):
		return "refused"
	}
	return "no answer"
}

func auditID(id string) string {
	if len(id) > maxAuditIDBytes {
		id = id[:maxAuditIDBytes] + "[cut]"
	}
	return printable.String(id)
}
