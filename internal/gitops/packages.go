package gitops

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osmops/osmops/internal/osmpkg"
)

// Package is an OSM package built from a package source folder of the
// revision.
type Package struct {
	// Source is the package folder, a slash path relative to the artifact
	// root ("osm-pkgs/openldap_knf").
	Source string
	*osmpkg.Package
}

// vnfdIDAt locates the i-th vnfd-id of an NS package: its line in the
// descriptor file, or the package folder when the line is not known.
func (p Package) vnfdIDAt(i int) (string, int) {
	if i < len(p.Descriptor.VnfdIDLines) && p.DescriptorPath != "" {
		return path.Join(p.Source, p.DescriptorPath), p.Descriptor.VnfdIDLines[i]
	}
	return p.Source, 0
}

// loadPackages builds every direct subfolder of the packages folder (other
// entries are ignored) and orders the packages so that each comes after the
// packages it references. root is the artifact root on disk, which
// osmpkg.Build needs; fsys is the same folder.
func loadPackages(root string, fsys fs.FS, settings Settings) ([]Package, []Problem, error) {
	dir := settings.PackagesDir()
	entries, err := fs.ReadDir(fsys, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		if info, statErr := fs.Stat(fsys, dir); statErr == nil && !info.IsDir() {
			return nil, []Problem{problemf(dir, 0, "the packages folder is not a folder")}, nil
		}
		return nil, nil, err
	}
	var packages []Package
	var problems []Problem
	var kept int64
	for _, entry := range entries {
		if !entry.IsDir() {
			continue
		}
		source := path.Join(dir, entry.Name())
		built, err := osmpkg.Build(filepath.Join(root, filepath.FromSlash(source)))
		if err != nil {
			problems = append(problems, packageProblem(source, err))
			continue
		}
		if kept += summarySize(built.Descriptor); kept > MaxParsedRevisionBytes {
			// A revision keeps its packages' summaries: bounded as its deployment files are, or
			// a descriptor listing one vnfd-id a hundred thousand times would keep megabytes
			// in each of a thousand packages.
			problems = append(problems, problemf(source, 0, "the packages' descriptors up to this one keep more than the limit of %d bytes (%d bytes a KDU, vnfd-id or vnf-profile, and twice its text)",
				MaxParsedRevisionBytes, ParsedNodeBytes))
			break
		}
		packages = append(packages, Package{Source: source, Package: built})
	}
	ordered, orderProblems := orderPackages(packages)
	return ordered, append(problems, orderProblems...), nil
}

// summarySize is what a revision keeps of a descriptor, counted as a parsed file is: each of
// its KDUs, vnfd-ids and vnf-profiles ParsedNodeBytes and twice its text, and its own fields.
func summarySize(d osmpkg.Descriptor) int64 {
	size := int64(ParsedNodeBytes + 2*(len(d.ID)+len(d.Name)+len(d.Version)+len(d.SoftwareVersion)))
	for _, kdu := range d.KDUs {
		size += int64(ParsedNodeBytes + 2*(len(kdu.Name)+len(kdu.HelmChart)))
	}
	for _, id := range d.VnfdIDs {
		size += int64(ParsedNodeBytes + 2*len(id))
	}
	for _, profile := range d.VnfProfiles {
		size += int64(ParsedNodeBytes + 2*(len(profile.ID)+len(profile.VnfdID)))
	}
	return size
}

// packageProblem locates an osmpkg.Build error in the revision.
func packageProblem(source string, err error) Problem {
	var packageErr *osmpkg.Error
	if !errors.As(err, &packageErr) {
		return problemf(source, 0, "%v", err)
	}
	return problemf(path.Join(source, filepath.ToSlash(packageErr.File)), packageErr.Line, "%s", packageErr.Message)
}

// orderPackages sorts packages so that each one comes after the packages of
// the revision whose descriptor ids its vnfd-id list names: a topological
// order, with ties broken by folder name so that it is the same on every
// run. A folder whose descriptor id another folder already has (in name
// order) is a problem and left out; so is each reference cycle, reported
// once at its first folder.
func orderPackages(packages []Package) ([]Package, []Problem) {
	sorted := slices.Clone(packages)
	slices.SortFunc(sorted, func(a, b Package) int { return strings.Compare(a.Source, b.Source) })

	var problems []Problem
	var unique []Package
	indexByID := map[string]int{}
	for _, pkg := range sorted {
		if first, taken := indexByID[pkg.Descriptor.ID]; taken {
			problems = append(problems, problemf(pkg.Source, 0, "descriptor id %q is already the id of %s", pkg.Descriptor.ID, unique[first].Source))
			continue
		}
		indexByID[pkg.Descriptor.ID] = len(unique)
		unique = append(unique, pkg)
	}

	// references[i] are the indexes of the packages that unique[i] names.
	references := make([][]int, len(unique))
	referencedBy := make([][]int, len(unique))
	for i, pkg := range unique {
		for _, id := range pkg.Descriptor.VnfdIDs {
			if j, ok := indexByID[id]; ok && !slices.Contains(references[i], j) {
				references[i] = append(references[i], j)
				referencedBy[j] = append(referencedBy[j], i)
			}
		}
		slices.Sort(references[i])
	}

	// Kahn's algorithm; ready is kept sorted, and indexes follow name order.
	waitingFor := make([]int, len(unique))
	var ready []int
	for i := range unique {
		waitingFor[i] = len(references[i])
		if waitingFor[i] == 0 {
			ready = append(ready, i)
		}
	}
	ordered := make([]Package, 0, len(unique))
	placed := make([]bool, len(unique))
	for len(ready) > 0 {
		next := ready[0]
		ready = ready[1:]
		ordered = append(ordered, unique[next])
		placed[next] = true
		for _, dependent := range referencedBy[next] {
			waitingFor[dependent]--
			if waitingFor[dependent] == 0 {
				at, _ := slices.BinarySearch(ready, dependent)
				ready = slices.Insert(ready, at, dependent)
			}
		}
	}
	return ordered, append(problems, cycleProblems(unique, references, placed)...)
}

// cycleProblems reports the reference cycles among the packages that
// Kahn's algorithm could not place. Each of those references another one
// not placed, so following the first such reference from any of them ends in
// a cycle; packages that only lead to a cycle are not reported themselves.
func cycleProblems(packages []Package, references [][]int, placed []bool) []Problem {
	var problems []Problem
	done := slices.Clone(placed)
	for start := range packages {
		var walk []int
		for current := start; !done[current]; {
			if at := slices.Index(walk, current); at >= 0 {
				problems = append(problems, cycleProblem(packages, walk[at:]))
				break
			}
			walk = append(walk, current)
			current = firstUnplaced(references[current], placed)
		}
		for _, i := range walk {
			done[i] = true
		}
	}
	return problems
}

// firstUnplaced returns the first reference not placed yet.
func firstUnplaced(references []int, placed []bool) int {
	for _, j := range references {
		if !placed[j] {
			return j
		}
	}
	panic("gitops: a package left out of the order references only placed packages")
}

// cycleProblem reports a cycle at its first folder in name order, listed
// from there: "a_ns -> b_ns -> a_ns".
func cycleProblem(packages []Package, cycle []int) Problem {
	first := slices.Index(cycle, slices.Min(cycle))
	cycle = slices.Concat(cycle[first:], cycle[:first])
	names := make([]string, 0, len(cycle)+1)
	for _, i := range cycle {
		names = append(names, packages[i].Name)
	}
	names = append(names, names[0])
	return problemf(packages[cycle[0]].Source, 0, "package reference cycle: %s", strings.Join(names, " -> "))
}
