package engine

import (
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
)

// CreateRequest maps a declared NS instance to OSM's create-and-instantiate request. The KDU
// values go where OSM's LCM reads them: additionalParamsForVnf[].additionalParamsForKdu[]; the
// owner's marker goes where OSM keeps it in the record: additionalParamsForNs.
func CreateRequest(ns gitops.NsInstance, nsdID, vimAccountID string, owner Owner) osm.NSInstanceCreate {
	return osm.NSInstanceCreate{
		Name:                  ns.Name,
		NsdID:                 nsdID,
		VIMAccountID:          vimAccountID,
		Description:           ns.Description,
		AdditionalParamsForNs: map[string]any{OwnerParam: owner.Marker()},
		AdditionalParamsForVnf: []osm.VnfParams{{
			MemberVnfIndex: ns.VnfName,
			AdditionalParamsForKdu: []osm.KDUParams{{
				KDUName:          ns.KDU.Name,
				AdditionalParams: ns.KDU.Params,
			}},
		}},
	}
}

// UpgradeRequest maps a declared NS instance to OSM's KDU upgrade action (the client sends
// `primitive_params: {}` when there are no values: OSM refuses null).
func UpgradeRequest(ns gitops.NsInstance) osm.KDUUpgrade {
	return osm.KDUUpgrade{MemberVnfIndex: ns.VnfName, KDUName: ns.KDU.Name, Params: ns.KDU.Params}
}
