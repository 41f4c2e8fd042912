package v1alpha1

import "github.com/fluxcd/pkg/apis/meta"

// Condition types are Flux's (fluxcd/pkg/apis/meta): Ready, Reconciling and Stalled, which
// kstatus, `kubectl wait --for=condition=Ready` and Flux health checks understand, and
// DriftedCondition. The reasons below explain them; each says what a person can do about it.

// DriftedCondition is True while a drift check with spec.driftDetection.mode warn finds OSM
// changed outside Git (reason DriftDetectedReason; the message says what differs), and absent
// otherwise. It does not change Ready: the revision was applied.
const DriftedCondition = "Drifted"

// HealthyCondition (Flux's meta.HealthyCondition) says whether the applied revision works, beyond
// OSM's operation states: True (reason SucceededReason) when every NS instance the OsmDeployment
// owns is READY in OSM with operational-status running, no operation of the revision failed,
// every KDU is READY, and every spec.healthChecks object is ready; Unknown (ProgressingReason)
// while OSM applies a revision or the checks have not passed yet, the message naming what is
// waited for; False with OperationFailedReason, TimeoutReason, NSInstanceUnhealthyReason,
// HealthCheckFailedReason or InvalidCELExpressionReason. Its lastTransitionTime is when it
// became healthy; status.lastAppliedRevisionTime says when the revision was applied.
const HealthyCondition = meta.HealthyCondition

// Reasons of the Healthy condition, besides ProgressingReason, OperationFailedReason and
// TimeoutReason.
const (
	// SucceededReason: the applied revision is healthy.
	SucceededReason = meta.SucceededReason
	// NSInstanceUnhealthyReason: OSM reports an NS instance of the applied revision not READY
	// (nsState BROKEN, DEGRADED...), its operational-status failed, or a KDU not READY (kdur
	// status ERROR). Ready stays as it was: the revision was applied; mend it in OSM, or push.
	NSInstanceUnhealthyReason = "NSInstanceUnhealthy"
	// HealthCheckFailedReason: an object of spec.healthChecks is Failed (kstatus, or its
	// healthCheckExprs failed expression), or was not ready within healthCheckTimeout (also on
	// Ready, and Stalled). Looked at again at each drift check, and on a new revision, spec or
	// reconcile request.
	HealthCheckFailedReason = meta.HealthCheckFailedReason
	// InvalidCELExpressionReason: an expression of spec.healthCheckExprs does not compile
	// (also on Ready, and Stalled until the spec changes).
	InvalidCELExpressionReason = meta.InvalidCELExpressionReason
	// HealthCheckPendingReason (Unknown): OSM runs the applied revision healthy and an object
	// of spec.healthChecks is not ready yet (the message names it). Only those objects are
	// read again, at the operation poll interval, until they pass, fail or healthCheckTimeout
	// runs out; the reconciler knows this wait by this reason.
	HealthCheckPendingReason = "HealthCheckPending"
)

// Reasons of OsmCluster conditions.
const (
	// ConnectedReason: the NBI answered and accepted the credentials.
	ConnectedReason = "Connected"
	// SecretNotFoundReason: the credentials or CA Secret does not exist. Create it.
	SecretNotFoundReason = "SecretNotFound"
	// SecretKeyMissingReason: the Secret lacks username, password or ca.crt. Add the key.
	SecretKeyMissingReason = "SecretKeyMissing"
	// InvalidCASecretReason: ca.crt holds no PEM certificate.
	InvalidCASecretReason = "InvalidCA"
	// TLSErrorReason: the NBI's certificate could not be verified. Set caSecretRef.
	TLSErrorReason = "TLSError"
	// AuthenticationFailedReason: OSM refused the credentials (or wants the password changed).
	AuthenticationFailedReason = "AuthenticationFailed"
	// UnreachableReason: the NBI did not answer (DNS, connection, timeout, 5xx). Retried.
	UnreachableReason = "Unreachable"
	// LoginHeldBackReason: osmops did not send the login, as the failed logins of the OSM user
	// are spent (the message names the OsmClusters that spent them). Retried.
	LoginHeldBackReason = "LoginHeldBack"
	// InUseReason: deletion waits while OsmDeployments still use the OsmCluster; the
	// message names them (the first few, and how many more).
	InUseReason = "InUse"
	// InsecureTLSReason (events only, Warning): spec.insecureSkipTLSVerify is set; emitted when
	// a new client of the NBI is first checked.
	InsecureTLSReason = "InsecureTLS"
)

// CredentialsExpiringCondition is True on an OsmCluster while OSM expires its user's password
// or account within the manager's --credentials-expiry-warning (reason PasswordExpiringReason
// or AccountExpiringReason; the message says when), and absent otherwise. It does not change
// Ready: the credentials still work. A Warning event is emitted when it becomes True.
const CredentialsExpiringCondition = "CredentialsExpiring"

// Reasons of the CredentialsExpiring condition.
const (
	// PasswordExpiringReason: OSM will ask for a new password (status.passwordExpiresAt):
	// change it in OSM and in the credentials Secret before then.
	PasswordExpiringReason = "PasswordExpiring"
	// AccountExpiringReason: OSM will refuse the user's logins (status.accountExpiresAt): have
	// an OSM administrator renew the account before then.
	AccountExpiringReason = "AccountExpiring"
)

// Reasons of suspension, on the Ready condition of an OsmDeployment and in events.
const (
	// SuspendedReason: spec.suspend is set, so nothing is applied, pruned or checked for
	// drift. As Flux does, the Ready condition keeps the status of the last observation
	// (kubectl wait and dependsOn see what was last known) and its message says what it was;
	// Reconciling is removed and observedGeneration follows the spec, so that kstatus does not
	// report it in progress forever: Current when it was Ready; when it was not, Stalled is
	// set (reason Suspended, unless it was already Stalled) and kstatus reports it Failed.
	// A Normal event says so when it is suspended, another (Resumed) when it is resumed.
	SuspendedReason = meta.SuspendedReason
	// ResumedReason (events only): spec.suspend was unset; the next steps set the conditions.
	ResumedReason = "Resumed"
)

// Reasons of OsmDeployment conditions.
const (
	// ProgressingReason: the operator is applying a revision.
	ProgressingReason = "Progressing"
	// AppliedReason: every operation of the revision completed in OSM.
	AppliedReason = "Applied"
	// ClusterNotReadyReason: the OsmCluster is missing or not Ready.
	ClusterNotReadyReason = "ClusterNotReady"
	// SourceNotReadyReason: the source (GitRepository, OCIRepository or Bucket) is missing or
	// has no artifact yet.
	SourceNotReadyReason = "SourceNotReady"
	// AccessDeniedReason: a cross-namespace source reference while they are disallowed.
	AccessDeniedReason = "AccessDenied"
	// DependencyNotReadyReason: an OsmDeployment of dependsOn is not Ready yet.
	DependencyNotReadyReason = "DependencyNotReady"
	// WaitingForWaveReason: a dependsOn entry with revision Same holds the source's revision
	// back: the dependency has not applied it, is not Ready on it, or has not been for its
	// bakeTime. The message names the dependency, the revision and the bake time left
	// (status.rollout says it too). Nothing new is applied meanwhile; it resolves by itself.
	WaitingForWaveReason = "WaitingForWave"
	// RolloutHaltedReason: a dependsOn entry with revision Same failed the source's revision
	// (it is Stalled on it), or is halted on it: this OsmDeployment stays on its previous
	// revision (Stalled, Warning event naming the failed site, the revision and its reason).
	// A new revision (the fix or the revert), or the dependency mended by a reconcile
	// request, lets the rollout start again.
	RolloutHaltedReason = "RolloutHalted"
	// ArtifactFailedReason: the artifact could not be fetched, verified or unpacked.
	ArtifactFailedReason = "ArtifactFailed"
	// ValidationFailedReason: the revision has invalid files or references; nothing was applied.
	ValidationFailedReason = "ValidationFailed"
	// ConflictReason: a declared NS instance exists in OSM and is not owned by this OsmDeployment.
	ConflictReason = "Conflict"
	// OSMRequestFailedReason: OSM refused a request that retrying cannot fix (a 4xx).
	OSMRequestFailedReason = "OSMRequestFailed"
	// OSMUnavailableReason: OSM did not answer or answered with a server error. Retried.
	OSMUnavailableReason = "OSMUnavailable"
	// OperationFailedReason: an OSM operation of the revision ended FAILED.
	OperationFailedReason = "OperationFailed"
	// RemediationExhaustedReason: an NS instance failed again after every retry of
	// spec.install.remediation or spec.upgrade.remediation (and, for an upgrade, the KDU was
	// put back with remediateLastFailure): nothing more is sent for its declaration until a
	// new revision or a reconcile request.
	RemediationExhaustedReason = "RemediationExhausted"
	// RemediationReason (events only): a remediation attempt was sent: a failed upgrade sent
	// again, a KDU put back to its last good values, or a failed instance terminated to be
	// created again.
	RemediationReason = "Remediation"
	// TimeoutReason: OSM did not finish the revision's operations within timeout.
	TimeoutReason = "Timeout"
	// DeletionFailedReason: cleaning up OSM on deletion of the OsmDeployment failed.
	DeletionFailedReason = "DeletionFailed"
	// ValuesUnresolvedReason: a ConfigMap or Secret that a KDU's valuesFrom or
	// spec.postBuild.substituteFrom names is missing, lacks the key, or holds values that are
	// not YAML. Create or mend it: it is read again at retryInterval, and at once when it has
	// the label reconcile.fluxcd.io/watch: Enabled.
	ValuesUnresolvedReason = "ValuesUnresolved"
	// DriftDetectedReason: a drift check found NS instances or packages changed in OSM outside
	// Git, and spec.driftDetection.mode warn leaves them so (Drifted condition, Warning event).
	// Set them back by hand, or with mode enabled.
	DriftDetectedReason = "DriftDetected"
	// StatusWriteFailedReason: the API server refused to store the status the reconcile wrote
	// (too large, or invalid): Ready says so, on the status last stored, instead of what that
	// status said; a Warning event gives the API server's message. Retried with back-off.
	StatusWriteFailedReason = "StatusWriteFailed"
	// PackageMayBeRefusedReason (events only): a package update OSM may refuse, because NS
	// instances use its descriptor, is about to be sent.
	PackageMayBeRefusedReason = "PackageMayBeRefused"
	// OrphanedReason (events only): NS instances are left running in OSM, as prune is off, or
	// on deletion (deletionPolicy Orphan, or suspended).
	OrphanedReason = "Orphaned"
	// PruningReason (events only): the deletion of the OsmDeployment terminates its NS instances.
	PruningReason = "Pruning"
	// RepositorySettingsReason (events only, Warning): the repository's settings file has
	// something that is ignored.
	RepositorySettingsReason = "RepositorySettings"
)
