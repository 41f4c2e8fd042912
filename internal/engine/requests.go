package engine

import (
	"maps"
	"time"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
)

// CreateRequest maps a declared NS instance to OSM's create-and-instantiate request. The KDU
// values and charts go where OSM's LCM reads them, all in one additionalParamsForVnf; the NS
// parameters and the owner's marker go where OSM keeps them in the record: additionalParamsForNs.
// A KDU or VNF item that would hold its name alone is left out: OSM's schema refuses it
// (minProperties 2), and OSM runs every KDU of every VNF of the NSD anyway.
func CreateRequest(ns gitops.NsInstance, nsdID, vimAccountID string, owner Owner) osm.NSInstanceCreate {
	nsParams := maps.Clone(ns.Params)
	if nsParams == nil {
		nsParams = map[string]any{}
	}
	nsParams[OwnerParam] = owner.Marker()
	create := osm.NSInstanceCreate{
		Name:                  ns.Name,
		NsdID:                 nsdID,
		VIMAccountID:          vimAccountID,
		Description:           ns.Description,
		AdditionalParamsForNs: nsParams,
		K8sNamespace:          ns.K8sNamespace,
		TimeoutNsDeploy:       int64(ns.DeployTimeout / time.Second),
	}
	for _, vnf := range ns.Members() {
		item := osm.VnfParams{MemberVnfIndex: vnf.MemberVnfIndex, AdditionalParams: vnf.Params, K8sNamespace: vnf.K8sNamespace}
		for _, kdu := range vnf.KDUs {
			if len(kdu.Params) == 0 && kdu.Model == "" && kdu.K8sNamespace == "" {
				continue
			}
			item.AdditionalParamsForKdu = append(item.AdditionalParamsForKdu, osm.KDUParams{
				KDUName: kdu.Name, AdditionalParams: kdu.Params, KDUModel: kdu.Model, K8sNamespace: kdu.K8sNamespace,
			})
		}
		if len(item.AdditionalParams) > 0 || item.K8sNamespace != "" || len(item.AdditionalParamsForKdu) > 0 {
			create.AdditionalParamsForVnf = append(create.AdditionalParamsForVnf, item)
		}
	}
	return create
}

// UpgradeRequest maps a declared KDU of VNF member to OSM's KDU upgrade action (the client
// sends `primitive_params: {}` when there are no values: OSM refuses null). chart is the
// kdu_model it names (NsAction.Chart): an upgrade without one makes LCM drop the deployed
// chart's version and install the newest chart of the repository.
func UpgradeRequest(member string, kdu gitops.KDU, chart string) osm.KDUUpgrade {
	return osm.KDUUpgrade{MemberVnfIndex: member, KDUName: kdu.Name, Params: kdu.Params, Model: chart}
}
