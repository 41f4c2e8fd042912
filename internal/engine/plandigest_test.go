package engine

import (
	"strings"
	"testing"
)

// TestPlanDigest: a plan's digest follows the changes it sends, and only them.
func TestPlanDigest(t *testing.T) {
	plan := func(replicas string) *Plan {
		return &Plan{
			Upgrades: []NsAction{{Name: "ldap", ID: "ns-1", Instance: declared("ldap", replicas), Member: "openldap", Reason: "values changed"}},
			Deletes:  []NsAction{{Name: "old", ID: "ns-2"}},
		}
	}
	first := plan("1").Digest()
	if !strings.HasPrefix(first, "sha256:") || len(first) != len("sha256:")+64 {
		t.Fatalf("digest %q is not sha256:<hex>", first)
	}
	again := plan("1")
	again.Upgrades[0].Reason = "another reason"
	if got := again.Digest(); got != first {
		t.Errorf("the same changes have another digest: %s, %s", first, got)
	}
	if got := plan("2").Digest(); got == first {
		t.Errorf("other values have the same digest %s", got)
	}
	if got := (&Plan{}).Digest(); got == first {
		t.Errorf("an empty plan has the digest %s", got)
	}
}
