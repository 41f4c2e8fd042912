package osm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// token is a bearer token of the NBI.
type token struct {
	id string
	// renewAt is when the token is too close to expiring to be used.
	renewAt time.Time
}

// maxRenewalMargin caps how long before its expiry a token is renewed.
const maxRenewalMargin = 5 * time.Minute

// The lifetimes of a token read from a login answer (answerDuration). A shorter one is read as
// minTokenLifetime, so that no answer makes every request log in again (OSM refusing the
// token sooner renews it then, once); a longer one as maxTokenLifetime, against OSM's default
// hour: at most one login a day more than OSM asks.
const (
	minTokenLifetime = time.Minute
	maxTokenLifetime = 24 * time.Hour
)

// tokenAnswer is the NBI's answer to a token request.
type tokenAnswer struct {
	ID       string `json:"id"`
	Expires  Number `json:"expires"`
	IssuedAt Number `json:"issued_at"`
	// Message is "change_password" when OSM wants the password changed.
	Message string `json:"message"`
	// ProjectID is the _id of the project the token is for: a UUID of one OSM installation.
	ProjectID string `json:"project_id"`
	// UserID is the _id of the user logged in: its record tells when its credentials expire.
	UserID string `json:"user_id"`
}

// osmIDPattern is what a project or user id may be to name an OSM's: OSM's are UUIDs,
// Keystone's 32 hexadecimal digits. Anything else is not trusted to say which OSM answered.
var osmIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// newToken works out when to renew the token of answer, received at now, which expires at
// expires (its expires, a time): when less than 10% of its lifetime or 5 minutes remain,
// whichever is less. The lifetime is expires-issued_at, both from OSM's clock, so that a clock
// difference between OSM and the operator does not matter; without an issued_at that is a
// time, it is expires-now. It is read within [minTokenLifetime, maxTokenLifetime]; warn is
// told of what was out of range.
func newToken(answer tokenAnswer, expires, now time.Time, warn func(field, readAs string)) *token {
	lifetime := expires.Sub(now)
	switch issued, ok := answerTime(answer.IssuedAt); {
	case !ok:
		warn("issued_at", "absent: the lifetime runs from osmops' clock")
	case !issued.IsZero():
		lifetime = expires.Sub(issued)
	}
	lifetime, ok := answerDuration(lifetime.Seconds(), minTokenLifetime, maxTokenLifetime)
	if !ok {
		warn("expires", "a lifetime of "+lifetime.String())
	}
	margin := min(lifetime/10, maxRenewalMargin)
	return &token{id: answer.ID, renewAt: now.Add(lifetime - margin)}
}

// refusedLogin returns the error of a login OSM refused, while the Client holds back from
// logging in again.
func (c *Client) refusedLogin() *AuthError {
	c.tokenMutex.Lock()
	defer c.tokenMutex.Unlock()
	return c.refusal
}

// currentToken returns the token if it is still good to use.
func (c *Client) currentToken() *token {
	c.tokenMutex.Lock()
	defer c.tokenMutex.Unlock()
	if c.token != nil && c.now().Before(c.token.renewAt) {
		return c.token
	}
	return nil
}

// invalidate forgets a token the NBI refused, unless it was already replaced.
func (c *Client) invalidate(refused *token) {
	c.tokenMutex.Lock()
	defer c.tokenMutex.Unlock()
	if c.token == refused {
		c.token = nil
	}
}

// validToken returns a token that is good to use, asking the NBI for one
// when needed. Concurrent callers share a single token request.
func (c *Client) validToken(ctx context.Context) (*token, error) {
	if current := c.currentToken(); current != nil {
		return current, nil
	}
	if refused := c.refusedLogin(); refused != nil {
		return nil, refused
	}
	results := c.tokenRequests.DoChan("token", func() (any, error) {
		// Another request may have finished between the check above and now.
		if current := c.currentToken(); current != nil {
			return current, nil
		}
		// Detached from this caller's cancellation because other callers wait
		// for the same answer; the request timeout still bounds it.
		fresh, err := c.login(context.WithoutCancel(ctx))
		var refused *AuthError
		if errors.As(err, &refused) && !IsLoginBudgetSpent(err) {
			// OSM locks an account after a few failed logins (five, by default): the same
			// credentials are not sent again until AllowLogin.
			c.tokenMutex.Lock()
			c.refusal = refused
			c.tokenMutex.Unlock()
		}
		if err != nil {
			return nil, err
		}
		c.tokenMutex.Lock()
		c.token = fresh
		c.tokenMutex.Unlock()
		return fresh, nil
	})
	select {
	case result := <-results:
		if result.Err != nil {
			return nil, result.Err
		}
		return result.Val.(*token), nil
	case <-ctx.Done():
		req := tokenRequest(c.credentials)
		return nil, transportError(req.method, c.displayPath(req), ctx.Err())
	}
}

// login asks the NBI for a new token, within the login budget (WithLoginBudget); it records
// the project OSM logged the Client in to.
func (c *Client) login(ctx context.Context) (*token, error) {
	c.tokenMutex.Lock()
	trusted := c.loggedIn
	c.tokenMutex.Unlock()
	var attempt *loginAttempt
	if c.logins != nil {
		var err error
		if attempt, err = c.logins.take(c.endpoint, c.credentials, c.loginHolder, trusted); err != nil {
			return nil, c.authError("osmops holds this login back", err)
		}
	}
	fresh, ids, err := c.requestToken(ctx)
	if attempt != nil {
		// An answer other than 401 that is an AuthError (a password OSM wants changed) is a
		// password OSM accepted: it forgot the failures too.
		refused := statusOf(err) == http.StatusUnauthorized
		var accepted *AuthError
		c.logins.settle(attempt, refused, err == nil || !refused && errors.As(err, &accepted))
	}
	if err != nil {
		return nil, err
	}
	c.tokenMutex.Lock()
	c.loggedIn = true
	c.projectID, c.userID = ids.project, ids.user
	c.tokenMutex.Unlock()
	return fresh, nil
}

// loginIDs are the ids a login answer names that can be trusted to be OSM's ids ("" when not).
type loginIDs struct{ project, user string }

// ProjectID returns the id of the project OSM logged the Client in to at its last successful
// login ("" before one, or when OSM named none that can identify it): two Clients with one
// ProjectID reach one OSM project, however their URLs are written.
func (c *Client) ProjectID() string {
	c.tokenMutex.Lock()
	defer c.tokenMutex.Unlock()
	return c.projectID
}

// requestToken asks the NBI for a new token; it returns the token's project and user ids, ""
// when they are not ones that can identify an OSM project and user.
func (c *Client) requestToken(ctx context.Context) (*token, loginIDs, error) {
	req := tokenRequest(c.credentials)
	var decoded tokenAnswer
	started := time.Now()
	err := c.send(ctx, req, "", oneObject(maxSmallAnswerBytes, &decoded))
	if status := statusOf(err); status != 0 {
		// A refused login is audited: OSM counts it and locks the account after a few. A token
		// granted is not, as it changes nothing the operator manages.
		c.audit(ctx, sentChange{req: req, attempts: 1, status: status, err: err, duration: time.Since(started)})
	}
	if statusOf(err) == http.StatusUnauthorized {
		return nil, loginIDs{}, c.authError("OSM refused the username, password or project", err)
	}
	if err != nil {
		return nil, loginIDs{}, err
	}
	// An expiry that is no time is dropped, as none.
	expires, _ := answerTime(decoded.Expires)
	switch {
	case decoded.Message == "change_password":
		return nil, loginIDs{}, c.authError("OSM wants the password changed before it accepts it; "+
			"change it (for example with the osm client) and update the credentials", nil)
	case expires.IsZero():
		return nil, loginIDs{}, c.authError(fmt.Sprintf("the token answer has no expiry that is a time between 1970 and 9999 (message %q)", decoded.Message), nil)
	case decoded.ID == "":
		return nil, loginIDs{}, &RequestError{Method: req.method, Path: c.displayPath(req), Err: errors.New("the token answer has no id")}
	}
	var ids loginIDs
	if osmIDPattern.MatchString(decoded.ProjectID) {
		ids.project = decoded.ProjectID
	}
	if osmIDPattern.MatchString(decoded.UserID) {
		ids.user = decoded.UserID
	}
	warn := func(field, readAs string) { c.warnOutOfRange(ctx, req, field, readAs) }
	return newToken(decoded, expires, c.now(), warn), ids, nil
}

func (c *Client) authError(reason string, err error) *AuthError {
	return &AuthError{Username: c.credentials.Username, Project: c.credentials.Project, Reason: reason, Err: err}
}

// AllowLogin lets the Client log in again after OSM refused its credentials. Until then, every
// call fails with the refusal and sends nothing, so that retries cannot lock the account.
func (c *Client) AllowLogin() {
	c.tokenMutex.Lock()
	c.refusal = nil
	c.tokenMutex.Unlock()
}

// Authenticate gets a new token now, checking the credentials; after a refused login it
// returns the refusal without asking OSM (see AllowLogin).
func (c *Client) Authenticate(ctx context.Context) error {
	c.tokenMutex.Lock()
	c.token = nil
	c.tokenMutex.Unlock()
	_, err := c.validToken(ctx)
	return err
}
