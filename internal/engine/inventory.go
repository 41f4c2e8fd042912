package engine

import "time"

// The engine's own records of what an OsmDeployment owns in OSM and waits for. They carry what
// a plan reads and writes, and no more; the controller maps them to the API's status types
// (internal/controller/engineapi.go), so the engine does not depend on the API's version.

// InstanceState is what the operator knows of an owned NS instance: a state of its lifecycle
// (Transition). The values are the API's.
type InstanceState string

// The states of the lifecycle of an NS instance the inventory lists.
const (
	// InstanceCreating: the create is about to be sent or was sent, and OSM has not yet given
	// an id.
	InstanceCreating InstanceState = "Creating"
	// InstanceReady: OSM reports the instance READY with the declared values.
	InstanceReady InstanceState = "Ready"
	// InstanceProgressing: an OSM operation on the instance is running.
	InstanceProgressing InstanceState = "Progressing"
	// InstanceFailed: the last OSM operation on the instance failed.
	InstanceFailed InstanceState = "Failed"
	// InstanceDeleting: the instance is being terminated because Git no longer declares it.
	InstanceDeleting InstanceState = "Deleting"
	// InstanceOrphaned: Git no longer declares the instance and prune is off, so it is left
	// alone.
	InstanceOrphaned InstanceState = "Orphaned"
	// InstanceReplacing: OSM cannot make the change in place and force is set: the old
	// instance is being terminated, or is gone and the new one is about to be created.
	InstanceReplacing InstanceState = "Replacing"
	// InstanceDrifted: OSM changed the instance outside Git, and drift is reported, not
	// corrected: the reason says what differs.
	InstanceDrifted InstanceState = "Drifted"
)

// Inventory is what an OsmDeployment owns in OSM.
type Inventory struct {
	// NsInstances it owns, sorted by name.
	NsInstances []InstanceRecord
	// Packages it keeps in step with Git, sorted by name.
	Packages []PackageRecord
	// ReferencesDigest is the ReferencesDigest of the revision whose references a plan last
	// checked against OSM (RevisionScope).
	ReferencesDigest string
}

// InstanceRecord is an NS instance an OsmDeployment owns.
type InstanceRecord struct {
	// Name of the NS instance in OSM.
	Name string
	// ID is OSM's _id of the instance; empty while its creation is pending.
	ID string
	// Digest of the declaration last applied to the instance.
	Digest string
	// Origins are the fingerprints of where that declaration came from (originsOf), so that a
	// later change names its origin.
	Origins string
	State   InstanceState
	// Reason says why the instance is in its state, when the operator knows more than the
	// state.
	Reason string
	// InstallFailures counts the failed instantiations of the declaration of Digest.
	InstallFailures int32
	// UpgradeFailures counts the failed KDU upgrades of the declaration of Digest.
	UpgradeFailures int32
	// RolledBack says that the KDU whose upgrade failed last was put back (or is being put
	// back) to the values and chart it last ran successfully.
	RolledBack bool
}

// PackageRecord is an OSM package an OsmDeployment keeps in step with Git.
type PackageRecord struct {
	// Name is the descriptor id of the package.
	Name string
	// Kind is vnf or ns.
	Kind string
	// ID is OSM's _id of the package.
	ID string
	// Digest of the package tarball last uploaded.
	Digest string
}

// OperationRecord is an OSM LCM operation (nslcmop) the operator started and waits for.
type OperationRecord struct {
	// ID of the operation in OSM.
	ID string
	// Type: instantiate, action (KDU upgrade), terminate, ...
	Type string
	// NsInstance is the name of the NS instance the operation runs on.
	NsInstance string
	// State of the operation as OSM last reported it.
	State string
	// StartTime is when the operator started the operation.
	StartTime time.Time
	// MoreUpgrades says that other KDUs of the NS instance wait for this upgrade: once it
	// completed, the revision is applied again.
	MoreUpgrades bool
	// Rollback says that the operation puts a KDU back to what it last ran successfully: once
	// it completed, the instance stays Failed.
	Rollback bool
}
