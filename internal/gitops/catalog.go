package gitops

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/osmops/osmops/internal/osmpkg"
)

// maxListedVIMAccounts bounds the VIM account names a problem lists.
const maxListedVIMAccounts = 10

// Catalog is what a revision may reference: OSM's descriptors and VIM
// accounts, with the revision's own packages laid over them.
type Catalog struct {
	// NSDs are by descriptor id.
	NSDs map[string]osmpkg.Descriptor
	// VNFDs are by descriptor id.
	VNFDs map[string]osmpkg.Descriptor
	// VIMAccounts are by name.
	VIMAccounts map[string]bool
}

// NewCatalog makes the catalog of OSM's current descriptors and VIM account
// names, with the descriptors of rev's packages (nil for none) replacing
// OSM's ones of the same id: those are what OSM will hold once the revision
// is applied.
func NewCatalog(nsds, vnfds []osmpkg.Descriptor, vimNames []string, rev *Revision) Catalog {
	catalog := Catalog{
		NSDs:        map[string]osmpkg.Descriptor{},
		VNFDs:       map[string]osmpkg.Descriptor{},
		VIMAccounts: map[string]bool{},
	}
	for _, nsd := range nsds {
		catalog.NSDs[nsd.ID] = nsd
	}
	for _, vnfd := range vnfds {
		catalog.VNFDs[vnfd.ID] = vnfd
	}
	for _, name := range vimNames {
		catalog.VIMAccounts[name] = true
	}
	if rev == nil {
		return catalog
	}
	for _, pkg := range rev.Packages {
		switch pkg.Descriptor.Kind {
		case osmpkg.KindNS:
			catalog.NSDs[pkg.Descriptor.ID] = pkg.Descriptor
		case osmpkg.KindVNF:
			catalog.VNFDs[pkg.Descriptor.ID] = pkg.Descriptor
		}
	}
	return catalog
}

// CheckReferences checks what the revision names against the catalog, since
// the NBI accepts a wrong member-vnf-index or KDU name and fails only later,
// inside OSM: each NS instance's NSD, vnf-profile, the profile's VNFD, KDU
// and VIM account, and each NS package's VNFDs. The problems are sorted, at
// the line of the field concerned.
func (r *Revision) CheckReferences(c Catalog) []Problem {
	var problems []Problem
	for _, instance := range r.NsInstances {
		problems = append(problems, instance.checkReferences(c)...)
	}
	for _, pkg := range r.Packages {
		if pkg.Descriptor.Kind != osmpkg.KindNS {
			continue
		}
		for i, id := range pkg.Descriptor.VnfdIDs {
			if _, known := c.VNFDs[id]; !known {
				file, line := pkg.vnfdIDAt(i)
				problems = append(problems, problemf(file, line, "vnfd-id %q names a VNFD that is neither in OSM nor in this revision", id))
			}
		}
	}
	sortProblems(problems)
	return problems
}

// CheckOwnReferences checks, without OSM, what the revision's own packages can tell: the
// vnf-profiles of the NS instances whose NSD the revision holds, and the KDUs of those whose
// VNFD it holds too. What only OSM can tell (VIM accounts, descriptors OSM holds) is not
// checked: CheckReferences does.
func (r *Revision) CheckOwnReferences() []Problem {
	catalog := NewCatalog(nil, nil, nil, r)
	var problems []Problem
	for _, instance := range r.NsInstances {
		nsd, known := catalog.NSDs[instance.NsdName]
		if !known {
			continue
		}
		for _, vnf := range instance.Members() {
			if profile, found := findVnfProfile(nsd, vnf.MemberVnfIndex); found {
				if _, known := catalog.VNFDs[profile.VnfdID]; !known {
					continue
				}
			}
			problems = append(problems, instance.checkVNF(catalog, nsd, vnf)...)
		}
	}
	sortProblems(problems)
	return problems
}

// FloatingCharts finds the KDUs of the NS instances whose chart names no version, neither in
// the declaration's model nor in the VNFD's helm-chart: OSM's LCM installs the newest chart of
// the repository, and every upgrade of the KDU installs the newest again (measured on OSM 19:
// 1.2.7 became 1.2.8 on a values change), so what runs follows the repository, not Git. OSM
// runs every KDU of every vnf-profile of the NSD, declared or not; only those whose NSD and
// VNFD the catalog holds are checked. Each is at the line of the KDU's model or name, else of
// the instance's nsdName.
func (r *Revision) FloatingCharts(c Catalog) []Problem {
	var found []Problem
	for _, n := range r.NsInstances {
		nsd, known := c.NSDs[n.NsdName]
		if !known {
			continue
		}
		members := n.Members()
		for _, profile := range nsd.VnfProfiles {
			vnfd, known := c.VNFDs[profile.VnfdID]
			if !known {
				continue
			}
			for _, kdu := range vnfd.KDUs {
				field, model := "nsdName", ""
				for _, vnf := range members {
					if at := slices.IndexFunc(vnf.KDUs, func(k KDU) bool { return k.Name == kdu.Name }); vnf.MemberVnfIndex == profile.ID && at >= 0 {
						field, model = FieldPath(vnf.KDUs[at].Path, "name"), vnf.KDUs[at].Model
						if model != "" {
							field = FieldPath(vnf.KDUs[at].Path, "model")
						}
					}
				}
				chart := cmp.Or(model, kdu.HelmChart)
				if !chartFloats(chart) {
					continue
				}
				found = append(found, problemf(n.Source.File, n.Source.LineOf(field),
					"NS instance %q: KDU %s of VNF %s runs chart %q, which names no version (neither in the declaration's model nor in VNFD %q's helm-chart): "+
						"OSM installs the newest chart of the repository, and again at every upgrade; declare model: %s:<version> to pin it",
					n.Name, kdu.Name, profile.ID, chart, vnfd.ID, chart))
			}
		}
	}
	sortProblems(found)
	return found
}

// chartFloats says whether a KDU's chart is a chart of a Helm repository ("<repo>/<chart>")
// with no version, as LCM's Helm connector reads it: a chart of the package (a bare name or a
// path) or a URL is fixed by the package.
func chartFloats(chart string) bool {
	if strings.Count(chart, "/") != 1 || strings.Contains(chart, "://") || strings.HasPrefix(chart, "/") {
		return false
	}
	return len(strings.Split(chart, ":")) != 2
}

// checkReferences checks one NS instance; a reference is checked only when
// the one it depends on resolved. An empty name is not checked: only an
// instance of an invalid file (ValidationError.Parsed) has one, where it was
// reported missing or unreadable already.
func (n NsInstance) checkReferences(c Catalog) []Problem {
	var problems []Problem
	at := func(field, format string, args ...any) {
		problems = append(problems, problemf(n.Source.File, n.Source.LineOf(field), format, args...))
	}
	if n.VimAccountName != "" && !c.VIMAccounts[n.VimAccountName] {
		at("vimAccountName", "vimAccountName %q is not a VIM account of OSM (known: %s)", n.VimAccountName, listSome(slices.Collect(maps.Keys(c.VIMAccounts)), maxListedVIMAccounts))
	}
	if n.NsdName == "" {
		return problems
	}
	nsd, known := c.NSDs[n.NsdName]
	if !known {
		at("nsdName", "nsdName %q is not an NSD id in OSM nor in this revision", n.NsdName)
		return problems
	}
	for _, vnf := range n.Members() {
		problems = append(problems, n.checkVNF(c, nsd, vnf)...)
	}
	return problems
}

// checkVNF checks that a VNF of the instance is a vnf-profile of nsd, whose VNFD has each KDU
// (each named: see checkReferences).
func (n NsInstance) checkVNF(c Catalog, nsd osmpkg.Descriptor, vnf VNF) []Problem {
	if vnf.MemberVnfIndex == "" {
		return nil
	}
	var problems []Problem
	at := func(field, format string, args ...any) {
		problems = append(problems, problemf(n.Source.File, n.Source.LineOf(field), format, args...))
	}
	indexField := FieldPath(vnf.Path, "memberVnfIndex")
	if vnf.Path == "" {
		indexField = "vnfName"
	}
	profile, found := findVnfProfile(nsd, vnf.MemberVnfIndex)
	if !found {
		at(indexField, "%s %q is not a vnf-profile of NSD %q (valid: %s)", indexField, vnf.MemberVnfIndex, nsd.ID, listSome(namesOf(nsd.VnfProfiles, func(p osmpkg.VnfProfile) string { return p.ID }), 0))
		return append(problems, n.checkKDUsOfAnyVNF(c, nsd, vnf)...)
	}
	vnfd, known := c.VNFDs[profile.VnfdID]
	if !known {
		at(indexField, "vnf-profile %q of NSD %q uses VNFD %q, which is neither in OSM nor in this revision", profile.ID, nsd.ID, profile.VnfdID)
		return problems
	}
	for _, kdu := range vnf.KDUs {
		if kdu.Name != "" && !slices.ContainsFunc(vnfd.KDUs, func(k osmpkg.KDU) bool { return k.Name == kdu.Name }) {
			nameField := FieldPath(kdu.Path, "name")
			at(nameField, "%s %q is not a KDU of VNFD %q (valid: %s)", nameField, kdu.Name, vnfd.ID, listSome(namesOf(vnfd.KDUs, func(k osmpkg.KDU) string { return k.Name }), 0))
		}
	}
	return problems
}

// checkKDUsOfAnyVNF checks the KDUs of a VNF whose vnf-profile is not one of nsd against the
// KDUs of every VNFD nsd names, so that a wrong KDU name beside a wrong vnf-profile is told in
// the same run, not after the profile is mended. Only when each of those VNFDs is known: a KDU
// may be one of a VNFD that is not.
func (n NsInstance) checkKDUsOfAnyVNF(c Catalog, nsd osmpkg.Descriptor, vnf VNF) []Problem {
	var kdus []string
	for _, profile := range nsd.VnfProfiles {
		vnfd, known := c.VNFDs[profile.VnfdID]
		if !known {
			return nil
		}
		kdus = append(kdus, namesOf(vnfd.KDUs, func(k osmpkg.KDU) string { return k.Name })...)
	}
	var problems []Problem
	for _, kdu := range vnf.KDUs {
		if kdu.Name != "" && !slices.Contains(kdus, kdu.Name) {
			nameField := FieldPath(kdu.Path, "name")
			problems = append(problems, problemf(n.Source.File, n.Source.LineOf(nameField), "%s %q is not a KDU of any VNF of NSD %q (valid: %s)",
				nameField, kdu.Name, nsd.ID, listSome(kdus, 0)))
		}
	}
	return problems
}

// findVnfProfile finds the vnf-profile id of an NSD.
func findVnfProfile(nsd osmpkg.Descriptor, id string) (osmpkg.VnfProfile, bool) {
	at := slices.IndexFunc(nsd.VnfProfiles, func(profile osmpkg.VnfProfile) bool { return profile.ID == id })
	if at < 0 {
		return osmpkg.VnfProfile{}, false
	}
	return nsd.VnfProfiles[at], true
}

// namesOf lists the name of each item, for messages.
func namesOf[T any](items []T, name func(T) string) []string {
	names := make([]string, 0, len(items))
	for _, item := range items {
		names = append(names, name(item))
	}
	return names
}

// listSome renders names sorted and without repeats, quoted, at most limit
// of them (0: all) and how many more: `"a", "b" and 3 more`; "none" when
// empty.
func listSome(names []string, limit int) string {
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	if len(names) == 0 {
		return "none"
	}
	shown := names
	if limit > 0 && len(names) > limit {
		shown = names[:limit]
	}
	quoted := make([]string, 0, len(shown))
	for _, name := range shown {
		quoted = append(quoted, fmt.Sprintf("%q", name))
	}
	text := strings.Join(quoted, ", ")
	if hidden := len(names) - len(shown); hidden > 0 {
		text += fmt.Sprintf(" and %d more", hidden)
	}
	return text
}
