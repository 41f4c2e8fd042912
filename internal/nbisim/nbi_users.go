package nbisim

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/osmops/osmops/internal/nbisim/python"
)

// The NBI's users collection (admin_topics.py UserTopicAuth, authconn_internal.py) as nbi.cfg's
// user_management: True runs it. Users made through the API log in, lock and expire as the
// configured one does (checkPassword), and their password has expired at creation
// (create_user sets password_expire_time to the creation time): every login answers
// change_password until it is changed, which the simulator does not model (PATCH). The
// configured user's password is taken as changed when it was made: it expires pwd_expire_days
// later. Every user but admin has its account expire account_expire_days after its creation
// (create_user): a login after that is refused (validate_user). SetUserExpiry moves both, as a
// password change and an administrator's renew do.

// The default roles of OSM (roles_to_operations.yml).
var defaultRoles = []string{"system_admin", "account_manager", "project_admin", "project_user"}

// accountExpireDays is nbi.cfg's account_expire_days.
const accountExpireDays = 90

// userRecord is a user of the NBI: the configured one (Config.Username) or one made through
// POST /admin/v1/users.
type userRecord struct {
	id, username string
	// salt and digest check the password; the simulator keeps no password.
	salt, digest []byte
	// mappings are project_role_mappings: project and role _ids.
	mappings []projectRole
	created  time.Time
	// retryCount is _admin.retry_count: the failed logins since the last good one.
	retryCount int
	// locked is _admin.user_status "locked", after max_pwd_attempt failed logins.
	locked bool
	// passwordExpires is _admin.password_expire_time: a login from then on is answered
	// change_password. Zero for admin, whose password never expires.
	passwordExpires time.Time
	// accountExpires is _admin.account_expire_time: a login after it is refused, and marks the
	// user expired. Zero for admin.
	accountExpires time.Time
	// expired is _admin.user_status "expired", written by a login after accountExpires.
	expired bool
	// lastTokenTime is _admin.last_token_time; zero until the first login.
	lastTokenTime time.Time
}

type projectRole struct{ project, role string }

func newUser(id, username, password string, mappings []projectRole, now time.Time) *userRecord {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	user := &userRecord{id: id, username: username, salt: salt, digest: passwordDigest(salt, password), mappings: mappings, created: now}
	if user.lockable() {
		user.passwordExpires = now.Add(pwdExpireDays * 24 * time.Hour)
		user.accountExpires = now.Add(accountExpireDays * 24 * time.Hour)
	}
	return user
}

func passwordDigest(salt []byte, password string) []byte {
	sum := sha256.Sum256(append(append([]byte{}, salt...), password...))
	return sum[:]
}

func (u *userRecord) hasPassword(password string) bool {
	return subtle.ConstantTimeCompare(u.digest, passwordDigest(u.salt, password)) == 1
}

// lockable tells whether failed logins lock the user: authconn_internal.py never locks admin.
func (u *userRecord) lockable() bool { return u.username != adminUsername }

// status is _admin.user_status.
func (u *userRecord) status() string {
	switch {
	case !u.lockable():
		return "always-active"
	case u.expired:
		return "expired"
	case u.locked:
		return "locked"
	}
	return "active"
}

// userNamed finds a user by username or, for a uuid, by _id (BaseTopic.id_field).
func (s *Server) userNamed(name string) *userRecord {
	if _, err := uuid.Parse(name); err == nil {
		if name == s.account.id {
			return s.account
		}
		user, _ := s.db.users.get(name)
		return user
	}
	if name == s.account.username {
		return s.account
	}
	return s.db.usersByName[name]
}

func (s *Server) allUsers() []*userRecord {
	return append([]*userRecord{s.account}, s.db.users.all()...)
}

// roleID returns the _id of a default role given by name or _id, "" when there is none.
func (s *Server) roleID(role string) string {
	for name, id := range s.roleIDs {
		if role == name || role == id {
			return id
		}
	}
	return ""
}

func (s *Server) roleName(id string) string {
	for name, roleID := range s.roleIDs {
		if roleID == id {
			return name
		}
	}
	return ""
}

// userPasswordPattern is validation.py's user_passwd_schema pattern, which Go's regexp cannot
// run (look-aheads): at least 8 characters, with a lower-case and an upper-case letter, a digit
// and one of its special characters.
const userPasswordPattern = `^.*(?=.{8,})((?=.*[!@#$%^&*()\-_=+{};:,<.>]){1})(?=.*\d)((?=.*[a-z]){1})((?=.*[A-Z]){1}).*$`

var (
	passwordSpecials = regexp.MustCompile(`[!@#$%^&*()\-_=+{};:,<.>]`)
	passwordDigit    = regexp.MustCompile(`\d`)
	passwordLower    = regexp.MustCompile(`[a-z]`)
	passwordUpper    = regexp.MustCompile(`[A-Z]`)
)

func strongPassword(p string) bool {
	return len([]rune(p)) >= 8 && passwordSpecials.MatchString(p) &&
		passwordDigit.MatchString(p) && passwordLower.MatchString(p) && passwordUpper.MatchString(p)
}

var shortnameSchema = &schema{types: []string{"string"}, minLength: 1, pattern: regexp.MustCompile(`^[^,;()\.\$'"]+$`)}

var userNewSchema = &schema{
	types: []string{"object"},
	properties: []property{
		{"username", stringSchema},
		{"email_id", stringSchema},
		{"domain_name", shortnameSchema},
		{"password", &schema{types: []string{"string"}}},
		{"projects", &schema{types: []string{"array"}, minItems: 1, items: shortnameSchema}},
		{"project_role_mappings", &schema{types: []string{"array"}, minItems: 1, items: &schema{
			types:      []string{"object"},
			properties: []property{{"project", shortnameSchema}, {"role", shortnameSchema}},
			required:   []string{"project", "role"}, closed: true,
		}}},
	},
	required: []string{"username", "password"},
	closed:   true,
}

// newUserAPI serves POST /admin/v1/users (UserTopicAuth.new, create_user): 201 {"id"}.
func (s *Server) newUserAPI(c *call) (response, *nbiError) {
	input, err := c.jsonObject()
	if err != nil {
		return response{}, err
	}
	if problem := userNewSchema.validate(input); problem != nil {
		return response{}, errorf(http.StatusUnprocessableEntity, "%s", problem.formatError())
	}
	username, password := input.Str("username"), input.Str("password")
	if !strongPassword(password) {
		// jsonschema quotes the value: the NBI shows the refused password in its answer.
		problem := validationError{path: []string{"password"}, message: fmt.Sprintf("%s does not match %s", python.Repr(password), python.Repr(userPasswordPattern))}
		return response{}, errorf(http.StatusUnprocessableEntity, "%s", problem.formatError())
	}
	if _, err := uuid.Parse(username); err == nil {
		return response{}, errorf(http.StatusUnprocessableEntity, "username '%s' cannot have a uuid format", username)
	}
	if s.userNamed(username) != nil {
		return response{}, errorf(http.StatusConflict, "username '%s' is already used", username)
	}
	var mappings []projectRole
	add := func(m projectRole) {
		if slices.Contains(mappings, m) {
			return
		}
		mappings = append(mappings, m)
	}
	for _, p := range input.List("projects") {
		project := scalarText(p)
		if project != s.cfg.Project && project != s.projectID {
			return response{}, errorf(http.StatusNotFound, "project with %s not found", python.Repr(python.NewDict(idField(project), project)))
		}
		add(projectRole{s.projectID, s.roleIDs["project_admin"]})
	}
	for _, m := range input.List("project_role_mappings") {
		mapping, _ := m.(*python.Dict)
		project, role := mapping.Str("project"), mapping.Str("role")
		if project != s.cfg.Project && project != s.projectID {
			return response{}, errorf(http.StatusNotFound, "project with %s not found", python.Repr(python.NewDict(idField(project), project)))
		}
		roleID := s.roleID(role)
		if roleID == "" {
			return response{}, errorf(http.StatusNotFound, "Role with %s not found", python.Repr(python.NewDict(idField(role), role)))
		}
		add(projectRole{s.projectID, roleID})
	}
	user := newUser(uuid.NewString(), username, password, mappings, c.now)
	user.passwordExpires = c.now
	s.db.users.add(user.id, user)
	s.db.usersByName[username] = user
	return jsonResponse(http.StatusCreated, map[string]string{"id": user.id}).withHeader("Location", "/osm/admin/v1/users/"+user.id), nil
}

// idField is BaseTopic.id_field for projects and roles: a uuid is an _id, else a name.
func idField(id string) string {
	if _, err := uuid.Parse(id); err == nil {
		return "_id"
	}
	return "name"
}

// listUsers serves GET /admin/v1/users.
func (s *Server) listUsers(*call) (response, *nbiError) {
	users := s.allUsers()
	docs := make([]userDoc, len(users))
	for i, u := range users {
		docs[i] = s.userDoc(u)
	}
	return jsonResponse(http.StatusOK, docs), nil
}

// getUser serves GET /admin/v1/users/{userId}, by _id or username.
func (s *Server) getUser(c *call) (response, *nbiError) {
	user := s.userNamed(c.param(0))
	if user == nil {
		return response{}, errorf(http.StatusNotFound, "User '%s' not found", c.param(0))
	}
	return jsonResponse(http.StatusOK, s.userDoc(user)), nil
}

// deleteUser serves DELETE /admin/v1/users/{userId}: 204, and the user's tokens are revoked
// (delete_user); the caller cannot delete itself.
func (s *Server) deleteUser(c *call) (response, *nbiError) {
	user := s.userNamed(c.param(0))
	if user == nil {
		return response{}, errorf(http.StatusNotFound, "User '%s' not found", c.param(0))
	}
	if user.id == c.token.userID {
		return response{}, errorf(http.StatusConflict, "You cannot delete your own login user ")
	}
	s.db.users.remove(user.id)
	delete(s.db.usersByName, user.username)
	for id, t := range s.tokens {
		if t.userID == user.id {
			delete(s.tokens, id)
		}
	}
	return noContent(), nil
}

// userDoc is a user as the NBI shows it (get_user_list). The NBI shows the bcrypt hash of the
// password; the simulator shows a placeholder.
type userDoc struct {
	Username            string       `json:"username"`
	Password            string       `json:"password"`
	ProjectRoleMappings []mappingDoc `json:"project_role_mappings"`
	Admin               userAdminDoc `json:"_admin"`
	HashingFunction     string       `json:"hashing_function"`
	ID                  string       `json:"_id"`
	Projects            []string     `json:"projects"`
}

type mappingDoc struct {
	Project     string `json:"project"`
	Role        string `json:"role"`
	ProjectName string `json:"project_name"`
	RoleName    string `json:"role_name"`
}

type userAdminDoc struct {
	Created            epochTime  `json:"created"`
	Modified           epochTime  `json:"modified"`
	UserStatus         string     `json:"user_status"`
	PasswordExpireTime *epochTime `json:"password_expire_time,omitempty"`
	AccountExpireTime  *epochTime `json:"account_expire_time,omitempty"`
	RetryCount         int        `json:"retry_count"`
	LastTokenTime      epochTime  `json:"last_token_time"`
}

func (s *Server) userDoc(u *userRecord) userDoc {
	doc := userDoc{
		Username: u.username, Password: "(bcrypt hash)", HashingFunction: "bcrypt", ID: u.id,
		ProjectRoleMappings: []mappingDoc{}, Projects: []string{},
		Admin: userAdminDoc{Created: epoch(u.created), Modified: epoch(u.created), UserStatus: u.status(),
			RetryCount: u.retryCount, LastTokenTime: epoch(u.created)},
	}
	if !u.lastTokenTime.IsZero() {
		doc.Admin.LastTokenTime = epoch(u.lastTokenTime)
	}
	if u.lockable() {
		passwordExpires, accountExpires := epoch(u.passwordExpires), epoch(u.accountExpires)
		doc.Admin.PasswordExpireTime, doc.Admin.AccountExpireTime = &passwordExpires, &accountExpires
	}
	for _, m := range u.mappings {
		doc.ProjectRoleMappings = append(doc.ProjectRoleMappings, mappingDoc{Project: m.project, Role: m.role, ProjectName: s.cfg.Project, RoleName: s.roleName(m.role)})
		if len(doc.Projects) == 0 {
			doc.Projects = append(doc.Projects, s.cfg.Project)
		}
	}
	return doc
}

// pwdExpireDays is nbi.cfg's pwd_expire_days: a changed password expires after it.
const pwdExpireDays = 30
