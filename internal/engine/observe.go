package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// OSM is the part of the NBI the engine uses; *osm.Client implements it.
type OSM interface {
	GetProject(ctx context.Context) (*osm.Project, error)
	ListNSDescriptors(ctx context.Context) ([]osm.NSDescriptor, error)
	ListVNFDescriptors(ctx context.Context) ([]osm.VNFDescriptor, error)
	ListVIMAccounts(ctx context.Context) ([]osm.VIMAccount, error)
	ListNSInstances(ctx context.Context, names ...string) ([]osm.NSInstance, error)
	ListNSInstancesByParam(ctx context.Context, key, value string) ([]osm.NSInstance, error)
	ListVNFInstances(ctx context.Context, nsInstanceIDs ...string) ([]osm.VNFInstance, error)
	ListCompletedActions(ctx context.Context, nsInstanceIDs ...string) ([]osm.Operation, error)
	ListOperationsSince(ctx context.Context, since time.Time, ids ...string) ([]osm.Operation, error)
	ListRunningOperations(ctx context.Context, nsInstanceIDs ...string) ([]osm.Operation, error)
	ListCompletedTerminates(ctx context.Context, nsInstanceIDs ...string) ([]osm.Operation, error)
	CreatePackage(ctx context.Context, pkg *osmpkg.Package) (string, error)
	UpdatePackage(ctx context.Context, id string, pkg *osmpkg.Package) error
	SetPackageUserData(ctx context.Context, kind osmpkg.Kind, id string, data map[string]string) error
	CreateNSInstance(ctx context.Context, create osm.NSInstanceCreate) (*osm.NSInstanceCreated, error)
	UpgradeKDU(ctx context.Context, nsInstanceID string, upgrade osm.KDUUpgrade) (string, error)
	ChangeVNFPackage(ctx context.Context, nsInstanceID string, change osm.VNFPackageChange) (string, error)
	DeleteNSInstance(ctx context.Context, id string, force bool) (string, error)
}

// Observed is what OSM runs, read with one list call per kind. Its exported tables are for
// its readers (the CLI, the controller); a plan reads one record per NS instance (records),
// which newObserved and setVNFRecords fill beside the tables: the observation a plan is made
// of comes from them (Observe), never from a literal.
type Observed struct {
	// NSDs and VNFDs by descriptor id.
	NSDs  map[string]osm.NSDescriptor
	VNFDs map[string]osm.VNFDescriptor
	// VIMAccounts maps VIM account names to their _id.
	VIMAccounts map[string]string
	// NSInstances by _id, and their ids by name (names are not unique in OSM).
	NSInstances map[string]osm.NSInstance
	NSByName    map[string][]string
	// records are the observed NS instances, one record each with all the plan reads of it,
	// in OSM's order; byID and byName find them (a name's first, with the others it links).
	records      []observedInstance
	byID, byName map[string]*observedInstance
	// Running are the ids of the operations OSM lists as PROCESSING, by NS instance _id: those
	// the NS record shows and those it does not (queued by LCM, or not yet taken up).
	Running map[string][]string
	// removing are the terminated NS instances OSM is about to remove (autoremove), by _id.
	removing map[string]bool
	// settled are the declared NS instances not read (Scope.Settled).
	settled map[string]bool
	// knownReferences says that the project, descriptors and VIM accounts were not read
	// (Scope.KnownReferences): the plan takes the references and packages as the inventory
	// checked them.
	knownReferences bool
	// KDUValues holds the values each KDU's Helm release runs with (a JSON object), by NS
	// instance _id, then member-vnf-index, then KDU name: the VNF record's instantiation values
	// and the completed upgrades since (osm.ReplayHelmRelease). Nil when not observed.
	KDUValues map[string]map[string]map[string]string
	// VNFs are the VNF records of the NS instances, by NS instance _id, in OSM's order; nil
	// when not observed (with KDUValues).
	VNFs map[string][]osm.VNFInstance
	// KDUModels holds the chart each KDU's Helm release runs, keyed as KDUValues: the VNF
	// record's helm-chart, which OSM never rewrites after an upgrade, then the kdu_model of the
	// completed upgrades since. Nil when not observed.
	KDUModels map[string]map[string]map[string]string
	// KDUNamespaces holds each KDU's Kubernetes namespace, keyed as KDUValues. Nil when not
	// observed.
	KDUNamespaces map[string]map[string]map[string]string
	// VNFParams holds the VNF-level parameters each VNF was created with, by NS instance _id
	// and member-vnf-index. Nil when not observed.
	VNFParams map[string]map[string]map[string]osm.LooseString
	// Project is the OSM project, with its quotas; nil when not observed (Scope.Quotas), taken
	// as a project with OSM's default quotas.
	Project *osm.Project
}

// Scope is what an observation reads of the NS instances.
type Scope struct {
	// Owner is the marker (Owner.Marker) of the OsmDeployment: every NS instance that carries it
	// is read, whatever the status remembers.
	Owner string
	// Names are the other NS instances read: those the revision declares and those the
	// inventory lists, when they do not carry the marker. Other tenants' instances are not
	// read: one OSM serves many OsmDeployments, and each reading all of them would make the
	// traffic grow as the square of the fleet.
	Names []string
	// WithValues reads the VNF records (the live KDU values) of the instances found too; they
	// are the largest answer, and deleting needs none.
	WithValues bool
	// Settled are the declared NS instances not read: the plan takes them as the inventory
	// lists them (RevisionScope).
	Settled map[string]bool
	// Quotas reads the project, with its quotas, which a plan that may create needs.
	Quotas bool
	// IDs are the OSM ids the inventory lists for the NS instances read, sorted: their running
	// operations are read before their records (Observe).
	IDs []string
	// KnownReferences says that the revision refers to what a plan checked against OSM before
	// (knownReferences): the project, descriptors and VIM accounts are read only when one of
	// Names is not found in OSM, as its create needs their ids and the quotas.
	KnownReferences bool
}

// ScopeOf is the whole scope of a plan of the revision against the inventory, for owner (a
// drift check): every NS instance the owner marked, and those declared or listed.
func ScopeOf(rev *gitops.Revision, inventory Inventory, owner Owner) Scope {
	names := make([]string, 0, len(rev.NsInstances)+len(inventory.NsInstances))
	for _, ns := range rev.NsInstances {
		names = append(names, ns.Name)
	}
	for _, e := range inventory.NsInstances {
		names = append(names, e.Name)
	}
	slices.Sort(names)
	return Scope{Owner: owner.Marker(), Names: slices.Compact(names), WithValues: true, Quotas: true,
		IDs: inventoryIDs(inventory, func(InstanceRecord) bool { return true })}
}

// inventoryIDs returns the OSM ids of the inventory's NS instances that keep accepts, sorted and
// once each.
func inventoryIDs(inventory Inventory, keep func(InstanceRecord) bool) []string {
	var ids []string
	for _, e := range inventory.NsInstances {
		if e.ID != "" && keep(e) {
			ids = append(ids, e.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// RevisionScope is the scope of a plan that applies a revision the inventory does not hold yet:
// it reads only the NS instances whose declaration changed, appeared or disappeared since the
// inventory was written, and those the inventory does not list as Ready. The others are settled:
// what changed in OSM outside Git since is what the drift check (ScopeOf) is for, and reading
// the records of every instance for each revision would cost about 8 kB per instance where
// only the changed ones can need work. The owner's marker is not listed either: it finds what
// a lost status forgot, and an empty inventory is read whole (ScopeOf).
func RevisionScope(rev *gitops.Revision, inventory Inventory, owner Owner) Scope {
	if len(inventory.NsInstances) == 0 {
		return ScopeOf(rev, inventory, owner)
	}
	entries := make(map[string]InstanceRecord, len(inventory.NsInstances))
	for _, e := range inventory.NsInstances {
		entries[e.Name] = e
	}
	scope := Scope{WithValues: true, Quotas: true, Settled: map[string]bool{}}
	for _, ns := range rev.NsInstances {
		e, listed := entries[ns.Name]
		delete(entries, ns.Name)
		if listed && e.ID != "" && e.State == InstanceReady && e.Digest == ns.Digest() {
			scope.Settled[ns.Name] = true
			continue
		}
		scope.Names = append(scope.Names, ns.Name)
	}
	for name := range entries {
		scope.Names = append(scope.Names, name) // no longer declared: pruned or orphaned
	}
	slices.Sort(scope.Names)
	scope.IDs = inventoryIDs(inventory, func(e InstanceRecord) bool {
		_, read := slices.BinarySearch(scope.Names, e.Name)
		return read
	})
	scope.KnownReferences = knownReferences(rev, inventory, scope.Names)
	return scope
}

// knownReferences tells whether a plan of the revision can do without OSM's descriptors, VIM
// accounts and project: the revision refers to what the plan that wrote the inventory checked
// against OSM (Inventory.ReferencesDigest), OSM accepted each of its packages with the content
// it holds (so none is to upload), and every NS instance read (names) was Ready: only
// upgrades of instances whose NSD and VIM account were checked then can follow, or creates of
// instances no longer found in OSM, for which Observe reads them after all. What vanished from
// OSM since is found by the drift check (ScopeOf), and by OSM refusing what names it.
func knownReferences(rev *gitops.Revision, inventory Inventory, names []string) bool {
	if inventory.ReferencesDigest == "" || inventory.ReferencesDigest != ReferencesDigest(rev) {
		return false
	}
	accepted := make(map[string]PackageRecord, len(inventory.Packages))
	for _, e := range inventory.Packages {
		accepted[e.Name] = e
	}
	for _, pkg := range rev.Packages {
		if e := accepted[pkg.Descriptor.ID]; e.ID == "" || e.Digest != pkg.Digest {
			return false
		}
	}
	for _, e := range inventory.NsInstances {
		if _, read := slices.BinarySearch(names, e.Name); read && (e.ID == "" || e.State != InstanceReady) {
			return false
		}
	}
	return true
}

// Observe reads the NS instances (and their VNF records when asked) in the scope: first those
// marked as the owner's, then by name the ones that this did not find; and the project (its
// quotas, when the scope says so), OSM's descriptors and VIM accounts, unless the scope knows
// the references (Scope.KnownReferences). At most one request each.
//
// The running operations of the instances the inventory lists (Scope.IDs) are read before their
// records: LCM writes an NS record's end of an operation before the operation's own state
// (ns.py, the end of instantiate, action and terminate), so a record read after an operation
// was seen ended shows its end. Read the other way round, an operation that started and ended
// between the two answers would leave a record from before it, with nothing running: an idle
// instance to which what the operation did would be sent again. The instances found that the
// inventory does not list have their operations read after their records (one more request).
func Observe(ctx context.Context, nbi OSM, scope Scope) (*Observed, error) {
	var instances []osm.NSInstance
	running, err := listRunning(ctx, nbi, scope.IDs)
	if err != nil {
		return nil, err
	}
	if scope.Owner != "" {
		if instances, err = nbi.ListNSInstancesByParam(ctx, OwnerParam, scope.Owner); err == nil {
			err = checkIdentified(instances)
		}
		if err != nil {
			return nil, fmt.Errorf("listing NS instances: %w", err)
		}
	}
	if names := unfound(scope.Names, instances); len(names) > 0 {
		named, err := nbi.ListNSInstances(ctx, names...)
		if err == nil {
			err = checkIdentified(named)
		}
		if err != nil {
			return nil, fmt.Errorf("listing NS instances: %w", err)
		}
		instances = append(instances, named...)
	}
	known := scope.KnownReferences && len(unfound(scope.Names, instances)) == 0
	var project *osm.Project
	var nsds []osm.NSDescriptor
	var vnfds []osm.VNFDescriptor
	var vims []osm.VIMAccount
	if !known {
		if project, nsds, vnfds, vims, err = observeReferences(ctx, nbi, scope.Quotas); err != nil {
			return nil, err
		}
	}
	o := newObserved(nsds, vnfds, vims, instances)
	o.settled, o.knownReferences = scope.Settled, known
	if err := observeRunning(ctx, nbi, o, scope.IDs, running); err != nil {
		return nil, err
	}
	if err := observeRemovals(ctx, nbi, o); err != nil {
		return nil, err
	}
	o.Project = project
	if scope.WithValues {
		if err = observeVNFRecords(ctx, nbi, instances, o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// observeReferences reads the project (when quotas says so), OSM's descriptors and VIM
// accounts: what the revision's references are checked on, and creates need.
func observeReferences(ctx context.Context, nbi OSM, quotas bool) (project *osm.Project, nsds []osm.NSDescriptor,
	vnfds []osm.VNFDescriptor, vims []osm.VIMAccount, err error) {
	if quotas {
		if project, err = nbi.GetProject(ctx); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("reading the project: %w", err)
		}
	}
	if nsds, err = nbi.ListNSDescriptors(ctx); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("listing NS descriptors: %w", err)
	}
	if vnfds, err = nbi.ListVNFDescriptors(ctx); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("listing VNF descriptors: %w", err)
	}
	if vims, err = nbi.ListVIMAccounts(ctx); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("listing VIM accounts: %w", err)
	}
	return project, nsds, vnfds, vims, nil
}

// listRunning reads the operations still running on the NS instances with these ids, with one
// request (none when there is no id).
func listRunning(ctx context.Context, nbi OSM, ids []string) ([]osm.Operation, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	running, err := nbi.ListRunningOperations(ctx, ids...)
	if err != nil {
		return nil, fmt.Errorf("listing the running operations of NS instances: %w", err)
	}
	return running, nil
}

// observeRunning records in o the operations still running on the observed instances: those
// read before the records for the ids asked (running), and with one more request those of the
// instances observed that asked does not hold.
func observeRunning(ctx context.Context, nbi OSM, o *Observed, asked []string, running []osm.Operation) error {
	unasked := o.instanceIDs(func(id string, _ osm.NSInstance) bool {
		_, found := slices.BinarySearch(asked, id)
		return !found
	})
	more, err := listRunning(ctx, nbi, unasked)
	if err != nil {
		return err
	}
	o.Running = map[string][]string{}
	for _, op := range append(running, more...) {
		if _, observed := o.NSInstances[op.NSInstanceID]; observed && !op.Done() {
			o.Running[op.NSInstanceID] = append(o.Running[op.NSInstanceID], op.ID)
		}
	}
	return nil
}

// observeRemovals finds the terminated instances that OSM removes by itself: their terminate
// asked for autoremove and completed, and the NBI deletes the record when LCM's message reaches
// it, about 2 s later on OSM 19 (nbisim.DefaultAutoremoveDelay). One request, and only when an
// observed record is terminated (NOT_INSTANTIATED, operational-status "terminated") and idle: a
// rare moment of a terminate's life. A terminated record whose terminate is no longer listed was
// removed meanwhile, with its operations: nothing is left to send it either.
func observeRemovals(ctx context.Context, nbi OSM, o *Observed) error {
	ids := o.instanceIDs(func(id string, record osm.NSInstance) bool {
		return record.Admin.NSState == osm.NSStateNotInstantiated && record.OperationalStatus == osm.OperationalStatusTerminated && !o.Busy(id)
	})
	if len(ids) == 0 {
		return nil
	}
	terminates, err := nbi.ListCompletedTerminates(ctx, ids...)
	if err != nil {
		return fmt.Errorf("listing the completed terminates of NS instances: %w", err)
	}
	o.removing = map[string]bool{}
	kept := map[string]bool{}
	for _, op := range terminates {
		if autoremove, _ := op.OperationParams["autoremove"].(bool); autoremove {
			o.removing[op.NSInstanceID] = true
		} else {
			kept[op.NSInstanceID] = true
		}
	}
	for _, id := range ids {
		if !kept[id] {
			o.removing[id] = true
		}
	}
	return nil
}

// instanceIDs returns the ids of the observed instances that keep accepts, sorted: one request
// then names them in a stable order.
func (o *Observed) instanceIDs(keep func(id string, record osm.NSInstance) bool) []string {
	var ids []string
	for id, record := range o.NSInstances {
		if keep(id, record) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Busy tells whether OSM has an operation on the NS instance that has not ended: the NS record
// shows the one LCM runs, the operations list also those the NBI accepted that LCM queued
// behind it or has not taken up yet; or whether OSM is about to remove it (a terminate with
// autoremove completed). Nothing is sent to a busy instance, whatever the plan would send (an
// upgrade, a package move, a terminate for a prune, a replace or a deletion): OSM would accept
// it and run it after the other, and a plan made again at every poll would send it again each
// time.
func (o *Observed) Busy(id string) bool {
	record := o.NSInstances[id]
	return o.busy(id, &record)
}

// busy is Busy of the NS instance id whose record is at hand.
func (o *Observed) busy(id string, record *osm.NSInstance) bool {
	if len(o.Running[id]) > 0 || o.removing[id] {
		return true
	}
	if record.NSState == osm.NSStateBuilding || record.NSState == osm.NSStateTerminating {
		return true
	}
	op := string(record.CurrentOperation)
	return op != "" && op != osm.CurrentOperationIdle
}

// unfound returns the names that no instance of found has.
func unfound(names []string, found []osm.NSInstance) []string {
	has := make(map[string]bool, len(found))
	for _, ns := range found {
		has[ns.Name] = true
	}
	return slices.DeleteFunc(slices.Clone(names), func(name string) bool { return has[name] })
}

// kduTable holds a string per KDU of the NS instances: by _id, member-vnf-index, KDU name.
type kduTable = map[string]map[string]map[string]string

// observeVNFRecords reads into o what the VNF records of the instances hold, and the values
// and charts their KDUs run with: two requests, the VNF records (instantiation values and
// chart) and the completed actions (upgrades since).
func observeVNFRecords(ctx context.Context, nbi OSM, instances []osm.NSInstance, o *Observed) error {
	if len(instances) == 0 {
		return o.setVNFRecords(nil, nil)
	}
	ids := make([]string, len(instances))
	for i, ns := range instances {
		ids[i] = ns.ID
	}
	vnfs, err := nbi.ListVNFInstances(ctx, ids...)
	if err != nil {
		return fmt.Errorf("listing VNF instances: %w", err)
	}
	actions, err := nbi.ListCompletedActions(ctx, ids...)
	if err != nil {
		return fmt.Errorf("listing the completed actions of NS instances: %w", err)
	}
	return o.setVNFRecords(vnfs, actions)
}

// setVNFRecords indexes the VNF records and completed actions of the observed instances.
func (o *Observed) setVNFRecords(vnfs []osm.VNFInstance, actions []osm.Operation) error {
	var err error
	if o.KDUValues, o.KDUModels, err = kduReleases(vnfs, actions); err != nil {
		return err
	}
	o.KDUNamespaces, o.VNFParams = kduTable{}, map[string]map[string]map[string]osm.LooseString{}
	o.VNFs = map[string][]osm.VNFInstance{}
	for _, vnf := range vnfs {
		o.VNFs[vnf.NSInstanceID] = append(o.VNFs[vnf.NSInstanceID], vnf)
		if o.VNFParams[vnf.NSInstanceID] == nil {
			o.VNFParams[vnf.NSInstanceID] = map[string]map[string]osm.LooseString{}
			o.KDUNamespaces[vnf.NSInstanceID] = map[string]map[string]string{}
		}
		o.VNFParams[vnf.NSInstanceID][vnf.MemberVnfIndex] = vnf.AdditionalParamsForVnf
		namespaces := map[string]string{}
		for _, kdu := range vnf.KDURecords {
			namespaces[kdu.KDUName] = kdu.K8sNamespace
		}
		o.KDUNamespaces[vnf.NSInstanceID][vnf.MemberVnfIndex] = namespaces
	}
	o.recordVNFs()
	return nil
}

// kduKey names one KDU of one NS instance.
type kduKey struct{ ns, member, kdu string }

// kduReleases replays the completed actions, oldest first, over the VNF records' values and
// charts.
func kduReleases(vnfs []osm.VNFInstance, operations []osm.Operation) (values, models kduTable, err error) {
	slices.SortStableFunc(operations, func(a, b osm.Operation) int { return cmp.Compare(a.StartTime, b.StartTime) })
	actions := map[kduKey][]osm.KDUAction{}
	for _, op := range operations {
		action, isKDU, err := op.KDUAction()
		if err != nil {
			return nil, nil, err
		}
		if isKDU {
			key := kduKey{op.NSInstanceID, action.MemberVnfIndex, action.KDUName}
			actions[key] = append(actions[key], action)
		}
	}
	values, models = kduTable{}, kduTable{}
	for _, vnf := range vnfs {
		if values[vnf.NSInstanceID] == nil {
			values[vnf.NSInstanceID] = map[string]map[string]string{}
			models[vnf.NSInstanceID] = map[string]map[string]string{}
		}
		kduValues, kduModels := map[string]string{}, map[string]string{}
		for _, kdu := range vnf.KDURecords {
			key := kduKey{vnf.NSInstanceID, vnf.MemberVnfIndex, kdu.KDUName}
			instantiated, err := kdu.Params()
			if err != nil {
				return nil, nil, err
			}
			release := osm.ReplayHelmRelease(osm.HelmRelease{Values: instantiated, Model: kdu.HelmChart}, actions[key])
			encoded, err := json.Marshal(release.Values)
			if err != nil {
				return nil, nil, err
			}
			kduValues[kdu.KDUName], kduModels[kdu.KDUName] = string(encoded), release.Model
		}
		values[vnf.NSInstanceID][vnf.MemberVnfIndex] = kduValues
		models[vnf.NSInstanceID][vnf.MemberVnfIndex] = kduModels
	}
	return values, models, nil
}

// checkIdentified refuses NS instance records without an _id or a name: a plan made on them
// would take a running instance for a missing one and create it a second time.
func checkIdentified(instances []osm.NSInstance) error {
	for i, ns := range instances {
		if ns.ID == "" || ns.Name == "" {
			return fmt.Errorf("OSM's answer holds an NS instance without _id or name (item %d of %d): nothing is planned on it", i+1, len(instances))
		}
	}
	return nil
}

// newObserved indexes OSM's answers.
func newObserved(nsds []osm.NSDescriptor, vnfds []osm.VNFDescriptor, vims []osm.VIMAccount, instances []osm.NSInstance) *Observed {
	o := &Observed{
		NSDs:        make(map[string]osm.NSDescriptor, len(nsds)),
		VNFDs:       make(map[string]osm.VNFDescriptor, len(vnfds)),
		VIMAccounts: make(map[string]string, len(vims)),
		NSInstances: make(map[string]osm.NSInstance, len(instances)),
		NSByName:    make(map[string][]string, len(instances)),
		records:     make([]observedInstance, 0, len(instances)),
		byID:        make(map[string]*observedInstance, len(instances)),
		byName:      make(map[string]*observedInstance, len(instances)),
	}
	for _, d := range nsds {
		o.NSDs[d.DescriptorID] = d
	}
	for _, d := range vnfds {
		o.VNFDs[d.DescriptorID] = d
	}
	for _, v := range vims {
		o.VIMAccounts[v.Name] = v.ID
	}
	for _, ns := range instances {
		if _, seen := o.NSInstances[ns.ID]; seen {
			continue // made between the two lists of Observe, and found by both
		}
		o.NSInstances[ns.ID] = ns
		o.NSByName[ns.Name] = append(o.NSByName[ns.Name], ns.ID)
		o.addInstance(ns)
	}
	return o
}

// Descriptors returns OSM's descriptors in the package library's form, for reference checks.
func (o *Observed) Descriptors() (nsds, vnfds []osmpkg.Descriptor) {
	for _, d := range o.NSDs {
		desc := osmpkg.Descriptor{Kind: osmpkg.KindNS, ID: d.DescriptorID, Name: d.Name, VnfdIDs: d.VnfdIDs}
		for _, df := range d.DeploymentFlavours {
			for _, p := range df.VnfProfiles {
				desc.VnfProfiles = append(desc.VnfProfiles, osmpkg.VnfProfile{ID: p.ID, VnfdID: p.VnfdID})
			}
		}
		nsds = append(nsds, desc)
	}
	for _, d := range o.VNFDs {
		desc := osmpkg.Descriptor{Kind: osmpkg.KindVNF, ID: d.DescriptorID, Name: d.ProductName}
		for _, k := range d.KDUs {
			desc.KDUs = append(desc.KDUs, osmpkg.KDU{Name: k.Name, HelmChart: k.HelmChart})
		}
		vnfds = append(vnfds, desc)
	}
	return nsds, vnfds
}

// VIMNames returns the names of the VIM accounts.
func (o *Observed) VIMNames() []string {
	names := make([]string, 0, len(o.VIMAccounts))
	for name := range o.VIMAccounts {
		names = append(names, name)
	}
	return names
}
