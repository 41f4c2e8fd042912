package osm

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// MaxFailedLogins is how many failed logins of one OSM user the Clients of a LoginBudget send
// from one namespace (at every URL), and with one password at one URL, before one succeeds. 2
// leaves room for a person's typing error and for a restart of the operator, which forgets the
// budget: one namespace sends 4 over a restart, one fewer than OSM's lock-out.
const MaxFailedLogins = 2

// MaxFailedLoginsPerURL is how many failed logins of one OSM user the Clients of a LoginBudget
// send at one URL, from every namespace and with every password, before one succeeds: one fewer
// than OSM's lock-out, so that the next login, which may be the right one, never locks the user.
const MaxFailedLoginsPerURL = osmLockoutFailures - 1

// osmLockoutFailures is nbi.cfg's max_pwd_attempt (5 by default): OSM locks a user other than
// admin at that many failed logins in a row, and forgets them only at a successful login.
const osmLockoutFailures = 5

// maxFailuresPerNamespace bounds the failed logins a LoginBudget remembers for one namespace,
// whatever the user names and URLs its OsmClusters try.
const maxFailuresPerNamespace = 64

// LoginBudget bounds the failed logins that every Client of a process sends for one OSM user, so
// that no tenant, by mistake or on purpose, makes the operator lock a user's OSM account, and so
// that one tenant's wrong password does not hold back another's logins: a Client built with
// WithLoginBudget asks it before each login that its own credentials have not yet passed.
//
// Which OSM a URL reaches is not known before a login succeeds (the identity is the project id
// that OSM returns), so that the failures of a user name are counted per canonical NBI URL, from
// every namespace, and per namespace, at every URL (one OSM written several ways). A login is
// held back when the failures of its user
//   - from its namespace reach MaxFailedLogins: a namespace spends only its own budget, so that
//     this bound never holds back another tenant; not counted per password, or a tenant would
//     multiply it with passwords and URLs;
//   - at its URL reach MaxFailedLoginsPerURL, from every namespace and with every password,
//     so that OSM's lock-out is never reached through one URL;
//   - at its URL with its password (compared as an HMAC-SHA256 under a random key of the
//     LoginBudget, never as the password) reach MaxFailedLogins: sending a password that failed
//     there again cannot help, and any other password, a tenant's right one, is still sent.
//
// Holding back a password that failed tells its sender that someone sent it there before: the
// bound per URL is checked first, so that once it is spent every login is held back alike, and
// until then each other password tried is sent to OSM and spends it.
//
// Between two successful logins of a user at a URL, the Clients of a LoginBudget therefore send
// there at most MaxFailedLoginsPerURL (4) failed logins of credentials that never logged in (at
// most MaxFailedLogins with one password), and at most MaxFailedLogins from one namespace,
// whatever the URLs: an OSM that k namespaces reach through m spellings of its URL counts at
// most min(4m, 2k) of them, fewer than its 5 unless k >= 3 and m >= 2. Credentials that logged
// in once are counted but never held back: they fail only when their password changed in OSM,
// and their Client then sends no login until AllowLogin (a reconcile request), so that each
// adds one failed login per AllowLogin. These bounds are per LoginBudget: a restart of the
// operator forgets them while OSM does not, so that 4 failures at a URL from several
// namespaces, a restart, then one more lock the user unless a login succeeds in between (the
// OsmClusters that work log in again at start).
//
// A successful login of the user at the URL forgets the failures there that had an answer, as
// OSM does; a login still in flight stays counted, as OSM may count it after the success.
// Failures are not counted per user name alone, as unrelated OSMs share user names (admin):
// failures that no login clears (a dead URL, a typing error never fixed) would hold back every
// tenant's. A login held back is not sent and fails with a *LoginBudgetError naming the
// OsmClusters whose failures spent the budget. The zero value is ready to use; a LoginBudget is
// safe for concurrent use.
type LoginBudget struct {
	mu sync.Mutex
	// key is the HMAC key of the passwords' fingerprints, random, made at the first login: a
	// fingerprint cannot be tested against guessed passwords without it, and it never leaves
	// the LoginBudget.
	key []byte
	// failures are the failed logins, and those in flight, oldest first.
	failures []*loginAttempt
}

// loginAttempt is one login counted against the budget: failed, or in flight.
type loginAttempt struct {
	endpoint, user string
	// password is the fingerprint of the password (LoginBudget.fingerprint).
	password [sha256.Size]byte
	holder   LoginHolder
	// inFlight: sent, not yet answered.
	inFlight bool
}

// LoginHolder names the OsmCluster whose Client logs in.
type LoginHolder struct {
	Namespace, Name string
}

func (h LoginHolder) String() string { return h.Namespace + "/" + h.Name }

// LoginBudgetError is a login not sent because the failed logins of the user are spent. It
// holds nothing derived from a password.
type LoginBudgetError struct {
	// Failures is how many failed logins (and logins in flight) spent it.
	Failures int
	// Scope says which logins were counted: of this user at this URL (with this password), or
	// from this namespace.
	Scope string
	// Holders are the OsmClusters whose logins failed (or are in flight), namespace/name.
	Holders []string
}

func (e *LoginBudgetError) Error() string {
	return fmt.Sprintf("%d login(s) %s failed, by OsmCluster(s) %s; until one succeeds, osmops sends at most %d "+
		"failed logins of an OSM user per namespace and per password at a URL, and %d per URL, as OSM locks a user at "+
		"the %dth (a login that succeeds at that URL through another OsmCluster, or a restart of osmops, frees it)",
		e.Failures, e.Scope, strings.Join(e.Holders, ", "), MaxFailedLogins, MaxFailedLoginsPerURL, osmLockoutFailures)
}

// IsLoginBudgetSpent tells whether err is a login not sent because the budget is spent.
func IsLoginBudgetSpent(err error) bool {
	var spent *LoginBudgetError
	return errors.As(err, &spent)
}

// WithLoginBudget makes the Client count its logins in budget, as holder.
func WithLoginBudget(budget *LoginBudget, holder LoginHolder) Option {
	return func(s *settings) error {
		s.logins = budget
		s.loginHolder = holder
		return nil
	}
}

// take counts a login about to be sent: it is refused when a bound of the LoginBudget is
// spent, unless trusted (credentials that succeeded before), which only counts it.
func (b *LoginBudget) take(endpoint string, credentials Credentials, holder LoginHolder, trusted bool) (*loginAttempt, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	login := &loginAttempt{endpoint: endpoint, user: credentials.Username, password: b.fingerprint(credentials.Password),
		holder: holder, inFlight: true}
	if !trusted {
		if err := b.spent(login); err != nil {
			return nil, err
		}
	}
	b.failures = append(b.failures, login)
	return login, nil
}

// spent returns the bound that holds login back, if any (see LoginBudget).
func (b *LoginBudget) spent(login *loginAttempt) error {
	var fromNamespace, atEndpoint, withPassword []string
	inNamespace := 0
	for _, f := range b.failures {
		sameNamespace := f.holder.Namespace == login.holder.Namespace
		if sameNamespace {
			inNamespace++
		}
		if f.user != login.user {
			continue
		}
		if sameNamespace {
			fromNamespace = append(fromNamespace, f.holder.String())
		}
		if f.endpoint == login.endpoint {
			atEndpoint = append(atEndpoint, f.holder.String())
			if f.password == login.password {
				withPassword = append(withPassword, f.holder.String())
			}
		}
	}
	switch {
	case len(fromNamespace) >= MaxFailedLogins:
		return &LoginBudgetError{Failures: len(fromNamespace), Scope: "of this user from this namespace", Holders: compacted(fromNamespace)}
	case len(atEndpoint) >= MaxFailedLoginsPerURL:
		return &LoginBudgetError{Failures: len(atEndpoint), Scope: "of this user at this URL", Holders: compacted(atEndpoint)}
	case len(withPassword) >= MaxFailedLogins:
		return &LoginBudgetError{Failures: len(withPassword), Scope: "of this user at this URL with this password", Holders: compacted(withPassword)}
	case inNamespace >= maxFailuresPerNamespace:
		return &LoginBudgetError{Failures: inNamespace, Scope: "of any user from this namespace", Holders: []string{login.holder.Namespace + "/*"}}
	}
	return nil
}

// fingerprint is the HMAC-SHA256 of password under the LoginBudget's key (b.mu held): equal for
// equal passwords, and, unlike a plain hash, no help to whoever tries guesses against it.
func (b *LoginBudget) fingerprint(password string) [sha256.Size]byte {
	if b.key == nil {
		b.key = make([]byte, sha256.Size)
		_, _ = rand.Read(b.key) // never fails: it crashes the program instead
	}
	mac := hmac.New(sha256.New, b.key)
	mac.Write([]byte(password))
	return [sha256.Size]byte(mac.Sum(nil))
}

// settle records how a counted login ended: a refusal stays counted; a success forgets every
// answered failure of the user at the endpoint, as OSM does; without an answer, it did not count.
func (b *LoginBudget) settle(attempt *loginAttempt, refused, succeeded bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	attempt.inFlight = false
	b.failures = slices.DeleteFunc(b.failures, func(f *loginAttempt) bool {
		return f == attempt && !refused ||
			succeeded && !f.inFlight && f.endpoint == attempt.endpoint && f.user == attempt.user
	})
}

// compacted sorts names and drops repeats.
func compacted(names []string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}

// SameEndpoint tells whether two NBI URLs are one endpoint written two ways (case, a default
// port, a trailing dot or slash, the default path); false when either is not a valid NBI URL.
func SameEndpoint(a, b string) bool {
	first, err := parseBaseURL(a)
	if err != nil {
		return false
	}
	second, err := parseBaseURL(b)
	return err == nil && canonicalEndpoint(first, "") == canonicalEndpoint(second, "")
}

// canonicalEndpoint is the NBI URL in canonical form, with the project: scheme and host in
// lower case, no trailing dot, no default port, /osm when there is no path. It keys the login
// budget only: which OSM a URL reaches is what OSM says at login (Client.ProjectID).
func canonicalEndpoint(base *url.URL, project string) string {
	scheme := strings.ToLower(base.Scheme)
	host, port := strings.TrimSuffix(strings.ToLower(base.Hostname()), "."), base.Port()
	if port != "" && (port != "80" || scheme != "http") && (port != "443" || scheme != "https") {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + base.Path + " project=" + project
}
