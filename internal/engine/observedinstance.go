package engine

import (
	"slices"

	"github.com/osmops/osmops/internal/osm"
)

// observedInstance is what the observation holds of one NS instance, in one place: its record,
// its owner and what its VNF records say. A plan of 10,000 instances looked each up in a dozen
// tables keyed by _id (NSInstances, the owners, KDUValues, KDUModels, KDUNamespaces,
// VNFParams, VNFs), each lookup a cache miss; it now finds the instance once, by name
// (Observed.byName), and reads the rest next to it.
type observedInstance struct {
	record osm.NSInstance
	owner  Owner
	marked bool
	// nsParams are the NS parameters the instance was created with (additionalParamsForNs),
	// nil when there is none but the owner's marker: most instances, whose plan then reads
	// nothing more of them.
	nsParams map[string]osm.LooseString
	// sameName is the next observed instance of the same name, in OSM's order: names are not
	// unique in OSM.
	sameName *observedInstance
	// vnfRecords are the instance's VNF records, in OSM's order (its entry of Observed.VNFs);
	// vnfs what a plan reads of them. Both are nil when the VNF records were not observed, or
	// when OSM has none of the instance.
	vnfRecords []osm.VNFInstance
	vnfs       []observedVNF
}

// observedVNF is what a plan reads of one VNF record: its member-vnf-index, the VNF-level
// parameters it was created with (Observed.VNFParams) and its KDUs.
type observedVNF struct {
	member string
	params map[string]osm.LooseString
	kdus   []observedKDU
}

// observedKDU is one KDU of a VNF record: the values (JSON) and chart its Helm release runs
// (Observed.KDUValues, KDUModels) and its Kubernetes namespace (Observed.KDUNamespaces).
type observedKDU struct {
	name, values, model, namespace string
}

// addInstance records an NS instance that the observation has not seen before.
func (o *Observed) addInstance(ns osm.NSInstance) {
	o.records = append(o.records, observedInstance{record: ns})
	added := &o.records[len(o.records)-1] // o.records has the capacity of every instance: it never moves
	added.owner, added.marked = ownerOf(ns)
	if previous := len(o.records) - 2; previous >= 0 && added.marked && o.records[previous].owner == added.owner {
		// The same strings as the previous instance's owner, most often: a plan compares the
		// owner of each instance with its own, and reads them once.
		added.owner = o.records[previous].owner
	}
	params := ns.AdditionalParamsForNs
	if _, marker := params[OwnerParam]; len(params) > 1 || len(params) == 1 && !marker {
		added.nsParams = params
	}
	o.byID[ns.ID] = added
	first, seen := o.byName[ns.Name]
	if !seen {
		o.byName[ns.Name] = added
		return
	}
	for first.sameName != nil {
		first = first.sameName
	}
	first.sameName = added
}

// recordVNFs gives each instance's record what its VNF records hold, from the tables that
// setVNFRecords filled: the VNFs and KDUs of all the instances are laid out in two arrays, in
// the order of the instances.
func (o *Observed) recordVNFs() {
	vnfCount, kduCount := 0, 0
	for _, vnfs := range o.VNFs {
		vnfCount += len(vnfs)
		for _, vnf := range vnfs {
			kduCount += len(vnf.KDURecords)
		}
	}
	vnfs, kdus := make([]observedVNF, 0, vnfCount), make([]observedKDU, 0, kduCount)
	for i := range o.records {
		r := &o.records[i]
		id := r.record.ID
		r.vnfRecords = o.VNFs[id]
		firstVNF := len(vnfs)
		for _, vnf := range r.vnfRecords {
			firstKDU := len(kdus)
			for _, kdu := range vnf.KDURecords {
				member, name := vnf.MemberVnfIndex, kdu.KDUName
				kdus = append(kdus, observedKDU{name: name, values: o.KDUValues[id][member][name],
					model: o.KDUModels[id][member][name], namespace: o.KDUNamespaces[id][member][name]})
			}
			vnfs = append(vnfs, observedVNF{member: vnf.MemberVnfIndex, params: vnf.AdditionalParamsForVnf,
				kdus: kdus[firstKDU:len(kdus):len(kdus)]})
		}
		if len(vnfs) > firstVNF {
			r.vnfs = vnfs[firstVNF:len(vnfs):len(vnfs)]
		}
	}
}

// instance returns the record of the NS instance id; an empty one when it was not observed.
func (o *Observed) instance(id string) *observedInstance {
	if r, found := o.byID[id]; found {
		return r
	}
	return &observedInstance{}
}

// vnf returns the VNF record of member; nil when there is none. The last one counts, as in the
// tables keyed by member-vnf-index.
func (r *observedInstance) vnf(member string) *observedVNF {
	for i := len(r.vnfs) - 1; i >= 0; i-- {
		if r.vnfs[i].member == member {
			return &r.vnfs[i]
		}
	}
	return nil
}

// kdu returns the KDU name of the VNF record of member, and whether there is one.
func (r *observedInstance) kdu(member, name string) (observedKDU, bool) {
	if vnf := r.vnf(member); vnf != nil {
		return vnf.kdu(name)
	}
	return observedKDU{}, false
}

// kdu returns the KDU name of the VNF record, and whether there is one. The last one counts, as
// in the tables keyed by KDU name.
func (v *observedVNF) kdu(name string) (observedKDU, bool) {
	for _, kdu := range slices.Backward(v.kdus) {
		if kdu.name == name {
			return kdu, true
		}
	}
	return observedKDU{}, false
}
