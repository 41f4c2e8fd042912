// Package gitops reads one unpacked revision of a GitOps repository (the
// deployment files that declare NS instances, and the OSM package sources)
// into a validated model, and cross-checks it against what OSM holds. It
// reads the repositories of the first generation (OSM Ops) unchanged,
// osm_ops_config.yaml included.
//
// Every problem of a revision is collected, with its file and line, so that
// the operator can apply nothing and say everything that is wrong at once.
//
// It must not import a Kubernetes client, controller-runtime, internal/engine or
// internal/controller: a revision is read and validated without a cluster (as `osmops validate`
// does); the Kubernetes objects that values come from are read through a getter its caller passes.
package gitops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Revision is a validated revision.
type Revision struct {
	// NsInstances are sorted by Name; names are unique.
	NsInstances []NsInstance
	// Packages come in dependency order: each after the packages of the
	// revision it references.
	Packages []Package
	// Warnings are things to tell the user (as events) that do not stop
	// the revision from being applied.
	Warnings []string
	// Settings are the resolved settings the revision was read with.
	Settings Settings
}

// Load reads and validates the revision unpacked at root. Every problem of
// the revision is returned at once in a *ValidationError (at most MaxProblems
// kept), with what parsed of it (ValidationError.Parsed), so that the
// references of each file that parsed can be checked too; the Revision then
// holds only Settings and Warnings (for status and events) and must not be
// applied. Other errors are I/O failures. Files are read through an os.Root,
// so no symlink can lead the reads outside root.
func Load(root string, opts Options) (*Revision, error) {
	dir, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("opening the revision: %w", err)
	}
	defer func() { _ = dir.Close() }()
	fsys := dir.FS()

	config, warnings, problems, err := readRepoConfig(fsys)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ConfigFileName, err)
	}
	settings, settingProblems := resolveSettings(opts, config)
	problems = append(problems, settingProblems...)
	revision := &Revision{Settings: settings, Warnings: warnings}
	if len(problems) > 0 {
		return revision, NewValidationError(problems)
	}
	if problem := checkScanFolder(fsys, settings, opts, config); problem != nil {
		return revision, NewValidationError([]Problem{*problem})
	}

	if opts.Substitution != nil {
		if problems := opts.Substitution.checkVariables(); len(problems) > 0 {
			return revision, NewValidationError(problems)
		}
	}
	instances, problems, err := loadNsInstances(fsys, settings, opts.Substitution)
	if err != nil {
		return nil, err
	}
	problems = append(problems, problemList(checkInstanceCount(settings.Path, len(instances)))...)
	packages, packageProblems, err := loadPackages(root, fsys, settings)
	if err != nil {
		return nil, fmt.Errorf("reading the packages: %w", err)
	}
	problems = append(problems, packageProblems...)
	if len(problems) > 0 {
		invalid := NewValidationError(problems)
		invalid.Parsed = parsedReferences(instances, packages, settings)
		return revision, invalid
	}
	for i := range instances {
		instances[i] = instances[i].Sealed()
	}
	revision.NsInstances, revision.Packages = instances, packages
	return revision, nil
}

// parsedReferences is what an invalid revision keeps of what parsed (ValidationError.Parsed):
// the NS instances without their values, the packages without their bytes, what their
// references need.
func parsedReferences(instances []NsInstance, packages []Package, settings Settings) *Revision {
	parsed := &Revision{Settings: settings, NsInstances: make([]NsInstance, len(instances)), Packages: make([]Package, len(packages))}
	for i, instance := range instances {
		parsed.NsInstances[i] = instance.withoutValues()
	}
	for i, pkg := range packages {
		summary := *pkg.Package
		summary.Tarball = nil
		parsed.Packages[i] = Package{Source: pkg.Source, Package: &summary}
	}
	return parsed
}

// checkScanFolder makes sure the scanned folder exists, reporting it where
// its path was set.
func checkScanFolder(fsys fs.FS, settings Settings, opts Options, config repoConfig) *Problem {
	info, err := fs.Stat(fsys, settings.Path)
	if err == nil && info.IsDir() {
		return nil
	}
	at := specOrigin("path")
	if opts.Path == "" {
		at = config.targetDirAt
	}
	problem := at.problemf("the folder %q does not exist in the revision", settings.Path)
	return &problem
}

// loadNsInstances parses every deployment file below the scanned folder
// (in path order, leaving out the packages folder and the settings file),
// after substituting its variables when subst is not nil, and refuses a name
// declared twice. It returns the instances sorted by name: those of every file
// that parsed, with problems or a name declared twice too, so that their
// references can still be checked; without problems, every one is valid.
func loadNsInstances(fsys fs.FS, settings Settings, subst *Substitution) ([]NsInstance, []Problem, error) {
	files, problems, err := deploymentFiles(fsys, settings)
	if err != nil {
		return nil, nil, err
	}
	var instances []NsInstance
	declaredAt := map[string]NsInstance{}
	var parsed int64
	for _, file := range files {
		data, tooBig, err := readBoundedFile(fsys, file)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", file, err)
		}
		if tooBig != nil {
			problems = append(problems, *tooBig)
			continue
		}
		git := newOrigin(OriginGit, string(data))
		data, variables, readSecret, substProblem := subst.substitute(file, data)
		if substProblem != nil {
			problems = append(problems, *substProblem)
			continue
		}
		instance, size, fileProblems := parseDeploymentFile(file, data)
		if parsed += size; parsed > MaxParsedRevisionBytes {
			// What the revision keeps is bounded, whatever the bounds on bytes let through.
			problems = append(problems, problemf(file, 0, "the deployment files up to this one are larger than the limit of %d bytes once parsed (%d bytes a key, value or item, and twice its text)",
				MaxParsedRevisionBytes, ParsedNodeBytes))
			break
		}
		if readSecret {
			fileProblems = subst.redact(fileProblems)
			instance = instance.withDigestKey(string(subst.DigestKey))
		}
		problems = append(problems, fileProblems...)
		if instance.Source.File == "" {
			continue // not a map of kind NsInstance: nothing of it was read
		}
		instance = instance.withOrigins(append(variables, git)...)
		if first, declared := declaredAt[instance.Name]; declared {
			problems = append(problems, problemf(file, instance.Source.LineOf("name"),
				"NS instance %q is already declared in %s:%d", instance.Name, first.Source.File, first.Source.LineOf("name")))
		} else if instance.Name != "" {
			declaredAt[instance.Name] = instance
		}
		instances = append(instances, instance)
	}
	slices.SortFunc(instances, func(a, b NsInstance) int { return strings.Compare(a.Name, b.Name) })
	return instances, problems, nil
}

// deploymentFiles lists the regular files below the scanned folder whose names have a
// deployment file extension, in path order. What would otherwise be skipped without a word,
// and its NS instance pruned, is a problem: a symbolic link (to a file or a folder: links are
// not followed, so that a revision is only what the repository holds), and a YAML or JSON
// file that declares kind NsInstance under a name the extensions do not match.
func deploymentFiles(fsys fs.FS, settings Settings) ([]string, []Problem, error) {
	packagesDir := settings.PackagesDir()
	var files []string
	var problems []Problem
	err := fs.WalkDir(fsys, settings.Path, func(name string, entry fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case entry.IsDir() && name == packagesDir:
			return fs.SkipDir
		case name == ConfigFileName:
		case entry.Type()&fs.ModeSymlink != 0:
			problems = append(problems, problemf(name, 0,
				"a symbolic link: osmops does not follow links, so its NS instances would be missed; put the file or folder itself in the repository"))
		case !entry.Type().IsRegular():
		case settings.isDeploymentFile(path.Base(name)):
			files = append(files, name)
		case declaresNsInstance(fsys, name):
			problems = append(problems, problemf(name, 0,
				"declares kind %s but its name does not end in %s: rename it, or add its extension to spec.fileExtensions",
				KindNsInstance, strings.Join(settings.FileExtensions, " or ")))
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipDir) {
		return nil, nil, fmt.Errorf("listing the deployment files: %w", err)
	}
	return files, problems, nil
}

// declaresNsInstance tells whether a YAML or JSON file, of the size a deployment file may
// have, has kind NsInstance at its top.
func declaresNsInstance(fsys fs.FS, name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
	default:
		return false
	}
	data, tooBig, err := readBoundedFile(fsys, name)
	if err != nil || tooBig != nil {
		return false
	}
	var top struct {
		Kind string `yaml:"kind"`
	}
	return yaml.Unmarshal(data, &top) == nil && top.Kind == KindNsInstance
}
