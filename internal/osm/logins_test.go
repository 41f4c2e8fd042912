package osm_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
)

// Six OsmClusters of three namespaces, reaching one OSM through two spellings of its URL, try
// wrong passwords for one user: OSM locks the user after 5 failed logins, the budget lets 2 be
// sent per URL and per namespace.
func TestTheLoginBudgetKeepsOSMFromLockingAUser(t *testing.T) {
	sim := nbisim.New(nbisim.Config{Username: "operator", Password: "right", Project: "admin"})
	server := httptest.NewServer(sim)
	t.Cleanup(server.Close)
	urls := []string{server.URL, strings.Replace(server.URL, "127.0.0.1", "localhost", 1) + "/"}
	var budget osm.LoginBudget
	login := func(url, namespace, name, password string) error {
		client, err := osm.NewClient(url, osm.Credentials{Username: "operator", Password: password, Project: "admin"},
			osm.WithLoginBudget(&budget, osm.LoginHolder{Namespace: namespace, Name: name}))
		noError(t, err)
		return client.Authenticate(context.Background())
	}
	retries := func() (int, string) {
		user := sim.State().Users[0]
		return user.RetryCount, user.Status
	}

	var heldBack []string
	for i := range 6 {
		err := login(urls[i%2], fmt.Sprint("ns", i/2), fmt.Sprint("c", i), fmt.Sprint("guess", i))
		if !osm.IsUnauthorized(err) {
			t.Fatalf("login %d: %v, want a refusal", i, err)
		}
		if osm.IsLoginBudgetSpent(err) {
			heldBack = append(heldBack, err.Error())
		}
	}
	if count, status := retries(); count != 2*osm.MaxFailedLogins || status != "active" {
		t.Fatalf("OSM counted %d failed logins, user %s; want %d, active", count, status, 2*osm.MaxFailedLogins)
	}
	if len(heldBack) != 6-2*osm.MaxFailedLogins || !strings.Contains(heldBack[0], "at this URL failed, by OsmCluster(s) ns0/c0, ns1/c2;") {
		t.Fatalf("held back: %q", heldBack)
	}

	// One namespace sends at most 2, whatever the URL.
	if err := login(server.URL+"/other", "ns0", "c6", "guess6"); !osm.IsLoginBudgetSpent(err) || !strings.Contains(err.Error(), "from this namespace") {
		t.Fatalf("a third failure from ns0: %v", err)
	}
	// The right password is held back as well (it never succeeded), until a login succeeds.
	if err := login(urls[0], "owner", "osm", "right"); !osm.IsLoginBudgetSpent(err) {
		t.Fatalf("the owner's login: %v, want it held back", err)
	}
}

// Credentials that logged in once are never held back: the owner's OsmCluster keeps working,
// and its login resets the count in OSM and in the budget.
func TestTheLoginBudgetNeverHoldsBackCredentialsThatSucceeded(t *testing.T) {
	sim := nbisim.New(nbisim.Config{Username: "operator", Password: "right", Project: "admin"})
	server := httptest.NewServer(sim)
	t.Cleanup(server.Close)
	var budget osm.LoginBudget
	client := func(namespace, password string) *osm.Client {
		c, err := osm.NewClient(server.URL, osm.Credentials{Username: "operator", Password: password, Project: "admin"},
			osm.WithLoginBudget(&budget, osm.LoginHolder{Namespace: namespace, Name: "osm"}))
		noError(t, err)
		return c
	}
	ctx := context.Background()
	owner := client("owner", "right")
	noError(t, owner.Authenticate(ctx))
	if owner.ProjectID() != sim.State().ProjectID {
		t.Fatalf("project id %q, want OSM's %q", owner.ProjectID(), sim.State().ProjectID)
	}
	for i := range 4 {
		_ = client(fmt.Sprint("attacker", i), "guess").Authenticate(ctx)
	}
	noError(t, owner.Authenticate(ctx))
	if user := sim.State().Users[0]; user.RetryCount != 0 || user.Status != "active" {
		t.Fatalf("user %+v after the owner's login", user)
	}
	// The budget was freed with OSM's count: two more failures at this URL may be sent, no more.
	for i := range 3 {
		_ = client(fmt.Sprint("attacker", i), "guess").Authenticate(ctx)
	}
	if user := sim.State().Users[0]; user.RetryCount != osm.MaxFailedLogins {
		t.Fatalf("user %+v, want %d failed logins", user, osm.MaxFailedLogins)
	}
}
