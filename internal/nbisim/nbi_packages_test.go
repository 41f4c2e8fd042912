package nbisim

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/testing/artifactserver"
)

const twoKDUsVNFD = `vnfd:
  id: openldap_knf
  product-name: openldap_knf
  version: "2.0"
  df:
    - id: default-df
  ext-cpd:
    - id: mgmt-ext
      k8s-cluster-net: mgmtnet
  k8s-cluster:
    nets:
      - id: mgmtnet
  kdu:
    - name: ldap
      helm-chart: stable/openldap
    - name: admin
      helm-chart: bitnami/phpldapadmin
`

func TestPackageUploadChecks(t *testing.T) {
	h := newLoggedIn(t, Config{})
	knf := openldapPackage(t, "openldap_knf")
	ns := openldapPackage(t, "openldap_ns")
	// A package osmpkg.Build would refuse, packed as a plain tarball.
	badChart := artifactserver.TarGz(map[string]string{"bad_knf/bad_vnfd.yaml": strings.Replace(twoKDUsVNFD, "stable/openldap", "stable/openldap:1.2.7", 1)})

	tests := []struct {
		name     string
		endpoint string
		data     []byte
		md5      string
		status   int
		detail   string
	}{
		{"NS package before its VNF package", nsPackagesPath, ns.Tarball, ns.MD5, 409,
			"Descriptor error at 'vnfd-id'='openldap_knf' references a non existing vnfd"},
		{"wrong MD5", vnfPackagesPath, knf.Tarball, md5Of([]byte("other")), 409, "Error, MD5 mismatch"},
		{"invalid helm chart", vnfPackagesPath, badChart, md5Of(badChart), 422, "helm-chart 'stable/openldap:1.2.7' is not valid"},
		{"not a tarball", vnfPackagesPath, []byte("vnfd: {}"), md5Of([]byte("vnfd: {}")), 422, ""},
		{"VNF package to the NS endpoint", nsPackagesPath, knf.Tarball, knf.MD5, 422,
			"Error in pyangbind validation: a ns package is expected but openldap_knf/openldap_vnfd.yaml is a vnf descriptor"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			a := h.request("POST", test.endpoint, test.data, "Content-Type", "application/gzip", "Content-File-MD5", test.md5)
			if a.status != test.status {
				t.Fatalf("status %d, want %d: %s", a.status, test.status, a.body)
			}
			if test.detail != "" && string(a.body) != errorBody(test.status, test.detail) {
				t.Errorf("body %s, want detail %q", a.body, test.detail)
			}
		})
	}

	h.onboard(vnfPackagesPath, knf)
	a := h.uploadTarball(vnfPackagesPath, knf.Tarball, "openldap_knf.tar.gz")
	if string(a.body) != errorBody(409, "vnfd with id 'openldap_knf' already exists for this project") {
		t.Errorf("duplicate: %d %s", a.status, a.body)
	}
	nsdID := h.onboard(nsPackagesPath, ns)
	a = h.uploadTarball(nsPackagesPath, ns.Tarball, "openldap_ns.tar.gz")
	if string(a.body) != errorBody(409, "nsd with id 'openldap_ns' already exists for this project") {
		t.Errorf("duplicate NSD: %d %s", a.status, a.body)
	}
	if n := len(h.sim.State().Packages); n != 2 {
		t.Errorf("%d packages stored, want 2", n)
	}
	nsd := h.must(http.StatusOK, "GET", "/osm/nsd/v1/ns_descriptors/"+nsdID, nil).object(t)
	got := map[string]any{
		"id": nsd["id"], "nsdOnboardingState": nsd["nsdOnboardingState"], "nsdUsageState": nsd["nsdUsageState"],
		"storage.descriptor": dig(nsd, "_admin", "storage", "descriptor"), "storage.zipfile": dig(nsd, "_admin", "storage", "zipfile"),
		"self": dig(nsd, "_links", "self", "href"), "vnf-profile": dig(nsd, "df", 0, "vnf-profile", 0, "id"),
	}
	want := map[string]any{
		"id": "openldap_ns", "nsdOnboardingState": "ONBOARDED", "nsdUsageState": "NOT_IN_USE",
		"storage.descriptor": "openldap_ns/openldap_nsd.yaml", "storage.zipfile": "openldap_ns.tar.gz",
		"self": "/nsd/v1/ns_descriptors/" + nsdID, "vnf-profile": "openldap",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NSD record (-want +got):\n%s", diff)
	}
}

func TestPackageUpdate(t *testing.T) {
	h := newLoggedIn(t, Config{})
	vnfdID, nsdID := h.onboardOpenLDAP()
	content := "/osm/vnfpkgm/v1/vnf_packages/" + vnfdID + "/package_content"
	update := buildPackage(t, "openldap_knf", "openldap_vnfd.yaml", twoKDUsVNFD)
	h.clock.Step(60e9)
	h.must(http.StatusNoContent, "PUT", content, update.Tarball,
		"Content-Type", "application/gzip", "Content-Filename", "openldap_knf.tar.gz", "Content-File-MD5", update.MD5)
	record := h.must(http.StatusOK, "GET", vnfPackagesPath+"/"+vnfdID, nil).object(t)
	if dig(record, "_admin", "revision") != 2.0 || record["version"] != "2.0" || dig(record, "kdu", 1, "name") != "admin" {
		t.Errorf("after the update: revision %v, version %v", dig(record, "_admin", "revision"), record["version"])
	}
	if modified, created := dig(record, "_admin", "modified").(float64), dig(record, "_admin", "created").(float64); modified-created != 60 {
		t.Errorf("modified - created = %v", modified-created)
	}
	// The stored tarball is the new one.
	if a := h.must(http.StatusOK, "GET", content, nil, "Accept", "application/gzip"); string(a.body) != string(update.Tarball) {
		t.Error("package_content is not the updated tarball")
	}

	// A full update may not take the id of another package.
	other := buildPackage(t, "other_knf", "other_vnfd.yaml", strings.ReplaceAll(twoKDUsVNFD, "openldap_knf", "other_knf"))
	otherID := h.onboard(vnfPackagesPath, other)
	a := h.request("PUT", "/osm/vnfpkgm/v1/vnf_packages/"+otherID+"/package_content", update.Tarball, "Content-File-MD5", update.MD5)
	if string(a.body) != errorBody(409, "vnfd with id 'openldap_knf' already exists for this project") {
		t.Errorf("update to a taken id: %d %s", a.status, a.body)
	}
	a = h.request("PUT", "/osm/nsd/v1/ns_descriptors/"+nsdID+"/nsd_content", update.Tarball, "Content-File-MD5", "0")
	if string(a.body) != errorBody(409, "Error, MD5 mismatch") {
		t.Errorf("update with a wrong MD5: %d %s", a.status, a.body)
	}
	h.must(http.StatusNotFound, "PUT", "/osm/nsd/v1/ns_descriptors/"+vnfdID+"/nsd_content", update.Tarball)
}

func TestPackageContentAccept(t *testing.T) {
	h := newLoggedIn(t, Config{})
	vnfdID, _ := h.onboardOpenLDAP()
	content := "/osm/vnfpkgm/v1/vnf_packages/" + vnfdID + "/package_content"
	a := h.must(http.StatusOK, "GET", content, nil, "Accept", "text/plain")
	if !strings.HasPrefix(string(a.body), "vnfd:\n  id: openldap_knf") {
		t.Errorf("text/plain gave %q", a.body)
	}
	a = h.must(http.StatusOK, "GET", content, nil, "Accept", "application/zip")
	if a.header.Get("Content-Type") != "application/zip" || string(a.body) != string(openldapPackage(t, "openldap_knf").Tarball) {
		t.Errorf("application/zip gave %s", a.header.Get("Content-Type"))
	}
	a = h.request("GET", content, nil) // Accept: application/json
	if string(a.body) != errorBody(406, "provide request header 'Accept' with 'application/zip' or 'text/plain'") {
		t.Errorf("application/json gave %d %s", a.status, a.body)
	}
}

func TestPackageDeletes(t *testing.T) {
	h := newLoggedIn(t, Config{})
	vnfdID, nsdID := h.onboardOpenLDAP()
	nsID, _ := h.createNS(ldapCreateBody("ldap", nsdID, h.vimID("vim1"), nil))

	for _, test := range []struct{ path, detail string }{
		{nsPackagesPath + "/" + nsdID, "There is at least one NS instance using this descriptor"},
		{"/osm/nsd/v1/ns_descriptors/" + nsdID, "There is at least one NS instance using this descriptor"},
		{vnfPackagesPath + "/" + vnfdID, "There is at least one VNF instance using this descriptor"},
	} {
		if a := h.request("DELETE", test.path, nil); string(a.body) != errorBody(409, test.detail) {
			t.Errorf("DELETE %s: %d %s", test.path, a.status, a.body)
		}
	}
	h.must(http.StatusNoContent, "DELETE", nsContentPath+"/"+nsID+"?FORCE=True", nil)
	if a := h.request("DELETE", vnfPackagesPath+"/"+vnfdID, nil); string(a.body) != errorBody(409, "There is at least one NS package referencing this descriptor") {
		t.Errorf("DELETE of a referenced VNFD: %d %s", a.status, a.body)
	}
	h.must(http.StatusNoContent, "DELETE", nsPackagesPath+"/"+nsdID, nil)
	h.must(http.StatusNoContent, "DELETE", "/osm/vnfpkgm/v1/vnf_packages/"+vnfdID, nil)
	h.must(http.StatusNotFound, "DELETE", "/osm/vnfpkgm/v1/vnf_packages/"+vnfdID, nil)
	if n := len(h.must(http.StatusOK, "GET", "/osm/vnfpkgm/v1/vnf_packages", nil).list(t)); n != 0 {
		t.Errorf("%d VNF packages left", n)
	}
	// The id is free again.
	h.onboard(vnfPackagesPath, openldapPackage(t, "openldap_knf"))
	if n := len(h.must(http.StatusOK, "GET", vnfPackagesPath+"?id=openldap_knf", nil).list(t)); n != 1 {
		t.Errorf("?id=openldap_knf: %d", n)
	}
}

// A package's user data is what the operator marks its uploads with: the NBI's
// DescriptorTopic.edit merges an edit into _admin.userDefinedData (RFC 7396),
// moves _admin.modified and keeps the revision; a content upload
// (upload_content's deep update of the stored record) keeps the user data.
func TestPackageUserData(t *testing.T) {
	h := newLoggedIn(t, Config{})
	vnfdID, _ := h.onboardOpenLDAP()
	item := "/osm/vnfpkgm/v1/vnf_packages/" + vnfdID
	userData := func() any {
		return dig(h.must(http.StatusOK, "GET", vnfPackagesPath, nil).list(t)[0], "_admin", "userDefinedData")
	}
	if got := userData(); !reflect.DeepEqual(got, map[string]any{}) {
		t.Fatalf("user data of a package uploaded in one step = %v, want {}", got)
	}
	h.clock.Step(60e9)
	h.must(http.StatusNoContent, "PATCH", item, map[string]any{"userDefinedData": map[string]any{"owner": "a", "digest": "d1", "nested": map[string]any{"x": 1}}})
	h.must(http.StatusNoContent, "PATCH", item, map[string]any{"userDefinedData": map[string]any{"digest": "d2", "owner": nil, "nested": map[string]any{"y": 2}}})
	want := map[string]any{"digest": "d2", "nested": map[string]any{"x": 1.0, "y": 2.0}}
	if got := userData(); !reflect.DeepEqual(got, want) {
		t.Errorf("user data after two edits = %v, want %v", got, want)
	}
	record := h.must(http.StatusOK, "GET", item, nil).object(t)
	if revision, moved := dig(record, "_admin", "revision"), dig(record, "_admin", "modified").(float64)-dig(record, "_admin", "created").(float64); revision != 1.0 || moved != 60 {
		t.Errorf("after an edit: revision %v, modified - created = %v; want 1 and 60", revision, moved)
	}

	update := buildPackage(t, "openldap_knf", "openldap_vnfd.yaml", twoKDUsVNFD)
	h.must(http.StatusNoContent, "PUT", item+"/package_content", update.Tarball, "Content-File-MD5", update.MD5)
	if got := userData(); !reflect.DeepEqual(got, want) {
		t.Errorf("user data after a content upload = %v, want %v", got, want)
	}
	// Filters reach into it, as into any field.
	if got := h.must(http.StatusOK, "GET", vnfPackagesPath+"?_admin.userDefinedData.digest.eq=d2", nil).list(t); len(got) != 1 {
		t.Errorf("filter on the user data: %d records, want 1", len(got))
	}
	a := h.request("PATCH", item, map[string]any{"userDefinedData": []any{}})
	if detail := a.object(t)["detail"]; a.status != 400 || detail != "userDefinedData should be an object, but is '<class 'list'>' instead" {
		t.Errorf("user data that is not an object: %d %s", a.status, a.body)
	}
}
