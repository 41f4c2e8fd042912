package osm

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// MaxFailedLogins is how many failed logins of one OSM user the Clients of a LoginBudget send
// at one URL, and from one namespace, before one succeeds. OSM locks a user other than admin
// after 5 failed logins in a row (nbi.cfg max_pwd_attempt) and forgets them only at a successful
// login: 2 leaves room for a person's typing errors and for a restart of the operator, which
// forgets the budget.
const MaxFailedLogins = 2

// maxFailuresPerNamespace bounds the failed logins a LoginBudget remembers for one namespace,
// whatever the user names and URLs its OsmClusters try.
const maxFailuresPerNamespace = 64

// LoginBudget bounds the failed logins that every Client of a process sends for one OSM user, so
// that no tenant, by mistake or on purpose, makes the operator lock a user's OSM account: a
// Client built with WithLoginBudget asks it before each login that its own credentials have
// not yet passed.
//
// Which OSM a URL reaches is not known before a login succeeds (the identity is the project id
// that OSM returns), so that the failures of a user name are counted per canonical NBI URL,
// from every namespace, and per namespace, at every URL (one OSM written several ways): at most
// MaxFailedLogins each. A successful login of the user at the URL forgets the failures there, as
// OSM does. Failures are not counted per user name alone, as unrelated OSMs share user names
// (admin): failures that no login clears (a dead URL, a typing error never fixed) would hold
// back every tenant's. Past either bound, a login is not sent and fails
// with a *LoginBudgetError naming the OsmClusters whose failures spent the budget. The zero
// value is ready to use; a LoginBudget is safe for concurrent use.
type LoginBudget struct {
	mu sync.Mutex
	// failures are the failed logins, and those in flight, oldest first.
	failures []*loginAttempt
}

// loginAttempt is one login counted against the budget: failed, or in flight.
type loginAttempt struct {
	endpoint, user string
	holder         LoginHolder
}

// LoginHolder names the OsmCluster whose Client logs in.
type LoginHolder struct {
	Namespace, Name string
}

func (h LoginHolder) String() string { return h.Namespace + "/" + h.Name }

// LoginBudgetError is a login not sent because the failed logins of the user are spent.
type LoginBudgetError struct {
	// Failures is how many failed logins (and logins in flight) spent it.
	Failures int
	// Scope says which logins were counted: of this user at this URL, or from this namespace.
	Scope string
	// Holders are the OsmClusters whose logins failed (or are in flight), namespace/name.
	Holders []string
}

func (e *LoginBudgetError) Error() string {
	return fmt.Sprintf("%d login(s) %s failed, by OsmCluster(s) %s; osmops sends at most %d "+
		"failed logins of an OSM user per URL and per namespace until one succeeds, as OSM locks a user after 5 "+
		"(a login that succeeds at that URL through another OsmCluster, or a restart of osmops, frees it)",
		e.Failures, e.Scope, strings.Join(e.Holders, ", "), MaxFailedLogins)
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

// take counts a login about to be sent: it is refused when the failures of the user at the
// endpoint, or from the holder's namespace, are spent, unless trusted (credentials that
// succeeded before), which only counts it.
func (b *LoginBudget) take(endpoint, user string, holder LoginHolder, trusted bool) (*loginAttempt, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var atEndpoint, fromNamespace []string
	inNamespace := 0
	for _, f := range b.failures {
		if f.holder.Namespace == holder.Namespace {
			inNamespace++
		}
		if f.user != user {
			continue
		}
		if f.endpoint == endpoint {
			atEndpoint = append(atEndpoint, f.holder.String())
		}
		if f.holder.Namespace == holder.Namespace {
			fromNamespace = append(fromNamespace, f.holder.String())
		}
	}
	if !trusted {
		switch {
		case len(atEndpoint) >= MaxFailedLogins:
			return nil, &LoginBudgetError{Failures: len(atEndpoint), Scope: "of this user at this URL", Holders: compacted(atEndpoint)}
		case len(fromNamespace) >= MaxFailedLogins:
			return nil, &LoginBudgetError{Failures: len(fromNamespace), Scope: "of this user from this namespace", Holders: compacted(fromNamespace)}
		case inNamespace >= maxFailuresPerNamespace:
			return nil, &LoginBudgetError{Failures: inNamespace, Scope: "of any user from this namespace", Holders: []string{holder.Namespace + "/*"}}
		}
	}
	attempt := &loginAttempt{endpoint: endpoint, user: user, holder: holder}
	b.failures = append(b.failures, attempt)
	return attempt, nil
}

// settle records how a counted login ended: a refusal stays counted; a success forgets every
// failure of the user at the endpoint, as OSM does; without an answer, it did not count.
func (b *LoginBudget) settle(attempt *loginAttempt, refused, succeeded bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures = slices.DeleteFunc(b.failures, func(f *loginAttempt) bool {
		return f == attempt && !refused || succeeded && f.endpoint == attempt.endpoint && f.user == attempt.user
	})
}

// compacted sorts names and drops repeats.
func compacted(names []string) []string {
	slices.Sort(names)
	return slices.Compact(names)
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
