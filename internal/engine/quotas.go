package engine

import (
	"fmt"
	"path"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// checkQuotas refuses a plan whose creates would take the project past one of OSM's quotas:
// the NBI refuses each create beyond with 422, and a revision would be applied half-way, create
// after create. Packages count as listed (the project's, and the few that other projects share
// with it, which OSM does not count); NS instances as far as the observation sees them (the
// instances of other OsmDeployments in the same project count in OSM too, and are not read),
// so that OSM may still refuse a create the plan allowed.
func checkQuotas(in Input, p *Plan) {
	project := in.Observed.Project
	if project == nil {
		project = &osm.Project{}
	}
	var vnfds, nsds []gitops.Package
	for _, action := range p.Packages {
		switch {
		case action.ID != "":
		case action.Package.Descriptor.Kind == osmpkg.KindVNF:
			vnfds = append(vnfds, action.Package)
		default:
			nsds = append(nsds, action.Package)
		}
	}
	packageQuota := func(name, what string, created []gitops.Package, held int) {
		if over, ok := overQuota(project, name, held, len(created)); ok {
			pkg := created[over]
			p.Problems = append(p.Problems, Problem{Kind: Limit, Problem: gitops.Problem{
				File: path.Join(pkg.Source, pkg.DescriptorPath), Line: pkg.Descriptor.IDLine,
				Message: quotaMessage(project, name, what, held, len(created), ""),
			}})
		}
	}
	packageQuota(osm.QuotaVNFDs, "VNF packages", vnfds, len(in.Observed.VNFDs))
	packageQuota(osm.QuotaNSDs, "NS packages", nsds, len(in.Observed.NSDs))

	held := len(in.Observed.NSInstances)
	for _, e := range in.Inventory.NsInstances {
		if e.ID == "" || !in.Observed.settled[e.Name] {
			continue
		}
		if _, read := in.Observed.NSInstances[e.ID]; !read {
			held++
		}
	}
	if over, ok := overQuota(project, osm.QuotaNSInstances, held, len(p.Creates)); ok {
		ns := p.Creates[over].Instance
		p.Problems = append(p.Problems, Problem{Kind: Limit, Problem: gitops.Problem{File: ns.Source.File, Line: ns.Source.Line,
			Message: quotaMessage(project, osm.QuotaNSInstances, "NS instances", held, len(p.Creates),
				" that this OsmDeployment reads (other OsmDeployments' instances in the project count too)")}})
	}
}

// overQuota returns the first of created that the project's quota of name refuses, held
// records being there already; OSM refuses a create once the count reaches the quota.
func overQuota(project *osm.Project, name string, held, created int) (int, bool) {
	allowed := max(project.Quota(name)-held, 0)
	return allowed, created > allowed
}

func quotaMessage(project *osm.Project, name, what string, held, created int, seen string) string {
	return fmt.Sprintf("OSM's quota %s of project %s is %d: the project holds %d %s%s and the revision creates %d more; "+
		"OSM refuses every create beyond the quota (422), so nothing is sent: ask an OSM administrator to raise the quota, or declare fewer",
		name, projectName(project), project.Quota(name), held, what, seen, created)
}

func projectName(project *osm.Project) string {
	if project.Name == "" {
		return "(unread)"
	}
	return fmt.Sprintf("%q", project.Name)
}
