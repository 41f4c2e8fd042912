package nbisim

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/osmops/osmops/internal/nbisim/python"
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
	msgAccountExpired    = "Account expired"
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
	userID  string
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

// newToken serves POST /admin/v1/tokens: {"username","password","project_id"}
// (AuthconnInternal.authenticate, then nbi.py's password expiry check).
func (s *Server) newToken(c *call) (response, *nbiError) {
	body, err := c.jsonBody()
	if err != nil {
		return response{}, err
	}
	input, isObject := body.(*python.Dict)
	if !isObject {
		return response{}, errorf(http.StatusBadRequest, msgNotJSONObject)
	}
	username, password := input.Str("username"), input.Str("password")
	if username == "" {
		return response{}, unauthorized(msgNoCredentials)
	}
	user := s.userNamed(username)
	if user == nil {
		return response{}, unauthorized(msgBadCredentials)
	}
	if err := checkPassword(user, password, c.now); err != nil {
		return response{}, err
	}
	// AuthconnInternal.authenticate: the token shows the failed logins
	// since the last one as login_count, then they are forgotten.
	loginCount := user.retryCount
	user.retryCount = 0
	project := input.Str("project_id")
	if project == "" && len(user.mappings) > 0 {
		project = user.mappings[0].project
	}
	switch {
	case project == "":
		return response{}, unauthorized("can't find a default project for this user")
	case project != s.cfg.Project && project != s.projectID, !user.inProject(s.projectID):
		return response{}, unauthorized(fmt.Sprintf("project %s not allowed for this user", project))
	}

	s.pruneTokens(c.now)
	t := &token{id: randomTokenID(), userID: user.id, issued: c.now, expires: c.now.Add(s.tokenLifetime)}
	lastLogin := user.lastTokenTime
	if lastLogin.IsZero() {
		lastLogin = c.now
	}
	user.lastTokenTime = c.now
	s.tokens[t.id] = t
	if !user.passwordExpires.IsZero() && !c.now.Before(user.passwordExpires) {
		// The token is made and works; the answer only asks for a new password.
		answer := jsonResponse(http.StatusOK, changePasswordDoc{ID: t.id, Message: "change_password", UserID: user.id})
		return answer.withHeader("Location", tokenPathPrefix+t.id), nil
	}
	host, port := remoteAddress(c.request)
	answer := jsonResponse(http.StatusOK, tokenDoc{
		IssuedAt: epoch(t.issued), Expires: epoch(t.expires), UID: t.id, ID: t.id,
		ProjectID: s.projectID, ProjectName: s.cfg.Project,
		Username: user.username, UserID: user.id, Admin: true,
		Roles:      s.rolesOf(user),
		LoginCount: loginCount, LastLogin: epoch(lastLogin), RemotePort: port, RemoteHost: host,
	})
	return answer.withHeader("Location", tokenPathPrefix+t.id), nil
}

// changePasswordDoc is nbi.py's answer to a login whose password expired.
type changePasswordDoc struct {
	ID      string `json:"id"`
	Message string `json:"message"`
	UserID  string `json:"user_id"`
}

func (u *userRecord) inProject(projectID string) bool {
	for _, m := range u.mappings {
		if m.project == projectID {
			return true
		}
	}
	return false
}

// rolesOf lists the token's roles: the user's roles in the project, project_admin if none.
func (s *Server) rolesOf(user *userRecord) []tokenRole {
	var roles []tokenRole
	for _, m := range user.mappings {
		if m.project == s.projectID {
			roles = append(roles, tokenRole{Name: s.roleName(m.role), ID: m.role})
		}
	}
	if len(roles) == 0 {
		roles = []tokenRole{{Name: "project_admin", ID: s.roleIDs["project_admin"]}}
	}
	return roles
}

// checkPassword is AuthconnInternal.validate_user with nbi.cfg's
// user_management: True. A user other than admin whose account expired, or
// that is locked, cannot log in, whatever the password; a wrong password
// counts in _admin.retry_count, and the failure that finds max_pwd_attempt - 1
// failures before it locks the user other than admin.
func checkPassword(user *userRecord, password string, now time.Time) *nbiError {
	if user.lockable() && now.After(user.accountExpires) {
		user.expired = true
		return unauthorized(msgAccountExpired)
	}
	if user.lockable() && user.locked {
		return unauthorized(msgAccountLocked)
	}
	if user.hasPassword(password) {
		return nil
	}
	before := user.retryCount
	user.retryCount++
	if user.lockable() && before >= maxPasswordAttempts-1 {
		user.locked = true
		return unauthorized(msgAccountLocked)
	}
	return unauthorized(msgBadCredentials)
}

// UnlockUser unlocks the configured user and forgets its failed logins, as
// an administrator's edit of the user with {"unlock": true,
// "system_admin_id": ...} does (AuthconnInternal.update_user).
func (s *Server) UnlockUser() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.account.retryCount = 0
	s.account.locked = false
}

// SetUserExpiry sets when the configured user's password and account expire
// (_admin.password_expire_time and account_expire_time), as a change of its
// password and an administrator's renew of it do (AuthconnInternal.update_user);
// a renew makes an expired user active again. Admin's never expire: it is
// left as it is.
func (s *Server) SetUserExpiry(password, account time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.account.lockable() {
		return
	}
	s.account.passwordExpires, s.account.accountExpires = password, account
	s.account.expired = false
}

// UserState is a user of the NBI.
type UserState struct {
	Username string `json:"username"`
	// Status is the user's _admin.user_status: "always-active" for admin,
	// else "active", "locked" after too many failed logins, or "expired" after
	// a login past the account's expiry.
	Status string `json:"status"`
	// RetryCount is _admin.retry_count: the failed logins since the last
	// successful one.
	RetryCount int `json:"retryCount"`
}

// userStates lists the users: the configured one first, then those made through the API.
func (s *Server) userStates() []UserState {
	var states []UserState
	for _, u := range s.allUsers() {
		states = append(states, UserState{Username: u.username, Status: u.status(), RetryCount: u.retryCount})
	}
	return states
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
