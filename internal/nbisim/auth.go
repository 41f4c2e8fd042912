package nbisim

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The NBI's authentication messages (osm_nbi/auth.py and
// authconn_internal.py of release 19).
const (
	msgNeedToken         = "Needed a token or Authorization http header"
	msgInvalidToken      = "Invalid Token or Authorization HTTP header"
	msgExpiredToken      = "Expired Token or Authorization HTTP header"
	msgBadCredentials    = "Invalid username/password"
	msgNoCredentials     = "Provide credentials: username/password or Authorization Bearer token"
	msgNotJSONObject     = "Expected application/yaml or application/json Content-Type"
	msgAccountLocked     = "Failed to login as the account is locked due to MANY FAILED ATTEMPTS"
	tokenAlphabet        = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	tokenLength          = 32
	maxTokensBeforePrune = 10000
	// maxPasswordAttempts is nbi.cfg's max_pwd_attempt (user_management: True).
	maxPasswordAttempts = 5
	// adminUsername is the user authconn_internal.py never locks nor expires.
	adminUsername = "admin"
)

type token struct {
	id      string
	issued  time.Time
	expires time.Time
}

// tokenDoc is the answer to a login, members in the NBI's order.
type tokenDoc struct {
	IssuedAt    epochTime   `json:"issued_at"`
	Expires     epochTime   `json:"expires"`
	UID         string      `json:"_id"`
	ID          string      `json:"id"`
	ProjectID   string      `json:"project_id"`
	ProjectName string      `json:"project_name"`
	Username    string      `json:"username"`
	UserID      string      `json:"user_id"`
	Admin       bool        `json:"admin"`
	Roles       []tokenRole `json:"roles"`
	LoginCount  int         `json:"login_count"`
	LastLogin   epochTime   `json:"last_login"`
	AdminShow   bool        `json:"admin_show"`
	UserShow    bool        `json:"user_show"`
	RemotePort  int         `json:"remote_port"`
	RemoteHost  string      `json:"remote_host"`
}

type tokenRole struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// newToken serves POST /admin/v1/tokens: {"username","password","project_id"}.
func (s *Server) newToken(c *call) (response, *nbiError) {
	body, err := c.jsonBody()
	if err != nil {
		return response{}, err
	}
	input, isObject := body.(*object)
	if !isObject {
		return response{}, errorf(http.StatusBadRequest, msgNotJSONObject)
	}
	username, password := input.str("username"), input.str("password")
	switch {
	case username == "":
		return response{}, unauthorized(msgNoCredentials)
	case username != s.cfg.Username:
		return response{}, unauthorized(msgBadCredentials)
	}
	if err := s.checkPassword(password); err != nil {
		return response{}, err
	}
	// AuthconnInternal.authenticate: the token shows the failed logins
	// since the last one as login_count, then they are forgotten.
	loginCount := s.loginFailures
	s.loginFailures = 0
	if project := input.str("project_id"); project != "" && project != s.cfg.Project && project != s.projectID {
		return response{}, unauthorized(fmt.Sprintf("project %s not allowed for this user", project))
	}

	s.pruneTokens(c.now)
	t := &token{id: randomTokenID(), issued: c.now, expires: c.now.Add(s.tokenLifetime)}
	lastLogin := s.lastLogin
	if lastLogin.IsZero() {
		lastLogin = c.now
	}
	s.lastLogin = c.now
	s.tokens[t.id] = t
	host, port := remoteAddress(c.request)
	answer := jsonResponse(http.StatusOK, tokenDoc{
		IssuedAt: epoch(t.issued), Expires: epoch(t.expires), UID: t.id, ID: t.id,
		ProjectID: s.projectID, ProjectName: s.cfg.Project,
		Username: s.cfg.Username, UserID: s.userID, Admin: true,
		Roles:      []tokenRole{{Name: "system_admin", ID: s.roleID}},
		LoginCount: loginCount, LastLogin: epoch(lastLogin), RemotePort: port, RemoteHost: host,
	})
	return answer.withHeader("Location", tokenPathPrefix+t.id), nil
}

// checkPassword is AuthconnInternal.validate_user for the configured user,
// with nbi.cfg's user_management: True. A user other than admin that is
// locked cannot log in, whatever the password; a wrong password counts in
// _admin.retry_count, and the failure that finds max_pwd_attempt - 1
// failures before it locks the user other than admin.
func (s *Server) checkPassword(password string) *nbiError {
	lockable := s.cfg.Username != adminUsername
	if lockable && s.loginLocked {
		return unauthorized(msgAccountLocked)
	}
	if password == s.cfg.Password {
		return nil
	}
	before := s.loginFailures
	s.loginFailures++
	if lockable && before >= maxPasswordAttempts-1 {
		s.loginLocked = true
		return unauthorized(msgAccountLocked)
	}
	return unauthorized(msgBadCredentials)
}

// UnlockUser unlocks the user and forgets its failed logins, as an
// administrator's edit of the user with {"unlock": true,
// "system_admin_id": ...} does (AuthconnInternal.update_user).
func (s *Server) UnlockUser() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loginFailures = 0
	s.loginLocked = false
}

// UserState is the NBI's user, the one of Config.Username.
type UserState struct {
	Username string `json:"username"`
	// Status is the user's _admin.user_status: "always-active" for admin,
	// else "active" or, after too many failed logins, "locked".
	Status string `json:"status"`
	// RetryCount is _admin.retry_count: the failed logins since the last
	// successful one.
	RetryCount int `json:"retryCount"`
}

func (s *Server) userState() UserState {
	user := UserState{Username: s.cfg.Username, Status: "active", RetryCount: s.loginFailures}
	switch {
	case s.cfg.Username == adminUsername:
		user.Status = "always-active"
	case s.loginLocked:
		user.Status = "locked"
	}
	return user
}

// deleteToken serves DELETE /admin/v1/tokens/{id}: like the NBI, knowing a
// token's id is enough to revoke it.
func (s *Server) deleteToken(c *call) (response, *nbiError) {
	id := c.param(0)
	if _, found := s.tokens[id]; !found {
		// The NBI quotes the id; a token is never quoted here.
		return response{}, errorf(http.StatusNotFound, "Token not found")
	}
	delete(s.tokens, id)
	return jsonResponse(http.StatusOK, fmt.Sprintf("token '%s' deleted", id)), nil
}

// deleteCurrentToken serves DELETE /admin/v1/tokens: log out the caller.
func (s *Server) deleteCurrentToken(c *call) (response, *nbiError) {
	delete(s.tokens, c.token.id)
	return jsonResponse(http.StatusOK, fmt.Sprintf("token '%s' deleted", c.token.id)), nil
}

// authorize checks the bearer token of a request.
func (s *Server) authorize(r *http.Request, now time.Time) (*token, *nbiError) {
	id := bearerToken(r)
	if id == "" {
		return nil, unauthorized(msgNeedToken)
	}
	t, found := s.tokens[id]
	switch {
	case !found:
		return nil, unauthorized(msgInvalidToken)
	case t.expires.Before(now):
		return nil, unauthorized(msgExpiredToken)
	}
	return t, nil
}

func bearerToken(r *http.Request) string {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) < 2 || !strings.EqualFold(fields[0], "bearer") {
		return ""
	}
	return fields[len(fields)-1]
}

// unauthorized is a 401 with the challenge header the NBI adds.
func unauthorized(detail string) *nbiError {
	err := errorf(http.StatusUnauthorized, "%s", detail)
	err.header = http.Header{"Www-Authenticate": {fmt.Sprintf("Bearer realm=%q", detail)}}
	return err
}

// pruneTokens forgets expired tokens once there are many, so that a
// benchmark logging in for every command does not grow memory forever.
func (s *Server) pruneTokens(now time.Time) {
	if len(s.tokens) < maxTokensBeforePrune {
		return
	}
	for id, t := range s.tokens {
		if t.expires.Before(now) {
			delete(s.tokens, id)
		}
	}
}

// randomTokenID makes a token like the NBI's: 32 random letters and digits.
func randomTokenID() string {
	b := make([]byte, tokenLength)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	for i := range b {
		b[i] = tokenAlphabet[int(b[i])%len(tokenAlphabet)]
	}
	return string(b)
}

func remoteAddress(r *http.Request) (string, int) {
	host, portText, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr, 0
	}
	port, _ := strconv.Atoi(portText)
	return host, port
}

// RevokeTokens invalidates every token, as a restart of OSM's NBI with a
// fresh database would; it returns how many there were.
func (s *Server) RevokeTokens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	revoked := len(s.tokens)
	s.tokens = map[string]*token{}
	return revoked
}
