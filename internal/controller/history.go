package controller

import (
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/printable"
)

// status.history keeps the last applies, newest first, as helm-controller's does: what an
// on-call engineer needs to follow a change from a commit to OSM's operations once the events
// expired. It is written where the apply and the end of its operations are recorded, in the
// status write of the reconcile that saw them; OSM's operation records remain the reference
// (osmops trace reads them).

// recordApply puts the apply of a plan first in status.history: the revision, the plan's
// digest, the operations OSM accepted and, when OSM refused requests, why. An apply that
// started no operation has ended.
func recordApply(obj *gitopsv1alpha1.OsmDeployment, revision string, plan *engine.Plan, result *engine.Result, now time.Time) {
	snapshot := gitopsv1alpha1.ApplySnapshot{Revision: revision, PlanDigest: plan.Digest(),
		StartTime: metav1.NewTime(now), Outcome: gitopsv1alpha1.ApplyRunning}
	for i, op := range result.Operations {
		if i == gitopsv1alpha1.MaxHistoryOperations {
			snapshot.OperationsOmitted = int32(len(result.Operations) - i)
			break
		}
		snapshot.Operations = append(snapshot.Operations, gitopsv1alpha1.HistoryOperation{
			ID: op.ID, Type: op.Type, NsInstance: op.NsInstance, State: osm.OperationProcessing})
	}
	if len(result.Errors) > 0 {
		messages := make([]string, len(result.Errors))
		for i, e := range result.Errors {
			messages[i] = e.Error()
		}
		snapshot.Message = strings.Join(messages, "; ") // masked, then bounded, before the status is written
		snapshot.Outcome = gitopsv1alpha1.ApplyFailed
	}
	if len(result.Operations) == 0 {
		started := snapshot.StartTime
		snapshot.EndTime = &started
		if snapshot.Outcome == gitopsv1alpha1.ApplyRunning {
			snapshot.Outcome = gitopsv1alpha1.ApplySucceeded
		}
	}
	if history := obj.Status.History; len(history) > 0 && refusedAgain(history[0], snapshot) {
		// An OSM that refuses, or cannot be reached, at every retry would push the applies it
		// made out of the history: a refusal of the same plan replaces the last one, which keeps
		// when it was first sent.
		snapshot.StartTime = history[0].StartTime
		obj.Status.History[0] = snapshot
		return
	}
	obj.Status.History = append([]gitopsv1alpha1.ApplySnapshot{snapshot}, obj.Status.History...)
	obj.Status.History = obj.Status.History[:min(len(obj.Status.History), gitopsv1alpha1.MaxHistory)]
}

// refusedAgain tells whether an apply that OSM refused and that started no operation sent the
// same plan of the same revision as the last one, which OSM refused too.
func refusedAgain(last, next gitopsv1alpha1.ApplySnapshot) bool {
	refused := func(s gitopsv1alpha1.ApplySnapshot) bool {
		return s.Outcome == gitopsv1alpha1.ApplyFailed && len(s.Operations) == 0 && s.OperationsOmitted == 0
	}
	return refused(last) && refused(next) && last.Revision == next.Revision && last.PlanDigest == next.PlanDigest
}

// recordHistoryOperations writes into status.history the state of the operations OSM still
// runs and the outcome of those that ended; an apply whose listed operations all ended ends
// then, failed when one of them failed or timed out.
func recordHistoryOperations(obj *gitopsv1alpha1.OsmDeployment, running []gitopsv1alpha1.OperationEntry, ended []engine.Outcome, now time.Time) {
	end := metav1.NewTime(now)
	states := make(map[string]string, len(running))
	for _, op := range running {
		states[op.ID] = op.State
	}
	outcomes := make(map[string]engine.Outcome, len(ended))
	for _, outcome := range ended {
		outcomes[outcome.Operation.ID] = outcome
	}
	for i := range obj.Status.History {
		snapshot := &obj.Status.History[i]
		for j := range snapshot.Operations {
			op := &snapshot.Operations[j]
			if state, runs := states[op.ID]; runs {
				op.State = state
			}
			outcome, done := outcomes[op.ID]
			if !done || op.EndTime != nil {
				continue
			}
			op.State, op.EndTime, op.Message = outcome.Operation.State, &end, outcome.Message
			if outcome.Failed {
				snapshot.Outcome = gitopsv1alpha1.ApplyFailed
			}
		}
		if snapshot.EndTime == nil && !slices.ContainsFunc(snapshot.Operations, func(op gitopsv1alpha1.HistoryOperation) bool { return op.EndTime == nil }) {
			snapshot.EndTime = &end
			if snapshot.Outcome == gitopsv1alpha1.ApplyRunning {
				snapshot.Outcome = gitopsv1alpha1.ApplySucceeded
			}
		}
	}
}

// boundHistory makes the messages of status.history safe to show and small, in the status
// write (summarize), after the values of Secrets were masked in them: control characters
// escaped, then cut to MaxHistoryMessageLength bytes on a rune boundary.
func boundHistory(history []gitopsv1alpha1.ApplySnapshot) {
	for i := range history {
		history[i].Message = cut(printable.String(history[i].Message), gitopsv1alpha1.MaxHistoryMessageLength)
		for j := range history[i].Operations {
			op := &history[i].Operations[j]
			op.Message = cut(printable.String(op.Message), gitopsv1alpha1.MaxHistoryMessageLength)
		}
	}
}
