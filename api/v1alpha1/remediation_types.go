package v1alpha1

// Install configures how the NS instances this OsmDeployment creates are instantiated, as a
// HelmRelease's spec.install.
type Install struct {
	// Remediation says what is done when an instantiation fails.
	// +optional
	Remediation *InstallRemediation `json:"remediation,omitempty"`
}

// InstallRemediation is helm-controller's install.remediation for an NS instance this
// OsmDeployment created: a failed instantiation (OSM reports the instance BROKEN) is
// remediated by terminating the instance and creating it again from the same declaration.
type InstallRemediation struct {
	// Retries is how many times a failed instantiation is retried for the
	// same declaration, each by one terminate and one create, each once. 0
	// (the default) retries none: the instance stays BROKEN until a new
	// revision or a reconcile request.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	Retries int32 `json:"retries,omitempty"`
}

// Upgrade configures how the KDUs of the NS instances this OsmDeployment owns are upgraded,
// as a HelmRelease's spec.upgrade.
type Upgrade struct {
	// Remediation says what is done when a KDU upgrade fails.
	// +optional
	Remediation *UpgradeRemediation `json:"remediation,omitempty"`
}

// UpgradeRemediation is helm-controller's upgrade.remediation for the KDUs of the NS
// instances this OsmDeployment owns.
type UpgradeRemediation struct {
	// Retries is how many times a failed KDU upgrade is sent again for the
	// same declaration, each once. 0 (the default) retries none.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	Retries int32 `json:"retries,omitempty"`

	// RemediateLastFailure puts the KDU whose upgrade failed last, once no
	// retry is left, back to the values and chart it last ran successfully
	// (an upgrade to them: see docs/operations.md), once. The instance stays
	// Failed until a new revision or a reconcile request. Defaults to true
	// when retries is greater than 0, false otherwise (as helm-controller
	// does).
	// +optional
	RemediateLastFailure *bool `json:"remediateLastFailure,omitempty"`
}

// GetInstallRetries returns spec.install.remediation.retries, 0 when unset.
func (in *OsmDeployment) GetInstallRetries() int {
	if in.Spec.Install == nil || in.Spec.Install.Remediation == nil {
		return 0
	}
	return int(in.Spec.Install.Remediation.Retries)
}

// GetUpgradeRemediation returns spec.upgrade.remediation's retries, and whether the last
// failure is remediated: remediateLastFailure, else whether retries is greater than 0.
func (in *OsmDeployment) GetUpgradeRemediation() (retries int, remediateLastFailure bool) {
	if in.Spec.Upgrade == nil || in.Spec.Upgrade.Remediation == nil {
		return 0, false
	}
	r := in.Spec.Upgrade.Remediation
	if r.RemediateLastFailure != nil {
		return int(r.Retries), *r.RemediateLastFailure
	}
	return int(r.Retries), r.Retries > 0
}
