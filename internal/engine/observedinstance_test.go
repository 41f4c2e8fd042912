package engine

import (
	"testing"

	"github.com/osmops/osmops/internal/osm"
)

// The record of each instance answers as the observation's tables do: by member-vnf-index
// and KDU name, the last of duplicates counting, nothing for an instance without VNF records
// or not observed; and the instances of one name are linked in OSM's order.
func TestObservedRecordsAnswerAsTheTables(t *testing.T) {
	kdu := func(name, values, chart, namespace string) osm.KDURecord {
		return osm.KDURecord{KDUName: name, AdditionalParams: osm.LooseString(values), HelmChart: chart, K8sNamespace: namespace}
	}
	instances := []osm.NSInstance{running("ns-1", "a"), unmarked("ns-2", "a"), running("ns-3", "b"), running("ns-1", "a")}
	vnfs := []osm.VNFInstance{
		{NSInstanceID: "ns-1", MemberVnfIndex: "amf", AdditionalParamsForVnf: map[string]osm.LooseString{"x": "1"},
			KDURecords: []osm.KDURecord{kdu("amf", `{"r":1}`, "free5gc/amf:1", "core"), kdu("amf", `{"r":2}`, "free5gc/amf:2", "core2")}},
		{NSInstanceID: "ns-2", MemberVnfIndex: "upf", KDURecords: []osm.KDURecord{kdu("upf", `{}`, "free5gc/upf", "")}},
		{NSInstanceID: "ns-1", MemberVnfIndex: "smf", KDURecords: []osm.KDURecord{kdu("smf", `{"s":"x"}`, "free5gc/smf", "core")}},
		// A second record of member amf: the tables keep its KDUs alone.
		{NSInstanceID: "ns-1", MemberVnfIndex: "amf", KDURecords: []osm.KDURecord{kdu("metrics", `{"m":true}`, "prom/exporter", "mon")}},
	}
	o := newObserved(nil, nil, nil, instances)
	if err := o.setVNFRecords(vnfs, nil); err != nil {
		t.Fatal(err)
	}
	if got := instanceIDs([]*observedInstance{o.byName["a"], o.byName["a"].sameName}); len(got) != 2 || got[0] != "ns-1" || got[1] != "ns-2" || o.byName["a"].sameName.sameName != nil {
		t.Errorf("instances named a: %v, want [ns-1 ns-2] once each", got)
	}
	for _, id := range []string{"ns-1", "ns-2", "ns-3", "ns-4"} {
		r := o.instance(id)
		if r.record.ID != o.NSInstances[id].ID || (r.vnfs == nil) != (o.VNFParams[id] == nil) || len(r.vnfRecords) != len(o.VNFs[id]) {
			t.Errorf("%s: record %q with %d VNFs, want %q with %d", id, r.record.ID, len(r.vnfRecords), o.NSInstances[id].ID, len(o.VNFs[id]))
		}
		owner, marked := ownerOf(o.NSInstances[id])
		if r.owner != owner || r.marked != marked {
			t.Errorf("%s: owner %v %v, want %v %v", id, r.owner, r.marked, owner, marked)
		}
		for _, member := range []string{"amf", "upf", "smf", "none"} {
			vnf := r.vnf(member)
			params, found := o.VNFParams[id][member]
			if (vnf != nil) != found || vnf != nil && len(vnf.params) != len(params) {
				t.Errorf("%s %s: VNF record %v, want params %v (found %v)", id, member, vnf, params, found)
			}
			for _, name := range []string{"amf", "metrics", "upf", "smf", "none"} {
				got, found := r.kdu(member, name)
				values, wantFound := o.KDUValues[id][member][name]
				want := observedKDU{name: name, values: values, model: o.KDUModels[id][member][name], namespace: o.KDUNamespaces[id][member][name]}
				if found != wantFound || found && got != want {
					t.Errorf("%s %s %s: %+v (found %v), want %+v (found %v)", id, member, name, got, found, want, wantFound)
				}
			}
		}
	}
}
