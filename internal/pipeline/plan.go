package pipeline

import (
	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
)

// planInput is what the plan of rev for obj is computed from: what was observed and found, and
// the spec's settings.
func planInput(obj *gitopsv1alpha1.OsmDeployment, rev *gitops.Revision, observed *engine.Observed,
	inventory gitopsv1alpha1.Inventory, owner engine.Owner, liveOwners map[string]bool, claims map[string]string) engine.Input {
	return engine.Input{
		Revision: rev, Observed: observed, Inventory: EngineInventory(inventory), Claims: claims,
		Owner: owner, LiveOwners: liveOwners, Prune: obj.Spec.Prune, AdoptExisting: obj.Spec.AdoptExisting,
		Force: obj.Spec.Force, FollowPackages: obj.Spec.InstancesFollowPackages, Drift: driftPolicies[obj.GetDriftDetectionMode()],
		Remediation: RemediationOf(obj),
	}
}

// driftPolicies are the plan's policies of the drift detection modes.
var driftPolicies = map[gitopsv1alpha1.DriftDetectionMode]engine.DriftPolicy{
	gitopsv1alpha1.DriftDetectionEnabled:  engine.CorrectDrift,
	gitopsv1alpha1.DriftDetectionWarn:     engine.ReportDrift,
	gitopsv1alpha1.DriftDetectionDisabled: engine.IgnoreDrift,
}

// observationScope is what a plan reads of OSM. A drift check (the revision was applied
// already, and drift detection is not disabled) reads everything the OsmDeployment owns; a
// revision being applied reads only what changed since the inventory (engine.RevisionScope),
// unless its instances follow a package the revision changes, which may move any of them. A
// revision whose source revision is unknown ("", a checkout previewed) is read as a drift check.
func observationScope(obj *gitopsv1alpha1.OsmDeployment, rev *gitops.Revision, revision string,
	inventory gitopsv1alpha1.Inventory, owner engine.Owner) engine.Scope {
	driftCheck := obj.Status.LastAppliedRevision == revision && obj.GetDriftDetectionMode() != gitopsv1alpha1.DriftDetectionDisabled
	if revision == "" || driftCheck || obj.Spec.InstancesFollowPackages && packagesChanged(rev, inventory) {
		return engine.ScopeOf(rev, EngineInventory(inventory), owner)
	}
	scope := engine.RevisionScope(rev, EngineInventory(inventory), owner)
	// The references are checked again at each drift check (here, with driftDetection
	// disabled), and whenever instances follow their packages: a move compares the VNF
	// records with the VNFDs' revisions.
	scope.KnownReferences = scope.KnownReferences && obj.Status.LastAppliedRevision != revision && !obj.Spec.InstancesFollowPackages
	return scope
}

// packagesChanged tells whether the revision holds a package the inventory lacks or lists with
// other content.
func packagesChanged(rev *gitops.Revision, inventory gitopsv1alpha1.Inventory) bool {
	uploaded := make(map[string]string, len(inventory.Packages))
	for _, e := range inventory.Packages {
		uploaded[e.Name] = e.Digest
	}
	for _, pkg := range rev.Packages {
		if uploaded[pkg.Descriptor.ID] != pkg.Digest {
			return true
		}
	}
	return false
}

// withoutRetries forgets the digest and reason (a failed package move's) of failed instances when a reconcile was requested, so
// that the plan tries them again; otherwise a failed intent is not sent twice.
func withoutRetries(inventory gitopsv1alpha1.Inventory, retryFailed bool) gitopsv1alpha1.Inventory {
	if !retryFailed {
		return inventory
	}
	out := inventory
	out.NsInstances = make([]gitopsv1alpha1.NsInstanceEntry, len(inventory.NsInstances))
	for i, e := range inventory.NsInstances {
		if e.State == gitopsv1alpha1.NsInstanceFailed {
			e.Digest, e.Reason = "", ""
		}
		out.NsInstances[i] = e
	}
	return out
}

// RemediationOf is what the plan does about failed instantiations and upgrades
// (spec.install.remediation, spec.upgrade.remediation).
func RemediationOf(obj *gitopsv1alpha1.OsmDeployment) engine.Remediation {
	retries, remediateLast := obj.GetUpgradeRemediation()
	return engine.Remediation{InstallRetries: obj.GetInstallRetries(), UpgradeRetries: retries, RemediateLastUpgradeFailure: remediateLast}
}
