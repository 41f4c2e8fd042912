package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/osm"
)

func TestExpireOperations(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	op := func(id string, age time.Duration) gitopsv1alpha1.OperationEntry {
		return gitopsv1alpha1.OperationEntry{ID: id, Type: osm.OperationTypeInstantiate, NsInstance: "ldap", State: "PROCESSING",
			StartTime: metav1.NewTime(now.Add(-age))}
	}
	kept, expired := ExpireOperations([]gitopsv1alpha1.OperationEntry{op("young", time.Minute), op("old", time.Hour)}, now, 10*time.Minute)
	if diff := cmp.Diff([]gitopsv1alpha1.OperationEntry{op("young", time.Minute)}, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	want := []Outcome{{Operation: op("old", time.Hour), Failed: true, TimedOut: true,
		Message: "OSM did not finish operation old within 10m0s; no longer waited for"}}
	if diff := cmp.Diff(want, expired); diff != "" {
		t.Errorf("expired (-want +got):\n%s", diff)
	}
}
