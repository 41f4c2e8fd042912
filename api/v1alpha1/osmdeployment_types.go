package v1alpha1

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OsmDeploymentKind is the kind name of OsmDeployment.
const OsmDeploymentKind = "OsmDeployment"

// OsmDeploymentFinalizer holds an OsmDeployment back from deletion until what
// it owns in OSM is terminated (prune) or orphaned.
const OsmDeploymentFinalizer = "finalizers.gitops.osmops.io"

// Defaults of OsmDeploymentSpec, applied by the getters when a field is not
// set. Path, fileExtensions and packagesPath have no schema default on
// purpose: a repository's osm_ops_config.yaml may set them, and the spec wins
// only when it sets them itself.
const (
	DefaultPackagesPath = "osm-pkgs"
	DefaultInterval     = 10 * time.Minute
	DefaultTimeout      = 10 * time.Minute
)

// DefaultFileExtensions are the suffixes of deployment files when neither the
// spec nor the repository's osm_ops_config.yaml set them.
var DefaultFileExtensions = []string{".osmops.yaml", ".osmops.yml"}

// SourceReference points at the Flux source whose artifact is applied.
type SourceReference struct {
	// APIVersion of the source.
	// +optional
	// +kubebuilder:validation:Enum=source.toolkit.fluxcd.io/v1
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the source: GitRepository, OCIRepository or Bucket. Each holds
	// its content as an artifact of source-controller, which the operator
	// fetches and verifies the same way.
	// +required
	// +kubebuilder:validation:Enum=GitRepository;OCIRepository;Bucket
	Kind string `json:"kind"`

	// Name of the source.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the source; the OsmDeployment's own when empty. The operator
	// refuses other namespaces when started with --no-cross-namespace-refs.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// OsmDeploymentSpec says which Flux source is applied to which OSM
// installation, and how.
type OsmDeploymentSpec struct {
	// SourceRef is the Flux source (GitRepository, OCIRepository or Bucket)
	// whose artifact holds the deployment files and package sources.
	// +required
	SourceRef SourceReference `json:"sourceRef"`

	// ClusterRef names the OsmCluster, in the same namespace, to apply the source
	// to.
	// +required
	// +kubebuilder:validation:XValidation:rule="size(self.name) <= 253",message="an object name is at most 253 characters"
	ClusterRef meta.LocalObjectReference `json:"clusterRef"`

	// Path of the folder scanned for deployment files, relative to the repository
	// root. When empty, the targetDir of the repository's osm_ops_config.yaml,
	// else the repository root.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.split('/').exists(s, s == '..')",message="path must be relative and must not contain '..'"
	Path string `json:"path,omitempty"`

	// FileExtensions are the case-insensitive suffixes of deployment files. When
	// empty, the fileExtensions of the repository's osm_ops_config.yaml, else
	// .osmops.yaml and .osmops.yml. Each starts with a dot and holds only
	// letters, digits, dots, '_', '+' and '-' (no separator, no space).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=2
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:items:Pattern=`^\.[A-Za-z0-9._+-]+$`
	// +listType=set
	FileExtensions []string `json:"fileExtensions,omitempty"`

	// PackagesPath is the folder of OSM package sources, relative to path;
	// osm-pkgs when empty.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.split('/').exists(s, s == '..')",message="packagesPath must be relative and must not contain '..'"
	PackagesPath string `json:"packagesPath,omitempty"`

	// Interval at which OSM is compared with the last applied revision, to correct
	// drift. Defaults to 10m; at most 24h.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('24h')",message="interval must be at most 24h"
	Interval *metav1.Duration `json:"interval,omitempty"`

	// RetryInterval is the wait before retrying after a failure, and before
	// checking again a revision that names something OSM lacks. Defaults to
	// interval; at most 24h.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('24h')",message="retryInterval must be at most 24h"
	RetryInterval *metav1.Duration `json:"retryInterval,omitempty"`

	// Timeout for OSM to finish the operations of one revision; past it they are
	// no longer waited for: their NS instances are reported Failed (reason
	// Timeout, with OSM's operation id) and the newest revision is planned. It
	// also bounds how long a deletion waits for OSM (see deletionPolicy). Defaults
	// to 10m; at most 24h.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('24h')",message="timeout must be at most 24h"
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Suspend stops the reconciliation: nothing is applied, pruned or checked for
	// drift, and the Ready condition keeps its status with the reason Suspended.
	// Defaults to false.
	// +optional
	// +kubebuilder:default=false
	Suspend bool `json:"suspend,omitempty"`

	// Prune terminates and deletes in OSM the NS instances this OsmDeployment
	// created and Git no longer declares, and, with deletionPolicy MirrorPrune,
	// all of them when the OsmDeployment is deleted. Without it they are left
	// running and reported. Defaults to false.
	// +optional
	// +kubebuilder:default=false
	Prune bool `json:"prune,omitempty"`

	// DeletionPolicy says what happens to the NS instances this OsmDeployment owns
	// in OSM when it is deleted, with the values and meaning of Flux's
	// Kustomization: MirrorPrune (the default) terminates them when prune is on
	// and leaves them otherwise; Delete terminates them whatever prune says;
	// WaitForTermination terminates them and holds the OsmDeployment back for as
	// long as OSM takes, or cannot be reached; Orphan leaves them running. A
	// suspended OsmDeployment leaves them running whatever the policy.
	//
	// Deletion always ends but with WaitForTermination: when OSM cannot be reached
	// for good (the OsmCluster is gone, or is being deleted after its Secret and
	// the operator holds no client of it), or the NS instances are not gone within
	// timeout of the deletion (OSM down, failing or slow), the OsmDeployment is
	// let go with a Warning event that lists the NS instances OSM may still run.
	// +optional
	// +kubebuilder:default=MirrorPrune
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// AdoptExisting lets this OsmDeployment take over an NS instance that already
	// exists in OSM with a declared name and that no existing OsmDeployment owns:
	// one without an owner marker (made with the osm client), or whose marked
	// owner was deleted. An instance of a live owner is never taken. Without it
	// such an instance is a conflict and nothing is changed. OSM cannot mark an
	// existing instance, so the adoption is remembered in status.inventory.
	// Defaults to false.
	// +optional
	// +kubebuilder:default=false
	AdoptExisting bool `json:"adoptExisting,omitempty"`

	// Force replaces a declared NS instance that OSM cannot change in place
	// (Flux's name and meaning): when Git changes its NSD or VIM account, or what
	// OSM reads only at creation (the NS or VNF params, a k8sNamespace), the
	// instance is terminated and deleted, and, once OSM has removed it, created
	// again from the declaration. Without it such a change stalls with a Conflict
	// naming the instance and the field. An instance another live OsmDeployment
	// marked is never replaced; nothing else OSM refuses (a package update, a VNF
	// package move) makes an instance be replaced. Defaults to false.
	// +optional
	// +kubebuilder:default=false
	Force bool `json:"force,omitempty"`

	// InstancesFollowPackages moves the NS instances this OsmDeployment owns to
	// the new revision of a VNF package that Git updates, with OSM's NS update
	// operation (CHANGE_VNFPKG), once the upload is done: one VNF of an instance
	// at a time, each reported. OSM's LCM then moves the VNF record to the
	// package's revision (and redeploys its VDUs when the software-version
	// changed); it does not upgrade the Helm charts of KDUs. Defaults to false:
	// instances keep the package revision they were created with.
	// +optional
	// +kubebuilder:default=false
	InstancesFollowPackages bool `json:"instancesFollowPackages,omitempty"`

	// DriftDetection says what the drift check does with what differs in OSM
	// from what was applied, changed outside Git (HelmRelease's driftDetection).
	// +optional
	DriftDetection *DriftDetection `json:"driftDetection,omitempty"`

	// Install configures the instantiation of the NS instances this
	// OsmDeployment creates: its remediation (HelmRelease's spec.install).
	// +optional
	Install *Install `json:"install,omitempty"`

	// Upgrade configures the KDU upgrades of the NS instances this
	// OsmDeployment owns: their remediation (HelmRelease's spec.upgrade).
	// +optional
	Upgrade *Upgrade `json:"upgrade,omitempty"`

	// DependsOn lists OsmDeployments that must be Ready before this one is
	// applied; an entry with revision Same makes it a wave of a rollout: it
	// waits until the dependency has applied the revision of this one's source
	// and stayed Ready on it for bakeTime, and halts when the dependency failed
	// that revision (docs/rollouts.md).
	// +optional
	// +kubebuilder:validation:MaxItems=32
	DependsOn []DependencyReference `json:"dependsOn,omitempty"`

	// HealthChecks are Kubernetes objects that must be ready (kstatus: Current, or
	// as healthCheckExprs say for their kind) before the applied revision counts
	// as healthy, as a Flux Kustomization's healthChecks: a team's smoke test (a
	// Job), a canary analysis. They are read once the revision's OSM operations
	// completed and its NS instances are READY, with the manager's permissions:
	// the manager needs get on each kind listed (docs/operations.md). A namespace
	// other than the OsmDeployment's is refused with --no-cross-namespace-refs.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(h, size(h.kind) <= 63 && size(h.name) <= 253 && (!has(h.apiVersion) || size(h.apiVersion) <= 317) && (!has(h.namespace) || size(h.namespace) <= 63))",message="a health check's kind is at most 63 characters, its name 253, its apiVersion 317, its namespace 63"
	HealthChecks []meta.NamespacedObjectKindReference `json:"healthChecks,omitempty"`

	// HealthCheckExprs are CEL expressions (current, inProgress, failed) that
	// tell the readiness of the healthChecks of one kind, as a Flux
	// Kustomization's healthCheckExprs. Each is at most 1024 bytes and is
	// evaluated within a cost limit (docs/operations.md); one that calls format
	// is refused.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(h, size(h.apiVersion) <= 317 && (!has(h.kind) || size(h.kind) <= 63))",message="an expression's kind is at most 63 characters, its apiVersion 317"
	// +kubebuilder:validation:XValidation:rule="self.all(h, size(h.current) <= 1024 && (!has(h.inProgress) || size(h.inProgress) <= 1024) && (!has(h.failed) || size(h.failed) <= 1024))",message="each expression of healthCheckExprs is at most 1024 characters"
	HealthCheckExprs []kustomize.CustomHealthCheck `json:"healthCheckExprs,omitempty"`

	// HealthCheckTimeout is how long the healthChecks may take to pass once the
	// revision's OSM operations completed; past it the Healthy and Ready
	// conditions are False (reason HealthCheckFailed). Defaults to timeout; at
	// most 24h.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('24h')",message="healthCheckTimeout must be at most 24h"
	HealthCheckTimeout *metav1.Duration `json:"healthCheckTimeout,omitempty"`

	// PostBuild substitutes variables in the deployment files, as Flux's
	// Kustomization does, so that one repository serves several OsmDeployments
	// (staging, production).
	// +optional
	PostBuild *PostBuild `json:"postBuild,omitempty"`
}

// DependencyReference names an OsmDeployment this one depends on, and what of
// it this one waits for. An entry with only name and namespace waits for it to
// be Ready, on whatever revision.
// +kubebuilder:validation:XValidation:rule="!has(self.bakeTime) || (has(self.revision) && self.revision == 'Same')",message="bakeTime needs revision Same"
type DependencyReference struct {
	// Name of the OsmDeployment.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the OsmDeployment; this one's when empty.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// Revision says which revision the dependency must have applied. Any (the
	// default): it is Ready, whatever revision it runs. Same: it applied the
	// revision of this OsmDeployment's source artifact (the same commit for a
	// GitRepository, the same digest for an OCIRepository or a Bucket, through
	// whichever source object: the digest after the "@" of a Flux revision is
	// compared), it is Ready on it with every NS instance ready, and it has
	// stayed so for bakeTime. Until then this OsmDeployment applies nothing new
	// (reason WaitingForWave); when the dependency failed that revision, it
	// stays on its previous one (reason RolloutHalted).
	// +kubebuilder:validation:Enum=Any;Same
	// +optional
	Revision DependencyRevision `json:"revision,omitempty"`

	// BakeTime is how long the dependency must have been Ready on the same
	// revision (status.readySince) before this OsmDeployment applies it. Only
	// with revision Same.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('168h')",message="bakeTime must be at most 168h"
	// +optional
	BakeTime *metav1.Duration `json:"bakeTime,omitempty"`
}

// DependencyRevision is the revision a dependency must have applied.
type DependencyRevision string

const (
	// DependencyRevisionAny: the dependency is Ready, on whatever revision.
	DependencyRevisionAny DependencyRevision = "Any"
	// DependencyRevisionSame: the dependency applied the same revision as this
	// OsmDeployment's source, and stayed Ready on it for bakeTime.
	DependencyRevisionSame DependencyRevision = "Same"
)

// String names the dependency as namespace/name, or name without a namespace.
func (in DependencyReference) String() string {
	return meta.NamespacedObjectReference{Name: in.Name, Namespace: in.Namespace}.String()
}

// PostBuild holds the variables substituted in the deployment files (not in
// the package sources, which the OsmDeployments of one OSM share) before they
// are parsed: ${var}, ${var:=default} and the other bash forms of Flux's
// envsubst. A file whose metadata has the annotation or label
// kustomize.toolkit.fluxcd.io/substitute: disabled is left as it is.
// +kubebuilder:validation:XValidation:rule="!has(self.substitute) || self.substitute.all(k, k.matches('^[_a-zA-Z][_a-zA-Z0-9]*$'))",message="variable names must match ^[_a-zA-Z][_a-zA-Z0-9]*$"
type PostBuild struct {
	// Substitute holds variables by name; they win over those of substituteFrom.
	// +optional
	// +kubebuilder:validation:MaxProperties=256
	Substitute map[string]string `json:"substitute,omitempty"`

	// SubstituteFrom are ConfigMaps and Secrets of the OsmDeployment's namespace
	// whose keys are variables, read in order (a later one wins). Values from a
	// Secret are kept as secret as the Secret.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	SubstituteFrom []SubstituteReference `json:"substituteFrom,omitempty"`

	// Strict makes a variable without value and without default an error that
	// names its file and line, as Flux's StrictPostBuildSubstitutions feature gate
	// does; without it, it becomes empty. Defaults to false.
	// +optional
	Strict bool `json:"strict,omitempty"`
}

// SubstituteReference names a ConfigMap or Secret of the OsmDeployment's
// namespace.
type SubstituteReference struct {
	// Kind of the object.
	// +required
	// +kubebuilder:validation:Enum=ConfigMap;Secret
	Kind string `json:"kind"`

	// Name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	Name string `json:"name"`

	// Optional: a missing object is skipped instead of holding the OsmDeployment
	// back. Defaults to false.
	// +optional
	Optional bool `json:"optional,omitempty"`
}

// DeletionPolicy is what the deletion of an OsmDeployment does to its NS
// instances in OSM.
// +kubebuilder:validation:Enum=MirrorPrune;Delete;WaitForTermination;Orphan
type DeletionPolicy string

// Deletion policies, as Flux's kustomize-controller names them.
const (
	// DeletionPolicyMirrorPrune terminates the owned NS instances when prune is
	// on, and leaves them running otherwise. The default.
	DeletionPolicyMirrorPrune DeletionPolicy = "MirrorPrune"
	// DeletionPolicyDelete terminates the owned NS instances whatever prune says.
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyWaitForTermination terminates the owned NS instances and keeps
	// the OsmDeployment until OSM has removed them, however long that takes.
	DeletionPolicyWaitForTermination DeletionPolicy = "WaitForTermination"
	// DeletionPolicyOrphan leaves the owned NS instances running in OSM.
	DeletionPolicyOrphan DeletionPolicy = "Orphan"
)

// DriftDetectionMode says what a drift check does.
// +kubebuilder:validation:Enum=enabled;warn;disabled
type DriftDetectionMode string

const (
	// DriftDetectionEnabled: every interval, OSM is read whole and what changed
	// outside Git is set back to what Git declares.
	DriftDetectionEnabled DriftDetectionMode = "enabled"
	// DriftDetectionWarn: every interval, OSM is read whole and what changed
	// outside Git is reported (a Drifted condition and event, Drifted NS
	// instances), not changed.
	DriftDetectionWarn DriftDetectionMode = "warn"
	// DriftDetectionDisabled: OSM is read only where Git changed; what changes
	// outside Git is neither seen nor set back.
	DriftDetectionDisabled DriftDetectionMode = "disabled"
)

// DriftDetection configures the drift check.
type DriftDetection struct {
	// Mode is enabled (set back what changed in OSM outside Git), warn (report
	// it in the Drifted condition and a Warning event, change nothing) or
	// disabled (read OSM only where Git changed). Defaults to enabled.
	// +optional
	// +kubebuilder:default=enabled
	Mode DriftDetectionMode `json:"mode,omitempty"`
}

// NsInstanceState is what the operator knows of an owned NS instance.
// +kubebuilder:validation:Enum=Creating;Ready;Progressing;Failed;Deleting;Orphaned;Replacing;Drifted
type NsInstanceState string

// NS instance states in the inventory.
const (
	// NsInstanceCreating: the create is about to be sent or was sent, and OSM has
	// not yet given an id.
	NsInstanceCreating NsInstanceState = "Creating"
	// NsInstanceReady: OSM reports the instance READY with the declared values.
	NsInstanceReady NsInstanceState = "Ready"
	// NsInstanceProgressing: an OSM operation on the instance is running.
	NsInstanceProgressing NsInstanceState = "Progressing"
	// NsInstanceFailed: the last OSM operation on the instance failed.
	NsInstanceFailed NsInstanceState = "Failed"
	// NsInstanceDeleting: the instance is being terminated because Git no longer
	// declares it.
	NsInstanceDeleting NsInstanceState = "Deleting"
	// NsInstanceOrphaned: Git no longer declares the instance and prune is off, so
	// it is left alone.
	NsInstanceOrphaned NsInstanceState = "Orphaned"
	// NsInstanceReplacing: OSM cannot make the change in place and spec.force is
	// set: the old instance is being terminated, or is gone and the new one is
	// about to be created.
	NsInstanceReplacing NsInstanceState = "Replacing"
	// NsInstanceDrifted: OSM changed the instance outside Git (deleted it, or
	// changed a KDU), and spec.driftDetection.mode warn leaves it so: the
	// reason says what differs.
	NsInstanceDrifted NsInstanceState = "Drifted"
)

// NsInstanceEntry is an NS instance the OsmDeployment owns.
type NsInstanceEntry struct {
	// Name of the NS instance in OSM.
	Name string `json:"name"`
	// ID is OSM's _id of the instance; empty while its creation is pending.
	// +optional
	ID string `json:"id,omitempty"`
	// Digest of the declaration last applied to the instance.
	// +optional
	Digest string `json:"digest,omitempty"`
	// Origins are the fingerprints, separated by spaces, of where the declaration
	// the instance last ran in full came from (its file in Git, the ConfigMaps and
	// Secrets of valuesFrom, the variables of spec.postBuild; never a value), so
	// that a change is told by the origin that changed.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Origins string `json:"origins,omitempty"`
	// State of the instance.
	State NsInstanceState `json:"state"`
	// Reason says why the instance is Replacing or Progressing, when the operator
	// knows more than the state: "NSD changed from a to b", "moving VNF x to
	// revision 3 of package p".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
	// InstallFailures counts the failed instantiations of the declaration of
	// digest (spec.install.remediation); cleared when an operation on the
	// instance completes, and by a new declaration or a reconcile request.
	// +optional
	InstallFailures int32 `json:"installFailures,omitempty"`
	// UpgradeFailures counts the failed KDU upgrades of the declaration of
	// digest (spec.upgrade.remediation), cleared as installFailures.
	// +optional
	UpgradeFailures int32 `json:"upgradeFailures,omitempty"`
	// RolledBack says that the KDU whose upgrade failed last was put back (or is
	// being put back) to the values and chart it last ran successfully
	// (spec.upgrade.remediation.remediateLastFailure).
	// +optional
	RolledBack bool `json:"rolledBack,omitempty"`
}

// PackageEntry is an OSM package the OsmDeployment keeps in step with Git.
type PackageEntry struct {
	// Name is the descriptor id of the package.
	Name string `json:"name"`
	// Kind is vnf or ns.
	// +kubebuilder:validation:Enum=vnf;ns
	Kind string `json:"kind"`
	// ID is OSM's _id of the package.
	// +optional
	ID string `json:"id,omitempty"`
	// Digest of the package tarball last uploaded.
	// +optional
	Digest string `json:"digest,omitempty"`
}

// Inventory lists what the OsmDeployment owns in OSM.
type Inventory struct {
	// The status lists are atomic (here and Operations), as Flux's inventories are: only the
	// manager writes status, a whole list at a time (merge patches), and the field ownership
	// per entry of a map list cost the API server a recomputation per entry at every status
	// write (osmops-bench, an OsmDeployment of 1,000 NS instances: about a fifth of the API
	// server's CPU while it applies a first revision).

	// NsInstances the OsmDeployment owns, sorted by name.
	// +optional
	// +listType=atomic
	NsInstances []NsInstanceEntry `json:"nsInstances,omitempty"`
	// Packages the OsmDeployment keeps in step with Git, sorted by name.
	// +optional
	// +listType=atomic
	Packages []PackageEntry `json:"packages,omitempty"`
	// ReferencesDigest is the digest of what the NS instances referred to
	// (NSD, VNFs and KDUs, VIM account) and of the packages by content, when a
	// plan last checked them against OSM: a new revision that refers to the
	// same reads no descriptor or VIM account.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	ReferencesDigest string `json:"referencesDigest,omitempty"`
}

// OperationEntry is an OSM LCM operation (nslcmop) the operator started and is
// waiting for.
type OperationEntry struct {
	// ID of the operation in OSM.
	ID string `json:"id"`
	// Type: instantiate, action (KDU upgrade), terminate, ...
	Type string `json:"type"`
	// NsInstance is the name of the NS instance the operation runs on.
	NsInstance string `json:"nsInstance"`
	// State of the operation as OSM last reported it.
	State string `json:"state"`
	// StartTime is when the operator started the operation.
	StartTime metav1.Time `json:"startTime"`
	// MoreUpgrades says that other KDUs of the NS instance differ from Git and
	// wait for this upgrade (OSM runs one operation per instance at a time): once
	// it completed, the revision is applied again.
	// +optional
	MoreUpgrades bool `json:"moreUpgrades,omitempty"`
	// Rollback says that the operation puts a KDU back to the values and chart
	// it last ran successfully (spec.upgrade.remediation.remediateLastFailure):
	// once it completed, the instance stays Failed.
	// +optional
	Rollback bool `json:"rollback,omitempty"`
}

// OsmDeploymentStatus is the observed state of an OsmDeployment.
type OsmDeploymentStatus struct {
	meta.ReconcileRequestStatus `json:",inline"`

	// ObservedGeneration is the last generation of the spec the operator acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling and Stalled, as kstatus reads them; Healthy
	// (the applied revision works: docs/operations.md); Drifted.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// LastAppliedRevision is the source revision whose every operation completed
	// in OSM, as source-controller names it: <branch>@sha1:<commit> for a
	// GitRepository, <tag>@sha256:<manifest digest> (sha256:<digest> when
	// pinned by digest) for an OCIRepository, sha256:<digest of the listing>
	// for a Bucket.
	// +optional
	LastAppliedRevision string `json:"lastAppliedRevision,omitempty"`

	// LastAppliedRevisionTime is when lastAppliedRevision became the applied
	// revision (its OSM operations completed); healthChecks are given
	// healthCheckTimeout from then.
	// +optional
	LastAppliedRevisionTime *metav1.Time `json:"lastAppliedRevisionTime,omitempty"`

	// LastAppliedRevisionShort is lastAppliedRevision with its digest cut to 7
	// characters and its reference to 16 (main@sha1:0123abc), for `kubectl get`.
	// +optional
	LastAppliedRevisionShort string `json:"lastAppliedRevisionShort,omitempty"`

	// LastAttemptedRevision is the source revision last tried, in the format of
	// lastAppliedRevision.
	// +optional
	LastAttemptedRevision string `json:"lastAttemptedRevision,omitempty"`

	// LastAttemptedRevisionShort is lastAttemptedRevision cut as
	// lastAppliedRevisionShort is, for `kubectl get -o wide`.
	// +optional
	LastAttemptedRevisionShort string `json:"lastAttemptedRevisionShort,omitempty"`

	// Inventory of the NS instances and packages owned in OSM.
	// +optional
	Inventory *Inventory `json:"inventory,omitempty"`

	// Operations are the OSM operations still running.
	// +optional
	// +listType=atomic
	Operations []OperationEntry `json:"operations,omitempty"`

	// NsInstancesReady is the number of NS instances of the last attempted
	// revision that are Ready in OSM with their declaration applied: while an
	// instance is created, upgraded, replaced or failed it is not counted. It
	// equals nsInstancesTotal whenever the OsmDeployment is Ready.
	// +optional
	NsInstancesReady int32 `json:"nsInstancesReady,omitempty"`

	// NsInstancesTotal is the number of NS instances the last attempted revision
	// declares.
	// +optional
	NsInstancesTotal int32 `json:"nsInstancesTotal,omitempty"`

	// NsInstancesSummary is "ready/total" (nsInstancesReady/nsInstancesTotal), for
	// `kubectl get`.
	// +optional
	NsInstancesSummary string `json:"nsInstancesSummary,omitempty"`

	// ReadySince is since when the OsmDeployment has been Ready and Healthy on
	// lastAppliedRevision without a break (every operation completed, every NS
	// instance ready, its health checks passed): the start of the bake time of
	// the OsmDeployments that depend on it with revision Same. Absent while it is
	// not; a new revision applied, or any spell of anything else, starts it
	// again.
	// +optional
	ReadySince *metav1.Time `json:"readySince,omitempty"`

	// Rollout says what holds back the revision of the source, when a
	// dependsOn entry with revision Same does; absent otherwise.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`

	// History lists the last applies, newest first: each revision sent to OSM,
	// the digest of its plan, when it started and ended, and the OSM operations
	// it started with their outcome, as helm-controller's status.history. At
	// most MaxHistory entries; OSM keeps the full operation records.
	// +optional
	// +kubebuilder:validation:MaxItems=5
	History []ApplySnapshot `json:"history,omitempty"`
}

// Bounds of status.history, so that the status of an OsmDeployment at its other
// bounds stays within what the API server stores: the applies kept, the
// operations listed per apply (the others counted) and the length of OSM's
// message kept per operation, in bytes. The CRD's markers repeat them.
const (
	MaxHistory              = 5
	MaxHistoryOperations    = 16
	MaxHistoryMessageLength = 256
)

// ApplyOutcome is where an apply of status.history stands.
type ApplyOutcome string

const (
	// ApplyRunning: OSM runs operations of the apply.
	ApplyRunning ApplyOutcome = "Running"
	// ApplySucceeded: OSM accepted every request and completed every operation.
	ApplySucceeded ApplyOutcome = "Succeeded"
	// ApplyFailed: OSM refused a request, or an operation failed or timed out.
	ApplyFailed ApplyOutcome = "Failed"
)

// ApplySnapshot is one apply of a revision to OSM: the requests of one plan,
// and the OSM operations they started.
type ApplySnapshot struct {
	// Revision is the source revision applied, as lastAttemptedRevision names it.
	Revision string `json:"revision"`

	// PlanDigest is the digest of what the plan sent (sha256:<hex>): two applies
	// of one digest sent the same changes.
	PlanDigest string `json:"planDigest"`

	// StartTime is when the plan was sent to OSM.
	StartTime metav1.Time `json:"startTime"`

	// EndTime is when its last operation ended (the start time when it started
	// none); absent while OSM runs some.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`

	// Outcome is Running, Succeeded or Failed.
	Outcome ApplyOutcome `json:"outcome"`

	// Message says why it failed, when OSM refused a request (cut to
	// MaxHistoryMessageLength bytes).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Message string `json:"message,omitempty"`

	// Operations are the OSM operations the apply started, at most
	// MaxHistoryOperations of them.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Operations []HistoryOperation `json:"operations,omitempty"`

	// OperationsOmitted counts the operations it started past
	// MaxHistoryOperations, not listed.
	// +optional
	OperationsOmitted int32 `json:"operationsOmitted,omitempty"`
}

// HistoryOperation is an OSM LCM operation (nslcmop) an apply started, with
// its outcome.
type HistoryOperation struct {
	// ID of the operation in OSM (its nslcmop _id).
	ID string `json:"id"`
	// Type: instantiate, action (KDU upgrade), update, terminate.
	Type string `json:"type"`
	// NsInstance is the name of the NS instance the operation ran on.
	NsInstance string `json:"nsInstance"`
	// State is OSM's operationState as last seen: PROCESSING, COMPLETED,
	// FAILED, ...
	State string `json:"state"`
	// EndTime is when the operator saw it end.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// Message is OSM's own message of a failed operation, or why it was no longer
	// waited for, cut to MaxHistoryMessageLength bytes.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Message string `json:"message,omitempty"`
}

// RolloutStatus is where an OsmDeployment stands in a rollout: the dependency
// it waits for, and why.
type RolloutStatus struct {
	// Revision is the source revision this OsmDeployment waits to apply.
	Revision string `json:"revision"`

	// Dependency is the OsmDeployment it waits for: name, or namespace/name in
	// another namespace.
	Dependency string `json:"dependency"`

	// Phase is Waiting (the dependency has not applied the revision, or is not
	// Ready on it), Baking (it is, since less than bakeTime) or Halted (it
	// failed the revision, or is halted on it).
	Phase RolloutPhase `json:"phase"`

	// BakedAt is when the dependency's bake time ends (phase Baking).
	// +optional
	BakedAt *metav1.Time `json:"bakedAt,omitempty"`
}

// RolloutPhase is what an OsmDeployment waits on in a rollout.
type RolloutPhase string

const (
	// RolloutWaiting: the dependency has not applied the revision, or is not Ready on it.
	RolloutWaiting RolloutPhase = "Waiting"
	// RolloutBaking: the dependency is Ready on the revision, since less than bakeTime.
	RolloutBaking RolloutPhase = "Baking"
	// RolloutHalted: the dependency failed the revision, or is halted on it.
	RolloutHalted RolloutPhase = "Halted"
)

// OsmDeployment applies the NS instances and OSM packages of a Flux source
// (GitRepository, OCIRepository or Bucket) to an OsmCluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=osmd,categories=osm
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,description="The reason of the Ready condition; kubectl describe shows its message."
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.lastAppliedRevisionShort`,description="The last revision whose every OSM operation completed."
// +kubebuilder:printcolumn:name="NS",type=string,JSONPath=`.status.nsInstancesSummary`,description="NS instances of the last attempted revision Ready in OSM with their declaration applied / NS instances it declares."
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterRef.name`,priority=1
// +kubebuilder:printcolumn:name="Attempted",type=string,JSONPath=`.status.lastAttemptedRevisionShort`,priority=1,description="The revision last tried."
// +kubebuilder:printcolumn:name="Suspended",type=boolean,JSONPath=`.spec.suspend`,priority=1
type OsmDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OsmDeploymentSpec `json:"spec,omitempty"`
	// Status is the observed state of the OsmDeployment. A new object's defaults
	// to observedGeneration -1, as Flux's objects do: kstatus reads it in progress
	// until the operator has acted on its spec (without a status it would read
	// Current, and a Flux Kustomization waiting on a new object would pass it
	// before the operator saw it).
	// +kubebuilder:default:={"observedGeneration":-1}
	Status OsmDeploymentStatus `json:"status,omitempty"`
}

// OsmDeploymentList is a list of OsmDeployments.
// +kubebuilder:object:root=true
type OsmDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OsmDeployment `json:"items"`
}

// GetConditions returns the status conditions (for
// fluxcd/pkg/runtime/conditions).
func (in *OsmDeployment) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions (for
// fluxcd/pkg/runtime/conditions).
func (in *OsmDeployment) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetInterval returns the drift-check interval, or the default one.
func (in *OsmDeployment) GetInterval() time.Duration {
	return durationOr(in.Spec.Interval, DefaultInterval)
}

// GetRetryInterval returns the wait before a retry: retryInterval, else
// interval.
func (in *OsmDeployment) GetRetryInterval() time.Duration {
	return durationOr(in.Spec.RetryInterval, in.GetInterval())
}

// GetTimeout returns the time OSM has to finish a revision's operations, or
// the default one.
func (in *OsmDeployment) GetTimeout() time.Duration {
	return durationOr(in.Spec.Timeout, DefaultTimeout)
}

// GetHealthCheckTimeout returns the time the healthChecks have to pass once a
// revision is applied: healthCheckTimeout, else timeout.
func (in *OsmDeployment) GetHealthCheckTimeout() time.Duration {
	return durationOr(in.Spec.HealthCheckTimeout, in.GetTimeout())
}

// GetDeletionPolicy returns the deletion policy, or the default one
// (MirrorPrune).
func (in *OsmDeployment) GetDeletionPolicy() DeletionPolicy {
	if in.Spec.DeletionPolicy == "" {
		return DeletionPolicyMirrorPrune
	}
	return in.Spec.DeletionPolicy
}

// GetDriftDetectionMode returns spec.driftDetection.mode, or enabled.
func (in *OsmDeployment) GetDriftDetectionMode() DriftDetectionMode {
	if in.Spec.DriftDetection == nil || in.Spec.DriftDetection.Mode == "" {
		return DriftDetectionEnabled
	}
	return in.Spec.DriftDetection.Mode
}

// TerminatesOnDeletion tells whether deleting the OsmDeployment terminates the
// NS instances it owns: as its deletion policy says, and never while it is
// suspended (as Flux does).
func (in *OsmDeployment) TerminatesOnDeletion() bool {
	if in.Spec.Suspend {
		return false
	}
	switch in.GetDeletionPolicy() {
	case DeletionPolicyMirrorPrune:
		return in.Spec.Prune
	case DeletionPolicyDelete, DeletionPolicyWaitForTermination:
		return true
	}
	return false
}

// GetRequeueAfter returns the interval, for the reconcile loop's requeue.
func (in *OsmDeployment) GetRequeueAfter() time.Duration { return in.GetInterval() }

// GetDependsOn returns the OsmDeployments this one waits for.
func (in *OsmDeployment) GetDependsOn() []DependencyReference {
	return in.Spec.DependsOn
}

// GetSourceNamespace returns the namespace of the source: its own, or the
// OsmDeployment's.
func (in *OsmDeployment) GetSourceNamespace() string {
	if in.Spec.SourceRef.Namespace == "" {
		return in.Namespace
	}
	return in.Spec.SourceRef.Namespace
}

// Bounds of a short revision: git's short commit id, and a reference that leaves room for
// the other columns of `kubectl get -o wide` in 120 characters.
const (
	shortDigestLength    = 7
	shortReferenceLength = 12
)

// RevisionDigest is what identifies the content of a Flux revision whichever source object
// announced it: the digest after the last "@" (<branch>@sha1:<commit>, <tag>@sha256:<digest>),
// or the whole revision when it is only a digest (sha256:<digest> of a Bucket, an OCI artifact
// pinned by digest).
func RevisionDigest(revision string) string {
	return revision[strings.LastIndex(revision, "@")+1:]
}

// SameRevision tells whether two Flux revisions carry the same commit or digest (the waves of a
// rollout, and osmops rollout, compare revisions so).
func SameRevision(a, b string) bool {
	return a != "" && b != "" && RevisionDigest(a) == RevisionDigest(b)
}

// ShortRevision cuts a Flux revision to a reference of at most shortReferenceLength
// characters and the first shortDigestLength characters of its digest, without the
// algorithm: main@sha1:<40 hex> is main@3f1c0a2, latest@sha256:<64 hex> latest@0123456, and
// a revision of only a digest, sha256:<64 hex>, sha256:0123456. Flux has no such helper.
func ShortRevision(revision string) string {
	at := strings.LastIndex(revision, "@")
	reference, digest := revision[:max(at, 0)], revision[at+1:]
	if algorithm, hex, ok := strings.Cut(digest, ":"); ok {
		digest = string([]rune(hex)[:min(utf8.RuneCountInString(hex), shortDigestLength)])
		if at < 0 {
			digest = algorithm + ":" + digest
		}
	}
	// Not a Flux revision, or a long algorithm name: bounded all the same.
	digest = cutRunes(digest, shortReferenceLength+shortDigestLength)
	if at < 0 {
		return digest
	}
	return cutRunes(reference, shortReferenceLength) + "@" + digest
}

// cutRunes returns s cut to at most limit characters, ending in "…" when cut.
func cutRunes(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit-1]) + "…"
}

func init() {
	SchemeBuilder.Register(&OsmDeployment{}, &OsmDeploymentList{})
}
