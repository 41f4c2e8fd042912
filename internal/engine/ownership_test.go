package engine

import (
	"testing"

	"github.com/osmops/osmops/internal/osm"
)

func TestOwnerMarkerRoundTrip(t *testing.T) {
	for _, owner := range []Owner{self, {Manager: "k8s-0b6f", Namespace: "ns", Name: "with.dots.in.it"}} {
		got, ok := ParseOwner(owner.Marker())
		if !ok || got != owner {
			t.Errorf("ParseOwner(%q) = %v, %v; want %v", owner.Marker(), got, ok, owner)
		}
	}
}

func TestMarkersTheOperatorDidNotWrite(t *testing.T) {
	for _, marker := range []string{"", "a.b", "Cluster.ns.name", "1a.ns.name", "a..name", "a.ns.", "-a.ns.name"} {
		if owner, ok := ParseOwner(marker); ok {
			t.Errorf("ParseOwner(%q) = %v, want no owner", marker, owner)
		}
	}
	if _, ok := ownerOf(osm.NSInstance{}); ok {
		t.Error("an NS instance without additionalParamsForNs has an owner")
	}
}

func TestCheckManagerIdentity(t *testing.T) {
	for identity, valid := range map[string]bool{
		"cluster-a": true, "k8s-3f2a9c1e-0d5b-4c1e-9f0a-1b2c3d4e5f60": true, "a": true,
		"": false, "Cluster": false, "1cluster": false, "a.b": false, "a-": false, "a/b": false,
	} {
		if err := CheckManagerIdentity(identity); (err == nil) != valid {
			t.Errorf("CheckManagerIdentity(%q) = %v, want valid %v", identity, err, valid)
		}
	}
}
