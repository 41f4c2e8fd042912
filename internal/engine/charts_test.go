package engine

import (
	"testing"

	"github.com/osmops/osmops/internal/osm"
)

// An upgrade names the chart a KDU runs with its version: OSM's LCM would install the newest
// chart of the repository for a chart named without one. The version comes from the chart
// labels of the release that OSM reports, when the chart named none.
func TestRunningChartNamesTheVersionTheReleaseRuns(t *testing.T) {
	record := func(model string, charts ...string) osm.NSInstance {
		ns := osm.NSInstance{ID: "ns-1"}
		ns.Admin.Deployed.K8s = []osm.DeployedKDU{{MemberVnfIndex: "openldap", KDUName: "ldap", KDUModel: model, Charts: charts}}
		return ns
	}
	for _, test := range []struct {
		name, recordModel, upgradedModel string
		charts                           []string
		want                             string
	}{
		{"a chart named with a version", "stable/openldap:1.2.7", "", []string{"openldap-1.2.7"}, "stable/openldap:1.2.7"},
		{"a chart named without a version", "stable/openldap", "", []string{"openldap-1.2.8"}, "stable/openldap:1.2.8"},
		{"an upgrade since named a version", "stable/openldap", "stable/openldap:1.2.7", []string{"openldap-1.2.7"}, "stable/openldap:1.2.7"},
		{"no label: nothing to name", "stable/openldap", "", nil, "stable/openldap"},
		{"labels of two versions: nothing to name", "stable/openldap", "", []string{"openldap-1.2.7", "openldap-1.2.8"}, "stable/openldap"},
		{"a chart of the package is not resolved", "openldap/charts/openldap", "", []string{"openldap-1.2.8"}, "openldap/charts/openldap"},
	} {
		t.Run(test.name, func(t *testing.T) {
			o := newObserved(nil, nil, nil, []osm.NSInstance{record(test.recordModel, test.charts...)})
			if test.upgradedModel != "" {
				vnf := osm.VNFInstance{NSInstanceID: "ns-1", MemberVnfIndex: "openldap", KDURecords: []osm.KDURecord{{KDUName: "ldap", HelmChart: test.upgradedModel}}}
				if err := o.setVNFRecords([]osm.VNFInstance{vnf}, nil); err != nil {
					t.Fatal(err)
				}
			}
			if got := runningChart(o, "ns-1", "openldap", "ldap"); got != test.want {
				t.Errorf("runningChart = %q, want %q", got, test.want)
			}
		})
	}
}
