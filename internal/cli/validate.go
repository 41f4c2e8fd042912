package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
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
at once with its file and line, in the operator's own words. Offline by default, where the
vnf-profiles and KDUs the NS instances name are checked against the repository's own packages;
with --osm it checks every reference (NSDs, vnf-profiles, VNFDs, KDUs, VIM accounts) against that
OSM with the repository's packages laid over it, as the operator does before it plans.

Exit status: 0 valid, 1 problems, 2 usage or I/O error.`,
		Example: `  osmops validate
  osmops validate ./gitops --path deploy --substitute CLUSTER=eu1
  OSM_USERNAME=admin OSM_PASSWORD=... osmops validate --osm https://osm.example.com:9999`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := checkoutDir(args)
			opts, err := revision.options()
			if err != nil {
				return err
			}
			nbi, err := osmConn.client()
			if err != nil {
				return err
			}
			var against engine.OSM
			if nbi != nil {
				against = nbi
			}
			result, err := validate(cmd.Context(), dir, opts, against)
			if err != nil {
				return err
			}
			result.OSM = osmConn.url
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

// Validation is what validate found in a checkout.
type Validation struct {
	Dir string
	// OSM is the NBI the references were checked against; "" offline.
	OSM string
	// Revision is the valid revision; nil with problems.
	Revision *gitops.Revision
	// Problems are the first gitops.MaxProblems found, sorted by file and line; More counts
	// the others.
	Problems []gitops.Problem
	More     int
	Warnings []string
}

// validate reads the checkout at dir with opts, as the reconciler does (gitops.Load), then
// checks the references of what parsed, valid or not: against what nbi holds, as engine.Compute
// does first, or, when nbi is nil, against the repository's own packages. An error is an I/O
// or OSM failure, not a problem of the repository.
func validate(ctx context.Context, dir string, opts gitops.Options, nbi engine.OSM) (Validation, error) {
	result := Validation{Dir: dir}
	rev, err := gitops.Load(dir, opts)
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
	catalog, references := gitops.NewCatalog(nil, nil, nil, rev), rev.CheckOwnReferences()
	if nbi != nil {
		// The empty scope reads the descriptors and VIM accounts only: no NS instance is needed.
		observed, err := engine.Observe(ctx, nbi, engine.Scope{})
		if err != nil {
			return result, fmt.Errorf("reading OSM: %w", err)
		}
		nsds, vnfds := observed.Descriptors()
		catalog, references = gitops.NewCatalog(nsds, vnfds, observed.VIMNames(), rev), engine.CheckReferences(rev, observed)
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
	checked := "offline: references checked against the repository's packages only"
	if v.OSM != "" {
		checked = "references checked against OSM " + v.OSM
	}
	if len(v.Problems) > 0 {
		printf(w, "%s: %s (%s)\n", v.Dir, plural(len(v.Problems)+v.More, "problem", "problems"), checked)
		return
	}
	printf(w, "✔ %s is valid: %s, %s (%s)\n", v.Dir, plural(len(v.Revision.NsInstances), "NS instance", "NS instances"),
		plural(len(v.Revision.Packages), "package", "packages"), checked)
}

// plural is "1 thing" or "n things".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
