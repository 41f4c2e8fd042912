package nbisim

import (
	"net/http"
	"strings"
	"testing"

	"github.com/osmops/osmops/internal/nbisim/nbispec"
)

// routesNewerThanSpec are served routes that OSM's OpenAPI file (2020) does
// not document.
var routesNewerThanSpec = map[Route]string{
	{http.MethodGet, "/osm/version"}:                                      "the NBI serves it outside its topics; the spec only covers the topics",
	{http.MethodPost, "/osm/nslcm/v1/ns_instances/{nsInstanceId}/update"}: "NS update came with OSM release 12",
}

// statusesBeyondSpec are answers the spec does not document for a route.
var statusesBeyondSpec = map[int]string{
	http.StatusTooManyRequests: "only sent when a fault injects it: rate limiting comes from proxies in front of the NBI",
}

func loadSpec(t *testing.T) *nbispec.Spec {
	t.Helper()
	spec, err := nbispec.OSM()
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func specPath(route string) string { return strings.TrimPrefix(route, "/osm") }

func TestRoutesAreDocumented(t *testing.T) {
	spec := loadSpec(t)
	for _, route := range Routes() {
		_, newer := routesNewerThanSpec[route]
		if documented := spec.Documented(route.Method, specPath(route.Path)); documented == newer {
			if newer {
				t.Errorf("%s %s is listed as newer than the spec but the spec has it", route.Method, route.Path)
			} else {
				t.Errorf("%s %s is not in OSM's OpenAPI", route.Method, route.Path)
			}
		}
	}
}

// TestAnswersAreDocumented runs a scenario that reaches every route and
// every kind of error, then checks that each status answered is one the
// spec documents for its route.
func TestAnswersAreDocumented(t *testing.T) {
	spec := loadSpec(t)
	h := runScenario(t)

	reached := map[Route]bool{}
	for _, endpoint := range h.sim.Stats().Endpoints {
		if endpoint.Route == UnmatchedRoute {
			continue
		}
		route := Route{endpoint.Method, endpoint.Route}
		reached[route] = true
		if _, newer := routesNewerThanSpec[route]; newer {
			continue
		}
		if _, allowed := statusesBeyondSpec[endpoint.Status]; allowed {
			continue
		}
		if !spec.StatusDocumented(route.Method, specPath(route.Path), endpoint.Status) {
			t.Errorf("%s %s answered %d, which the spec does not document", route.Method, route.Path, endpoint.Status)
		}
	}
	for _, route := range Routes() {
		if !reached[route] {
			t.Errorf("the scenario does not reach %s %s", route.Method, route.Path)
		}
	}
}

// runScenario exercises every route, with successes and the errors.
func runScenario(t *testing.T) *harness {
	h := newHarness(t, Config{})
	h.must(http.StatusOK, "GET", "/osm/version", nil)
	h.must(http.StatusUnauthorized, "GET", "/osm/admin/v1/vim_accounts", nil)
	h.must(http.StatusUnauthorized, "POST", "/osm/admin/v1/tokens", map[string]string{"username": "admin", "password": "x"})
	h.login()
	if err := h.sim.AddFault(Fault{Status: http.StatusTooManyRequests, Count: 1}); err != nil {
		t.Fatal(err)
	}
	h.must(http.StatusTooManyRequests, "GET", "/osm/admin/v1/vim_accounts", nil)
	if err := h.sim.AddFault(Fault{Status: http.StatusServiceUnavailable, Count: 1}); err != nil {
		t.Fatal(err)
	}
	h.must(http.StatusServiceUnavailable, "GET", "/osm/admin/v1/vim_accounts", nil)
	missing := "0b5ae4d6-51a3-4e18-b7df-868c115dcb17"

	// Admin.
	vims := h.must(http.StatusOK, "GET", "/osm/admin/v1/vim_accounts", nil).list(t)
	vim := dig(vims[0], "_id").(string)
	h.must(http.StatusOK, "GET", "/osm/admin/v1/vim_accounts/"+vim, nil)
	h.must(http.StatusNotFound, "GET", "/osm/admin/v1/vim_accounts/"+missing, nil)
	newVIM := map[string]any{"name": "vim2", "vim_type": "openstack", "vim_url": "http://x", "vim_user": "u", "vim_password": "p", "vim_tenant_name": "t"}
	vim2 := h.must(http.StatusAccepted, "POST", "/osm/admin/v1/vim_accounts", newVIM).object(t)["id"].(string)
	h.must(http.StatusConflict, "POST", "/osm/admin/v1/vim_accounts", newVIM)
	h.must(http.StatusUnprocessableEntity, "POST", "/osm/admin/v1/vim_accounts", map[string]any{"name": "vim3"})
	cluster := map[string]any{"name": "k8s2", "vim_account": vim2, "k8s_version": "1.29", "nets": map[string]any{"net1": nil}, "credentials": map[string]any{}}
	clusterID := h.must(http.StatusAccepted, "POST", "/osm/admin/v1/k8sclusters", cluster).object(t)["id"].(string)
	h.must(http.StatusConflict, "POST", "/osm/admin/v1/k8sclusters", cluster)
	h.must(http.StatusUnprocessableEntity, "POST", "/osm/admin/v1/k8sclusters", map[string]any{"name": "k8s3"})
	cluster["name"], cluster["vim_account"] = "k8s4", missing
	h.must(http.StatusNotFound, "POST", "/osm/admin/v1/k8sclusters", cluster)
	h.must(http.StatusOK, "GET", "/osm/admin/v1/k8sclusters", nil)
	h.must(http.StatusOK, "GET", "/osm/admin/v1/k8sclusters/"+clusterID, nil)
	h.must(http.StatusNotFound, "GET", "/osm/admin/v1/k8sclusters/"+missing, nil)
	h.must(http.StatusOK, "GET", "/osm/admin/v1/projects", nil)
	h.must(http.StatusOK, "GET", "/osm/admin/v1/projects/admin", nil)
	h.must(http.StatusNotFound, "GET", "/osm/admin/v1/projects/"+missing, nil)
	newUser := map[string]any{"username": "alice", "password": "Secret-123", "project_role_mappings": []any{map[string]any{"project": "admin", "role": "project_user"}}}
	userID := h.must(http.StatusCreated, "POST", "/osm/admin/v1/users", newUser).object(t)["id"].(string)
	h.must(http.StatusConflict, "POST", "/osm/admin/v1/users", newUser)
	h.must(http.StatusUnprocessableEntity, "POST", "/osm/admin/v1/users", map[string]any{"username": "bob", "password": "weak"})
	h.must(http.StatusOK, "GET", "/osm/admin/v1/users", nil)
	h.must(http.StatusOK, "GET", "/osm/admin/v1/users/alice", nil)
	h.must(http.StatusNotFound, "GET", "/osm/admin/v1/users/"+missing, nil)
	h.must(http.StatusNoContent, "DELETE", "/osm/admin/v1/users/"+userID, nil)
	h.must(http.StatusNotFound, "DELETE", "/osm/admin/v1/users/"+userID, nil)

	// Packages.
	knf, ns := openldapPackage(t, "openldap_knf"), openldapPackage(t, "openldap_ns")
	if a := h.uploadTarball(nsPackagesPath, ns.Tarball, "ns.tar.gz"); a.status != http.StatusConflict {
		t.Fatalf("NS package first: %d", a.status)
	}
	h.must(http.StatusUnprocessableEntity, "POST", vnfPackagesPath, []byte("not a tarball"))
	vnfdID := h.onboard(vnfPackagesPath, knf)
	nsdID := h.onboard(nsPackagesPath, ns)
	h.must(http.StatusUnprocessableEntity, "POST", nsPackagesPath, []byte("not a tarball"))
	for _, path := range []string{vnfPackagesPath, "/osm/vnfpkgm/v1/vnf_packages", nsPackagesPath, "/osm/nsd/v1/ns_descriptors"} {
		h.must(http.StatusOK, "GET", path, nil)
	}
	for _, path := range []string{vnfPackagesPath + "/", "/osm/vnfpkgm/v1/vnf_packages/"} {
		h.must(http.StatusOK, "GET", path+vnfdID, nil)
		h.must(http.StatusNotFound, "GET", path+missing, nil)
	}
	for _, path := range []string{nsPackagesPath + "/", "/osm/nsd/v1/ns_descriptors/"} {
		h.must(http.StatusOK, "GET", path+nsdID, nil)
		h.must(http.StatusNotFound, "GET", path+missing, nil)
	}
	vnfContent := "/osm/vnfpkgm/v1/vnf_packages/" + vnfdID + "/package_content"
	nsContent := "/osm/nsd/v1/ns_descriptors/" + nsdID + "/nsd_content"
	h.must(http.StatusOK, "GET", vnfContent, nil, "Accept", "application/zip")
	h.must(http.StatusNotAcceptable, "GET", vnfContent, nil)
	h.must(http.StatusOK, "GET", nsContent, nil, "Accept", "text/plain")
	h.must(http.StatusNoContent, "PUT", vnfContent, knf.Tarball, "Content-File-MD5", knf.MD5)
	h.must(http.StatusConflict, "PUT", vnfContent, knf.Tarball, "Content-File-MD5", "0")
	h.must(http.StatusNoContent, "PUT", nsContent, ns.Tarball, "Content-File-MD5", ns.MD5)
	h.must(http.StatusUnprocessableEntity, "PUT", nsContent, knf.Tarball)
	for collection, id := range map[string]string{"/osm/vnfpkgm/v1/vnf_packages/": vnfdID, "/osm/nsd/v1/ns_descriptors/": nsdID} {
		h.must(http.StatusNoContent, "PATCH", collection+id, map[string]any{"userDefinedData": map[string]any{"owner": "x"}})
		h.must(http.StatusBadRequest, "PATCH", collection+id, map[string]any{"userDefinedData": "x"})
		h.must(http.StatusNotFound, "PATCH", collection+missing, map[string]any{"userDefinedData": map[string]any{}})
	}

	// NS instances and operations.
	h.must(http.StatusUnprocessableEntity, "POST", nsContentPath, map[string]any{"nsName": "x"})
	h.must(http.StatusNotFound, "POST", nsContentPath, ldapCreateBody("x", missing, vim, nil))
	h.must(http.StatusBadRequest, "POST", nsContentPath, ldapCreateBody("x", nsdID, missing, nil))
	nsID, opID := h.createNS(ldapCreateBody("ldap", nsdID, vim, map[string]any{"replicaCount": "2"}))
	h.must(http.StatusConflict, "DELETE", nsPackagesPath+"/"+nsdID, nil)
	h.must(http.StatusConflict, "DELETE", "/osm/vnfpkgm/v1/vnf_packages/"+vnfdID, nil)
	h.must(http.StatusOK, "GET", nsContentPath, nil)
	h.must(http.StatusOK, "GET", nsInstancesPath+"?name=ldap", nil)
	h.must(http.StatusOK, "GET", nsContentPath+"/"+nsID, nil)
	h.must(http.StatusOK, "GET", nsInstancesPath+"/"+nsID, nil)
	h.must(http.StatusNotFound, "GET", nsInstancesPath+"/"+missing, nil)
	h.must(http.StatusOK, "GET", operationsPath+"?nsInstanceId="+nsID, nil)
	h.must(http.StatusOK, "GET", operationsPath+"/"+opID, nil)
	vnfs := h.must(http.StatusOK, "GET", vnfInstancePath, nil).list(t)
	h.must(http.StatusOK, "GET", vnfInstancePath+"/"+dig(vnfs[0], "_id").(string), nil)
	h.must(http.StatusNotFound, "GET", vnfInstancePath+"/"+missing, nil)
	action := map[string]any{"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": "upgrade", "primitive_params": map[string]any{"replicaCount": "3"}}
	h.clock.Step(testOperationDelay)
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", action)
	h.must(http.StatusUnprocessableEntity, "POST", nsInstancesPath+"/"+nsID+"/action", map[string]any{"primitive": "upgrade", "primitive_params": nil})
	h.must(http.StatusNotFound, "POST", nsInstancesPath+"/"+missing+"/action", action)
	h.clock.Step(testOperationDelay)
	h.must(http.StatusBadRequest, "POST", nsInstancesPath+"/"+nsID+"/action", map[string]any{"member_vnf_index": "x", "primitive": "upgrade", "primitive_params": map[string]any{}})
	scale := map[string]any{"scaleType": "SCALE_VNF", "scaleVnfData": map[string]any{"scaleVnfType": "SCALE_OUT",
		"scaleByStepData": map[string]any{"scaling-group-descriptor": "g", "member-vnf-index": "openldap"}}}
	h.must(http.StatusBadRequest, "POST", nsInstancesPath+"/"+nsID+"/scale", scale)
	h.must(http.StatusUnprocessableEntity, "POST", nsInstancesPath+"/"+nsID+"/scale", map[string]any{})
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/update", map[string]any{"updateType": "CHANGE_VNFPKG",
		"changeVnfPackageData": map[string]any{"vnfInstanceId": dig(vnfs[0], "_id"), "vnfdId": vnfdID}})
	h.clock.Step(testOperationDelay)
	h.must(http.StatusConflict, "POST", nsInstancesPath+"/"+nsID+"/instantiate", ldapCreateBody("ldap", nsdID, vim, nil))
	h.must(http.StatusConflict, "DELETE", nsInstancesPath+"/"+nsID, nil)
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/terminate", map[string]any{})
	h.clock.Step(testOperationDelay)
	h.must(http.StatusConflict, "POST", nsInstancesPath+"/"+nsID+"/terminate", map[string]any{"autoremove": false})
	h.must(http.StatusConflict, "POST", nsInstancesPath+"/"+nsID+"/action", action) // not instantiated
	h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/instantiate", ldapCreateBody("ldap", nsdID, vim, nil))
	h.clock.Step(testOperationDelay)
	h.must(http.StatusAccepted, "DELETE", nsContentPath+"/"+nsID, nil)
	h.must(http.StatusNotFound, "DELETE", nsContentPath+"/"+missing, nil)
	plain := h.must(http.StatusCreated, "POST", nsInstancesPath, ldapCreateBody("plain", nsdID, vim, nil)).object(t)["id"].(string)
	h.must(http.StatusUnprocessableEntity, "POST", nsInstancesPath, map[string]any{})
	h.must(http.StatusNoContent, "DELETE", nsInstancesPath+"/"+plain, nil)
	h.must(http.StatusNotFound, "DELETE", nsInstancesPath+"/"+plain, nil)
	h.clock.Step(testOperationDelay)

	h.must(http.StatusNoContent, "DELETE", nsPackagesPath+"/"+nsdID, nil)
	h.must(http.StatusNotFound, "DELETE", "/osm/nsd/v1/ns_descriptors/"+nsdID, nil)
	h.must(http.StatusNoContent, "DELETE", vnfPackagesPath+"/"+vnfdID, nil)
	h.must(http.StatusNotFound, "DELETE", vnfPackagesPath+"/"+vnfdID, nil)

	// Tokens.
	h.must(http.StatusOK, "DELETE", "/osm/admin/v1/tokens", nil)
	h.must(http.StatusNotFound, "DELETE", "/osm/admin/v1/tokens/"+missing, nil)
	h.login()
	h.must(http.StatusOK, "DELETE", "/osm/admin/v1/tokens/"+h.token, nil)
	h.must(http.StatusMethodNotAllowed, "PATCH", "/osm/admin/v1/tokens", nil)
	return h
}

// Routes lists every method and URL template the simulated NBI serves.
func Routes() []Route {
	routes := make([]Route, len(nbiRoutes))
	for i, spec := range nbiRoutes {
		routes[i] = spec.Route
	}
	return routes
}
