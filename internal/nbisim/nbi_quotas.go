package nbisim

import "net/http"

// DefaultQuota is the number of records of a topic a project may hold when its quotas do not
// name the topic (base_topic.py, BaseTopic.default_quota).
const DefaultQuota = 500

// QuotaNames are the names of OSM's quotas (validation.py, topics_with_quota); the simulator
// creates records of three: VNF and NS packages and NS instances.
var QuotaNames = []string{
	"vnfds", "nsds", "slice_templates", "pduds", "ns_instances", "slice_instances", "vim_accounts",
	"wim_accounts", "sdn_controllers", "k8sclusters", "vca", "k8srepos", "osmrepos", "ns_subscriptions",
}

// The quotas the simulator enforces.
const (
	QuotaVNFDs       = "vnfds"
	QuotaNSDs        = "nsds"
	QuotaNSInstances = "ns_instances"
)

// projectDoc is the project's record as GET /admin/v1/projects/{id} answers it: the
// projects collection's document, members in the NBI's order (auth.py create_admin_project,
// which gives the admin project its git_name; ProjectTopicAuth.new keeps the quotas given).
type projectDoc struct {
	Name    string         `json:"name"`
	ID      string         `json:"_id"`
	Admin   projectAdmin   `json:"_admin"`
	GitName string         `json:"git_name,omitempty"`
	Quotas  map[string]int `json:"quotas,omitempty"`
}

type projectAdmin struct {
	Created  epochTime `json:"created"`
	Modified epochTime `json:"modified"`
}

// quota is the project's quota of a topic.
func (s *Server) quota(name string) int {
	if quota, set := s.cfg.Quotas[name]; set {
		return quota
	}
	return DefaultQuota
}

// checkQuota is BaseTopic.check_quota, which the NBI runs first when it creates a package or an
// NS record: with count records of the topic in the project, one more is refused (422) once the
// count reaches the quota, unless the request says ?FORCE.
func (s *Server) checkQuota(c *call, name string, count int) *nbiError {
	if forced(c.request) {
		return nil
	}
	quota := s.quota(name)
	if count < quota {
		return nil
	}
	return errorf(http.StatusUnprocessableEntity, "quota (%s=%d) exceeded for project %s (%s)", name, quota, s.cfg.Project, s.projectID)
}

// getProject serves GET /admin/v1/projects/{projectId}, by _id or name (BaseTopic.id_field):
// any member of a project may read it (auth.py check_permissions, "Bug 853").
func (s *Server) getProject(c *call) (response, *nbiError) {
	if id := c.param(0); id != s.projectID && id != s.cfg.Project {
		return response{}, errorf(http.StatusNotFound, "Project not found")
	}
	return jsonResponse(http.StatusOK, s.project()), nil
}

// listProjects serves GET /admin/v1/projects: the user's projects.
func (s *Server) listProjects(*call) (response, *nbiError) {
	return jsonResponse(http.StatusOK, []projectDoc{s.project()}), nil
}

func (s *Server) project() projectDoc {
	created := epoch(s.projectCreated)
	doc := projectDoc{Name: s.cfg.Project, ID: s.projectID, Admin: projectAdmin{Created: created, Modified: created}}
	if s.cfg.Project == "admin" {
		doc.GitName = "osm_admin"
	}
	if len(s.cfg.Quotas) > 0 {
		doc.Quotas = s.cfg.Quotas
	}
	return doc
}
