package engine

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/kduoptions"
	"github.com/osmops/osmops/internal/osm"
)

// Remediation is what a plan does about the failures of a declaration (helm-controller's
// install.remediation and upgrade.remediation). Its zero value remediates nothing: a failed
// intent is kept (PlanFailedKept) until a new revision or a reconcile request.
type Remediation struct {
	// InstallRetries is how many times a failed instantiation of an instance this owner
	// created is remediated: the instance terminated, then created again.
	InstallRetries int
	// UpgradeRetries is how many times a failed KDU upgrade is sent again.
	UpgradeRetries int
	// RemediateLastUpgradeFailure puts the KDU back to the values and chart it last ran
	// successfully once no retry is left.
	RemediateLastUpgradeFailure bool
}

// Reasons of remediation actions; the first %d/%d is the attempt and the retries.
const (
	reasonRetryUpgrade = "remediation %d/%d: upgrading KDU %s of VNF %s again after its upgrade failed"
	reasonRecreate     = "remediation %d/%d: its instantiation failed: terminating it to create it again"
	reasonRollback     = "remediation: upgrade of KDU %s of VNF %s failed %d time(s): putting it back to the values and chart it last ran successfully"
)

// carry keeps the failures counted for the declaration an entry was last given while it is
// the one planned: a new declaration starts with none (and a reconcile request, which clears
// the digest of failed entries).
func (r Remediation) carry(last, next InstanceRecord) InstanceRecord {
	if last.Digest == next.Digest {
		next.InstallFailures, next.UpgradeFailures, next.RolledBack = last.InstallFailures, last.UpgradeFailures, last.RolledBack
	}
	return next
}

// recreates tells whether a failed instantiation of the entry's declaration is remediated
// now. Only an instantiation this owner sent is counted (CountFailure), so an adopted instance
// is never terminated.
func (r Remediation) recreates(last InstanceRecord) bool {
	return last.State == InstanceFailed && last.InstallFailures > 0 && int(last.InstallFailures) <= r.InstallRetries
}

// remediatesUpgrade tells whether a failed upgrade of the entry's declaration is remediated
// now: sent again, or rolled back once no retry is left.
func (r Remediation) remediatesUpgrade(last InstanceRecord) bool {
	failures := int(last.UpgradeFailures)
	return last.State == InstanceFailed && failures > 0 && !last.RolledBack &&
		(failures <= r.UpgradeRetries || r.RemediateLastUpgradeFailure)
}

// Exhausted tells whether a Failed entry failed again after every remediation its failures
// allowed: nothing more is sent for its declaration. An entry no remediation applies to (none
// configured, no failure counted) is not exhausted.
func (r Remediation) Exhausted(e InstanceRecord) bool {
	if e.State != InstanceFailed {
		return false
	}
	installSpent := r.InstallRetries > 0 && int(e.InstallFailures) > r.InstallRetries
	upgradeSpent := (r.UpgradeRetries > 0 || r.RemediateLastUpgradeFailure) && int(e.UpgradeFailures) > r.UpgradeRetries &&
		(e.RolledBack || !r.RemediateLastUpgradeFailure)
	return installSpent || upgradeSpent
}

// Pending tells whether the next plan remediates a Failed entry: the OsmDeployment is then
// not stalled on it.
func (r Remediation) Pending(e InstanceRecord) bool {
	return r.recreates(e) || r.remediatesUpgrade(e)
}

// CountFailure counts, in the entry of the instance an operation ran on, a failed
// instantiation or KDU upgrade (a failed rollback is not counted: RolledBack keeps it from
// being sent again); an operation that completed clears the counts, as helm-controller does on
// a successful release. Without remediation nothing is counted: the status stays as it was.
func (r Remediation) CountFailure(e *InstanceRecord, o Outcome) {
	switch {
	case r == Remediation{}:
	case o.Operation.Rollback || o.Operation.Type != osm.OperationTypeInstantiate && o.Operation.Type != osm.OperationTypeAction:
	case !o.Failed:
		e.InstallFailures, e.UpgradeFailures, e.RolledBack = 0, 0, false
	case o.Operation.Type == osm.OperationTypeInstantiate:
		e.InstallFailures = min(e.InstallFailures+1, maxFailures)
	default:
		e.UpgradeFailures = min(e.UpgradeFailures+1, maxFailures)
	}
}

// maxFailures bounds the counts: one more than the most retries the API allows.
const maxFailures = 11

// planRecreate plans one attempt of the remediation of a failed instantiation: the BROKEN
// instance's terminate (and delete), once; its entry is Replacing until OSM removed it, and
// the next plan creates it again (planInstance), its failures carried with the declaration.
func (r Remediation) planRecreate(in Input, p *Plan, ns gitops.NsInstance, record osm.NSInstance, last, next InstanceRecord) {
	reason := fmt.Sprintf(reasonRecreate, last.InstallFailures, r.InstallRetries)
	next.State, next.Reason = Next(last.State, PlanReplace), reason
	if !in.Observed.Busy(next.ID) {
		p.Deletes = append(p.Deletes, NsAction{Name: ns.Name, ID: next.ID, Reason: reason, Remediation: true,
			Force: record.Admin.NSState == osm.NSStateNotInstantiated})
	}
	p.Inventory.NsInstances = append(p.Inventory.NsInstances, next)
}

// planUpgradeRemediation plans one attempt of the remediation of a failed KDU upgrade of the
// same declaration: the upgrade sent again while retries are left, else the KDU put back to
// the values and chart it last ran successfully, once.
//
// The rollback is an upgrade to what the KDU's release ran after the last operation that
// completed (Observed.KDUValues and KDUModels, replayed from OSM's completed operations), with
// kdu_reset_values so that Helm runs those values alone, not the failed ones merged under
// them. OSM's KDU rollback primitive (helm rollback <release> 0) goes to the Helm revision
// before the current one, which is not the last good one when several upgrades happened in
// Helm's history that OSM does not show: LCM upgrades atomically, so a failed upgrade already
// made two revisions (the failed one, then Helm's own rollback), and "the one before" is the
// failed one.
func (r Remediation) planUpgradeRemediation(in Input, p *Plan, ns gitops.NsInstance, last, next InstanceRecord, upgrade NsAction) InstanceRecord {
	upgrade.Name, upgrade.Instance, upgrade.ID, upgrade.Remediation = ns.Name, ns, next.ID, true
	if int(last.UpgradeFailures) <= r.UpgradeRetries {
		upgrade.Reason = fmt.Sprintf(reasonRetryUpgrade, last.UpgradeFailures, r.UpgradeRetries, upgrade.KDU.Name, upgrade.Member)
		p.Upgrades = append(p.Upgrades, upgrade)
		next.State, next.Reason = Next(last.State, PlanUpgrade), upgrade.Reason
		return next
	}
	values, found := lastGoodValues(in.Observed, next.ID, upgrade.Member, upgrade.KDU.Name)
	if !found {
		// OSM's records do not say what the KDU ran (not observed): nothing is guessed.
		next.State, next.Reason = Next(last.State, PlanFailedKept), last.Reason
		return next
	}
	values[kduoptions.ResetValues] = "true"
	upgrade.KDU.Params = values
	upgrade.Chart = runningChart(in.Observed, next.ID, upgrade.Member, upgrade.KDU.Name)
	upgrade.MoreUpgrades, upgrade.Rollback = false, true
	upgrade.Reason = fmt.Sprintf(reasonRollback, upgrade.KDU.Name, upgrade.Member, last.UpgradeFailures)
	p.Upgrades = append(p.Upgrades, upgrade)
	next.State, next.Reason, next.RolledBack = Next(last.State, PlanUpgrade), upgrade.Reason, true
	return next
}

// lastGoodValues decodes the values a KDU's release runs as OSM's completed operations say.
func lastGoodValues(o *Observed, id, member, kdu string) (map[string]any, bool) {
	release, found := o.instance(id).kdu(member, kdu)
	if !found {
		return nil, false
	}
	raw := release.values
	values := map[string]any{}
	decoder := json.NewDecoder(bytes.NewReader([]byte(raw)))
	decoder.UseNumber()
	if raw != "" && decoder.Decode(&values) != nil {
		return nil, false
	}
	return values, true
}
