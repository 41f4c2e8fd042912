package nbisim

import (
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Route is one method and URL template the simulated NBI serves.
type Route struct {
	Method string
	// Path is the URL template with {name} for a path parameter, named as
	// in OSM's OpenAPI, e.g. /osm/nslcm/v1/ns_instances/{nsInstanceId}.
	Path string
}

// handler serves one route; it runs with the server's lock held.
type handler func(s *Server, c *call) (response, *nbiError)

type routeSpec struct {
	Route
	// public routes need no token (logging in, logging out by token id, the version).
	public bool
	handle handler
}

// withKind adapts a package handler to one package kind.
func withKind(kind *packageKind, h func(*Server, *call, *packageKind) (response, *nbiError)) handler {
	return func(s *Server, c *call) (response, *nbiError) { return h(s, c, kind) }
}

// withOperation adapts the NS operation handler to one operation type.
func withOperation(operation string) handler {
	return func(s *Server, c *call) (response, *nbiError) { return s.postOperation(c, operation) }
}

// nbiRoutes is the route table. Both forms of the package routes
// (vnf_packages and vnf_packages_content, ns_descriptors and
// ns_descriptors_content) reach the same records, as in the NBI.
var nbiRoutes = []routeSpec{
	{Route{http.MethodGet, "/osm/version"}, true, (*Server).getVersion},

	{Route{http.MethodPost, "/osm/admin/v1/tokens"}, true, (*Server).newToken},
	{Route{http.MethodDelete, "/osm/admin/v1/tokens"}, false, (*Server).deleteCurrentToken},
	{Route{http.MethodDelete, "/osm/admin/v1/tokens/{tokenId}"}, true, (*Server).deleteToken},

	{Route{http.MethodGet, "/osm/admin/v1/users"}, false, (*Server).listUsers},
	{Route{http.MethodPost, "/osm/admin/v1/users"}, false, (*Server).newUserAPI},
	{Route{http.MethodGet, "/osm/admin/v1/users/{userId}"}, false, (*Server).getUser},
	{Route{http.MethodDelete, "/osm/admin/v1/users/{userId}"}, false, (*Server).deleteUser},

	{Route{http.MethodGet, "/osm/admin/v1/projects"}, false, (*Server).listProjects},
	{Route{http.MethodGet, "/osm/admin/v1/projects/{projectId}"}, false, (*Server).getProject},

	{Route{http.MethodGet, "/osm/admin/v1/vim_accounts"}, false, (*Server).listVIMAccounts},
	{Route{http.MethodPost, "/osm/admin/v1/vim_accounts"}, false, (*Server).newVIMAccount},
	{Route{http.MethodGet, "/osm/admin/v1/vim_accounts/{vimAccountId}"}, false, (*Server).getVIMAccount},
	{Route{http.MethodGet, "/osm/admin/v1/k8sclusters"}, false, (*Server).listK8sClusters},
	{Route{http.MethodPost, "/osm/admin/v1/k8sclusters"}, false, (*Server).newK8sCluster},
	{Route{http.MethodGet, "/osm/admin/v1/k8sclusters/{k8sClusterId}"}, false, (*Server).getK8sCluster},

	{Route{http.MethodGet, "/osm/vnfpkgm/v1/vnf_packages_content"}, false, withKind(vnfPackages, (*Server).listPackages)},
	{Route{http.MethodPost, "/osm/vnfpkgm/v1/vnf_packages_content"}, false, withKind(vnfPackages, (*Server).uploadPackage)},
	{Route{http.MethodGet, "/osm/vnfpkgm/v1/vnf_packages_content/{packageContentId}"}, false, withKind(vnfPackages, (*Server).getPackage)},
	{Route{http.MethodDelete, "/osm/vnfpkgm/v1/vnf_packages_content/{packageContentId}"}, false, withKind(vnfPackages, (*Server).deletePackage)},
	{Route{http.MethodGet, "/osm/vnfpkgm/v1/vnf_packages"}, false, withKind(vnfPackages, (*Server).listPackages)},
	{Route{http.MethodGet, "/osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}"}, false, withKind(vnfPackages, (*Server).getPackage)},
	{Route{http.MethodPatch, "/osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}"}, false, withKind(vnfPackages, (*Server).editPackage)},
	{Route{http.MethodDelete, "/osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}"}, false, withKind(vnfPackages, (*Server).deletePackage)},
	{Route{http.MethodGet, "/osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}/package_content"}, false, withKind(vnfPackages, (*Server).getPackageContent)},
	{Route{http.MethodPut, "/osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}/package_content"}, false, withKind(vnfPackages, (*Server).updatePackage)},

	{Route{http.MethodGet, "/osm/nsd/v1/ns_descriptors_content"}, false, withKind(nsPackages, (*Server).listPackages)},
	{Route{http.MethodPost, "/osm/nsd/v1/ns_descriptors_content"}, false, withKind(nsPackages, (*Server).uploadPackage)},
	{Route{http.MethodGet, "/osm/nsd/v1/ns_descriptors_content/{nsdInfoId}"}, false, withKind(nsPackages, (*Server).getPackage)},
	{Route{http.MethodDelete, "/osm/nsd/v1/ns_descriptors_content/{nsdInfoId}"}, false, withKind(nsPackages, (*Server).deletePackage)},
	{Route{http.MethodGet, "/osm/nsd/v1/ns_descriptors"}, false, withKind(nsPackages, (*Server).listPackages)},
	{Route{http.MethodGet, "/osm/nsd/v1/ns_descriptors/{nsdInfoId}"}, false, withKind(nsPackages, (*Server).getPackage)},
	{Route{http.MethodPatch, "/osm/nsd/v1/ns_descriptors/{nsdInfoId}"}, false, withKind(nsPackages, (*Server).editPackage)},
	{Route{http.MethodDelete, "/osm/nsd/v1/ns_descriptors/{nsdInfoId}"}, false, withKind(nsPackages, (*Server).deletePackage)},
	{Route{http.MethodGet, "/osm/nsd/v1/ns_descriptors/{nsdInfoId}/nsd_content"}, false, withKind(nsPackages, (*Server).getPackageContent)},
	{Route{http.MethodPut, "/osm/nsd/v1/ns_descriptors/{nsdInfoId}/nsd_content"}, false, withKind(nsPackages, (*Server).updatePackage)},

	{Route{http.MethodGet, "/osm/nslcm/v1/ns_instances_content"}, false, (*Server).listNSInstances},
	{Route{http.MethodPost, "/osm/nslcm/v1/ns_instances_content"}, false, (*Server).createAndInstantiateNS},
	{Route{http.MethodGet, "/osm/nslcm/v1/ns_instances_content/{nsInstanceContentId}"}, false, (*Server).getNSInstance},
	{Route{http.MethodDelete, "/osm/nslcm/v1/ns_instances_content/{nsInstanceContentId}"}, false, (*Server).terminateAndDeleteNS},
	{Route{http.MethodGet, "/osm/nslcm/v1/ns_instances"}, false, (*Server).listNSInstances},
	{Route{http.MethodPost, "/osm/nslcm/v1/ns_instances"}, false, (*Server).createNS},
	{Route{http.MethodGet, "/osm/nslcm/v1/ns_instances/{nsInstanceId}"}, false, (*Server).getNSInstance},
	{Route{http.MethodDelete, "/osm/nslcm/v1/ns_instances/{nsInstanceId}"}, false, (*Server).deleteNS},
	{Route{http.MethodPost, "/osm/nslcm/v1/ns_instances/{nsInstanceId}/instantiate"}, false, withOperation(opInstantiate)},
	{Route{http.MethodPost, "/osm/nslcm/v1/ns_instances/{nsInstanceId}/terminate"}, false, withOperation(opTerminate)},
	{Route{http.MethodPost, "/osm/nslcm/v1/ns_instances/{nsInstanceId}/action"}, false, withOperation(opAction)},
	{Route{http.MethodPost, "/osm/nslcm/v1/ns_instances/{nsInstanceId}/scale"}, false, withOperation(opScale)},
	{Route{http.MethodPost, "/osm/nslcm/v1/ns_instances/{nsInstanceId}/update"}, false, withOperation(opUpdate)},
	{Route{http.MethodGet, "/osm/nslcm/v1/ns_lcm_op_occs"}, false, (*Server).listOperations},
	{Route{http.MethodGet, "/osm/nslcm/v1/ns_lcm_op_occs/{nsLcmOpOccId}"}, false, (*Server).getOperation},
	{Route{http.MethodGet, "/osm/nslcm/v1/vnf_instances"}, false, (*Server).listVNFInstances},
	{Route{http.MethodGet, "/osm/nslcm/v1/vnf_instances/{vnfInstanceId}"}, false, (*Server).getVNFInstance},
}

// The router is hand-written rather than http.ServeMux because the NBI
// answers unknown URLs and methods in its own JSON error format, with
// messages that name the offending URL item (osm_nbi/nbi.py,
// _check_valid_url_method), which needs the segment walk below.

type routeNode struct {
	literals map[string]*routeNode
	param    *routeNode
	methods  map[string]*routeSpec
}

var routeTree = sync.OnceValue(func() *routeNode {
	root := &routeNode{}
	for i := range nbiRoutes {
		node := root
		for _, segment := range splitPath(nbiRoutes[i].Path) {
			node = node.child(segment)
		}
		if node.methods == nil {
			node.methods = map[string]*routeSpec{}
		}
		node.methods[nbiRoutes[i].Method] = &nbiRoutes[i]
	}
	return root
})

func (n *routeNode) child(segment string) *routeNode {
	if strings.HasPrefix(segment, "{") {
		if n.param == nil {
			n.param = &routeNode{}
		}
		return n.param
	}
	if n.literals == nil {
		n.literals = map[string]*routeNode{}
	}
	if n.literals[segment] == nil {
		n.literals[segment] = &routeNode{}
	}
	return n.literals[segment]
}

func (n *routeNode) isLeaf() bool { return len(n.literals) == 0 && n.param == nil }

// splitPath returns the non-empty segments of a URL path.
func splitPath(path string) []string {
	return strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
}

// nbiMainTopics are the first URL items the NBI of release 19 knows.
var nbiMainTopics = []string{"admin", "vnfpkgm", "nsd", "nslcm", "pdu", "nst", "nsilcm", "nspm", "vnflcm", "k8scluster", "ksu", "appinstance", "oka"}

// routeOf finds the route of a request, with the NBI's binding of a query
// parameter _id. CherryPy passes the query's parameters to the NBI's
// handler, default(self, main_topic, version, topic, _id=None, item=None,
// *args, **kwargs), as keyword arguments, so ?_id= fills the handler's _id
// argument as the URL's fourth item would: GET .../ns_lcm_op_occs?_id=X is
// served as GET .../ns_lcm_op_occs/X (one record, the other parameters
// ignored, 404 if unknown), for any collection, not only in a list.
func routeOf(r *http.Request) (*routeSpec, []string, *nbiError) {
	segments := splitPath(r.URL.Path)
	ids, given := r.URL.Query()["_id"]
	if !given || len(segments) < 4 || segments[0] != "osm" {
		return matchSegments(r.Method, r.URL.Path, segments)
	}
	switch {
	case len(segments) > 4:
		// The URL gives _id too: Python refuses the second value of the
		// argument and CherryPy answers that the URL matches nothing
		// (_cpdispatch.test_callable_spec).
		return nil, nil, errorf(http.StatusNotFound, "Nothing matches the given URI")
	case len(ids) > 1:
		// CherryPy passes a repeated parameter as a list, and
		// _check_valid_url_method's "arg in reference" fails on it once the
		// main topic, version and topic have passed: nbi.py answers that
		// TypeError as a 400.
		if _, _, err := walkRoute(segments); err != nil {
			return nil, nil, err
		}
		return nil, nil, errorf(http.StatusBadRequest, "unhashable type: 'list'")
	case ids[0] != "":
		// An empty _id is no _id: default() tests "if not _id".
		segments = append(segments, ids[0])
	}
	return matchSegments(r.Method, r.URL.Path, segments)
}

// matchSegments finds the route of a request and its path parameters, or
// the error the NBI answers: 405 for a URL under /osm it does not serve
// (its wording), 404 outside /osm (CherryPy's wording).
func matchSegments(method, path string, segments []string) (*routeSpec, []string, *nbiError) {
	if len(segments) == 0 || segments[0] != "osm" {
		return nil, nil, errorf(http.StatusNotFound, "The path '%s' was not found.", path)
	}
	node, params, err := walkRoute(segments)
	if err != nil {
		return nil, nil, err
	}
	if len(node.methods) == 0 {
		return nil, nil, unexpectedURL(segments[1:], "", node)
	}
	spec := node.methods[method]
	if spec == nil {
		return nil, nil, errorf(http.StatusMethodNotAllowed, "Method %s not supported for this URL", method)
	}
	return spec, params, nil
}

// walkRoute follows the segments of a URL under /osm down the route tree.
func walkRoute(segments []string) (*routeNode, []string, *nbiError) {
	node := routeTree()
	var params []string
	for _, segment := range segments {
		next := node.literals[segment]
		if next == nil && node.param != nil {
			next = node.param
			params = append(params, segment)
		}
		if next == nil {
			return nil, nil, unexpectedURL(segments[1:], segment, node)
		}
		node = next
	}
	return node, params, nil
}

// unexpectedURL words the NBI's answer to a URL it does not serve; item is
// the first URL item that matched nothing, node where the walk stopped.
func unexpectedURL(nbiSegments []string, item string, node *routeNode) *nbiError {
	notAllowed := func(format string, args ...any) *nbiError {
		return errorf(http.StatusMethodNotAllowed, format, args...)
	}
	switch {
	case len(nbiSegments) < 3:
		return notAllowed("URL must contain at least 'main_topic/version/topic'")
	case !slices.Contains(nbiMainTopics, nbiSegments[0]):
		return notAllowed("URL main_topic '%s' not supported", nbiSegments[0])
	case nbiSegments[1] != "v1":
		return notAllowed("URL version '%s' not supported", nbiSegments[1])
	case node.isLeaf():
		return notAllowed("URL contains unexpected extra items '%s'", item)
	}
	return notAllowed("Unexpected URL item %s", item)
}
