package engine

import (
	"strings"
	"testing"
)

// A plan's digest names what it sends: one plan gives one digest; another value, chart, KDU,
// instance or action gives another; a reason (words for events) does not count.
func TestPlanDigestNamesWhatIsSent(t *testing.T) {
	upgrade := func(replicas, chart string) *Plan {
		return &Plan{Upgrades: []NsAction{{Name: "ldap", ID: "ns-1", Instance: declared("ldap", replicas), Member: "openldap",
			KDU: declared("ldap", replicas).KDU, Chart: chart, Reason: "values changed in Git"}}}
	}
	base := upgrade("secret-replicas-7", "stable/openldap:1.2.7").Digest()
	if !strings.HasPrefix(base, "sha256:") || len(base) != len("sha256:")+64 {
		t.Fatalf("digest %q", base)
	}
	if again := upgrade("secret-replicas-7", "stable/openldap:1.2.7").Digest(); again != base {
		t.Errorf("one plan, two digests: %s, %s", base, again)
	}
	reworded := upgrade("secret-replicas-7", "stable/openldap:1.2.7")
	reworded.Upgrades[0].Reason = "drift in OSM"
	if reworded.Digest() != base {
		t.Error("the reason changed the digest")
	}
	created := upgrade("secret-replicas-7", "stable/openldap:1.2.7")
	created.Creates, created.Upgrades = created.Upgrades, nil
	for name, other := range map[string]*Plan{
		"another value":  upgrade("2", "stable/openldap:1.2.7"),
		"another chart":  upgrade("secret-replicas-7", "stable/openldap:1.2.8"),
		"another action": created,
		"nothing":        {},
	} {
		if other.Digest() == base {
			t.Errorf("%s: the same digest", name)
		}
	}
}
