package nbisim

import (
	"net/http"
	"strings"
	"testing"
)

// The NBI refuses a create once the project holds its quota of records of the topic
// (base_topic.py check_quota: 422, before anything of the request is read), and serves the
// project's quotas with the project, to any member.
func TestQuotas(t *testing.T) {
	h := newLoggedIn(t, Config{Quotas: map[string]int{QuotaNSInstances: 1, QuotaNSDs: 1}})
	projectID := h.sim.State().ProjectID
	_, nsdID := h.onboardOpenLDAP()
	h.createNS(ldapCreateBody("ldap", nsdID, h.vimID("vim1"), nil))

	for _, refusal := range []struct {
		name, method, path string
		body               any
		detail             string
	}{
		{"an NS instance and instantiate", "POST", nsContentPath, ldapCreateBody("ldap2", nsdID, h.vimID("vim1"), nil),
			"quota (ns_instances=1) exceeded for project admin (" + projectID + ") while 'checking quotas'"},
		{"an NS instance", "POST", nsInstancesPath, ldapCreateBody("ldap2", nsdID, h.vimID("vim1"), nil),
			"quota (ns_instances=1) exceeded for project admin (" + projectID + ") while 'checking quotas'"},
	} {
		if a := h.request(refusal.method, refusal.path, refusal.body); a.status != http.StatusUnprocessableEntity ||
			string(a.body) != errorBody(http.StatusUnprocessableEntity, refusal.detail) {
			t.Errorf("%s beyond the quota: %d %s, want 422 %q", refusal.name, a.status, a.body, refusal.detail)
		}
	}
	// The quota is checked before the package is read (a second upload of the same NSD would
	// be a 409 conflict otherwise).
	nsd := openldapPackage(t, "openldap_ns")
	if a, detail := h.uploadTarball(nsPackagesPath, nsd.Tarball, "openldap_ns.tar.gz"), "quota (nsds=1) exceeded for project admin ("+projectID+")"; a.status != http.StatusUnprocessableEntity ||
		string(a.body) != errorBody(http.StatusUnprocessableEntity, detail) {
		t.Errorf("an NS package beyond the quota: %d %s, want 422 %q", a.status, a.body, detail)
	}
	if got := len(h.sim.State().NSInstances); got != 1 {
		t.Errorf("%d NS instances, want 1", got)
	}

	// Read by name or id; a topic the quotas do not name has OSM's default, 500.
	for _, id := range []string{"admin", projectID} {
		project := h.must(http.StatusOK, "GET", "/osm/admin/v1/projects/"+id, nil).object(t)
		quotas, _ := project["quotas"].(map[string]any)
		if project["_id"] != projectID || project["name"] != "admin" || quotas["ns_instances"] != float64(1) || quotas["nsds"] != float64(1) || len(quotas) != 2 {
			t.Errorf("GET projects/%s = %v", id, project)
		}
	}
	if a := h.request("GET", "/osm/admin/v1/projects/other", nil); a.status != http.StatusNotFound || !strings.Contains(string(a.body), "Project not found") {
		t.Errorf("an unknown project: %d %s", a.status, a.body)
	}
	defaults := newLoggedIn(t, Config{})
	if project := defaults.must(http.StatusOK, "GET", "/osm/admin/v1/projects/admin", nil).object(t); project["quotas"] != nil {
		t.Errorf("a project without quotas serves %v", project["quotas"])
	}
	if defaults.sim.quota(QuotaNSInstances) != DefaultQuota || DefaultQuota != 500 {
		t.Errorf("the default quota is %d, want OSM's 500", defaults.sim.quota(QuotaNSInstances))
	}
}
