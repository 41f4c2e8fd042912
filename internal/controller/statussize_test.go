package controller

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
)

// worstCaseStatus is the status of an OsmDeployment of as many NS instances as a revision may
// declare, each with the longest name, a reason as long as the CRD allows and an operation
// running, and a status.history at its bounds, its ids and OSM's states of the given length,
// with its reasons bounded as the controller bounds them before each write.
func worstCaseStatus(idBytes, stateBytes int) gitopsv1alpha1.OsmDeploymentStatus {
	id := func(i int) string { return fmt.Sprintf("%0*d", idBytes, i) }
	state := func(s string) string { return s + strings.Repeat("_", max(stateBytes-len(s), 0)) }
	status := gitopsv1alpha1.OsmDeploymentStatus{
		LastAppliedRevision:   "main@sha1:" + strings.Repeat("f", 40),
		LastAttemptedRevision: "main@sha1:" + strings.Repeat("e", 40),
		Inventory:             &gitopsv1alpha1.Inventory{},
	}
	for _, condition := range []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition} {
		status.Conditions = append(status.Conditions, metav1.Condition{Type: condition, Status: metav1.ConditionFalse,
			Reason: gitopsv1alpha1.OSMRequestFailedReason, Message: strings.Repeat("m", 4096), LastTransitionTime: metav1.Now()})
	}
	for i := range gitops.MaxNsInstances {
		name := fmt.Sprintf("%0255d", i) // maxNSNameLength
		status.Inventory.NsInstances = append(status.Inventory.NsInstances, gitopsv1alpha1.NsInstanceEntry{
			Name: name, ID: id(i), Digest: "sha256:" + strings.Repeat("d", 64),
			Origins: strings.TrimSpace(strings.Repeat("ffffff ", gitops.MaxOrigins)),
			State:   gitopsv1alpha1.NsInstanceProgressing, Reason: strings.Repeat("r", 1024), // the CRD's MaxLength
			InstallFailures: math.MaxInt32, UpgradeFailures: math.MaxInt32, RolledBack: true})
		status.Operations = append(status.Operations, gitopsv1alpha1.OperationEntry{ID: id(i),
			Type: "instantiate", NsInstance: name, State: state("PROCESSING"), StartTime: metav1.NewTime(time.Now()), MoreUpgrades: true, Rollback: true})
	}
	// status.history at its bounds: every apply listing as many operations as it keeps, on
	// instances of the longest name, each with OSM's message as long as it is kept.
	for i := range gitopsv1alpha1.MaxHistory {
		snapshot := gitopsv1alpha1.ApplySnapshot{Revision: "main@sha1:" + strings.Repeat("e", 40), PlanDigest: "sha256:" + strings.Repeat("d", 64),
			StartTime: metav1.Now(), EndTime: &metav1.Time{Time: time.Now()}, Outcome: gitopsv1alpha1.ApplyFailed,
			Message: strings.Repeat("m", gitopsv1alpha1.MaxHistoryMessageLength), OperationsOmitted: gitops.MaxNsInstances}
		for j := range gitopsv1alpha1.MaxHistoryOperations {
			snapshot.Operations = append(snapshot.Operations, gitopsv1alpha1.HistoryOperation{ID: id(i*100 + j),
				Type: "instantiate", NsInstance: fmt.Sprintf("%0255d", j), State: state("FAILED_TEMP"), EndTime: &metav1.Time{Time: time.Now()},
				Message: strings.Repeat("m", gitopsv1alpha1.MaxHistoryMessageLength)})
		}
		status.History = append(status.History, snapshot)
	}
	boundReasons(&status)
	return status
}

// TestWorstCaseStatusFitsTheAPIServer: the worst-case status fits in the 1.5 MiB the API server
// stores of an object. With OSM's own ids (36-byte UUIDs) and states it fits well under it,
// under three quarters, which leaves room for the entries of instances a new revision prunes
// meanwhile; with the longest ids and states an NBI's answer may hold (osm.MaxIDBytes), it
// still fits: nothing a hostile NBI answers makes the status write fail.
func TestWorstCaseStatusFitsTheAPIServer(t *testing.T) {
	const apiServerLimit = 1536 << 10
	for _, tc := range []struct {
		name            string
		idBytes, states int
		limit           int
	}{
		{"OSM's ids", 36, 0, 3 * apiServerLimit / 4},
		{"the longest ids and states an answer may hold", osm.MaxIDBytes, osm.MaxIDBytes, apiServerLimit},
	} {
		encoded, err := json.Marshal(worstCaseStatus(tc.idBytes, tc.states))
		if err != nil {
			t.Fatal(err)
		}
		if len(encoded) >= tc.limit {
			t.Errorf("%s: the worst-case status of %d NS instances is %d bytes, not under %d", tc.name, gitops.MaxNsInstances, len(encoded), tc.limit)
		}
		t.Logf("%s: worst-case status of %d NS instances: %d bytes", tc.name, gitops.MaxNsInstances, len(encoded))
	}
}
