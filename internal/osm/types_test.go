package osm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// decodeSample decodes a sample answer of a real NBI.
func decodeSample[T any](t *testing.T, name string) T {
	t.Helper()
	var decoded T
	if err := json.Unmarshal([]byte(readSample(t, name)), &decoded); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return decoded
}

const projectID = "e04b57da-db53-4a19-8850-7f0d29ff3439"

func TestDecodeSamples(t *testing.T) {
	ignoreUnread := cmpopts.IgnoreFields(DescriptorAdmin{}, "Created", "Modified")
	tests := []struct {
		name string
		got  func(t *testing.T) any
		want any
	}{
		{"vim_list.json", func(t *testing.T) any { return decodeSample[[]VIMAccount](t, "vim_list.json") },
			[]VIMAccount{{ID: "045f0536-9ce1-4736-b4e8-ef9dff5db237", Name: "vim1", VIMType: "dummy", Description: "dummy vim",
				Admin: VIMAccountAdmin{OperationalState: "PROCESSING"}}}},
		{"nsd_list.json", func(t *testing.T) any { return decodeSample[[]NSDescriptor](t, "nsd_list.json") },
			[]NSDescriptor{{ID: "0b5ae4d6-51a3-4e18-b7df-868c115dcb17", DescriptorID: "tiny_nsd", Name: "tiny_nsd", Version: "1.0",
				VnfdIDs:            []string{"tiny_vnfd"},
				DeploymentFlavours: []NSDeploymentFlavour{{ID: "default-df", VnfProfiles: []NSVnfProfile{{ID: "1", VnfdID: "tiny_vnfd"}}}},
				Admin:              DescriptorAdmin{OnboardingState: "ONBOARDED", OperationalState: "ENABLED", UsageState: "NOT_IN_USE", Revision: 1, UserDefinedData: map[string]LooseString{}}}}},
		{"vnfpkg_list.json", func(t *testing.T) any { return decodeSample[[]VNFDescriptor](t, "vnfpkg_list.json") },
			[]VNFDescriptor{{ID: "f6dc8e2a-2d75-4875-a3ee-8a889e46b559", DescriptorID: "tiny_vnfd", ProductName: "tiny_vnf", Version: "1.0",
				Admin: DescriptorAdmin{OnboardingState: "ONBOARDED", OperationalState: "ENABLED", UsageState: "NOT_IN_USE", Revision: 1, UserDefinedData: map[string]LooseString{}}}}},
		{"ns_create.json", func(t *testing.T) any { return decodeSample[NSInstanceCreated](t, "ns_create.json") },
			NSInstanceCreated{ID: "f6f4f053-913b-4a6f-9eb1-e4b71474e5c7", OperationID: "6111ff50-b2e2-426a-b39b-ecad697ca026"}},
		{"ns_instance_knf.json", func(t *testing.T) any { return decodeSample[NSInstance](t, "ns_instance_knf.json") },
			NSInstance{ID: "a3388065-f2be-4160-994c-b1488d644163", Name: "ldap", Description: "Demo LDAP",
				NSState: NSStateNotInstantiated, CurrentOperation: "IDLE", DetailedStatus: "scheduled",
				OperationalStatus: "init", ConfigStatus: "init",
				NsdID: "cb282793-b1d5-4338-8025-4ee7d3e27d06", NsdRef: "openldap_ns",
				InstantiateParams: NSInstantiateParams{NSName: "ldap", NsdID: "cb282793-b1d5-4338-8025-4ee7d3e27d06",
					VIMAccountID: "045f0536-9ce1-4736-b4e8-ef9dff5db237", NSDescription: "Demo LDAP"},
				VNFInstanceIDs: []string{"24087ffb-869b-467d-a747-1f493a1882d9"},
				CreateTime:     1795346053.1475112,
				Admin:          NSInstanceAdmin{NSState: NSStateNotInstantiated, ProjectsRead: []string{"e04b57da-db53-4a19-8850-7f0d29ff3439"}}}},
		{"vnf_instances_knf.json", func(t *testing.T) any { return decodeSample[[]VNFInstance](t, "vnf_instances_knf.json") },
			[]VNFInstance{{ID: "24087ffb-869b-467d-a747-1f493a1882d9", NSInstanceID: "a3388065-f2be-4160-994c-b1488d644163",
				MemberVnfIndex: "openldap", VnfdRef: "openldap_knf", VnfdID: "4f6a88c3-043a-4d65-93d7-3c3bdd682f1b",
				VIMAccountID: "045f0536-9ce1-4736-b4e8-ef9dff5db237",
				KDURecords: []KDURecord{{KDUName: "ldap", HelmChart: "stable/openldap", AdditionalParams: `{"replicaCount": "2"}`,
					K8sNamespace: projectID, K8sCluster: KDURecordTarget{ID: "fbe86655-270e-4ac5-85fb-5cf35bc9cfbf"}}},
				Revision: 1}}},
		{"nslcmop_list.json", func(t *testing.T) any { return decodeSample[[]Operation](t, "nslcmop_list.json") },
			[]Operation{{ID: "6111ff50-b2e2-426a-b39b-ecad697ca026", OperationState: OperationProcessing, LCMOperationType: "instantiate",
				NSInstanceID: "f6f4f053-913b-4a6f-9eb1-e4b71474e5c7", StartTime: 1795345902.0311265, StatusEnteredTime: 1795345902.0311265,
				OperationParams: map[string]any{"nsName": "ns1", "nsdId": "0b5ae4d6-51a3-4e18-b7df-868c115dcb17",
					"vimAccountId": "045f0536-9ce1-4736-b4e8-ef9dff5db237", "nsDescription": "test",
					"nsr_id": "f6f4f053-913b-4a6f-9eb1-e4b71474e5c7", "lcmOperationType": "instantiate",
					"nsInstanceId": "f6f4f053-913b-4a6f-9eb1-e4b71474e5c7"}}}},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			if diff := cmp.Diff(test.want, test.got(t), ignoreUnread); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeTokenSample(t *testing.T) {
	answer := decodeSample[tokenAnswer](t, "token.json")
	want := tokenAnswer{ID: "F_A1FIbZHRZ4GKWjrmnIVvP2a-4myYThjpQm59QUi0I", Expires: 1795349499.214624, IssuedAt: 1795345899.214624,
		ProjectID: "e04b57da-db53-4a19-8850-7f0d29ff3439", UserID: "0aba4e09-2efe-4a61-ab85-4304b77961f9"}
	if diff := cmp.Diff(want, answer); diff != "" {
		t.Errorf("token (-want +got):\n%s", diff)
	}
}

func TestDecodeLooseFields(t *testing.T) {
	var instance NSInstance
	err := json.Unmarshal([]byte(`{
		"errorDetail": {"error": "boom", "code": 3},
		"errorDescription": 42,
		"detailed-status": ["a", "b"],
		"currentOperationID": null,
		"create-time": "1795346053.5",
		"_admin": {"deployed": {"K8s": [{"kdu-instance": "ldap-123", "kdu-name": "ldap", "member-vnf-index": "openldap",
			"kdu-model": "stable/openldap", "namespace": "ns", "k8scluster-uuid": "c1", "status": {"ready": true}}]}}
	}`), &instance)
	if err != nil {
		t.Fatal(err)
	}
	want := NSInstance{ErrorDetail: `{"error":"boom","code":3}`, ErrorDescription: "42", DetailedStatus: `["a","b"]`, CreateTime: 1795346053.5,
		Admin: NSInstanceAdmin{Deployed: NSInstanceDeployed{K8s: []DeployedKDU{{KDUInstance: "ldap-123", KDUName: "ldap",
			MemberVnfIndex: "openldap", KDUModel: "stable/openldap", Namespace: "ns", K8sClusterID: "c1", Status: `{"ready":true}`}}}}}
	if diff := cmp.Diff(want, instance); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"create-time": "soon"}`), &instance); err == nil {
		t.Error("a time that is not a number decoded")
	}
}

func TestOperationDetailedStatusSpellings(t *testing.T) {
	tests := []struct {
		body string
		want LooseString
	}{
		{`{"detailedStatus": "camel"}`, "camel"},
		{`{"detailed-status": "dashed"}`, "dashed"},
		{`{"detailedStatus": null, "detailed-status": {"step": 2}}`, `{"step":2}`},
		{`{"detailedStatus": "camel", "detailed-status": "dashed"}`, "camel"},
	}
	for _, test := range tests {
		var operation Operation
		if err := json.Unmarshal([]byte(test.body), &operation); err != nil {
			t.Fatalf("%s: %v", test.body, err)
		}
		if operation.DetailedStatus != test.want {
			t.Errorf("%s: DetailedStatus %q, want %q", test.body, operation.DetailedStatus, test.want)
		}
	}
}

func TestOperationStates(t *testing.T) {
	tests := []struct {
		state           string
		done, succeeded bool
	}{
		{OperationProcessing, false, false},
		{OperationRollingBack, false, false},
		{OperationCompleted, true, true},
		{OperationPartiallyCompleted, true, false},
		{OperationFailedTemp, true, false},
		{OperationFailed, true, false},
		{OperationRolledBack, true, false},
		{"", false, false},
	}
	for _, test := range tests {
		operation := Operation{OperationState: test.state}
		if operation.Done() != test.done || operation.Succeeded() != test.succeeded {
			t.Errorf("%q: Done %v Succeeded %v, want %v %v", test.state, operation.Done(), operation.Succeeded(), test.done, test.succeeded)
		}
	}
}

func TestOperationTimes(t *testing.T) {
	operation := decodeSample[[]Operation](t, "nslcmop_list.json")[0]
	want := time.Date(2026, 11, 22, 11, 11, 42, 31126499, time.UTC)
	if got := operation.StartedAt(); got.Sub(want).Abs() > time.Microsecond {
		t.Errorf("StartedAt %v, want %v", got, want)
	}
	if got := operation.StatusEnteredAt(); got.Sub(want).Abs() > time.Microsecond {
		t.Errorf("StatusEnteredAt %v, want %v", got, want)
	}
	if !(Operation{}).StartedAt().IsZero() {
		t.Error("no start time is not the zero time")
	}
}

func TestKDURecordParams(t *testing.T) {
	tests := []struct {
		name    string
		params  LooseString
		want    map[string]any
		wantErr bool
	}{
		{"sample JSON string", decodeSample[[]VNFInstance](t, "vnf_instances_knf.json")[0].KDURecords[0].AdditionalParams,
			map[string]any{"replicaCount": "2"}, false},
		{"nested values", `{"a": {"b": [1, 2]}}`, map[string]any{"a": map[string]any{"b": []any{1.0, 2.0}}}, false},
		{"none", "", nil, false},
		{"not an object", `[1]`, nil, true},
		{"not JSON", `replicaCount: 2`, nil, true},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			got, err := KDURecord{KDUName: "ldap", AdditionalParams: test.params}.Params()
			if (err != nil) != test.wantErr {
				t.Fatalf("error %v, want error %v", err, test.wantErr)
			}
			if diff := cmp.Diff(test.want, got); diff != "" {
				t.Errorf("params (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKDURecordParamsFromAnObject(t *testing.T) {
	var record KDURecord
	if err := json.Unmarshal([]byte(`{"kdu-name": "ldap", "additionalParams": {"replicaCount": "3"}}`), &record); err != nil {
		t.Fatal(err)
	}
	params, err := record.Params()
	if err != nil || params["replicaCount"] != "3" {
		t.Errorf("Params() = %v, %v", params, err)
	}
}

// A nested value the NBI kept as "!!yaml <text>" is read as LCM gives it to Helm.
func TestKDURecordParamsReadsYAMLValues(t *testing.T) {
	record := KDURecord{KDUName: "admin", AdditionalParams: `{"service": "!!yaml type: ClusterIP\nports: [80, 443]\n", "replicaCount": "1"}`}
	got, err := record.Params()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"service": map[string]any{"type": "ClusterIP", "ports": []any{float64(80), float64(443)}}, "replicaCount": "1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	if _, err := (KDURecord{KDUName: "admin", AdditionalParams: `{"a": "!!yaml [1"}`}).Params(); err == nil || !strings.Contains(err.Error(), `value "a" is not YAML`) {
		t.Errorf("error = %v", err)
	}
}

// OSM reports the chart version a release runs only in the labels of its objects, inside the
// Python repr of "helm status" that LCM writes as the detailed-status of _admin.deployed.K8s[]
// (measured on OSM 19's LCM). Only those labels are kept, never the values beside them.
func TestReleaseChartsReadsTheChartLabelsOfTheDetailedStatus(t *testing.T) {
	var deployed DeployedKDU
	record := `{"kdu-name": "ldap", "detailed-status": "{'config': {'adminPassword': 's3cret'}, 'manifest': [` +
		`{'metadata': {'labels': {'helm.sh/chart': 'openldap-1.2.7'}}}, {'metadata': {'labels': {'helm.sh/chart': 'openldap-1.2.7'}}}, ` +
		`{'metadata': {'labels': {'helm.sh/chart': 'openldap-exporter-0.3.0'}}}], 'version': 2}"}`
	if err := json.Unmarshal([]byte(record), &deployed); err != nil {
		t.Fatal(err)
	}
	if got, want := []string(deployed.Charts), []string{"openldap-1.2.7", "openldap-exporter-0.3.0"}; !slices.Equal(got, want) {
		t.Errorf("charts %q, want %q", got, want)
	}
	for chart, want := range map[string]string{"openldap": "1.2.7", "openldap-exporter": "0.3.0", "phpldapadmin": ""} {
		if got := deployed.Charts.Version(chart); got != want {
			t.Errorf("version of %s = %q, want %q", chart, got, want)
		}
	}
	for _, other := range []string{`{"detailed-status": {"a": 1}}`, `{"detailed-status": null}`, `{"detailed-status": 3}`,
		`{"detailed-status": "{'manifest': [{'helm.sh/chart': 'openldap-1.2.7'}, {'helm.sh/chart': 'openldap-1.2.8'}]}"}`} {
		var d DeployedKDU
		if err := json.Unmarshal([]byte(other), &d); err != nil || d.Charts.Version("openldap") != "" {
			t.Errorf("%s: %v, version %q; want no version", other, err, d.Charts.Version("openldap"))
		}
	}
}

// A release's status keeps at most maxReleaseCharts labels, each of at most 128 characters,
// whatever the manifest holds.
func TestReleaseChartsKeepsAtMostItsBound(t *testing.T) {
	var manifest strings.Builder
	for i := range maxReleaseCharts + 4 {
		fmt.Fprintf(&manifest, "{'helm.sh/chart': 'sub%d-1.0.0'}, ", i)
	}
	manifest.WriteString("{'helm.sh/chart': '" + strings.Repeat("a", 129) + "-1.0.0'}")
	data, err := json.Marshal(map[string]string{"detailed-status": "{'manifest': [" + manifest.String() + "]}"})
	if err != nil {
		t.Fatal(err)
	}
	var deployed DeployedKDU
	if err := json.Unmarshal(data, &deployed); err != nil {
		t.Fatal(err)
	}
	if len(deployed.Charts) != maxReleaseCharts {
		t.Errorf("%d labels kept, want %d", len(deployed.Charts), maxReleaseCharts)
	}
	for _, label := range deployed.Charts {
		if len(label) > 128 {
			t.Errorf("a label of %d characters kept", len(label))
		}
	}
}
