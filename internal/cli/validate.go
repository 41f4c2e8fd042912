package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
)

func newValidateCommand() *cobra.Command {
	var revision revisionFlags
	var osmConn osmFlags
	cmd := &cobra.Command{
		Use:   "validate [DIR]",
		Short: "Report every problem of a GitOps repository, as the operator would",
		Long: `Read the checkout DIR (default ".") as the operator reads a revision, and print every problem
at once with its file and line, in the operator's own words. A DIR inside a Git checkout that
holds neither osm_ops_config.yaml nor the packages folder is read as --path of the checkout's
root. Offline by default, where the vnf-profiles and KDUs the NS instances name are checked
against the repository's own packages (those of the whole repository when --path holds none);
with --osm it checks every reference (NSDs, vnf-profiles, VNFDs, KDUs, VIM accounts) against
that OSM with the revision's packages laid over it, as the operator does before it plans.

Exit status: 0 valid, 1 problems, 2 usage or I/O error.`,
		Example: `  osmops validate
  osmops validate ./gitops --path deploy --substitute CLUSTER=eu1
  OSM_USERNAME=admin OSM_PASSWORD=... osmops validate --osm https://osm.example.com:9999`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := revision.options()
			if err != nil {
				return err
			}
			root, err := artifactRoot(checkoutDir(args), &opts)
			if err != nil {
				return err
			}
			result, err := validate(cmd.Context(), root, opts, osmConn)
			if err != nil {
				return err
			}
			RenderValidation(cmd.OutOrStdout(), result)
			if len(result.Problems) > 0 {
				return findings
			}
			return nil
		},
	}
	revision.add(cmd.Flags())
	osmConn.add(cmd.Flags())
	return cmd
}

// checkoutDir is the DIR argument, "." when not given.
func checkoutDir(args []string) string {
	if len(args) == 0 {
		return "."
	}
	return args[0]
}

// gitDir marks the root of a Git checkout: a folder, or a file in a worktree or submodule.
const gitDir = ".git"

// artifactRoot is the folder to read as the revision. The operator reads the repository's root
// (Flux's artifact), where the settings file and, for a spec.path of ".", the packages are; a run
// on one of its folders would miss both. So dir is the root when it holds .git, the settings file
// or a packages folder (of the root, or of --path); otherwise it is a folder of the Git checkout
// around it, read as its spec.path (opts.Path is set to it), and the root is returned as a path
// from dir, so that the problems' paths, relative to it, still read from where the command ran. A
// dir that looks like a folder of a repository whose root is unknown is refused: read alone it
// would check nothing.
func artifactRoot(dir string, opts *gitops.Options) (string, error) {
	packagesPath := cmp.Or(opts.PackagesPath, gitops.DefaultPackagesPath)
	rootMarks := []string{gitDir, gitops.ConfigFileName, packagesPath, path.Join(opts.Path, packagesPath)}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() || holdsAny(dir, rootMarks...) {
		return dir, nil // the root, or no folder at all, which gitops.Load reports
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	root, found := enclosingCheckout(abs)
	if !found {
		if holdsAny(filepath.Dir(abs), gitops.ConfigFileName, packagesPath) {
			return "", fmt.Errorf("%s holds neither %s nor %s but the folder above it does, and no Git checkout says where the repository's root is: "+
				"give the repository's root as DIR, with --path to this folder", dir, gitops.ConfigFileName, packagesPath)
		}
		return dir, nil // a repository of deployment files only
	}
	if opts.Path != "" {
		return "", fmt.Errorf("%s is a folder of the Git checkout %s, whose root the operator reads: give the root as DIR, with --path relative to it", dir, root)
	}
	scanned, err := filepath.Rel(root, abs)
	if err != nil {
		return "", err
	}
	opts.Path = filepath.ToSlash(scanned)
	up, err := filepath.Rel(abs, root)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, up), nil
}

// holdsAny tells whether dir holds an entry of one of the names.
func holdsAny(dir string, names ...string) bool {
	return slices.ContainsFunc(names, func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
		return err == nil
	})
}

// enclosingCheckout is the nearest folder above abs that holds .git.
func enclosingCheckout(abs string) (string, bool) {
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if holdsAny(dir, gitDir) {
			return dir, true
		}
		if filepath.Dir(dir) == dir {
			return "", false
		}
	}
}

// Validation is what validate found in a checkout.
type Validation struct {
	Dir string
	// OSM is the NBI the references were checked against; "" offline.
	OSM string
	// ReferencePackages is how many packages the references were checked against offline, those
	// of ReferencePackagesDir (a slash path relative to Dir; "" when the revision could not be
	// read, so that nothing was checked).
	ReferencePackages    int
	ReferencePackagesDir string
	// Revision is the valid revision; nil with problems.
	Revision *gitops.Revision
	// Problems are the first gitops.MaxProblems found, sorted by file and line; More counts
	// the others.
	Problems []gitops.Problem
	More     int
	Warnings []string
}

// validate reads the checkout at root with opts, as the reconciler does (gitops.Load), then
// checks the references of what parsed, valid or not: against the OSM of osmConn, as
// engine.Compute does first, or, offline, against the repository's own packages. An error is a
// usage, I/O or OSM failure, not a problem of the repository.
func validate(ctx context.Context, root string, opts gitops.Options, osmConn osmFlags) (Validation, error) {
	result := Validation{Dir: root}
	nbi, err := osmConn.client()
	if err != nil {
		return result, err
	}
	rev, err := gitops.Load(root, opts)
	var invalid *gitops.ValidationError
	switch {
	case errors.As(err, &invalid):
		result.Warnings = rev.Warnings
		if rev = invalid.Parsed; rev == nil {
			result.Problems, result.More = invalid.Problems, invalid.More
			return result, nil
		}
	case err != nil:
		return result, err
	default:
		invalid = &gitops.ValidationError{} // none yet: the references may find some
		result.Warnings = slices.Clone(rev.Warnings)
	}
	var catalog gitops.Catalog
	var references []gitops.Problem
	if nbi != nil {
		// The empty scope reads the descriptors and VIM accounts only: no NS instance is needed.
		observed, err := engine.Observe(ctx, nbi, engine.Scope{})
		if err != nil {
			return result, fmt.Errorf("reading OSM: %w", err)
		}
		nsds, vnfds := observed.Descriptors()
		catalog, references = gitops.NewCatalog(nsds, vnfds, observed.VIMNames(), rev), engine.CheckReferences(rev, observed)
		result.OSM = osmConn.url
	} else {
		packages, folder, err := referencePackages(root, opts, rev)
		if err != nil {
			return result, err
		}
		if own := rev.Settings.PackagesDir(); folder != own {
			result.Warnings = append(result.Warnings, fmt.Sprintf("%s holds no package, so the operator uploads none with spec.path %q: "+
				"vnf-profiles and KDUs are checked against those of %s, which OSM must hold", own, rev.Settings.Path, folder))
		}
		withPackages := *rev
		withPackages.Packages = packages
		catalog, references = gitops.NewCatalog(nil, nil, nil, &withPackages), withPackages.CheckOwnReferences()
		result.ReferencePackages, result.ReferencePackagesDir = len(packages), folder
	}
	found := invalid.With(references)
	result.Problems, result.More = found.Problems, found.More
	if invalid.Parsed != nil {
		return result, nil // what parsed is no revision to run: its charts are not warned of
	}
	if len(result.Problems) == 0 {
		result.Revision = rev
	}
	result.warnFloatingCharts(rev, catalog)
	return result, nil
}

// referencePackages are the packages the references of rev are checked against offline, and
// their folder: the revision's own; or, when it has none because opts.Path moved the packages
// folder off the repository's (spec.packagesPath is relative to spec.path), those a read of the
// whole repository finds, which are what OSM must then hold. Their problems are left to the run
// that reads them as its own: here they only stand in for OSM's descriptors.
func referencePackages(root string, opts gitops.Options, rev *gitops.Revision) ([]gitops.Package, string, error) {
	if len(rev.Packages) > 0 || opts.Path == "" {
		return rev.Packages, rev.Settings.PackagesDir(), nil
	}
	// Packages are never substituted: the whole repository is read without the variables.
	whole, err := gitops.Load(root, gitops.Options{FileExtensions: opts.FileExtensions, PackagesPath: opts.PackagesPath})
	var invalid *gitops.ValidationError
	switch {
	case errors.As(err, &invalid):
		whole = invalid.Parsed
	case err != nil:
		return nil, "", err
	}
	if whole == nil || len(whole.Packages) == 0 {
		return nil, rev.Settings.PackagesDir(), nil
	}
	return whole.Packages, whole.Settings.PackagesDir(), nil
}

// warnFloatingCharts warns of the KDUs whose chart names no version: a warning, as OSM runs
// them, but on the newest chart of the repository, which Git does not pin.
func (v *Validation) warnFloatingCharts(rev *gitops.Revision, catalog gitops.Catalog) {
	for _, floating := range rev.FloatingCharts(catalog) {
		v.Warnings = append(v.Warnings, floating.String())
	}
}

// RenderValidation prints the problems and warnings, one a line, then a verdict.
func RenderValidation(w io.Writer, v Validation) {
	for _, problem := range v.Problems {
		printf(w, "✗ %s\n", problem)
	}
	if v.More > 0 {
		printf(w, "✗ and %s, not shown\n", plural(v.More, "more problem", "more problems"))
	}
	for _, warning := range v.Warnings {
		printf(w, "! %s\n", warning)
	}
	checked := v.referencesChecked()
	if len(v.Problems) > 0 {
		printf(w, "%s: %s (%s)\n", v.Dir, plural(len(v.Problems)+v.More, "problem", "problems"), checked)
		return
	}
	printf(w, "✔ %s is valid: %s, %s (%s)\n", v.Dir, plural(len(v.Revision.NsInstances), "NS instance", "NS instances"),
		plural(len(v.Revision.Packages), "package", "packages"), checked)
}

// referencesChecked says, for the verdict, what the references were checked against, and plainly
// when offline no package could stand in for OSM, so that a run that checked nothing never
// reads as one that did.
func (v Validation) referencesChecked() string {
	switch {
	case v.OSM != "":
		return "references checked against OSM " + v.OSM
	case v.ReferencePackagesDir == "":
		return "references not checked"
	case v.ReferencePackages == 0:
		return fmt.Sprintf("offline: vnfName, memberVnfIndex and KDU names NOT checked, no package in %s: give --osm, or --packages-path", v.ReferencePackagesDir)
	}
	return fmt.Sprintf("offline: vnf-profiles and KDUs checked against the repository's %s in %s",
		plural(v.ReferencePackages, "package", "packages"), v.ReferencePackagesDir)
}

// plural is "1 thing" or "n things".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
