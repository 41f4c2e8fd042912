package engine

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// Input is everything a plan is computed from.
type Input struct {
	Revision  *gitops.Revision
	Observed  *Observed
	Inventory Inventory
	// Owner is the OsmDeployment planned for: the NS instances that carry its marker are its own.
	Owner Owner
	// LiveOwners tells, by marker, which owners of Observed.ForeignOwners still exist: an
	// instance marked by one of them is never taken, changed or pruned. An owner of another
	// Kubernetes cluster cannot be checked and counts as existing.
	LiveOwners map[string]bool
	// Claims maps the names of NS instances that other OsmDeployments of the same OSM own (or
	// are creating) to those OsmDeployments ("namespace/name"). A claim never outweighs the
	// owner's marker on an instance in OSM: it guards creates and adoptions only.
	Claims        map[string]string
	Prune         bool
	AdoptExisting bool
	// Force replaces an instance OSM cannot change in place (spec.force).
	Force bool
	// FollowPackages moves owned instances to the new revision of their VNF packages that the
	// revision holds (spec.instancesFollowPackages).
	FollowPackages bool
	// Drift is what the plan does with what changed in OSM outside Git.
	Drift DriftPolicy
	// Remediation is what the plan does about failed instantiations and upgrades.
	Remediation Remediation
}

// DriftPolicy says what a plan does with what changed in OSM outside Git since it was applied
// (spec.driftDetection.mode): an instance deleted, a KDU's release changed, a package
// uploaded again. A declaration changed in Git is applied whatever the policy.
type DriftPolicy int

const (
	// CorrectDrift sets OSM back to what Git declares.
	CorrectDrift DriftPolicy = iota
	// ReportDrift lists the differences in Plan.Drifts and changes nothing: the instances are
	// Drifted.
	ReportDrift
	// IgnoreDrift changes nothing and reports nothing.
	IgnoreDrift
)

// Drift is one difference from Git that OSM has, made outside Git, and that ReportDrift leaves.
type Drift struct {
	// Name is the NS instance's, or the package's descriptor id.
	Name string
	// What differs.
	What string
}

// PackageAction uploads a package, a create when ID is empty, else a full update of ID, and
// marks it as the owner's (PackageUserData); MarkOnly marks an upload OSM already has.
type PackageAction struct {
	Package gitops.Package
	ID      string
	// Revision is the revision OSM gives the package once the action is done: uploads count
	// from 1, and a mark keeps it.
	Revision int
	MarkOnly bool
	// Reason says why, for events and logs.
	Reason string
}

// NsAction is one LCM change of an NS instance.
type NsAction struct {
	Name string
	// Instance is the declaration (creates and upgrades).
	Instance gitops.NsInstance
	// ID is OSM's _id of the instance (upgrades and deletes).
	ID string
	// Member and KDU are the KDU an upgrade changes, and its VNF's member-vnf-index.
	Member string
	KDU    gitops.KDU
	// Chart is the chart an upgrade names (its kdu_model): the declared model, else the one the
	// KDU's release runs now. Without it LCM drops the deployed chart's version and installs the
	// newest chart of the repository (measured on OSM 19's LCM: 1.2.7 became 1.2.8 on a values
	// change).
	Chart string
	// MoreUpgrades says that other KDUs of the instance differ too: they are upgraded once this
	// upgrade completed, as OSM runs one operation per instance at a time.
	MoreUpgrades bool
	// Reason says why, for events and logs.
	Reason string
	// Force deletes an instance OSM never instantiated (or terminated without removing): the
	// NBI answers a plain DELETE of one with 204 and keeps it (nbi.py, DELETE of
	// ns_instances_content), and there is nothing to terminate.
	Force bool
	// Change is the VNF a package move moves.
	Change osm.VNFPackageChange
	// Remediation marks an attempt of spec.install.remediation or spec.upgrade.remediation
	// (a retried upgrade, a rollback, the terminate of a recreate): Reason says which.
	Remediation bool
	// Rollback marks the upgrade that puts a KDU back to the values and chart it last ran
	// successfully: once it completed, the instance stays Failed (RollbackCompleted).
	Rollback bool
}

// Plan is the difference between a revision and OSM: what to send, in order.
type Plan struct {
	// Packages in dependency order (VNF packages before the NS packages that use them).
	Packages []PackageAction
	Creates  []NsAction
	Upgrades []NsAction
	// PackageMoves move one VNF of an instance each to its package's revision (CHANGE_VNFPKG).
	PackageMoves []NsAction
	Deletes      []NsAction
	// Orphans are owned NS instances Git no longer declares, left running as prune is off.
	Orphans []string
	// Problems make the revision impossible to apply as it is; while there are any, nothing
	// is sent to OSM.
	Problems []Problem
	// Warnings are actions OSM may refuse, said before they are sent.
	Warnings []gitops.Problem
	// Drifts are what changed in OSM outside Git and was left so (ReportDrift).
	Drifts []Drift
	// Inventory is what the OsmDeployment owns once the plan is applied; the entries of
	// creates are Creating with no id yet.
	Inventory Inventory
	// Owner is the marker the creates carry.
	Owner Owner
}

// ProblemKind tells why a revision cannot be applied, and so what may mend it.
type ProblemKind int

const (
	// Unresolved: the revision names what OSM lacks (an NSD, a VNFD or one of its KDUs, a VIM
	// account). It may appear in OSM, made by hand: the plan is made again later.
	Unresolved ProblemKind = iota
	// Conflict: another owner holds what the revision declares, or OSM cannot make the change
	// (a new NSD or VIM account for an instance, duplicates in OSM).
	Conflict
	// Limit: OSM would refuse or fail what the revision needs: a create beyond one of the
	// project's quotas, or an operation OSM's LCM fails (a package move of a KNF).
	Limit
)

// Problem is one reason the plan cannot be applied, at its file and line.
type Problem struct {
	gitops.Problem
	Kind ProblemKind
}

// Invalid returns the plan's problems as one error, and whether any is Unresolved; nil when
// the plan can be applied.
func (p *Plan) Invalid() (err *gitops.ValidationError, unresolved bool) {
	if len(p.Problems) == 0 {
		return nil, false
	}
	err = &gitops.ValidationError{}
	for _, problem := range p.Problems {
		err.Problems = append(err.Problems, problem.Problem)
		unresolved = unresolved || problem.Kind == Unresolved
	}
	return err, unresolved
}

// Mutations is the number of changing requests the plan sends to OSM.
func (p *Plan) Mutations() int {
	return len(p.Packages) + len(p.Creates) + len(p.Upgrades) + len(p.PackageMoves) + len(p.Deletes)
}

// Reasons of NS actions.
const (
	reasonDeclared       = "declared in Git"
	reasonRecreated      = "deleted in OSM outside Git: recreating it"
	reasonChangedInGit   = "changed in Git"
	reasonDrift          = "changed in OSM outside Git" + restoring
	restoring            = ": restoring what Git declares"
	reasonPruned         = "no longer declared in Git"
	reasonBusy           = "OSM runs an operation on it"
	reasonPendingCreate  = "its creation was interrupted before OSM answered"
	reasonReplaceDelete  = "replacing it (%s): terminating the old instance"
	reasonReplaceCreate  = "replacing it (%s): the old instance is gone"
	reasonPackageNew     = "new in Git"
	reasonPackageMark    = "uploaded before: marked as this OsmDeployment's"
	reasonPackageDrift   = "changed in OSM outside Git: restoring it"
	reasonPackageChanged = "changed in Git"
)

// Compute plans the changes that make OSM match the revision. It is a pure function. The
// revision's references are checked against OSM first: a plan is made of resolved ones only.
func Compute(in Input) Plan {
	p := Plan{Owner: in.Owner, Inventory: in.Inventory}
	if in.Observed.knownReferences {
		// Checked by the plan that wrote the inventory, and the packages uploaded since
		// (knownReferences).
		p.Inventory = Inventory{Packages: in.Inventory.Packages, ReferencesDigest: in.Inventory.ReferencesDigest}
	} else {
		for _, problem := range CheckReferences(in.Revision, in.Observed) {
			p.Problems = append(p.Problems, Problem{Problem: problem, Kind: Unresolved})
		}
		if len(p.Problems) > 0 {
			return p
		}
		p.Inventory = Inventory{ReferencesDigest: ReferencesDigest(in.Revision)}
		p.Packages, p.Inventory.Packages = planPackages(in, &p)
	}
	for _, action := range p.Packages {
		if warning, refusable := inUseUpdateWarning(in.Observed, action); refusable {
			p.Warnings = append(p.Warnings, warning)
		}
	}

	// One index of the names for both questions, what the inventory lists of a declared
	// instance and whether a listed or observed one is declared: the names of a plan of 10,000
	// instances are hashed once less.
	names := make(map[string]nameUse, max(len(in.Inventory.NsInstances), len(in.Revision.NsInstances)))
	for i, e := range in.Inventory.NsInstances {
		names[e.Name] = nameUse{entry: i}
	}
	entries := make([]int, len(in.Revision.NsInstances)) // of each declared instance, as nameUse.entry
	for k, ns := range in.Revision.NsInstances {
		use, listed := names[ns.Name]
		if !listed {
			use.entry = -1
		}
		use.declared = true
		names[ns.Name], entries[k] = use, use.entry
	}
	undeclared := undeclaredOwned(in, names)
	// Each declared or undeclared owned instance makes at most one entry.
	p.Inventory.NsInstances = make([]InstanceRecord, 0, len(in.Revision.NsInstances)+len(undeclared))
	for k, ns := range in.Revision.NsInstances {
		var entry InstanceRecord
		owned := entries[k] >= 0
		if owned {
			entry = in.Inventory.NsInstances[entries[k]]
		}
		planInstance(in, &p, ns, entry, owned)
	}
	for _, entry := range undeclared {
		planUndeclared(in, &p, entry)
	}
	checkQuotas(in, &p)
	if len(p.Inventory.NsInstances) == 0 {
		p.Inventory.NsInstances = nil // as without the capacity made above
	}
	slices.SortFunc(p.Inventory.NsInstances, func(a, b InstanceRecord) int { return cmp.Compare(a.Name, b.Name) })
	if len(p.Problems) > 0 {
		// Nothing is applied: the inventory stays as it was.
		p.Packages, p.Creates, p.Upgrades, p.PackageMoves, p.Deletes = nil, nil, nil, nil, nil
		p.Inventory = in.Inventory
	}
	return p
}

// nameUse is what a plan knows of an NS instance's name: the position of its inventory entry
// (-1 when the inventory lists none), and whether the revision declares it.
type nameUse struct {
	entry    int
	declared bool
}

// CheckReferences checks what the revision names (descriptors, vnf-profiles, KDUs, VIM accounts)
// against what OSM holds, the revision's own packages laid over it, as Compute does first.
func CheckReferences(rev *gitops.Revision, o *Observed) []gitops.Problem {
	nsds, vnfds := o.Descriptors()
	return rev.CheckReferences(gitops.NewCatalog(nsds, vnfds, o.VIMNames(), rev))
}

// planPackages plans the uploads that make OSM hold the revision's packages. A package another
// live owner marked is shared when that owner uploaded this content, and a Conflict otherwise.
func planPackages(in Input, p *Plan) ([]PackageAction, []PackageRecord) {
	applied := map[string]PackageRecord{}
	for _, e := range in.Inventory.Packages {
		applied[e.Name] = e
	}
	var actions []PackageAction
	entries := make([]PackageRecord, 0, len(in.Revision.Packages))
	for _, pkg := range in.Revision.Packages {
		id, admin := observedPackage(in.Observed, pkg.Descriptor)
		entry := PackageRecord{
			Name: pkg.Descriptor.ID, Kind: string(pkg.Descriptor.Kind), ID: id, Digest: pkg.Digest,
		}
		if id == "" {
			actions = append(actions, PackageAction{Package: pkg, Revision: 1, Reason: reasonPackageNew})
			entries = append(entries, entry)
			continue
		}
		mark, last := packageMarkOf(admin), applied[pkg.Descriptor.ID]
		current := mark.current(pkg.Digest, admin)
		// The inventory says this OsmDeployment uploaded this content there, and OSM lacks the
		// mark of it: an upload of before markers, or a mark that failed after the upload (the
		// revision moved on by that upload alone).
		uploadedHere := last.ID == id && last.Digest == pkg.Digest
		markLost := !mark.marked || mark.owner == in.Owner && mark.digest != pkg.Digest && mark.revision == int(admin.Revision)-1
		switch {
		case mark.marked && mark.owner != in.Owner && in.LiveOwners[mark.owner.Marker()]:
			// Its owner restores it when it is uploaded again outside Git; only other content
			// is a conflict.
			if mark.digest != pkg.Digest {
				p.Problems = append(p.Problems, Problem{Kind: Conflict, Problem: gitops.Problem{File: path.Join(pkg.Source, pkg.DescriptorPath), Line: pkg.Descriptor.IDLine,
					Message: fmt.Sprintf("package %s belongs to OsmDeployment %s%s, which uploaded other content of it: give the package another id, or make both sources agree",
						pkg.Descriptor.ID, mark.owner, mark.owner.elsewhere(in.Owner))}})
				continue
			}
		case current && mark.owner == in.Owner:
		case current, uploadedHere && markLost:
			// The content is this revision's: only this OsmDeployment's mark is missing (an owner
			// gone, or the mark lost).
			actions = append(actions, PackageAction{Package: pkg, ID: id, Revision: int(admin.Revision), MarkOnly: true, Reason: reasonPackageMark})
		case mark.marked && mark.digest == pkg.Digest:
			// Marked with this content, but uploaded again since.
			switch in.Drift {
			case CorrectDrift:
				actions = append(actions, PackageAction{Package: pkg, ID: id, Revision: int(admin.Revision) + 1, Reason: reasonPackageDrift})
			case ReportDrift:
				p.Drifts = append(p.Drifts, Drift{Name: pkg.Descriptor.ID, What: "package uploaded again in OSM outside Git"})
			}
		default:
			actions = append(actions, PackageAction{Package: pkg, ID: id, Revision: int(admin.Revision) + 1, Reason: reasonPackageChanged})
		}
		entries = append(entries, entry)
	}
	slices.SortFunc(entries, func(a, b PackageRecord) int { return cmp.Compare(a.Name, b.Name) })
	return actions, entries
}

// inUseUpdateWarning tells when OSM may refuse an update because NS instances use the
// descriptor: OSM then refuses every change of an NSD, and of a VNFD unless its
// software-version changes, but for day-1/2 primitives (and, in a VNFD, scaling policies).
// Only the descriptor file counts: the package's other files may change.
func inUseUpdateWarning(o *Observed, action PackageAction) (gitops.Problem, bool) {
	if action.ID == "" || action.MarkOnly {
		return gitops.Problem{}, false
	}
	d := action.Package.Descriptor
	file := path.Join(action.Package.Source, action.Package.DescriptorPath)
	if d.Kind == osmpkg.KindNS {
		if o.NSDs[d.ID].Admin.UsageState != osm.UsageInUse {
			return gitops.Problem{}, false
		}
		return gitops.Problem{File: file, Line: d.IDLine, Message: fmt.Sprintf(
			"NS package %s is used by NS instances: OSM refuses any change to its descriptor but day-1/2 primitives (delete the instances, or give the package a new id)", d.ID)}, true
	}
	observed := o.VNFDs[d.ID]
	if observed.Admin.UsageState != osm.UsageInUse || softwareVersion(string(observed.SoftwareVersion)) != softwareVersion(d.SoftwareVersion) {
		return gitops.Problem{}, false
	}
	line := d.SoftwareVersionLine
	if line == 0 {
		line = d.IDLine
	}
	return gitops.Problem{File: file, Line: line, Message: fmt.Sprintf(
		"VNF package %s is used by NS instances and its software-version stays %s: OSM refuses changes to its descriptor but day-1/2 primitives and scaling policies unless software-version changes",
		d.ID, softwareVersion(d.SoftwareVersion))}, true
}

// softwareVersion is a VNFD's software-version as OSM reads it: "1.0" when absent.
func softwareVersion(v string) string {
	if v == "" {
		return "1.0"
	}
	return v
}

// observedPackage returns OSM's id and _admin of a package, or "" when OSM lacks it.
func observedPackage(o *Observed, d osmpkg.Descriptor) (string, osm.DescriptorAdmin) {
	if d.Kind == osmpkg.KindNS {
		nsd := o.NSDs[d.ID]
		return nsd.ID, nsd.Admin
	}
	vnfd := o.VNFDs[d.ID]
	return vnfd.ID, vnfd.Admin
}

// planInstance plans one declared NS instance; entry is its inventory entry when owned.
func planInstance(in Input, p *Plan, ns gitops.NsInstance, entry InstanceRecord, owned bool) {
	if in.Observed.settled[ns.Name] {
		p.Inventory.NsInstances = append(p.Inventory.NsInstances, entry) // not read (RevisionScope)
		return
	}
	// Markers in OSM decide ownership: a claim (another's inventory or create in flight) guards
	// only what would be created or taken without this owner's marker.
	if other, claimed := in.Claims[ns.Name]; claimed && !in.marksOwn(ns.Name) {
		p.problem(ns, fmt.Sprintf("NS instance %q is already managed by OsmDeployment %s on this OSM", ns.Name, other))
		return
	}
	next := in.Remediation.carry(entry, InstanceRecord{Name: ns.Name, Digest: ns.Digest(), Origins: originsOf(ns)})
	observed, problem := in.instanceOf(ns.Name, entry)
	switch {
	case problem != "":
		p.problem(ns, problem)
	case observed != nil:
		next.ID = observed.record.ID
		planExisting(in, p, observed, ns, entry, next)
	case entry.State == InstanceReplacing:
		// The old instance is gone (or its replacement's create was refused): it is created
		// from the declaration, never deleted again.
		next.Reason = entry.Reason
		p.create(ns, next, entry.State, fmt.Sprintf(reasonReplaceCreate, entry.Reason))
	case entry.ID != "" && entry.Digest == next.Digest && in.Drift != CorrectDrift:
		p.leaveDrift(in, entry, "deleted in OSM outside Git")
	case entry.ID != "":
		p.create(ns, next, entry.State, reasonRecreated)
	case owned:
		p.create(ns, next, entry.State, reasonPendingCreate)
	default:
		p.create(ns, next, entry.State, reasonDeclared)
	}
}

// instanceOf finds the NS instance named name that the OsmDeployment runs (entry is its
// inventory entry, if any): the one that carries its marker; else the one the inventory names,
// if no live owner marked it (adopted, or created before markers); else, with adoptExisting,
// the only one, if no live owner marked it. It returns nil when OSM has none: a create, never a
// second instance beside one of someone else's. The problem says why nothing can be done.
func (in Input) instanceOf(name string, entry InstanceRecord) (found *observedInstance, problem string) {
	// Most names have one instance: these stay on the stack.
	var oursHere, othersHere [1]*observedInstance
	ours, others := oursHere[:0], othersHere[:0]
	for candidate := in.Observed.byName[name]; candidate != nil; candidate = candidate.sameName {
		if candidate.marked && candidate.owner == in.Owner {
			ours = append(ours, candidate)
		} else {
			others = append(others, candidate)
		}
	}
	switch {
	case len(ours) == 1:
		return ours[0], ""
	case len(ours) > 1:
		return nil, fmt.Sprintf("OSM has %d NS instances named %q made by this OsmDeployment (ids %v): delete the extra ones in OSM", len(ours), name, instanceIDs(ours))
	case len(others) == 0:
		return nil, ""
	}
	if i := slices.IndexFunc(others, func(r *observedInstance) bool { return r.record.ID == entry.ID }); entry.ID != "" && i >= 0 {
		if owner, taken := in.liveOwner(others[i]); taken {
			return nil, fmt.Sprintf("NS instance %q (id %s) belongs to OsmDeployment %s%s", name, entry.ID, owner, owner.elsewhere(in.Owner))
		}
		return others[i], ""
	}
	if len(others) > 1 {
		return nil, fmt.Sprintf("OSM has %d NS instances named %q (ids %v) and none is this OsmDeployment's: delete the extra ones in OSM", len(others), name, instanceIDs(others))
	}
	if owner, taken := in.liveOwner(others[0]); taken {
		return nil, fmt.Sprintf("NS instance %q (id %s) belongs to OsmDeployment %s%s", name, others[0].record.ID, owner, owner.elsewhere(in.Owner))
	}
	if !in.AdoptExisting {
		return nil, fmt.Sprintf("NS instance %q (id %s) already exists in OSM and %s: set spec.adoptExisting to take it over",
			name, others[0].record.ID, ownerWords(others[0]))
	}
	return others[0], ""
}

// instanceIDs returns the _id of each instance, for messages.
func instanceIDs(instances []*observedInstance) []string {
	ids := make([]string, len(instances))
	for i, r := range instances {
		ids[i] = r.record.ID
	}
	return ids
}

// marksOwn tells whether OSM has an NS instance named name that carries the owner's marker.
func (in Input) marksOwn(name string) bool {
	for candidate := in.Observed.byName[name]; candidate != nil; candidate = candidate.sameName {
		if candidate.marked && candidate.owner == in.Owner {
			return true
		}
	}
	return false
}

// liveOwner returns the owner marked on an NS instance when that owner still exists.
func (in Input) liveOwner(observed *observedInstance) (Owner, bool) {
	return observed.owner, observed.marked && in.LiveOwners[observed.owner.Marker()]
}

// ownerWords says who owns an NS instance that no live owner marked.
func ownerWords(observed *observedInstance) string {
	if observed.marked {
		return fmt.Sprintf("OsmDeployment %s, which made it, no longer exists", observed.owner)
	}
	return "no OsmDeployment owns it"
}

// elsewhere says, after an owner's name, that it belongs to another operator installation.
func (o Owner) elsewhere(self Owner) string {
	if o.Manager == self.Manager {
		return ""
	}
	return fmt.Sprintf(" of the operator installation %q", o.Manager)
}

// planExisting plans a declared NS instance that OSM runs as next.ID, observed.
func planExisting(in Input, p *Plan, observed *observedInstance, ns gitops.NsInstance, last, next InstanceRecord) {
	record := &observed.record
	// The origins are those of the declaration last run in full until the instance is in step
	// again: the upgrades of several KDUs all say where their change came from.
	next.Origins = last.Origins
	if change, refusal := unchangeable(in.Observed, record, ns); change != "" {
		if !in.Force {
			p.problem(ns, refusal)
			return
		}
		planReplace(in, p, ns, *record, last, next, change)
		return
	}
	if changes := instantiationChanges(ns, observed); len(changes) > 0 {
		if !in.Force {
			for _, c := range changes {
				p.Problems = append(p.Problems, Problem{Kind: Conflict, Problem: gitops.Problem{File: ns.Source.File, Line: ns.Source.LineOf(c.field),
					Message: fmt.Sprintf("NS instance %q: %s; OSM reads it only when it creates an instance and cannot change it in place: give the instance a new name, delete it first, or set spec.force to replace it", ns.Name, c.what)}})
			}
			return
		}
		whats := make([]string, len(changes))
		for i, c := range changes {
			whats[i] = c.what
		}
		planReplace(in, p, ns, *record, last, next, boundReason(strings.Join(whats, "; ")))
		return
	}
	if in.Observed.busy(next.ID, record) {
		next.State, next.Reason = Next(last.State, PlanBusy), reasonBusy
		next.Digest = last.Digest
		p.Inventory.NsInstances = append(p.Inventory.NsInstances, next)
		return
	}
	// After an upgrade of one KDU of several, the next ones differ still: they were changed in
	// Git with it, not in OSM. An operation found running was not necessarily this
	// OsmDeployment's (an upgrade by hand): what it changed is drift.
	changedInGit := last.Digest != next.Digest || last.State == InstanceProgressing && last.Reason != reasonBusy
	upgrade, differs := nextUpgrade(observed, ns, changedInGit, changeReason(last, ns))
	switch {
	case record.NSState == osm.NSStateBroken && last.Digest == next.Digest && in.Remediation.recreates(last):
		in.Remediation.planRecreate(in, p, ns, *record, last, next)
		return
	case record.NSState == osm.NSStateBroken:
		next.State, next.Digest = Next(last.State, PlanBroken), last.Digest
	case differs && last.Digest == next.Digest && in.Remediation.remediatesUpgrade(last):
		next = in.Remediation.planUpgradeRemediation(in, p, ns, last, next, upgrade)
	case differs && last.State == InstanceFailed && last.Digest == next.Digest:
		// A failed intent is not sent again by itself: a new revision (or a reconcile request,
		// which clears the digest) does. One that OSM carried out after all (an operation given
		// up on at the timeout, that ended well) is Ready.
		next.State = Next(last.State, PlanFailedKept)
	case differs && !changedInGit && in.Drift != CorrectDrift:
		next.State = Next(last.State, PlanInStep)
		p.leaveDrift(in, next, strings.TrimSuffix(upgrade.Reason, restoring))
		return
	case differs:
		// One upgrade per instance and plan: LCM runs one operation of an instance at a time, and
		// nothing is sent to a busy one (Observed.Busy). The other KDUs that differ follow in
		// the next plans, once OSM is done.
		next.State = Next(last.State, PlanUpgrade)
		upgrade.Name, upgrade.Instance, upgrade.ID = ns.Name, ns, next.ID
		p.Upgrades = append(p.Upgrades, upgrade)
	default:
		next.State, next.Origins = Next(last.State, PlanInStep), originsOf(ns)
		if in.FollowPackages {
			next = followPackages(in, p, observed, ns, last, next)
		}
	}
	p.Inventory.NsInstances = append(p.Inventory.NsInstances, next)
}

// followPackages plans the move of the first VNF of an idle instance that runs an older
// revision of a VNF package of the revision than OSM holds: one move per instance and plan,
// as LCM runs the operations of an NS one at a time. A move of a KNF is a Limit problem, found
// before the package's upload: OSM's LCM fails it. A move waits for the package's upload
// (the instance is Progressing until a later plan finds it done), and is not sent again
// after it failed for the same package revision; a VNF record at the package's revision
// needs none (LCM moves its revision when the update completes).
func followPackages(in Input, p *Plan, observed *observedInstance, ns gitops.NsInstance, last, next InstanceRecord) InstanceRecord {
	uploading := map[string]bool{}
	for _, action := range p.Packages {
		uploading[action.Package.Descriptor.ID] = !action.MarkOnly
	}
	inGit := map[string]*osmpkg.Descriptor{}
	for _, pkg := range in.Revision.Packages {
		if pkg.Descriptor.Kind == osmpkg.KindVNF {
			inGit[pkg.Descriptor.ID] = &pkg.Descriptor
		}
	}
	for _, vnf := range observed.vnfRecords {
		vnfd, found := in.Observed.VNFDs[vnf.VnfdRef]
		latest := max(int(vnfd.Admin.Revision), 1)
		behind := max(int(vnf.Revision), 1) < latest
		switch {
		case inGit[vnf.VnfdRef] == nil || !found || vnfd.ID != vnf.VnfdID:
			continue // not a package Git updates, or no longer the one the VNF was made from
		case (uploading[vnf.VnfdRef] || behind) && inGit[vnf.VnfdRef].IsKNF():
			p.Problems = append(p.Problems, Problem{Kind: Limit, Problem: gitops.Problem{File: ns.Source.File, Line: ns.Source.Line,
				Message: fmt.Sprintf("NS instance %q: spec.instancesFollowPackages would move VNF %s to the new revision of VNF package %s, "+
					"a KNF (KDUs, no vdu): OSM 19's LCM fails that move (CHANGE_VNFPKG: \"Error updating VNF 'vdu'\") after moving the VNF "+
					"record's revision, leaving the NS failed; nothing is sent: turn spec.instancesFollowPackages off to keep the instance "+
					"on its revision, or replace the instance to run the new package",
					ns.Name, vnf.MemberVnfIndex, vnf.VnfdRef)}})
			return next
		case uploading[vnf.VnfdRef]:
			next.State, next.Reason = Next(last.State, PlanAwaitUpload), boundReason("waiting for the upload of VNF package "+vnf.VnfdRef)
			return next
		case !behind:
			continue
		}
		reason := boundReason(fmt.Sprintf("moving VNF %s to revision %d of package %s", vnf.MemberVnfIndex, latest, vnf.VnfdRef))
		if last.State == InstanceFailed && last.Reason == reason {
			next.State, next.Reason = Next(last.State, PlanFailedKept), reason
			return next
		}
		p.PackageMoves = append(p.PackageMoves, NsAction{Name: ns.Name, ID: next.ID, Reason: reason,
			Change: osm.VNFPackageChange{VNFInstanceID: vnf.ID, VnfdID: vnf.VnfdID}})
		next.State, next.Reason = Next(last.State, PlanMove), reason
		return next
	}
	return next
}

// unchangeable says what OSM cannot change in place between an instance and its declaration
// (its NSD or its VIM account: no NBI operation changes them), as the reason of a replace and
// as the refusal without spec.force; "" when there is nothing such.
func unchangeable(o *Observed, record *osm.NSInstance, ns gitops.NsInstance) (change, refusal string) {
	if record.NsdRef != "" && record.NsdRef != ns.NsdName {
		return boundReason(fmt.Sprintf("NSD changed from %s to %s", record.NsdRef, ns.NsdName)),
			fmt.Sprintf("NS instance %q runs NSD %q: OSM cannot change the NSD of an instance; give the instance a new name, delete it first, or set spec.force to replace it", ns.Name, record.NsdRef)
	}
	// Without the VIM accounts read, the instance runs on the one checked when it was last
	// Ready under the same references (knownReferences).
	if vim := record.InstantiateParams.VIMAccountID; vim != "" && !o.knownReferences && vim != o.VIMAccounts[ns.VimAccountName] {
		return boundReason(fmt.Sprintf("VIM account changed to %s", ns.VimAccountName)),
			fmt.Sprintf("NS instance %q runs on another VIM account than %q: OSM cannot move an instance; give the instance a new name, delete it first, or set spec.force to replace it", ns.Name, ns.VimAccountName)
	}
	return "", ""
}

// maxReason bounds an inventory entry's reason: it quotes names OSM returned.
const maxReason = 1024

func boundReason(reason string) string {
	return cutReason(reason, maxReason)
}

// cutReason cuts reason to at most limit bytes, ending in "…" when cut.
func cutReason(reason string, limit int) string {
	switch {
	case len(reason) <= limit:
		return reason
	case limit <= len("…"):
		return ""
	}
	return strings.ToValidUTF8(reason[:limit-len("…")], "") + "…"
}

// maxInventoryReasons bounds the bytes of the reasons of one inventory together.
const maxInventoryReasons = 100 << 10

// BoundReasons cuts the reasons of the inventory's NS instances to an equal share of
// maxInventoryReasons, at most maxReason each: whatever the reasons quote, the status of
// gitops.MaxNsInstances instances of the longest names stays well under what the API server
// stores (TestWorstCaseStatusFitsTheAPIServer in internal/controller).
func BoundReasons(inventory *Inventory) {
	if inventory == nil || len(inventory.NsInstances) == 0 {
		return
	}
	share := min(maxReason, maxInventoryReasons/len(inventory.NsInstances))
	for i := range inventory.NsInstances {
		inventory.NsInstances[i].Reason = cutReason(inventory.NsInstances[i].Reason, share)
	}
}

// planReplace plans the first half of a replace (spec.force): the old instance is terminated
// and deleted, once; its inventory entry says Replacing, and why, until OSM has removed it
// (planInstance then plans the create). A terminate that failed is not sent again for the
// same declaration: a new revision, or a reconcile request, does.
func planReplace(in Input, p *Plan, ns gitops.NsInstance, record osm.NSInstance, last, next InstanceRecord, change string) {
	next.State, next.Reason = Next(last.State, PlanReplace), change
	switch {
	case in.Observed.Busy(next.ID):
		// The delete was sent, or OSM runs or queued another operation on it: nothing is sent now.
	case last.State == InstanceFailed && last.Digest == next.Digest:
		next.State = Next(last.State, PlanFailedKept)
	default:
		p.Deletes = append(p.Deletes, NsAction{Name: ns.Name, ID: next.ID, Reason: fmt.Sprintf(reasonReplaceDelete, change),
			Force: record.Admin.NSState == osm.NSStateNotInstantiated})
	}
	p.Inventory.NsInstances = append(p.Inventory.NsInstances, next)
}

// nextUpgrade is the upgrade of the first declared KDU, in the file's order, whose Helm
// release differs from its declaration: its values, or its chart when it names one. Without an
// observation of a KDU, it differs when the declaration changed in Git since it was last
// applied; why says where that change came from.
func nextUpgrade(observed *observedInstance, ns gitops.NsInstance, changedInGit bool, why string) (NsAction, bool) {
	var upgrade NsAction
	found := false
	for _, vnf := range ns.Members() {
		for _, kdu := range vnf.KDUs {
			what := kduChanges(ns, observed, vnf.MemberVnfIndex, kdu, changedInGit)
			switch {
			case what == "":
			case found:
				upgrade.MoreUpgrades = true
				return upgrade, true
			default:
				reason := reasonDrift
				if changedInGit {
					reason = why
				}
				upgrade = NsAction{Member: vnf.MemberVnfIndex, KDU: kdu, Chart: cmp.Or(kdu.Model, observed.runningChart(vnf.MemberVnfIndex, kdu.Name)),
					Reason: "KDU " + kdu.Name + " of VNF " + vnf.MemberVnfIndex + ": " + what + " " + reason}
				found = true
			}
		}
	}
	return upgrade, found
}

// runningChart is the chart a KDU's Helm release runs, as OSM reports it: the VNF record's
// helm-chart and the charts of the completed upgrades since (Observed.KDUModels), else the NS
// record's _admin.deployed.K8s[].kdu-model (what LCM installed); "" when OSM shows neither. A
// chart of a repository named without a version gets the version the release's objects are
// labelled with (osm.ReleaseCharts): upgraded without one, LCM would install the newest chart
// of the repository.
func runningChart(o *Observed, id, member, kdu string) string {
	return o.instance(id).runningChart(member, kdu)
}

// runningChart is runningChart of a KDU of the instance.
func (observed *observedInstance) runningChart(member, kdu string) string {
	var deployed osm.DeployedKDU
	for _, d := range observed.record.Admin.Deployed.K8s {
		if d.MemberVnfIndex == member && d.KDUName == kdu {
			deployed = d
		}
	}
	release, _ := observed.kdu(member, kdu)
	chart := cmp.Or(release.model, deployed.KDUModel)
	if !osm.ChartFloats(chart) {
		return chart
	}
	_, name, _ := strings.Cut(chart, "/")
	if version := deployed.Charts.Version(name); version != "" {
		return chart + ":" + version
	}
	return chart
}

// kduChanges says what differs between a declared KDU and its Helm release ("values",
// "chart", "values and chart"), "" when nothing does. The chart is compared only when the KDU
// names one: with none, the release runs what the VNFD says.
func kduChanges(ns gitops.NsInstance, observed *observedInstance, member string, kdu gitops.KDU, changedInGit bool) string {
	release, found := observed.kdu(member, kdu.Name)
	if !found {
		if changedInGit {
			return "values"
		}
		return ""
	}
	var changes []string
	if equal, err := ns.ParamsEqual(member, kdu, release.values); err != nil || !equal {
		changes = append(changes, "values")
	}
	if kdu.Model != "" && release.model != kdu.Model {
		changes = append(changes, "chart")
	}
	return strings.Join(changes, " and ")
}

// instantiationChanges reports what the declaration changed that OSM reads only when it
// creates an instance: the NS and VNF parameters and the KDUs' Kubernetes namespaces. OSM
// cannot change them in place. The deploy timeout bounded the instantiation only: a change of
// it has nothing left to change.
func instantiationChanges(ns gitops.NsInstance, observed *observedInstance) []fixedChange {
	record := &observed.record
	var changes []fixedChange
	at := func(field, format string, args ...any) {
		changes = append(changes, fixedChange{field: field, what: fmt.Sprintf(format, args...)})
	}
	if !gitops.LCMParamsEqual(ns.Params, observed.nsParams, OwnerParam) {
		at("params", "params differ from the additionalParamsForNs it was created with")
	}
	if ns.K8sNamespace != record.InstantiateParams.K8sNamespace {
		at("k8sNamespace", "k8sNamespace %q differs from the one it was created with (%q)", ns.K8sNamespace, record.InstantiateParams.K8sNamespace)
	}
	if observed.vnfs == nil {
		return changes // VNF records not observed, or none of this instance
	}
	// The namespace of the KDUs that name none is the one OSM used: a change of it is reported
	// above, once.
	defaultNamespace := record.InstantiateParams.K8sNamespace
	if defaultNamespace == "" && len(record.Admin.ProjectsRead) > 0 {
		defaultNamespace = record.Admin.ProjectsRead[0]
	}
	for _, vnf := range ns.Members() {
		live := observed.vnf(vnf.MemberVnfIndex)
		if live == nil {
			continue
		}
		if !gitops.LCMParamsEqual(vnf.Params, live.params, "") {
			at(gitops.FieldPath(vnf.Path, "params"), "the params of VNF %s differ from those it was created with", vnf.MemberVnfIndex)
		}
		for _, kdu := range vnf.KDUs {
			// The field that says the namespace is named only for a change: most KDUs have none.
			declaredBy, want := kdu.Path, kdu.K8sNamespace
			if want == "" {
				declaredBy, want = vnf.Path, cmp.Or(vnf.K8sNamespace, defaultNamespace)
			}
			if want == "" {
				continue
			}
			if got, found := live.kdu(kdu.Name); found && got.namespace != want {
				at(gitops.FieldPath(declaredBy, "k8sNamespace"), "KDU %s of VNF %s runs in namespace %q, not %q", kdu.Name, vnf.MemberVnfIndex, got.namespace, want)
			}
		}
	}
	return changes
}

// fixedChange is a difference between a declaration and what OSM read when it created the
// instance: what differs, and the field of the declaration that says it.
type fixedChange struct{ field, what string }

// undeclaredOwned returns what the OsmDeployment owns and Git no longer declares: the entries of
// the inventory, and the instances that carry its marker, which a lost status no longer lists;
// not those OSM is removing (terminated with autoremove), which the inventory dropped when their
// terminate completed: nothing is left to do with them.
func undeclaredOwned(in Input, uses map[string]nameUse) []InstanceRecord {
	byName := map[string]InstanceRecord{}
	var names []string
	for _, e := range in.Inventory.NsInstances {
		if !uses[e.Name].declared {
			byName[e.Name] = e
			names = append(names, e.Name)
		}
	}
	for i := range in.Observed.records {
		observed := &in.Observed.records[i]
		name, id := observed.record.Name, observed.record.ID
		if !observed.marked || observed.owner != in.Owner || uses[name].declared {
			continue
		}
		e, listed := byName[name]
		if !listed && in.Observed.removing[id] {
			continue
		}
		if !listed {
			names = append(names, name)
		}
		if !listed || e.ID == "" {
			byName[name] = InstanceRecord{Name: name, ID: id, Digest: e.Digest, State: e.State}
		}
	}
	slices.Sort(names)
	entries := make([]InstanceRecord, len(names))
	for i, name := range names {
		entries[i] = byName[name]
	}
	return entries
}

// planUndeclared plans an owned NS instance that Git no longer declares. An instance another
// live owner marked is no longer this OsmDeployment's: it is dropped, never pruned.
func planUndeclared(in Input, p *Plan, entry InstanceRecord) {
	if entry.ID == "" {
		return // never created: a create that was sent carries the marker, and was found by it
	}
	observed, found := in.Observed.byID[entry.ID]
	if !found {
		return // gone from OSM: no longer owned
	}
	record := &observed.record
	if owner, live := in.liveOwner(observed); live && owner != in.Owner {
		return
	}
	if !in.Prune {
		entry.State = Next(entry.State, PlanOrphan)
		p.Orphans = append(p.Orphans, entry.Name)
		p.Inventory.NsInstances = append(p.Inventory.NsInstances, entry)
		return
	}
	entry.State = Next(entry.State, PlanPrune)
	// A terminate sent before, as any other operation OSM runs or queued, is waited for.
	if !in.Observed.busy(entry.ID, record) {
		p.Deletes = append(p.Deletes, NsAction{Name: entry.Name, ID: entry.ID, Reason: reasonPruned,
			Force: record.Admin.NSState == osm.NSStateNotInstantiated})
	}
	p.Inventory.NsInstances = append(p.Inventory.NsInstances, entry)
}

// create plans the create of ns; from is the state its inventory entry had (Replacing stays
// Replacing, the others are Creating).
func (p *Plan) create(ns gitops.NsInstance, entry InstanceRecord, from InstanceState, reason string) {
	entry.ID, entry.State = "", Next(from, PlanCreate)
	p.Creates = append(p.Creates, NsAction{Name: ns.Name, Instance: ns, Reason: reason})
	p.Inventory.NsInstances = append(p.Inventory.NsInstances, entry)
}

// leaveDrift keeps an instance OSM changed outside Git as it is: Drifted and reported with
// ReportDrift, as the inventory listed it with IgnoreDrift.
func (p *Plan) leaveDrift(in Input, entry InstanceRecord, what string) {
	if in.Drift == ReportDrift {
		entry.State, entry.Reason = Next(entry.State, PlanDriftReported), boundReason(what)
		p.Drifts = append(p.Drifts, Drift{Name: entry.Name, What: entry.Reason})
	}
	p.Inventory.NsInstances = append(p.Inventory.NsInstances, entry)
}

func (p *Plan) problem(ns gitops.NsInstance, message string) {
	p.Problems = append(p.Problems, Problem{Kind: Conflict, Problem: gitops.Problem{File: ns.Source.File, Line: ns.Source.Line, Message: message}})
}
