package osm

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"

	"github.com/osmops/osmops/internal/kduoptions"
	"github.com/osmops/osmops/internal/osmpkg"
)

// NSInstanceCreate is the body of an NS instance creation (which also
// instantiates it).
type NSInstanceCreate struct {
	Name string `json:"nsName"`
	// NsdID is OSM's id (`_id`) of the NSD.
	NsdID string `json:"nsdId"`
	// VIMAccountID is OSM's id (`_id`) of the VIM account.
	VIMAccountID          string         `json:"vimAccountId"`
	Description           string         `json:"nsDescription,omitempty"`
	AdditionalParamsForNs map[string]any `json:"additionalParamsForNs,omitempty"`
	// AdditionalParamsForVnf carries the KDU values, per VNF.
	AdditionalParamsForVnf []VnfParams `json:"additionalParamsForVnf,omitempty"`
	// K8sNamespace is the namespace of the KDUs that name none (their VNF's, else OSM's
	// project id).
	K8sNamespace string `json:"k8s-namespace,omitempty"`
	// TimeoutNsDeploy bounds the instantiation, in seconds (LCM's default when 0).
	TimeoutNsDeploy int64 `json:"timeout_ns_deploy,omitempty"`
}

// VnfParams are the parameters of one VNF of an NS instance.
type VnfParams struct {
	// MemberVnfIndex is the NSD vnf-profile id of the VNF. The NBI does not
	// check it: a wrong one fails later inside OSM.
	MemberVnfIndex         string         `json:"member-vnf-index"`
	AdditionalParams       map[string]any `json:"additionalParams,omitempty"`
	K8sNamespace           string         `json:"k8s-namespace,omitempty"`
	AdditionalParamsForKdu []KDUParams    `json:"additionalParamsForKdu,omitempty"`
}

// KDUParams are the parameters of one KDU: AdditionalParams are its Helm values.
type KDUParams struct {
	// KDUName is the VNFD's KDU name. The NBI does not check it either.
	KDUName          string         `json:"kdu_name"`
	AdditionalParams map[string]any `json:"additionalParams,omitempty"`
	KDUModel         string         `json:"kdu_model,omitempty"`
	K8sNamespace     string         `json:"k8s-namespace,omitempty"`
}

// NSInstanceCreated is the answer to an NS instance creation.
type NSInstanceCreated struct {
	ID string `json:"id"`
	// OperationID is the instantiation's LCM operation.
	OperationID string `json:"nslcmop_id"`
}

// KDUUpgrade changes the Helm values of a KDU of an NS instance.
type KDUUpgrade struct {
	MemberVnfIndex string
	KDUName        string
	// Params are the new values, all of them: the KDU runs these and its chart's defaults.
	Params map[string]any
	// Model is the chart to run (kdu_model); "" runs the deployed one, without its version
	// (LCM's action()).
	Model string
}

// VNFPackageChange moves a VNF of an NS instance to the current revision of its VNF package:
// OSM's NS update of type CHANGE_VNFPKG.
type VNFPackageChange struct {
	// VNFInstanceID is the VNF record's _id.
	VNFInstanceID string
	// VnfdID is the _id of the VNF package: the one the VNF record names (vnfd-id), as the NBI
	// refuses any other.
	VnfdID string
}

// updateTypeChangeVNFPackage is the NS update that moves a VNF to its package's revision.
const updateTypeChangeVNFPackage = "CHANGE_VNFPKG"

// idAnswer is the NBI's answer to calls that create something.
type idAnswer struct {
	ID string `json:"id"`
}

// operationAnswer is the NBI's answer to calls that start an LCM operation.
type operationAnswer struct {
	ID string `json:"id"`
}

// deletionAnswer is the NBI's answer to the deletion of an NS instance: its _id is the
// operation's.
type deletionAnswer struct {
	ID string `json:"_id"`
}

// The request builders below are pure: they turn a call's arguments into a
// request, so that tests (and a simulator) can check them without a server.

func getRequest(route, path string, query url.Values) request {
	return request{method: http.MethodGet, route: route, path: path, query: query}
}

// jsonRequest makes a request whose body is the JSON of body.
func jsonRequest(method, route, path string, body any) (request, error) {
	encoded, err := json.Marshal(body)
	if err != nil {
		return request{}, fmt.Errorf("OSM NBI %s %s: cannot encode the body: %w", method, route, err)
	}
	return request{method: method, route: route, path: path, body: encoded, contentType: "application/json"}, nil
}

// withID fills the {id} of a route.
func withID(route, id string) string {
	return strings.Replace(route, "{id}", url.PathEscape(id), 1)
}

func versionRequest() request {
	req := getRequest("/version", "/version", nil)
	req.anonymous = true
	return req
}

func tokenRequest(credentials Credentials) request {
	body, _ := json.Marshal(map[string]string{
		"username":   credentials.Username,
		"password":   credentials.Password,
		"project_id": credentials.Project,
	})
	return request{method: http.MethodPost, route: "/admin/v1/tokens", path: "/admin/v1/tokens",
		body: body, contentType: "application/json", anonymous: true}
}

func userRequest(id string) request {
	const route = "/admin/v1/users/{id}"
	return getRequest(route, withID(route, id), nil)
}

func projectRequest(project string) request {
	const route = "/admin/v1/projects/{id}"
	return getRequest(route, withID(route, project), nil)
}

func listVIMAccountsRequest() request {
	return getRequest("/admin/v1/vim_accounts", "/admin/v1/vim_accounts", nil)
}

func listNSDescriptorsRequest() request {
	return getRequest("/nsd/v1/ns_descriptors", "/nsd/v1/ns_descriptors", nil)
}

func listVNFDescriptorsRequest() request {
	return getRequest("/vnfpkgm/v1/vnf_packages_content", "/vnfpkgm/v1/vnf_packages_content", nil)
}

func listNSInstancesRequest() request {
	return getRequest("/nslcm/v1/ns_instances_content", "/nslcm/v1/ns_instances_content", nil)
}

func listVNFInstancesRequest() request {
	return getRequest("/nslcm/v1/vnf_instances", "/nslcm/v1/vnf_instances", nil)
}

func completedOperationsRequest(operationType string) request {
	query := url.Values{"lcmOperationType": {operationType}, "operationState": {OperationCompleted}}
	return getRequest("/nslcm/v1/ns_lcm_op_occs", "/nslcm/v1/ns_lcm_op_occs", query)
}

// packageRoutesOfKind are the NBI routes of one kind of package.
type packageRoutesOfKind struct{ create, update, edit string }

// packageRoutes are the NBI routes of each kind of package.
var packageRoutes = map[osmpkg.Kind]packageRoutesOfKind{
	osmpkg.KindVNF: {
		create: "/vnfpkgm/v1/vnf_packages_content",
		update: "/vnfpkgm/v1/vnf_packages/{id}/package_content",
		edit:   "/vnfpkgm/v1/vnf_packages/{id}",
	},
	osmpkg.KindNS: {
		create: "/nsd/v1/ns_descriptors_content",
		update: "/nsd/v1/ns_descriptors/{id}/nsd_content",
		edit:   "/nsd/v1/ns_descriptors/{id}",
	},
}

func routesOf(kind osmpkg.Kind) (packageRoutesOfKind, error) {
	routes, known := packageRoutes[kind]
	if !known {
		return routes, fmt.Errorf("OSM NBI: unknown package kind %q", kind)
	}
	return routes, nil
}

// packageUpload sends a whole package tarball, for a creation or a full
// update (never the descriptor-only edit, which leaves the other files stale).
func packageUpload(method, route, path string, pkg *osmpkg.Package) request {
	header := http.Header{}
	header.Set("Content-Filename", pkg.Name+".tar.gz")
	header.Set("Content-File-MD5", pkg.MD5)
	return request{method: method, route: route, path: path, body: pkg.Tarball, contentType: "application/gzip", header: header}
}

// uploadRoutesOf returns the routes of a package to upload. One without its tarball (a bug:
// the controller's revision cache gives the uploads their bytes) is refused, never sent empty.
func uploadRoutesOf(pkg *osmpkg.Package) (packageRoutesOfKind, error) {
	if len(pkg.Tarball) == 0 {
		return packageRoutesOfKind{}, fmt.Errorf("OSM NBI: package %s has no content to upload", pkg.Name)
	}
	return routesOf(pkg.Descriptor.Kind)
}

func createPackageRequest(pkg *osmpkg.Package) (request, error) {
	routes, err := uploadRoutesOf(pkg)
	if err != nil {
		return request{}, err
	}
	return packageUpload(http.MethodPost, routes.create, routes.create, pkg), nil
}

func updatePackageRequest(id string, pkg *osmpkg.Package) (request, error) {
	routes, err := uploadRoutesOf(pkg)
	if err != nil {
		return request{}, err
	}
	return packageUpload(http.MethodPut, routes.update, withID(routes.update, id), pkg), nil
}

// packageUserDataRequest edits a package's _admin.userDefinedData only: the NBI merges the
// object into it (RFC 7396) and keeps the descriptor, its files and its revision.
func packageUserDataRequest(kind osmpkg.Kind, id string, data map[string]string) (request, error) {
	routes, err := routesOf(kind)
	if err != nil {
		return request{}, err
	}
	return jsonRequest(http.MethodPatch, routes.edit, withID(routes.edit, id), map[string]any{"userDefinedData": data})
}

func createNSInstanceRequest(create NSInstanceCreate) (request, error) {
	return jsonRequest(http.MethodPost, "/nslcm/v1/ns_instances_content", "/nslcm/v1/ns_instances_content", create)
}

func upgradeKDURequest(nsInstanceID string, upgrade KDUUpgrade) (request, error) {
	// LCM's default is Helm's --reuse-values, which merges the new values into the old ones:
	// a value removed from Git would stay. Reset makes the KDU run exactly the values sent.
	params := make(map[string]any, len(upgrade.Params)+1)
	maps.Copy(params, upgrade.Params)
	params[kduoptions.ResetValues] = "true"
	if upgrade.Model != "" {
		params[kduoptions.Model] = upgrade.Model
	}
	const route = "/nslcm/v1/ns_instances/{id}/action"
	return jsonRequest(http.MethodPost, route, withID(route, nsInstanceID), map[string]any{
		memberVnfIndexField:  upgrade.MemberVnfIndex,
		kduNameField:         upgrade.KDUName,
		primitiveField:       primitiveUpgrade,
		primitiveParamsField: params,
	})
}

// changeVNFPackageRequest sends no timeout_ns_update: LCM's own (its ns_update timeout) applies,
// and the NBI refuses one under 300 seconds.
func changeVNFPackageRequest(nsInstanceID string, change VNFPackageChange) (request, error) {
	const route = "/nslcm/v1/ns_instances/{id}/update"
	return jsonRequest(http.MethodPost, route, withID(route, nsInstanceID), map[string]any{
		"updateType": updateTypeChangeVNFPackage,
		"changeVnfPackageData": map[string]string{
			"vnfInstanceId": change.VNFInstanceID,
			"vnfdId":        change.VnfdID,
		},
	})
}

func deleteNSInstanceRequest(id string, force bool) request {
	const route = "/nslcm/v1/ns_instances_content/{id}"
	req := request{method: http.MethodDelete, route: route, path: withID(route, id)}
	if force {
		req.query = url.Values{"FORCE": {"True"}}
	}
	return req
}
