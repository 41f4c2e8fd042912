package v1alpha1

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func TestOsmClusterGetters(t *testing.T) {
	tests := []struct {
		name        string
		spec        OsmClusterSpec
		project     string
		timeout     time.Duration
		interval    time.Duration
		maxRequests int
	}{
		{
			name:    "defaults",
			project: DefaultOsmProject, timeout: DefaultRequestTimeout,
			interval: DefaultHealthCheckInterval, maxRequests: DefaultMaxConcurrentRequests,
		},
		{
			name: "set",
			spec: OsmClusterSpec{
				Project: "tenant1", Timeout: duration(5 * time.Second),
				Interval: duration(time.Minute), MaxConcurrentRequests: 20,
			},
			project: "tenant1", timeout: 5 * time.Second, interval: time.Minute, maxRequests: 20,
		},
		{
			name:    "zero durations fall back to defaults",
			spec:    OsmClusterSpec{Timeout: duration(0), Interval: duration(0)},
			project: DefaultOsmProject, timeout: DefaultRequestTimeout,
			interval: DefaultHealthCheckInterval, maxRequests: DefaultMaxConcurrentRequests,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &OsmCluster{Spec: tt.spec}
			if got := c.GetProject(); got != tt.project {
				t.Errorf("GetProject() = %q, want %q", got, tt.project)
			}
			if got := c.GetTimeout(); got != tt.timeout {
				t.Errorf("GetTimeout() = %v, want %v", got, tt.timeout)
			}
			if got := c.GetInterval(); got != tt.interval {
				t.Errorf("GetInterval() = %v, want %v", got, tt.interval)
			}
			if got := c.GetMaxConcurrentRequests(); got != tt.maxRequests {
				t.Errorf("GetMaxConcurrentRequests() = %d, want %d", got, tt.maxRequests)
			}
		})
	}
}

func TestOsmDeploymentGetters(t *testing.T) {
	tests := []struct {
		name            string
		namespace       string
		spec            OsmDeploymentSpec
		interval        time.Duration
		retryInterval   time.Duration
		timeout         time.Duration
		sourceNamespace string
	}{
		{
			name: "defaults", namespace: "tenant1",
			interval: DefaultInterval, retryInterval: DefaultInterval, timeout: DefaultTimeout,
			sourceNamespace: "tenant1",
		},
		{
			name: "retry interval follows interval", namespace: "tenant1",
			spec:     OsmDeploymentSpec{Interval: duration(time.Minute)},
			interval: time.Minute, retryInterval: time.Minute, timeout: DefaultTimeout,
			sourceNamespace: "tenant1",
		},
		{
			name: "set", namespace: "tenant1",
			spec: OsmDeploymentSpec{
				Interval: duration(time.Minute), RetryInterval: duration(10 * time.Second),
				Timeout: duration(2 * time.Minute), SourceRef: SourceReference{Namespace: "flux-system"},
			},
			interval: time.Minute, retryInterval: 10 * time.Second, timeout: 2 * time.Minute,
			sourceNamespace: "flux-system",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: tt.namespace}, Spec: tt.spec}
			if got := d.GetInterval(); got != tt.interval {
				t.Errorf("GetInterval() = %v, want %v", got, tt.interval)
			}
			if got := d.GetRequeueAfter(); got != tt.interval {
				t.Errorf("GetRequeueAfter() = %v, want %v", got, tt.interval)
			}
			if got := d.GetRetryInterval(); got != tt.retryInterval {
				t.Errorf("GetRetryInterval() = %v, want %v", got, tt.retryInterval)
			}
			if got := d.GetTimeout(); got != tt.timeout {
				t.Errorf("GetTimeout() = %v, want %v", got, tt.timeout)
			}
			if got := d.GetSourceNamespace(); got != tt.sourceNamespace {
				t.Errorf("GetSourceNamespace() = %q, want %q", got, tt.sourceNamespace)
			}
		})
	}
}

func TestOsmDeploymentDeletionPolicy(t *testing.T) {
	tests := []struct {
		policy         DeletionPolicy
		prune, suspend bool
		effective      DeletionPolicy
		terminates     bool
	}{
		{policy: "", prune: false, effective: DeletionPolicyMirrorPrune, terminates: false},
		{policy: "", prune: true, effective: DeletionPolicyMirrorPrune, terminates: true},
		{policy: DeletionPolicyMirrorPrune, prune: true, effective: DeletionPolicyMirrorPrune, terminates: true},
		{policy: DeletionPolicyDelete, prune: false, effective: DeletionPolicyDelete, terminates: true},
		{policy: DeletionPolicyWaitForTermination, prune: false, effective: DeletionPolicyWaitForTermination, terminates: true},
		{policy: DeletionPolicyOrphan, prune: true, effective: DeletionPolicyOrphan, terminates: false},
		{policy: DeletionPolicyDelete, prune: true, suspend: true, effective: DeletionPolicyDelete, terminates: false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s prune=%t suspend=%t", tt.policy, tt.prune, tt.suspend), func(t *testing.T) {
			d := &OsmDeployment{Spec: OsmDeploymentSpec{DeletionPolicy: tt.policy, Prune: tt.prune, Suspend: tt.suspend}}
			if got := d.GetDeletionPolicy(); got != tt.effective {
				t.Errorf("GetDeletionPolicy() = %q, want %q", got, tt.effective)
			}
			if got := d.TerminatesOnDeletion(); got != tt.terminates {
				t.Errorf("TerminatesOnDeletion() = %t, want %t", got, tt.terminates)
			}
		})
	}
}

// Remediation is off unless set; remediateLastFailure follows retries unless set, as
// helm-controller's does.
func TestOsmDeploymentRemediation(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name          string
		spec          OsmDeploymentSpec
		install       int
		upgrade       int
		remediateLast bool
	}{
		{name: "unset"},
		{name: "empty", spec: OsmDeploymentSpec{Install: &Install{}, Upgrade: &Upgrade{}}},
		{name: "retries", spec: OsmDeploymentSpec{Install: &Install{Remediation: &InstallRemediation{Retries: 1}},
			Upgrade: &Upgrade{Remediation: &UpgradeRemediation{Retries: 3}}}, install: 1, upgrade: 3, remediateLast: true},
		{name: "retries without remediating the last failure", spec: OsmDeploymentSpec{
			Upgrade: &Upgrade{Remediation: &UpgradeRemediation{Retries: 3, RemediateLastFailure: &no}}}, upgrade: 3},
		{name: "the last failure alone", spec: OsmDeploymentSpec{
			Upgrade: &Upgrade{Remediation: &UpgradeRemediation{RemediateLastFailure: &yes}}}, remediateLast: true},
	} {
		d := &OsmDeployment{Spec: tc.spec}
		upgrade, remediateLast := d.GetUpgradeRemediation()
		if install := d.GetInstallRetries(); install != tc.install || upgrade != tc.upgrade || remediateLast != tc.remediateLast {
			t.Errorf("%s: install %d, upgrade %d, remediateLastFailure %v; want %d, %d, %v",
				tc.name, install, upgrade, remediateLast, tc.install, tc.upgrade, tc.remediateLast)
		}
	}
}
