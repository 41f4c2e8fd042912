package osm_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
)

// loginWorld is one simulated OSM, with the user operator (password "right"), and the
// LoginBudget of one manager.
type loginWorld struct {
	t      *testing.T
	sim    *nbisim.Server
	server *httptest.Server
	budget osm.LoginBudget
}

func newLoginWorld(t *testing.T) *loginWorld {
	w := &loginWorld{t: t, sim: nbisim.New(nbisim.Config{Username: "operator", Password: "right", Project: "admin"})}
	w.server = httptest.NewServer(w.sim)
	t.Cleanup(w.server.Close)
	return w
}

// client is the Client of the OsmCluster namespace/name, logging in as operator at url.
func (w *loginWorld) client(url, namespace, name, password string) *osm.Client {
	c, err := osm.NewClient(url, osm.Credentials{Username: "operator", Password: password, Project: "admin"},
		osm.WithLoginBudget(&w.budget, osm.LoginHolder{Namespace: namespace, Name: name}))
	noError(w.t, err)
	return c
}

// login is the first login of a new OsmCluster's Client.
func (w *loginWorld) login(url, namespace, name, password string) error {
	return w.client(url, namespace, name, password).Authenticate(context.Background())
}

// user is OSM's record of operator.
func (w *loginWorld) user() nbisim.UserState { return w.sim.State().Users[0] }

// wantFailures checks that OSM counted failed logins of operator since its last good one, and
// did not lock it.
func (w *loginWorld) wantFailures(failures int) {
	w.t.Helper()
	if user := w.user(); user.RetryCount != failures || user.Status != "active" {
		w.t.Fatalf("OSM counted %d failed logins, user %s; want %d, active", user.RetryCount, user.Status, failures)
	}
}

// wantRefusedByOSM checks that the login was sent, and refused.
func wantRefusedByOSM(t *testing.T, err error) {
	t.Helper()
	if !osm.IsUnauthorized(err) || osm.IsLoginBudgetSpent(err) {
		t.Fatalf("%v, want OSM's refusal", err)
	}
}

// wantHeldBack checks that the login was not sent, and that its error says why.
func wantHeldBack(t *testing.T, err error, message string) {
	t.Helper()
	if !osm.IsLoginBudgetSpent(err) || !strings.Contains(err.Error(), message) {
		t.Fatalf("%v, want it held back: %q", err, message)
	}
}

// OsmClusters of six namespaces try six wrong passwords for one user at one URL: OSM locks
// the user at its 5th failed login, the budget lets 4 be sent; the right password of new
// credentials is held back as well, until a login succeeds.
func TestTheLoginBudgetKeepsOSMFromLockingAUser(t *testing.T) {
	w := newLoginWorld(t)
	for i := range osm.MaxFailedLoginsPerURL {
		wantRefusedByOSM(t, w.login(w.server.URL, fmt.Sprint("ns", i), fmt.Sprint("c", i), fmt.Sprint("guess", i)))
	}
	for i := osm.MaxFailedLoginsPerURL; i < 6; i++ {
		wantHeldBack(t, w.login(w.server.URL, fmt.Sprint("ns", i), fmt.Sprint("c", i), fmt.Sprint("guess", i)),
			"4 login(s) of this user at this URL failed, by OsmCluster(s) ns0/c0, ns1/c1, ns2/c2, ns3/c3;")
	}
	w.wantFailures(osm.MaxFailedLoginsPerURL)
	// Whether a new password is right cannot be known before OSM answers.
	wantHeldBack(t, w.login(w.server.URL, "owner", "osm", "right"), "at this URL failed")
}

// Two namespaces reach one OSM through two spellings of its URL with wrong passwords: each
// sends at most 2, whatever the URLs, so that OSM counts 4.
func TestTheLoginBudgetBoundsANamespaceAtEveryURL(t *testing.T) {
	w := newLoginWorld(t)
	urls := []string{w.server.URL, strings.Replace(w.server.URL, "127.0.0.1", "localhost", 1) + "/"}
	for _, namespace := range []string{"ns0", "ns1"} {
		for i, url := range urls {
			wantRefusedByOSM(t, w.login(url, namespace, fmt.Sprint("c", i), namespace+fmt.Sprint("-guess", i)))
		}
		for i, url := range append(urls, w.server.URL+"/other") {
			wantHeldBack(t, w.login(url, namespace, "more", namespace+fmt.Sprint("-more", i)),
				"2 login(s) of this user from this namespace failed, by OsmCluster(s) "+namespace+"/c0, "+namespace+"/c1;")
		}
	}
	w.wantFailures(2 * osm.MaxFailedLogins)
}

// Issue 39: one tenant's wrong password failed twice at a URL; another tenant's right password
// is still sent, a third try of the wrong one never is, and other wrong passwords are sent
// until OSM counts 4, never 5. No error says anything of a password.
func TestAWrongPasswordHoldsBackNoOtherTenant(t *testing.T) {
	w := newLoginWorld(t)
	ctx := context.Background()
	const typo = "rihgt"
	wrong := w.client(w.server.URL, "a", "wrong", typo)
	wantRefusedByOSM(t, wrong.Authenticate(ctx))
	wrong.AllowLogin() // a reconcile request
	wantRefusedByOSM(t, wrong.Authenticate(ctx))
	w.wantFailures(2)
	owner := w.client(w.server.URL, "b", "osm", "right")
	noError(t, owner.Authenticate(ctx))
	w.wantFailures(0)

	var errs []error
	held := func(err error, message string) {
		t.Helper()
		wantHeldBack(t, err, message)
		errs = append(errs, err)
	}
	wrong.AllowLogin()
	wantRefusedByOSM(t, wrong.Authenticate(ctx))
	wantRefusedByOSM(t, w.login(w.server.URL, "a-copy", "wrong", typo))
	held(w.login(w.server.URL, "c", "wrong", typo),
		"2 login(s) of this user at this URL with this password failed, by OsmCluster(s) a-copy/wrong, a/wrong;")
	wantRefusedByOSM(t, w.login(w.server.URL, "c", "guess", "guess-c"))
	wantRefusedByOSM(t, w.login(w.server.URL, "d", "guess", "guess-d"))
	w.wantFailures(osm.MaxFailedLoginsPerURL)
	for _, password := range []string{"guess-e", typo, "right"} {
		held(w.login(w.server.URL, "e", "guess", password),
			"4 login(s) of this user at this URL failed, by OsmCluster(s) a-copy/wrong, a/wrong, c/guess, d/guess;")
	}
	w.wantFailures(osm.MaxFailedLoginsPerURL)
	// Credentials that succeeded are still sent, and reset OSM's count.
	noError(t, owner.Authenticate(ctx))
	w.wantFailures(0)

	for _, err := range errs {
		for _, password := range []string{typo, "right", "guess-e"} {
			fingerprint := w.budget.Fingerprint(password)
			for _, secret := range []string{password, string(fingerprint), hex.EncodeToString(fingerprint),
				base64.StdEncoding.EncodeToString(fingerprint), base64.RawURLEncoding.EncodeToString(fingerprint)} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("%q holds %q", err, secret)
				}
			}
		}
	}
}

// Credentials that logged in once are never held back: the owner's OsmCluster keeps working,
// and its login resets the count in OSM and in the budget.
func TestTheLoginBudgetNeverHoldsBackCredentialsThatSucceeded(t *testing.T) {
	w := newLoginWorld(t)
	ctx := context.Background()
	owner := w.client(w.server.URL, "owner", "osm", "right")
	noError(t, owner.Authenticate(ctx))
	if owner.ProjectID() != w.sim.State().ProjectID {
		t.Fatalf("project id %q, want OSM's %q", owner.ProjectID(), w.sim.State().ProjectID)
	}
	for i := range 6 {
		_ = w.login(w.server.URL, fmt.Sprint("attacker", i), "osm", fmt.Sprint("guess", i))
	}
	w.wantFailures(osm.MaxFailedLoginsPerURL)
	noError(t, owner.Authenticate(ctx))
	w.wantFailures(0)
	// The budget was freed with OSM's count: one password fails twice more, no more.
	for i := range 3 {
		_ = w.login(w.server.URL, fmt.Sprint("attacker", i), "osm", "guess")
	}
	w.wantFailures(osm.MaxFailedLogins)
}

// A login in flight when another succeeds may reach OSM after it: it stays counted.
func TestALoginInFlightStaysCountedAfterASuccess(t *testing.T) {
	w := newLoginWorld(t)
	var logins atomic.Int32
	arrived, release := make(chan struct{}), make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/tokens") && logins.Add(1) == 1 {
			close(arrived)
			<-release
		}
		w.sim.ServeHTTP(rw, r)
	}))
	t.Cleanup(slow.Close)
	late := make(chan error)
	go func() { late <- w.login(slow.URL, "ns0", "late", "guess0") }()
	<-arrived
	noError(t, w.login(slow.URL, "owner", "osm", "right"))
	close(release)
	wantRefusedByOSM(t, <-late)
	w.wantFailures(1)

	for i := 1; i < osm.MaxFailedLoginsPerURL; i++ {
		wantRefusedByOSM(t, w.login(slow.URL, fmt.Sprint("ns", i), "guess", fmt.Sprint("guess", i)))
	}
	wantHeldBack(t, w.login(slow.URL, "ns9", "guess", "guess9"), "4 login(s) of this user at this URL failed")
	w.wantFailures(osm.MaxFailedLoginsPerURL)
}

// Each LoginBudget keys its fingerprints with its own random key.
func TestLoginBudgetsKeyTheirFingerprints(t *testing.T) {
	var one, another osm.LoginBudget
	if string(one.Fingerprint("right")) == string(another.Fingerprint("right")) {
		t.Fatal("two budgets fingerprint a password alike")
	}
	if first, again := one.Fingerprint("right"), one.Fingerprint("right"); string(first) != string(again) {
		t.Fatal("a budget fingerprints a password two ways")
	}
}
