package artifact

import (
	"errors"
	"fmt"
	"net/url"
)

// ErrInvalidArtifact is wrapped by every error that blames the artifact
// itself: a digest mismatch, a tarball that breaks the unpacking rules, an
// artifact over the size limits, a malformed digest or URL. Fetching the same
// artifact again cannot succeed, so the caller should stall until the source
// produces a new revision.
var ErrInvalidArtifact = errors.New("invalid artifact")

// invalidf makes an error that wraps ErrInvalidArtifact.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArtifact, fmt.Sprintf(format, args...))
}

// HTTPError is an answer other than 200 OK from the artifact server.
type HTTPError struct {
	// StatusCode is the HTTP status code, e.g. 404.
	StatusCode int
	// Status is the status line text, e.g. "404 Not Found".
	Status string
	// URL is the artifact URL without user info, query or fragment, so that
	// it can be shown without leaking credentials.
	URL string
}

// Error names the URL and the status.
func (e *HTTPError) Error() string {
	return fmt.Sprintf("downloading artifact %s: HTTP %s", e.URL, e.Status)
}

// redactURL renders u without the parts that may carry credentials: user
// info, query (pre-signed URLs put tokens there) and fragment.
func redactURL(u *url.URL) string {
	shown := *u
	shown.User = nil
	shown.RawQuery = ""
	shown.ForceQuery = false
	shown.Fragment = ""
	shown.RawFragment = ""
	return shown.String()
}
