package controller

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// status.history at its bounds: MaxHistory applies, newest first; MaxHistoryOperations
// operations listed per apply and the others counted; OSM's messages cut to
// MaxHistoryMessageLength bytes on a rune boundary, with control characters escaped.
func TestHistoryAtItsBounds(t *testing.T) {
	obj := &gitopsv1alpha1.OsmDeployment{}
	start := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	const operations = gitopsv1alpha1.MaxHistoryOperations + 3
	for i := range gitopsv1alpha1.MaxHistory + 2 {
		result := &engine.Result{}
		for j := range operations {
			result.Operations = append(result.Operations, engine.StartedOperation{ID: fmt.Sprintf("op-%d-%d", i, j), Type: osm.OperationTypeInstantiate, NsInstance: fmt.Sprintf("ns-%d", j)})
		}
		recordApply(obj, fmt.Sprintf("main@sha1:%d", i), &engine.Plan{}, result, start.Add(time.Duration(i)*time.Minute))
	}
	history := obj.Status.History
	if len(history) != gitopsv1alpha1.MaxHistory {
		t.Fatalf("%d applies kept, want %d", len(history), gitopsv1alpha1.MaxHistory)
	}
	if newest, oldest := history[0].Revision, history[len(history)-1].Revision; newest != "main@sha1:6" || oldest != "main@sha1:2" {
		t.Errorf("history from %s to %s, want the newest first, main@sha1:6 to main@sha1:2", newest, oldest)
	}
	if got := len(history[0].Operations); got != gitopsv1alpha1.MaxHistoryOperations || history[0].OperationsOmitted != 3 {
		t.Errorf("%d operations listed and %d omitted, want %d and 3", got, history[0].OperationsOmitted, gitopsv1alpha1.MaxHistoryOperations)
	}
	if history[0].PlanDigest != (&engine.Plan{}).Digest() || !strings.HasPrefix(history[0].PlanDigest, "sha256:") {
		t.Errorf("plan digest %q", history[0].PlanDigest)
	}

	// OSM fails the first operation of the newest apply with a long message, holding a
	// control character; the others complete.
	message := "\x1b[2J" + strings.Repeat("é", gitopsv1alpha1.MaxHistoryMessageLength)
	var ended []engine.Outcome
	for j, op := range history[0].Operations {
		entry := engine.OperationRecord{ID: op.ID, Type: op.Type, NsInstance: op.NsInstance, State: osm.OperationCompleted}
		if j == 0 {
			entry.State = "FAILED"
			ended = append(ended, engine.Outcome{Operation: entry, Failed: true, Message: message})
			continue
		}
		ended = append(ended, engine.Outcome{Operation: entry})
	}
	recordHistoryOperations(obj, nil, ended, start.Add(time.Hour))
	boundHistory(obj.Status.History)
	newest := obj.Status.History[0]
	if newest.Outcome != gitopsv1alpha1.ApplyFailed || newest.EndTime == nil || !newest.EndTime.Time.Equal(start.Add(time.Hour)) {
		t.Errorf("the newest apply: outcome %s, end %v; want Failed at %s", newest.Outcome, newest.EndTime, start.Add(time.Hour))
	}
	failed := newest.Operations[0]
	if failed.State != "FAILED" || len(failed.Message) > gitopsv1alpha1.MaxHistoryMessageLength || !utf8.ValidString(failed.Message) ||
		strings.ContainsRune(failed.Message, '\x1b') || !strings.HasSuffix(failed.Message, "…") {
		t.Errorf("the failed operation: state %s, message of %d bytes %q", failed.State, len(failed.Message), failed.Message)
	}
	if second := obj.Status.History[1]; second.Outcome != gitopsv1alpha1.ApplyRunning || second.EndTime != nil {
		t.Errorf("an apply whose operations run: outcome %s, end %v; want Running, no end", second.Outcome, second.EndTime)
	}
}

// An apply OSM refused a request of, and that started no operation, has ended, failed, with
// OSM's refusal, and the same refusal at each retry stays one entry; an apply that sent only
// package uploads has ended, succeeded.
func TestHistoryOfAnApplyWithoutOperations(t *testing.T) {
	obj := &gitopsv1alpha1.OsmDeployment{}
	now := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	recordApply(obj, "main@sha1:1", &engine.Plan{}, &engine.Result{}, now)
	recordApply(obj, "main@sha1:2", &engine.Plan{}, &engine.Result{Errors: []engine.ActionError{
		{Action: engine.ActionCreateNSInstance, Subject: "ldap", Err: errors.New("422 Unprocessable Entity: bad VIM")}}}, now)
	// Refused again at each retry: one entry, from the first refusal to the last.
	for retry := range 2 * gitopsv1alpha1.MaxHistory {
		recordApply(obj, "main@sha1:2", &engine.Plan{}, &engine.Result{Errors: []engine.ActionError{
			{Action: engine.ActionCreateNSInstance, Subject: "ldap", Err: errors.New("503 Service Unavailable")}}}, now.Add(time.Duration(retry+1)*time.Minute))
	}
	if len(obj.Status.History) != 2 {
		t.Fatalf("%d applies recorded, want the uploads and one refused apply", len(obj.Status.History))
	}
	refused, uploaded := obj.Status.History[0], obj.Status.History[1]
	if refused.Outcome != gitopsv1alpha1.ApplyFailed || !refused.StartTime.Time.Equal(now) || !refused.EndTime.Time.Equal(now.Add(10*time.Minute)) ||
		!strings.Contains(refused.Message, "503") {
		t.Errorf("refused: %+v", refused)
	}
	if uploaded.Outcome != gitopsv1alpha1.ApplySucceeded || uploaded.EndTime == nil {
		t.Errorf("uploads only: %+v", uploaded)
	}
}

// operationIDs are the ids of the operations d waits for, once it started some.
func (tn *tenant) operationIDs(d *gitopsv1alpha1.OsmDeployment) []string {
	tn.t.Helper()
	var ids []string
	for _, op := range tn.get(d).Status.Operations {
		ids = append(ids, op.ID)
	}
	return ids
}

// historyOf is d's status.history as "revision outcome type:id:state ..." lines, newest first.
func historyOf(d *gitopsv1alpha1.OsmDeployment) []string {
	var out []string
	for _, snapshot := range d.Status.History {
		line := fmt.Sprintf("%s %s", snapshot.Revision, snapshot.Outcome)
		for _, op := range snapshot.Operations {
			line += fmt.Sprintf(" %s:%s:%s", op.Type, op.ID, op.State)
		}
		out = append(out, line)
	}
	return out
}

var _ = Describe("status.history", func() {
	It("holds an apply and the upgrade after it, with their OSM operation ids", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		first := tn.publishHeld(d, demoRepo("1", "ldap"))
		instantiate := tn.operationIDs(d)
		tn.sim.ReleaseOperations()
		tn.eventuallyApplied(d, first)
		second := tn.publishHeld(d, demoRepo("2", "ldap"))
		upgrade := tn.operationIDs(d)
		tn.sim.ReleaseOperations()
		got := tn.eventuallyApplied(d, second)

		tn.g.Expect(instantiate).To(HaveLen(1))
		tn.g.Expect(upgrade).To(HaveLen(1))
		tn.g.Expect(historyOf(got)).To(Equal([]string{
			second + " Succeeded action:" + upgrade[0] + ":COMPLETED",
			first + " Succeeded instantiate:" + instantiate[0] + ":COMPLETED",
		}), tn.describe(d))
		for _, snapshot := range got.Status.History {
			tn.g.Expect(snapshot.PlanDigest).To(HavePrefix("sha256:"))
			tn.g.Expect(snapshot.EndTime).NotTo(BeNil())
			tn.g.Expect(snapshot.Operations[0].NsInstance).To(Equal("ldap"))
			tn.g.Expect(snapshot.Operations[0].EndTime).NotTo(BeNil())
		}
		tn.g.Expect(got.Status.History[0].PlanDigest).NotTo(Equal(got.Status.History[1].PlanDigest))
	})

	It("records a failed upgrade with OSM's message, masked, escaped and bounded", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		const secret = "hush-hush-variable-1234"
		tn.g.Expect(k8sClient.Create(tn.ctx, osmtenant.ValuesSecret(tn.namespace, "vars", map[string]string{"word": secret}))).To(Succeed())
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.PostBuild = &gitopsv1alpha1.PostBuild{SubstituteFrom: []gitopsv1alpha1.SubstituteReference{{Kind: "Secret", Name: "vars"}}}
		})
		first := tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap"))).Status.LastAppliedRevision
		// OSM's message quotes a value from the Secret, a terminal escape, and more than the
		// history keeps.
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "upgrade", NSName: "ldap",
			Message: "helm: \x1b[2J word=" + secret + " " + strings.Repeat("x", 2*gitopsv1alpha1.MaxHistoryMessageLength), Count: 1})).To(Succeed())
		second := tn.publish("gitops", demoRepo("2", "ldap"))
		tn.eventuallyCondition(d, meta.StalledCondition, HavePrefix("True "+gitopsv1alpha1.OperationFailedReason))

		history := tn.get(d).Status.History
		tn.g.Expect(historyOf(tn.get(d))[1]).To(HavePrefix(first + " Succeeded instantiate:"))
		tn.g.Expect(history[0].Revision).To(Equal(second))
		tn.g.Expect(history[0].Outcome).To(Equal(gitopsv1alpha1.ApplyFailed))
		failed := history[0].Operations[0]
		tn.g.Expect(failed.State).To(Equal("FAILED"))
		tn.g.Expect(failed.Message).To(HavePrefix(`helm: \x1b[2J word=`))
		tn.g.Expect(failed.Message).NotTo(ContainSubstring(secret))
		tn.g.Expect(len(failed.Message)).To(BeNumerically("<=", gitopsv1alpha1.MaxHistoryMessageLength))
	})

	It("keeps the last MaxHistory applies, newest first", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		var revisions []string
		for replicas := range gitopsv1alpha1.MaxHistory + 1 {
			revision := tn.publish("gitops", demoRepo(fmt.Sprint(replicas+1), "ldap"))
			tn.eventuallyApplied(d, revision)
			revisions = append([]string{revision}, revisions...)
		}
		got := tn.get(d).Status.History
		tn.g.Expect(got).To(HaveLen(gitopsv1alpha1.MaxHistory))
		for i, snapshot := range got {
			tn.g.Expect(snapshot.Revision).To(Equal(revisions[i]))
			tn.g.Expect(snapshot.Outcome).To(Equal(gitopsv1alpha1.ApplySucceeded))
		}
	})
})
