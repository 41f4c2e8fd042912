package controller

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/pipeline"
)

// remediationPending tells whether the next plan remediates a failed NS instance: the
// OsmDeployment is then planned again rather than stalled.
func remediationPending(obj *gitopsv1alpha1.OsmDeployment) bool {
	return anyInstance(obj, pipeline.RemediationOf(obj).Pending)
}

// remediationExhausted tells whether an NS instance failed again after every remediation
// the spec allows.
func remediationExhausted(obj *gitopsv1alpha1.OsmDeployment) bool {
	return anyInstance(obj, pipeline.RemediationOf(obj).Exhausted)
}

func anyInstance(obj *gitopsv1alpha1.OsmDeployment, test func(engine.InstanceRecord) bool) bool {
	return obj.Status.Inventory != nil && slices.ContainsFunc(obj.Status.Inventory.NsInstances,
		func(e gitopsv1alpha1.NsInstanceEntry) bool { return test(pipeline.EngineInstance(e)) })
}

// failureReason is the reason a failed operation stalls the OsmDeployment with:
// RemediationExhausted once an instance has no remediation left, else the operation's.
func failureReason(obj *gitopsv1alpha1.OsmDeployment, reason string) string {
	if remediationExhausted(obj) {
		return gitopsv1alpha1.RemediationExhaustedReason
	}
	return reason
}

// settleRemediation, once every recorded operation ended, lets the plan send the remediation
// of the failed instances that have one left, instead of stalling on them. It tells whether
// one is pending.
func settleRemediation(obj *gitopsv1alpha1.OsmDeployment) bool {
	if !remediationPending(obj) {
		return false
	}
	conditions.Delete(obj, meta.StalledCondition)
	return true
}

// eventRemediations says, in one Normal event, each remediation attempt the plan sent (at most
// maxEventNames of them), as "remediation 1/3 of NS instance ldap: ...".
func (r *OsmDeploymentReconciler) eventRemediations(obj *gitopsv1alpha1.OsmDeployment, plan *engine.Plan) {
	var attempts []string
	for _, actions := range [][]engine.NsAction{plan.Upgrades, plan.Deletes} {
		for _, a := range actions {
			if a.Remediation {
				attempts = append(attempts, remediationMessage(a))
			}
		}
	}
	if len(attempts) == 0 {
		return
	}
	r.Eventf(obj, corev1.EventTypeNormal, gitopsv1alpha1.RemediationReason, "%s", listNames(attempts))
}

// remediationMessage puts the NS instance's name after the attempt the reason begins with:
// "remediation 1/3: upgrading ..." becomes "remediation 1/3 of NS instance ldap: upgrading ...".
func remediationMessage(a engine.NsAction) string {
	attempt, what, found := strings.Cut(a.Reason, ": ")
	if !found {
		return fmt.Sprintf("NS instance %s: %s", a.Name, a.Reason)
	}
	return fmt.Sprintf("%s of NS instance %s: %s", attempt, a.Name, what)
}
