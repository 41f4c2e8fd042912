package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/osm"
)

func TestExpireOperations(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	op := func(id string, age time.Duration) OperationRecord {
		return OperationRecord{ID: id, Type: osm.OperationTypeInstantiate, NsInstance: "ldap", State: "PROCESSING",
			StartTime: now.Add(-age)}
	}
	kept, expired := ExpireOperations([]OperationRecord{op("young", time.Minute), op("old", time.Hour)}, now, 10*time.Minute)
	if diff := cmp.Diff([]OperationRecord{op("young", time.Minute)}, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	want := []Outcome{{Operation: op("old", time.Hour), Failed: true, TimedOut: true,
		Message: "OSM did not finish operation old within 10m0s; no longer waited for"}}
	if diff := cmp.Diff(want, expired); diff != "" {
		t.Errorf("expired (-want +got):\n%s", diff)
	}
}
