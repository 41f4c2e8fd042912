package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/osmops/osmops/internal/gitops"
)

// revisionFlags are the settings of reading a revision that an OsmDeployment's spec holds:
// what the tool reads a checkout with when no OsmDeployment gives them.
type revisionFlags struct {
	path           string
	fileExtensions []string
	packagesPath   string
	substitute     []string
	substituteFrom string
	strict         bool
}

func (f *revisionFlags) add(flags *pflag.FlagSet) {
	flags.StringVar(&f.path, "path", "", "folder scanned for deployment files, relative to DIR (spec.path; default: the settings file's targetDir, else DIR)")
	flags.StringSliceVar(&f.fileExtensions, "file-extensions", nil, "deployment file name suffixes (spec.fileExtensions; default .osmops.yaml,.osmops.yml)")
	flags.StringVar(&f.packagesPath, "packages-path", "", "folder of package sources, relative to --path (spec.packagesPath; default osm-pkgs)")
	flags.StringArrayVar(&f.substitute, "substitute", nil, "variable NAME=VALUE substituted in deployment files, as spec.postBuild.substitute (repeatable)")
	flags.StringVar(&f.substituteFrom, "substitute-from", "", "file of NAME=VALUE lines substituted in deployment files, as spec.postBuild.substituteFrom (--substitute wins)")
	flags.BoolVar(&f.strict, "substitute-strict", false, "a variable without value and without default is a problem (spec.postBuild.strict)")
}

// options are the gitops.Options of the flags. Without --substitute nor --substitute-from no
// variable is substituted, as without spec.postBuild.
func (f *revisionFlags) options() (gitops.Options, error) {
	opts := gitops.Options{Path: f.path, FileExtensions: f.fileExtensions, PackagesPath: f.packagesPath}
	if len(f.substitute) == 0 && f.substituteFrom == "" {
		return opts, nil
	}
	vars := map[string]string{}
	if f.substituteFrom != "" {
		data, err := os.ReadFile(f.substituteFrom)
		if err != nil {
			return opts, fmt.Errorf("--substitute-from: %w", err)
		}
		if err := parseVariables(data, vars); err != nil {
			return opts, fmt.Errorf("--substitute-from %s: %w", f.substituteFrom, err)
		}
	}
	for _, assignment := range f.substitute {
		name, value, found := strings.Cut(assignment, "=")
		if !found {
			return opts, fmt.Errorf("--substitute %q: want NAME=VALUE", assignment)
		}
		vars[name] = value
	}
	opts.Substitution = &gitops.Substitution{Vars: vars, Strict: f.strict}
	return opts, nil
}

// parseVariables reads NAME=VALUE lines into vars; blank lines and lines that start with #
// are skipped. Hand-written: the format is a few lines, a dotenv library would add quoting
// rules postBuild does not have.
func parseVariables(data []byte, vars map[string]string) error {
	scanner := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; scanner.Scan(); line++ {
		text := strings.TrimSpace(scanner.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, value, found := strings.Cut(text, "=")
		if !found {
			return fmt.Errorf("line %d: want NAME=VALUE", line)
		}
		vars[strings.TrimSpace(name)] = value
	}
	return scanner.Err()
}
