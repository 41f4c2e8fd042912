package osm

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/osmops/osmops/internal/pyjson"
)

// APIError is an answer of the NBI with a status code other than 2xx.
type APIError struct {
	// StatusCode is the HTTP status code.
	StatusCode int
	// Code is OSM's error code, such as "CONFLICT"; empty when the body was
	// not OSM's error JSON.
	Code string
	// Detail is OSM's explanation, bounded, or a description (size, content
	// type) of a body that was not OSM's error JSON, which is never quoted.
	Detail string
	// Method is the request's HTTP method.
	Method string
	// Path is the request's URL path, without query.
	Path string
}

// Error renders as "OSM NBI POST /osm/nslcm/v1/ns_instances_content: 409 CONFLICT: <detail>".
func (e *APIError) Error() string {
	code := e.Code
	if code == "" {
		code = strings.ToUpper(strings.ReplaceAll(http.StatusText(e.StatusCode), " ", "_"))
	}
	message := fmt.Sprintf("OSM NBI %s %s: %d %s", e.Method, e.Path, e.StatusCode, code)
	if e.Detail != "" {
		message += ": " + e.Detail
	}
	return message
}

// AuthError is a failed authentication: wrong credentials, a password that
// OSM wants changed, or a token request that failed for another reason
// (then Err says why). It never holds the password.
type AuthError struct {
	Username string
	Project  string
	// Reason says what went wrong.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Error names the user and project, never the password.
func (e *AuthError) Error() string {
	message := fmt.Sprintf("OSM NBI authentication of user %q in project %q failed: %s", e.Username, e.Project, e.Reason)
	if e.Err != nil {
		message += ": " + e.Err.Error()
	}
	return message
}

// Unwrap returns the underlying error.
func (e *AuthError) Unwrap() error { return e.Err }

// RequestError is a request that got no usable answer: a network error, a
// timeout, a TLS failure, an answer too large, or a 2xx answer whose body
// was not the JSON expected.
type RequestError struct {
	Method string
	// Path is the request's URL path, without query.
	Path string
	Err  error
	// transient tells whether a retry may succeed (a network error or a timeout).
	transient bool
}

// Error renders as "OSM NBI GET /osm/version: <cause>".
func (e *RequestError) Error() string {
	return fmt.Sprintf("OSM NBI %s %s: %v", e.Method, e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *RequestError) Unwrap() error { return e.Err }

// statusOf returns the status code of an *APIError in err's chain, or 0.
func statusOf(err error) int {
	if apiError, ok := errors.AsType[*APIError](err); ok {
		return apiError.StatusCode
	}
	return 0
}

// IsNotFound tells whether err is the NBI's 404 (an unknown id).
func IsNotFound(err error) bool { return statusOf(err) == http.StatusNotFound }

// IsConflict tells whether err is the NBI's 409 (a duplicate, an object in
// use, or an NS instance busy with another operation).
func IsConflict(err error) bool { return statusOf(err) == http.StatusConflict }

// IsUnauthorized tells whether err is a 401 or any failed authentication.
func IsUnauthorized(err error) bool {
	var authError *AuthError
	return statusOf(err) == http.StatusUnauthorized || errors.As(err, &authError)
}

// IsTransient tells whether retrying the same call later may succeed:
// network errors, timeouts, 5xx and 429. Other 4xx answers, TLS verification
// failures and a cancelled context are not transient.
func IsTransient(err error) bool {
	if status := statusOf(err); status != 0 {
		return status >= 500 || status == http.StatusTooManyRequests
	}
	var requestError *RequestError
	return errors.As(err, &requestError) && requestError.transient
}

// isTransientCause tells whether a transport error may go away on a retry.
func isTransientCause(err error) bool {
	return !errors.Is(err, context.Canceled) && !IsCertificateError(err)
}

// IsCertificateError tells whether err is the NBI's TLS certificate failing verification
// (unknown authority, wrong host name, invalid): a person must fix the CA bundle or the
// address, and retrying cannot help.
func IsCertificateError(err error) bool {
	var (
		unknownAuthority x509.UnknownAuthorityError
		invalid          x509.CertificateInvalidError
		hostname         x509.HostnameError
		verification     *tls.CertificateVerificationError
	)
	return errors.As(err, &unknownAuthority) || errors.As(err, &invalid) ||
		errors.As(err, &hostname) || errors.As(err, &verification)
}

// maxDetailRunes bounds OSM's detail in an error: it reaches the tenant's status and events.
const maxDetailRunes = 1000

// minRedactedSecret is the shortest secret searched for in answers: a shorter one would wipe
// every message it appears in by chance (OSM itself refuses passwords under 8 characters).
const minRedactedSecret = 4

type osmError struct {
	Code   string `json:"code"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// newAPIError makes the error for a non-2xx answer. Only OSM's own error fields are kept, with
// the secrets of the request redacted in case the body echoed them, and only from an endpoint
// that proved it is an OSM NBI (proven); any other body is described, never quoted: a tenant
// who points its OsmCluster at another service must not read that service's answers, even
// shaped as OSM's ({"detail": ...}), in its status.
func newAPIError(method, path string, status int, contentType string, body []byte, proven bool, secrets ...string) *APIError {
	result := &APIError{StatusCode: status, Method: method, Path: path}
	if !proven {
		if len(body) > 0 {
			result.Detail = fmt.Sprintf("a %d-byte %s answer, not shown: the endpoint has not yet proved it is an OSM NBI (answered its version and accepted a login)",
				len(body), describeContentType(contentType))
		}
		return result
	}
	var answer osmError
	if err := json.Unmarshal(body, &answer); err == nil && (answer.Code != "" || answer.Detail != "") {
		result.Code = oneLine(redact(answer.Code, secrets...), 64)
		result.Detail = oneLine(redact(answer.Detail, secrets...), maxDetailRunes)
		return result
	}
	if len(body) > 0 {
		result.Detail = fmt.Sprintf("a %d-byte %s answer, not OSM's error format", len(body), describeContentType(contentType))
	}
	return result
}

// logRefusedBody writes the body of a refused request to the debug log: status and events
// show only OSM's error fields, and whoever runs the operator may need the rest (a proxy's
// page, a stack trace). It is redacted as an error's detail is; a body cut at the bound of
// what is read (maxSmallAnswerBytes) loses its last bytes too, since the start of a secret
// there would not be recognised.
func logRefusedBody(ctx context.Context, refusal *APIError, contentType string, body []byte, secrets ...string) {
	logger := log.FromContext(ctx).V(1)
	if !logger.Enabled() || len(body) == 0 {
		return
	}
	text := redact(strings.ToValidUTF8(string(body), "?"), secrets...)
	if cut := len(body) > maxSmallAnswerBytes; cut {
		longest := 0
		for _, secret := range secrets {
			longest = max(longest, len(secretForms(secret)[0]))
		}
		text = strings.ToValidUTF8(text[:max(0, len(text)-longest)], "") + " [cut]"
	}
	logger.Info("OSM NBI refused a request", "method", refusal.Method, "path", refusal.Path,
		"status", refusal.StatusCode, "contentType", contentType, "body", text)
}

// describeContentType names a media type for a message, or "untyped".
func describeContentType(contentType string) string {
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil || len(media) > 64 {
		return "untyped"
	}
	return media
}

// oneLine makes text printable on one line, with its white space collapsed, at most max runes.
func oneLine(text string, max int) string {
	text = collapseSpace(strings.ToValidUTF8(text, "?"))
	text = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, text)
	if runes := []rune(text); len(runes) > max {
		text = string(runes[:max]) + "..."
	}
	return text
}

// redact replaces every secret in text, in each form an answer may echo it: as sent, escaped
// for JSON (by Go, with and without HTML escaping, and by Python, which also escapes every
// non-ASCII character), escaped for a URL, each also with its white space collapsed as the
// text's is. It runs before any cut, so that no part of a secret survives at the end of an
// excerpt.
func redact(text string, secrets ...string) string {
	text = collapseSpace(text)
	for _, secret := range secrets {
		if len(secret) < minRedactedSecret {
			continue
		}
		for _, form := range secretForms(secret) {
			if collapsed := collapseSpace(form); len(collapsed) >= minRedactedSecret {
				text = strings.ReplaceAll(text, collapsed, "[redacted]")
			}
		}
	}
	return text
}

// collapseSpace turns every run of white space into one space and trims the ends.
func collapseSpace(text string) string {
	return strings.Join(strings.Fields(text), " ")
}

// secretForms lists the ways an echoed secret may be written, longest first so that a form
// containing another is replaced whole.
func secretForms(secret string) []string {
	quoted := pyjson.Quote(secret)
	forms := []string{secret, url.QueryEscape(secret), url.PathEscape(secret), quoted[1 : len(quoted)-1]}
	if escaped, err := json.Marshal(secret); err == nil {
		forms = append(forms, string(escaped[1:len(escaped)-1]))
	}
	var plain bytes.Buffer
	encoder := json.NewEncoder(&plain)
	encoder.SetEscapeHTML(false)
	if encoder.Encode(secret) == nil {
		trimmed := strings.TrimSpace(plain.String())
		forms = append(forms, trimmed[1:len(trimmed)-1])
	}
	slices.SortFunc(forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return slices.Compact(forms)
}
