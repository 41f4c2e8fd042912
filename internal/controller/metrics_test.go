package controller

import (
	"slices"
	"testing"

	"github.com/osmops/osmops/internal/testing/testenv"
)

// The osmops_ns_instances gauge reports every state the CRD's enum allows: a state added to
// the enum and not to the gauge would leave its instances uncounted (Drifted was).
func TestInstanceStatesAreTheEnum(t *testing.T) {
	var reported []string
	for _, state := range instanceStates {
		reported = append(reported, string(state))
	}
	enum := testenv.InstanceStateEnum(t)
	slices.Sort(enum)
	slices.Sort(reported)
	if !slices.Equal(enum, reported) {
		t.Errorf("the gauge reports %v, the enum is %v", reported, enum)
	}
}
