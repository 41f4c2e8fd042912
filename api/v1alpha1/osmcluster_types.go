package v1alpha1

import (
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OsmClusterKind is the kind name of OsmCluster.
const OsmClusterKind = "OsmCluster"

// Defaults of OsmClusterSpec, applied by the getters when a field is not set.
const (
	DefaultOsmProject            = "admin"
	DefaultRequestTimeout        = 30 * time.Second
	DefaultMaxConcurrentRequests = 8
	DefaultHealthCheckInterval   = 5 * time.Minute
)

// Keys read from the Secrets an OsmCluster references.
const (
	UsernameSecretKey = "username"
	PasswordSecretKey = "password"
	CASecretKey       = "ca.crt"
)

// OsmClusterSpec says how to reach and authenticate to one OSM installation,
// as one tenant sees it.
// +kubebuilder:validation:XValidation:rule="!has(self.caSecretRef) || self.url.startsWith('https://')",message="caSecretRef needs an https URL"
// +kubebuilder:validation:XValidation:rule="!(has(self.insecureSkipTLSVerify) && self.insecureSkipTLSVerify && has(self.caSecretRef))",message="caSecretRef and insecureSkipTLSVerify are mutually exclusive"
type OsmClusterSpec struct {
	// URL of OSM's north-bound interface (NBI), for example
	// https://osm.example.com:9999. When the URL has no path the operator talks to
	// /osm under it, as OSM's NBI serves it; a path (an NBI behind a reverse
	// proxy) is used as given. Plain http only when the URL says so.
	// +required
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="url must be an http:// or https:// URL with a host"
	// +kubebuilder:validation:XValidation:rule="!self.contains('@')",message="url must not carry credentials: put them in the credentials Secret"
	URL string `json:"url"`

	// Project is the OSM project (name or id) the operator works in. Defaults to
	// admin.
	// +optional
	// +kubebuilder:default=admin
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Project string `json:"project,omitempty"`

	// CredentialsSecretRef names a Secret in the same namespace with the keys
	// `username` and `password` of the OSM user.
	// +required
	// +kubebuilder:validation:XValidation:rule="size(self.name) <= 253",message="an object name is at most 253 characters"
	CredentialsSecretRef meta.LocalObjectReference `json:"credentialsSecretRef"`

	// CASecretRef names a Secret in the same namespace whose key `ca.crt` holds
	// the PEM bundle of the certificate authorities that sign the NBI's
	// certificate. Without it the system roots are used.
	// +optional
	// +kubebuilder:validation:XValidation:rule="size(self.name) <= 253",message="an object name is at most 253 characters"
	CASecretRef *meta.LocalObjectReference `json:"caSecretRef,omitempty"`

	// InsecureSkipTLSVerify turns off the verification of the NBI's TLS
	// certificate. For labs only: a Warning event is emitted while it is set.
	// Defaults to false.
	// +optional
	// +kubebuilder:default=false
	InsecureSkipTLSVerify bool `json:"insecureSkipTLSVerify,omitempty"`

	// Timeout of one request to the NBI. Defaults to 30s; at most 5m, and the
	// manager's --max-nbi-request-timeout may lower it.
	// +optional
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('5m')",message="timeout must be at most 5m"
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// MaxConcurrentRequests bounds the requests in flight to this NBI, across
	// every OsmDeployment that uses this OsmCluster. Defaults to 8; from 1 to 64.
	// +optional
	// +kubebuilder:default=8
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	MaxConcurrentRequests int32 `json:"maxConcurrentRequests,omitempty"`

	// Interval between health checks of the NBI (authenticate, read the version
	// and VIM accounts). Defaults to 5m; at most 24h.
	// +optional
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('24h')",message="interval must be at most 24h"
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// OsmClusterStatus is what the operator last learnt of the OSM installation.
type OsmClusterStatus struct {
	meta.ReconcileRequestStatus `json:",inline"`

	// ObservedGeneration is the last generation of the spec the operator acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready when the NBI answers and accepts the credentials.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// OSMIdentity is the id of the OSM project the credentials logged in to,
	// as OSM's token answer says (project_id, a UUID of one OSM installation).
	// Two OsmClusters with the same identity drive one OSM project, however
	// their URLs are written. Learned at the last successful check; the claims
	// of OsmDeployments on OSM go by it only while the OsmCluster is Ready for
	// its current spec, so that an OsmCluster that did not log in claims nothing.
	// +optional
	OSMIdentity string `json:"osmIdentity,omitempty"`

	// OSMVersion is the version the NBI reports.
	// +optional
	OSMVersion string `json:"osmVersion,omitempty"`

	// VIMAccounts are the names of the VIM accounts the project sees, sorted.
	// +optional
	VIMAccounts []string `json:"vimAccounts,omitempty"`

	// Deployments is the number of OsmDeployments that use this OsmCluster; while
	// they do, its deletion waits, and its Ready condition (reason InUse) names
	// them.
	// +optional
	Deployments int32 `json:"deployments,omitempty"`

	// LastCheckedAt is when the NBI was last checked.
	// +optional
	LastCheckedAt *metav1.Time `json:"lastCheckedAt,omitempty"`

	// PasswordExpiresAt is when OSM expires the user's password (its user
	// record's _admin.password_expire_time, read at each check): from then on
	// OSM wants it changed before it accepts it. Absent when OSM sets none
	// (the admin user, no user management).
	// +optional
	PasswordExpiresAt *metav1.Time `json:"passwordExpiresAt,omitempty"`

	// AccountExpiresAt is when OSM expires the user's account
	// (_admin.account_expire_time): from then on OSM refuses its logins until
	// an administrator renews it. Absent when OSM sets none.
	// +optional
	AccountExpiresAt *metav1.Time `json:"accountExpiresAt,omitempty"`
}

// OsmCluster is an OSM north-bound interface endpoint and the credentials to
// use it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=osmc,categories=osm
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,description="The reason of the Ready condition; kubectl describe shows its message."
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.project`,priority=1
// +kubebuilder:printcolumn:name="Deployments",type=integer,JSONPath=`.status.deployments`,priority=1,description="The OsmDeployments that use this OsmCluster."
type OsmCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OsmClusterSpec `json:"spec,omitempty"`
	// Status is what the operator last learnt of the OSM installation. A new
	// object's defaults to observedGeneration -1, as Flux's objects do: kstatus
	// reads it in progress until the operator has acted on its spec (without a
	// status it would read Current, and a Flux Kustomization waiting on a new
	// object would pass it before the operator saw it).
	// +kubebuilder:default:={"observedGeneration":-1}
	Status OsmClusterStatus `json:"status,omitempty"`
}

// OsmClusterList is a list of OsmClusters.
// +kubebuilder:object:root=true
type OsmClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OsmCluster `json:"items"`
}

// GetConditions returns the status conditions (for
// fluxcd/pkg/runtime/conditions).
func (in *OsmCluster) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions (for
// fluxcd/pkg/runtime/conditions).
func (in *OsmCluster) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetProject returns the OSM project, or the default one.
func (in *OsmCluster) GetProject() string {
	if in.Spec.Project == "" {
		return DefaultOsmProject
	}
	return in.Spec.Project
}

// GetTimeout returns the NBI request timeout, or the default one.
func (in *OsmCluster) GetTimeout() time.Duration {
	return durationOr(in.Spec.Timeout, DefaultRequestTimeout)
}

// GetInterval returns the health check interval, or the default one.
func (in *OsmCluster) GetInterval() time.Duration {
	return durationOr(in.Spec.Interval, DefaultHealthCheckInterval)
}

// GetMaxConcurrentRequests returns the bound on NBI requests in flight, or the
// default one.
func (in *OsmCluster) GetMaxConcurrentRequests() int {
	if in.Spec.MaxConcurrentRequests <= 0 {
		return DefaultMaxConcurrentRequests
	}
	return int(in.Spec.MaxConcurrentRequests)
}

// durationOr returns d, or def when d is unset or not positive.
func durationOr(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil || d.Duration <= 0 {
		return def
	}
	return d.Duration
}

func init() {
	SchemeBuilder.Register(&OsmCluster{}, &OsmClusterList{})
}
