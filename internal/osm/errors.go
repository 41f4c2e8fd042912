package osm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"
)

// APIError is an answer of the NBI with a status code other than 2xx.
type APIError struct {
	// StatusCode is the HTTP status code.
	StatusCode int
	// Code is OSM's error code, such as "CONFLICT"; empty when the body was
	// not OSM's error JSON.
	Code string
	// Detail is OSM's explanation, or a short printable excerpt of a body
	// that was not OSM's error JSON.
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
	var apiError *APIError
	if errors.As(err, &apiError) {
		return apiError.StatusCode
	}
	return 0
}

// IsNotFound tells whether err is the NBI's 404 (an unknown id).
func IsNotFound(err error) bool { return statusOf(err) == http.StatusNotFound }

// IsConflict tells whether err is the NBI's 409 (a duplicate, an object in
// use, or an NS instance busy with another operation).
func IsConflict(err error) bool { return statusOf(err) == http.StatusConflict }

// IsBadRequest tells whether err is the NBI's 400.
func IsBadRequest(err error) bool { return statusOf(err) == http.StatusBadRequest }

// IsUnprocessable tells whether err is the NBI's 422 (a schema error).
func IsUnprocessable(err error) bool { return statusOf(err) == http.StatusUnprocessableEntity }

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

// maxDetailRunes bounds the excerpt of a body that is not OSM's error JSON.
const maxDetailRunes = 300

// osmError is the body of the NBI's error answers.
type osmError struct {
	Code   string `json:"code"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// newAPIError makes the error for a non-2xx answer; secrets are redacted
// from the detail in case the body echoed the request.
func newAPIError(method, path string, status int, body []byte, secrets ...string) *APIError {
	result := &APIError{StatusCode: status, Method: method, Path: path}
	var answer osmError
	if err := json.Unmarshal(body, &answer); err == nil && (answer.Code != "" || answer.Detail != "") {
		result.Code, result.Detail = answer.Code, answer.Detail
	} else {
		result.Detail = printableExcerpt(body)
	}
	result.Detail = redact(result.Detail, secrets...)
	return result
}

// printableExcerpt returns the start of body on one line, without control
// characters, at most maxDetailRunes long.
func printableExcerpt(body []byte) string {
	text := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "?")), " ")
	text = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, text)
	if runes := []rune(text); len(runes) > maxDetailRunes {
		text = string(runes[:maxDetailRunes]) + "..."
	}
	return text
}

// redact replaces every non-empty secret in text.
func redact(text string, secrets ...string) string {
	for _, secret := range secrets {
		if secret != "" {
			text = strings.ReplaceAll(text, secret, "[redacted]")
		}
	}
	return text
}
