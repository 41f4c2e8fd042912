// Package osm is the operator's client of OSM's north-bound REST interface
// (the NBI): authentication, descriptors and packages, NS and VNF instances,
// and LCM operations.
//
// A Client is safe for concurrent use. It keeps one token for all
// goroutines, renews it before it expires, and retries a call once after a
// 401; it retries nothing else, since the caller's work queue owns back-off
// (see IsTransient). Errors are *APIError (the NBI answered with an error),
// *AuthError (authentication failed) or *RequestError (no usable answer).
//
// It speaks OSM's records only: it must not import the GitOps model (internal/gitops), the engine,
// the controller, the API types (api/v1alpha1) or a Kubernetes client; the packages above it
// translate.
package osm

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// Defaults of the Client's settings.
const (
	DefaultTimeout          = time.Minute
	DefaultMaxResponseBytes = 256 << 20
	DefaultUserAgent        = "osmops"
	// maxSmallAnswerBytes bounds what is read of an answer that is small by nature: an error,
	// a login, the version, the ids a write returns. OSM's are well under 4 KiB; a larger one
	// is a hostile NBI filling the operator's memory (a 256 MiB login answer took the manager
	// past its memory limit).
	maxSmallAnswerBytes = 64 << 10
)

// Credentials are an OSM user's credentials.
type Credentials struct {
	Username string
	Password string
	// Project is the OSM project, by name or id.
	Project string
}

// String shows the user and project, never the password.
func (c Credentials) String() string {
	return fmt.Sprintf("user %q in project %q", c.Username, c.Project)
}

// GoString keeps %#v from printing the password.
func (c Credentials) GoString() string {
	return fmt.Sprintf("osm.Credentials{Username:%q, Password:\"[redacted]\", Project:%q}", c.Username, c.Project)
}

// Client talks to one OSM NBI as one user.
type Client struct {
	// baseURL is the NBI root, with the path prefix ("/osm" by default).
	baseURL          *url.URL
	credentials      Credentials
	httpClient       *http.Client
	userAgent        string
	timeout          time.Duration
	maxResponseBytes int64
	now              func() time.Time
	// slots is a semaphore on in-flight requests; nil means no limit.
	slots   chan struct{}
	metrics clientMetrics

	tokenMutex sync.Mutex
	token      *token
	// refusal is OSM's refusal of the credentials, kept until AllowLogin.
	refusal *AuthError
	// tokenRequests makes concurrent callers with no valid token share one token request.
	tokenRequests singleflight.Group
	// projectID is the id of the project OSM logged the Client in to, from the last login
	// that succeeded; loggedIn says that one did, so that the credentials are known good.
	projectID string
	loggedIn  bool
	// userID is the _id of the user OSM logged the Client in as, from the same login.
	userID string
	// userRecordRefused: OSM refused the user its own record once; it is not asked again.
	userRecordRefused bool

	// logins bounds the failed logins of every Client of the process (none when nil).
	logins      *LoginBudget
	loginHolder LoginHolder
	endpoint    string
	// auditCluster names the OsmCluster in audit lines (WithAuditCluster).
	auditCluster string

	// answeredVersion records that the endpoint answered the version check as OSM's NBI does:
	// until it did and granted a token (loggedIn), it has not proved it is an OSM, and its
	// error bodies are described, never quoted (a tenant may point an OsmCluster at any
	// internal service).
	answeredVersion atomic.Bool
}

// proven tells whether the endpoint proved it is an OSM NBI (see answeredVersion).
func (c *Client) proven() bool {
	if !c.answeredVersion.Load() {
		return false
	}
	c.tokenMutex.Lock()
	defer c.tokenMutex.Unlock()
	return c.loggedIn
}

// Option configures a Client.
type Option func(*settings) error

// settings collects the options before NewClient builds the HTTP client.
type settings struct {
	httpClient            *http.Client
	caBundle              []byte
	insecureSkipTLSVerify bool
	timeout               time.Duration
	maxConcurrent         int
	userAgent             string
	maxResponseBytes      int64
	now                   func() time.Time
	metrics               clientMetrics
	logins                *LoginBudget
	loginHolder           LoginHolder
	auditCluster          string
}

// WithCABundle makes the Client trust only the certificate authorities of a
// PEM bundle, instead of the system's, when it verifies the NBI's certificate.
func WithCABundle(pem []byte) Option {
	return func(s *settings) error {
		s.caBundle = pem
		return nil
	}
}

// WithInsecureSkipTLSVerify turns off the verification of the NBI's TLS
// certificate. Only for tests and demos.
func WithInsecureSkipTLSVerify(skip bool) Option {
	return func(s *settings) error {
		s.insecureSkipTLSVerify = skip
		return nil
	}
}

// WithTimeout bounds each HTTP request, from sending it to reading the
// answer (default DefaultTimeout).
func WithTimeout(timeout time.Duration) Option {
	return func(s *settings) error {
		if timeout <= 0 {
			return fmt.Errorf("WithTimeout: %v is not a positive duration", timeout)
		}
		s.timeout = timeout
		return nil
	}
}

// WithMaxConcurrentRequests bounds the number of requests in flight at once
// (default: no bound).
func WithMaxConcurrentRequests(n int) Option {
	return func(s *settings) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxConcurrentRequests: %d is not positive", n)
		}
		s.maxConcurrent = n
		return nil
	}
}

// NewClient makes a Client of the NBI at baseURL, such as
// "https://osm.example.com:9999". When baseURL has no path, the Client
// prefixes "/osm" to the NBI's routes; otherwise it uses the path as given
// (an NBI behind a proxy). TLS certificates are verified unless
// WithInsecureSkipTLSVerify says otherwise.
func NewClient(baseURL string, credentials Credentials, options ...Option) (*Client, error) {
	base, err := parseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	s := settings{timeout: DefaultTimeout, userAgent: DefaultUserAgent, maxResponseBytes: DefaultMaxResponseBytes, now: time.Now}
	for _, option := range options {
		if err := option(&s); err != nil {
			return nil, err
		}
	}
	httpClient, err := s.buildHTTPClient()
	if err != nil {
		return nil, err
	}
	client := &Client{
		baseURL:          base,
		credentials:      credentials,
		httpClient:       httpClient,
		userAgent:        s.userAgent,
		timeout:          s.timeout,
		maxResponseBytes: s.maxResponseBytes,
		now:              s.now,
		metrics:          s.metrics,
		logins:           s.logins,
		loginHolder:      s.loginHolder,
		auditCluster:     s.auditCluster,
		endpoint:         canonicalEndpoint(base, credentials.Project),
	}
	if s.maxConcurrent > 0 {
		client.slots = make(chan struct{}, s.maxConcurrent)
	}
	return client, nil
}

// parseBaseURL checks the NBI root URL and gives it its default path.
func parseBaseURL(baseURL string) (*url.URL, error) {
	base, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("OSM NBI URL: %w", err)
	}
	if base.Scheme != "http" && base.Scheme != "https" {
		return nil, fmt.Errorf("OSM NBI URL %q: the scheme must be http or https", base.Redacted())
	}
	if base.User != nil {
		return nil, fmt.Errorf("OSM NBI URL %q: credentials belong in the Credentials, not in the URL", base.Redacted())
	}
	if base.Host == "" {
		return nil, fmt.Errorf("OSM NBI URL %q has no host", baseURL)
	}
	if base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("OSM NBI URL %q: a query or fragment is not allowed", baseURL)
	}
	base.Path = strings.TrimSuffix(base.Path, "/")
	base.RawPath = ""
	if base.Path == "" {
		base.Path = "/osm"
	}
	return base, nil
}

// buildHTTPClient makes the HTTP client, applying the TLS options to a
// copy of the transport so that a caller's client is never changed.
func (s *settings) buildHTTPClient() (*http.Client, error) {
	httpClient := &http.Client{}
	if s.httpClient != nil {
		copied := *s.httpClient
		httpClient = &copied
	}
	// The NBI never redirects: a redirect would replay a login's password, or carry the
	// token, to wherever a tenant's URL points next, and let the operator read an internal
	// address for the tenant. The 3xx answer itself is returned, as an error.
	httpClient.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if s.caBundle == nil && !s.insecureSkipTLSVerify {
		return httpClient, nil
	}
	transport, err := cloneTransport(httpClient.Transport)
	if err != nil {
		return nil, err
	}
	if transport.TLSClientConfig == nil {
		transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if s.caBundle != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(s.caBundle) {
			return nil, errors.New("WithCABundle: the bundle holds no PEM certificate")
		}
		transport.TLSClientConfig.RootCAs = pool
	}
	transport.TLSClientConfig.InsecureSkipVerify = s.insecureSkipTLSVerify
	httpClient.Transport = transport
	return httpClient, nil
}

// cloneTransport copies an *http.Transport (http.DefaultTransport when nil)
// with a copy of its TLS configuration.
func cloneTransport(roundTripper http.RoundTripper) (*http.Transport, error) {
	if roundTripper == nil {
		roundTripper = http.DefaultTransport
	}
	transport, ok := roundTripper.(*http.Transport)
	if !ok {
		return nil, fmt.Errorf("the TLS options need an *http.Transport, not a %T", roundTripper)
	}
	return transport.Clone(), nil
}

// request is one NBI call, built by the pure functions of requests.go.
type request struct {
	method string
	// route is the path template, such as "/nslcm/v1/ns_instances/{id}/action":
	// the metrics' label, which must not hold ids.
	route string
	// path is the route with its ids, relative to the NBI root.
	path  string
	query url.Values
	// body is replayable, for the retry after a 401.
	body        []byte
	contentType string
	header      http.Header
	// anonymous requests carry no token.
	anonymous bool
	// refusalIsAnswer: a 401 to this request is OSM refusing it, not a token to renew (a
	// permission a role may lack); renewing would log in again at every such request.
	refusalIsAnswer bool
}

// displayPath is the URL path of a request, for errors and logs.
func (c *Client) displayPath(req request) string {
	return c.baseURL.Path + req.path
}

// do sends an authenticated request whose answer, small by nature, is not needed.
func (c *Client) do(ctx context.Context, req request) error {
	return c.doAuthenticated(ctx, req, oneObject(maxSmallAnswerBytes, nil))
}

// doAuthenticated sends a request with the token and reads a 2xx answer as answer says. A 401
// invalidates the token; the request is then sent once more with a new token. A change (any
// method but GET) is audited once, whether it was sent once or twice.
func (c *Client) doAuthenticated(ctx context.Context, req request, answer answerReading) error {
	if !changes(req.method) {
		_, err := c.sendAuthenticated(ctx, req, answer)
		return err
	}
	sent := sentChange{req: req, answer: answer.decoded}
	read := answer.read
	answer.read = func(status int, body *answerBody) error {
		sent.status = status
		return read(status, body)
	}
	started := time.Now()
	sent.attempts, sent.err = c.sendAuthenticated(ctx, req, answer)
	if sent.attempts > 0 {
		sent.duration = time.Since(started)
		if status := statusOf(sent.err); status != 0 {
			sent.status = status
		}
		c.audit(ctx, sent)
	}
	return sent.err
}

// sendAuthenticated is doAuthenticated's sending: it returns how many times it sent req.
func (c *Client) sendAuthenticated(ctx context.Context, req request, answer answerReading) (int, error) {
	if req.anonymous {
		return 1, c.send(ctx, req, "", answer)
	}
	current, err := c.validToken(ctx)
	if err != nil {
		return 0, err
	}
	err = c.send(ctx, req, current.id, answer)
	if statusOf(err) != http.StatusUnauthorized || req.refusalIsAnswer {
		return 1, err
	}
	c.invalidate(current)
	renewed, err := c.validToken(ctx)
	if err != nil {
		return 1, err
	}
	return 2, c.send(ctx, req, renewed.id, answer)
}

// send makes one HTTP request and reads a 2xx answer as answer says, within the Client's
// maxResponseBytes. A non-2xx answer is an *APIError; a failure to get or read an answer is a
// *RequestError.
func (c *Client) send(ctx context.Context, req request, bearer string, answer answerReading) error {
	path := c.displayPath(req)
	if err := c.acquireSlot(ctx); err != nil {
		return transportError(req.method, path, err)
	}
	defer c.releaseSlot()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	// req.path is already escaped (ids go through url.PathEscape).
	target := c.baseURL.Scheme + "://" + c.baseURL.Host + c.baseURL.EscapedPath() + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	httpRequest, err := http.NewRequestWithContext(ctx, req.method, target, bytes.NewReader(req.body))
	if err != nil {
		return &RequestError{Method: req.method, Path: path, Err: err}
	}
	maps.Copy(httpRequest.Header, req.header)
	httpRequest.Header.Set("Accept", "application/json")
	httpRequest.Header.Set("User-Agent", c.userAgent)
	if req.contentType != "" {
		httpRequest.Header.Set("Content-Type", req.contentType)
	}
	if bearer != "" {
		httpRequest.Header.Set("Authorization", "Bearer "+bearer)
	}

	started := time.Now()
	httpResponse, err := c.httpClient.Do(httpRequest)
	if err != nil {
		c.metrics.observe(req, 0, len(req.body), 0, time.Since(started))
		return transportError(req.method, path, err)
	}
	defer httpResponse.Body.Close()
	status := httpResponse.StatusCode
	if status >= 300 && status < 400 {
		c.metrics.observe(req, status, len(req.body), 0, time.Since(started))
		return &RequestError{Method: req.method, Path: path, Err: fmt.Errorf(
			"the NBI answered %d, a redirect to %s: not followed", status, redirectTarget(httpResponse.Header.Get("Location")))}
	}
	success := status >= 200 && status < 300
	limit := int64(maxSmallAnswerBytes)
	if success {
		limit = min(answer.maxBytes, c.maxResponseBytes)
	}
	if httpResponse.ContentLength > limit {
		c.metrics.observe(req, status, len(req.body), 0, time.Since(started))
		return &RequestError{Method: req.method, Path: path, Err: fmt.Errorf(
			"the %d answer announces %d bytes, more than the %d accepted: not read", status, httpResponse.ContentLength, limit)}
	}
	if !success {
		body, err := io.ReadAll(io.LimitReader(httpResponse.Body, limit+1))
		c.metrics.observe(req, status, len(req.body), len(body), time.Since(started))
		if err != nil {
			return transportError(req.method, path, err)
		}
		contentType := httpResponse.Header.Get("Content-Type")
		refusal := newAPIError(req.method, path, status, contentType, body, c.proven(), c.credentials.Password, bearer)
		logRefusedBody(ctx, refusal, contentType, body, c.credentials.Password, bearer)
		return refusal
	}
	body := &answerBody{reader: httpResponse.Body, maxBytes: limit}
	err = answer.read(status, body)
	c.metrics.observe(req, status, len(req.body), int(body.read), time.Since(started))
	switch {
	case body.connectionError != nil:
		return transportError(req.method, path, body.connectionError)
	case err != nil:
		return &RequestError{Method: req.method, Path: path, Err: err}
	}
	return nil
}

// redirectTarget names where a redirect points, scheme and host only: its path and query may
// hold what a tenant wants to read back through the operator's messages.
func redirectTarget(location string) string {
	target, err := url.Parse(location)
	if err != nil || target.Host == "" {
		return "another path"
	}
	return target.Scheme + "://" + target.Host
}

// transportError wraps an error of the HTTP client; url.Error is unwrapped
// since the RequestError already names the request.
func transportError(method, path string, err error) *RequestError {
	if urlError, ok := errors.AsType[*url.Error](err); ok {
		err = urlError.Err
	}
	return &RequestError{Method: method, Path: path, Err: err, transient: isTransientCause(err)}
}

func (c *Client) acquireSlot(ctx context.Context) error {
	if c.slots == nil {
		return nil
	}
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) releaseSlot() {
	if c.slots != nil {
		<-c.slots
	}
}

// String names the NBI and the user, never the password, so that printing
// a Client cannot leak it.
func (c *Client) String() string {
	return fmt.Sprintf("OSM NBI client of %s as %s", c.baseURL.Redacted(), c.credentials)
}

// GoString is String, for %#v.
func (c *Client) GoString() string { return c.String() }
