package engine

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/kduoptions"
	"github.com/osmops/osmops/internal/osm"
)

// failures is an inventory entry with remediation counts.
func failures(e InstanceRecord, install, upgrade int32, rolledBack bool, reason string) InstanceRecord {
	e.InstallFailures, e.UpgradeFailures, e.RolledBack, e.Reason = install, upgrade, rolledBack, reason
	return e
}

// broken is an NS instance whose instantiation failed.
func broken(id, name string) osm.NSInstance {
	ns := running(id, name)
	ns.NSState = "BROKEN"
	return ns
}

func TestComputeRemediation(t *testing.T) {
	ldap := declared("ldap", "2")
	digest := ldap.Digest()
	const (
		F, P, X = InstanceFailed, InstanceProgressing, InstanceReplacing
		retry1  = "remediation 1/2: upgrading KDU ldap of VNF openldap again after its upgrade failed"
		retry2  = "remediation 2/2: upgrading KDU ldap of VNF openldap again after its upgrade failed"
		back    = "remediation: upgrade of KDU ldap of VNF openldap failed 3 time(s): putting it back to the values and chart it last ran successfully"
	)
	upgrades := Remediation{UpgradeRetries: 2, RemediateLastUpgradeFailure: true}
	installs := Remediation{InstallRetries: 2}
	failedUpgrade := observedWith([]osm.NSInstance{running("ns-1", "ldap")}, map[string]string{"ns-1": `{"replicaCount": "1"}`})
	tests := []struct {
		name        string
		remediation Remediation
		observed    *Observed
		inventory   InstanceRecord
		want        summary
	}{
		{
			name: "without remediation a failed upgrade is not sent again", observed: failedUpgrade,
			inventory: failures(entry("ldap", "ns-1", digest, F), 0, 1, false, ""),
			want:      summary{Inventory: []InstanceRecord{failures(entry("ldap", "ns-1", digest, F), 0, 1, false, "")}},
		},
		{
			name: "a failed upgrade is sent again while retries are left", remediation: upgrades, observed: failedUpgrade,
			inventory: failures(entry("ldap", "ns-1", digest, F), 0, 1, false, ""),
			want: summary{Upgrades: []string{"ldap@ns-1: " + retry1},
				Inventory: []InstanceRecord{failures(entry("ldap", "ns-1", digest, P), 0, 1, false, retry1)}},
		},
		{
			name: "the last retry", remediation: upgrades, observed: failedUpgrade,
			inventory: failures(entry("ldap", "ns-1", digest, F), 0, 2, false, retry1),
			want: summary{Upgrades: []string{"ldap@ns-1: " + retry2},
				Inventory: []InstanceRecord{failures(entry("ldap", "ns-1", digest, P), 0, 2, false, retry2)}},
		},
		{
			name: "retries spent, the KDU is put back once", remediation: upgrades, observed: failedUpgrade,
			inventory: failures(entry("ldap", "ns-1", digest, F), 0, 3, false, retry2),
			want: summary{Upgrades: []string{"ldap@ns-1: " + back},
				Inventory: []InstanceRecord{failures(entry("ldap", "ns-1", digest, P), 0, 3, true, back)}},
		},
		{
			name: "put back, nothing more is sent", remediation: upgrades, observed: failedUpgrade,
			inventory: failures(entry("ldap", "ns-1", digest, F), 0, 3, true, back),
			want:      summary{Inventory: []InstanceRecord{failures(entry("ldap", "ns-1", digest, F), 0, 3, true, "")}},
		},
		{
			name: "retries spent without remediateLastFailure, nothing more is sent", remediation: Remediation{UpgradeRetries: 2}, observed: failedUpgrade,
			inventory: failures(entry("ldap", "ns-1", digest, F), 0, 3, false, retry2),
			want:      summary{Inventory: []InstanceRecord{failures(entry("ldap", "ns-1", digest, F), 0, 3, false, "")}},
		},
		{
			name: "a new declaration starts without failures", remediation: upgrades, observed: failedUpgrade,
			inventory: failures(entry("ldap", "ns-1", "sha256:old", F), 0, 3, true, back),
			want: summary{Upgrades: []string{"ldap@ns-1: KDU ldap of VNF openldap: values changed in Git"},
				Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, P)}},
		},
		{
			name: "a failed instantiation is terminated to be created again", remediation: installs,
			observed:  observedWith([]osm.NSInstance{broken("ns-1", "ldap")}, nil),
			inventory: failures(entry("ldap", "ns-1", digest, F), 1, 0, false, ""),
			want: summary{Deletes: []string{"ldap@ns-1"},
				Inventory: []InstanceRecord{failures(entry("ldap", "ns-1", digest, X), 1, 0, false,
					"remediation 1/2: its instantiation failed: terminating it to create it again")}},
		},
		{
			name: "the terminated instance is created again, its failures kept", remediation: installs,
			observed:  observedWith(nil, nil),
			inventory: failures(entry("ldap", "", digest, X), 1, 0, false, "remediation 1/2: its instantiation failed: terminating it to create it again"),
			want: summary{Creates: []string{"ldap: replacing it (remediation 1/2: its instantiation failed: terminating it to create it again): the old instance is gone"},
				Inventory: []InstanceRecord{failures(entry("ldap", "", digest, X), 1, 0, false,
					"remediation 1/2: its instantiation failed: terminating it to create it again")}},
		},
		{
			name: "retries spent, a broken instance stays", remediation: installs,
			observed:  observedWith([]osm.NSInstance{broken("ns-1", "ldap")}, nil),
			inventory: failures(entry("ldap", "ns-1", digest, F), 3, 0, false, ""),
			want:      summary{Inventory: []InstanceRecord{failures(entry("ldap", "ns-1", digest, F), 3, 0, false, "")}},
		},
		{
			name:      "without remediation a broken instance stays",
			observed:  observedWith([]osm.NSInstance{broken("ns-1", "ldap")}, nil),
			inventory: failures(entry("ldap", "ns-1", digest, F), 1, 0, false, ""),
			want:      summary{Inventory: []InstanceRecord{failures(entry("ldap", "ns-1", digest, F), 1, 0, false, "")}},
		},
		{
			name: "an instance no failure of which was counted here is never recreated (adopted)", remediation: installs,
			observed:  observedWith([]osm.NSInstance{broken("ns-1", "ldap")}, nil),
			inventory: entry("ldap", "ns-1", digest, F),
			want:      summary{Inventory: []InstanceRecord{entry("ldap", "ns-1", digest, F)}},
		},
		{
			name: "a remediation waits for what OSM runs on the instance", remediation: installs,
			observed:  queued(observedWith([]osm.NSInstance{broken("ns-1", "ldap")}, nil), "ns-1"),
			inventory: failures(entry("ldap", "ns-1", digest, F), 1, 0, false, ""),
			want:      summary{Inventory: []InstanceRecord{failures(entry("ldap", "ns-1", digest, P), 1, 0, false, reasonBusy)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Compute(Input{
				Revision: &gitops.Revision{NsInstances: []gitops.NsInstance{ldap}}, Observed: tt.observed,
				Inventory: Inventory{NsInstances: []InstanceRecord{tt.inventory}},
				Owner:     self, LiveOwners: liveOwners, Remediation: tt.remediation,
			})
			if diff := cmp.Diff(tt.want, summarise(plan)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeRollbackRequest: the KDU is put back with the values its release last ran, alone
// (kdu_reset_values), and the chart it last ran; the operation is marked as a rollback.
func TestComputeRollbackRequest(t *testing.T) {
	ldap := declared("ldap", "2")
	observed := observedWith([]osm.NSInstance{running("ns-1", "ldap")}, nil)
	vnf := osm.VNFInstance{NSInstanceID: "ns-1", MemberVnfIndex: "openldap", KDURecords: []osm.KDURecord{
		{KDUName: "ldap", AdditionalParams: `{"replicaCount": "1", "big": 12345}`, HelmChart: "bitnami/openldap:1.2.7"}}}
	if err := observed.setVNFRecords([]osm.VNFInstance{vnf}, nil); err != nil {
		t.Fatal(err)
	}
	plan := Compute(Input{
		Revision: &gitops.Revision{NsInstances: []gitops.NsInstance{ldap}}, Observed: observed, Owner: self,
		Inventory:   Inventory{NsInstances: []InstanceRecord{failures(entry("ldap", "ns-1", ldap.Digest(), InstanceFailed), 0, 1, false, "")}},
		Remediation: Remediation{RemediateLastUpgradeFailure: true},
	})
	if len(plan.Upgrades) != 1 {
		t.Fatalf("upgrades: %+v", plan.Upgrades)
	}
	action := plan.Upgrades[0]
	request := UpgradeRequest(action.Member, action.KDU, action.Chart)
	sent, _ := json.Marshal(request.Params)
	if want := `{"big":12345,"kdu_reset_values":"true","replicaCount":"1"}`; string(sent) != want || request.Model != "bitnami/openldap:1.2.7" {
		t.Errorf("rollback sends %s with chart %q; want %s with bitnami/openldap:1.2.7", sent, request.Model, want)
	}
	if !action.Rollback || !action.Remediation || action.MoreUpgrades {
		t.Errorf("rollback action: %+v", action)
	}
	if _, reserved := ldap.KDU.Params[kduoptions.ResetValues]; reserved {
		t.Errorf("the declaration was changed: %v", ldap.KDU.Params)
	}
}

func TestCountFailure(t *testing.T) {
	op := func(kind string, rollback bool) OperationRecord {
		return OperationRecord{Type: kind, Rollback: rollback}
	}
	start := InstanceRecord{InstallFailures: 1, UpgradeFailures: 2, RolledBack: true}
	for _, tc := range []struct {
		name    string
		outcome Outcome
		want    InstanceRecord
	}{
		{"a failed instantiation counts", Outcome{Operation: op(osm.OperationTypeInstantiate, false), Failed: true},
			InstanceRecord{InstallFailures: 2, UpgradeFailures: 2, RolledBack: true}},
		{"a failed upgrade counts", Outcome{Operation: op(osm.OperationTypeAction, false), Failed: true, TimedOut: true},
			InstanceRecord{InstallFailures: 1, UpgradeFailures: 3, RolledBack: true}},
		{"a failed rollback does not", Outcome{Operation: op(osm.OperationTypeAction, true), Failed: true}, start},
		{"a completed rollback does not clear", Outcome{Operation: op(osm.OperationTypeAction, true)}, start},
		{"a terminate (of a recreate) does not clear", Outcome{Operation: op(osm.OperationTypeTerminate, false)}, start},
		{"a failed terminate does not count", Outcome{Operation: op(osm.OperationTypeTerminate, false), Failed: true}, start},
		{"a completed upgrade clears", Outcome{Operation: op(osm.OperationTypeAction, false)}, InstanceRecord{}},
		{"a completed instantiation clears", Outcome{Operation: op(osm.OperationTypeInstantiate, false)}, InstanceRecord{}},
	} {
		got := start
		Remediation{InstallRetries: 1}.CountFailure(&got, tc.outcome)
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	bounded := InstanceRecord{UpgradeFailures: maxFailures}
	Remediation{UpgradeRetries: 1}.CountFailure(&bounded, Outcome{Operation: op(osm.OperationTypeAction, false), Failed: true})
	if bounded.UpgradeFailures != maxFailures {
		t.Errorf("failures past the bound: %d", bounded.UpgradeFailures)
	}
	unset := InstanceRecord{}
	Remediation{}.CountFailure(&unset, Outcome{Operation: op(osm.OperationTypeAction, false), Failed: true})
	if unset != (InstanceRecord{}) {
		t.Errorf("counted without remediation: %+v", unset)
	}
}

func TestRemediationPendingAndExhausted(t *testing.T) {
	failed := func(install, upgrade int32, rolledBack bool) InstanceRecord {
		return InstanceRecord{State: InstanceFailed, InstallFailures: install, UpgradeFailures: upgrade, RolledBack: rolledBack}
	}
	for _, tc := range []struct {
		name               string
		r                  Remediation
		e                  InstanceRecord
		pending, exhausted bool
	}{
		{"none configured", Remediation{}, failed(1, 1, false), false, false},
		{"an upgrade retry left", Remediation{UpgradeRetries: 1}, failed(0, 1, false), true, false},
		{"upgrade retries spent", Remediation{UpgradeRetries: 1}, failed(0, 2, false), false, true},
		{"the rollback left", Remediation{UpgradeRetries: 1, RemediateLastUpgradeFailure: true}, failed(0, 2, false), true, false},
		{"rolled back", Remediation{UpgradeRetries: 1, RemediateLastUpgradeFailure: true}, failed(0, 2, true), false, true},
		{"an install retry left", Remediation{InstallRetries: 2}, failed(2, 0, false), true, false},
		{"install retries spent", Remediation{InstallRetries: 2}, failed(3, 0, false), false, true},
		{"not failed", Remediation{InstallRetries: 2}, InstanceRecord{State: InstanceReady, InstallFailures: 3}, false, false},
	} {
		if pending, exhausted := tc.r.Pending(tc.e), tc.r.Exhausted(tc.e); pending != tc.pending || exhausted != tc.exhausted {
			t.Errorf("%s: pending %v, exhausted %v; want %v, %v", tc.name, pending, exhausted, tc.pending, tc.exhausted)
		}
	}
}
