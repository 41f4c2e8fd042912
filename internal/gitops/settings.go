package gitops

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// ConfigFileName is the first generation's settings file, read from the
// artifact root when present.
const ConfigFileName = "osm_ops_config.yaml"

// DefaultPackagesPath is where package sources are, relative to the scanned
// folder, when neither the spec nor the settings file says otherwise.
const DefaultPackagesPath = "osm-pkgs"

// defaultFileExtensions are the deployment file suffixes used when neither
// the spec nor the settings file sets them.
var defaultFileExtensions = []string{".osmops.yaml", ".osmops.yml"}

// Options are the OsmDeployment spec's settings for reading a revision; an
// empty field means "not set in the spec". A set field wins over the
// settings file (osm_ops_config.yaml), which wins over the defaults: the
// artifact root, .osmops.yaml and .osmops.yml, and osm-pkgs.
type Options struct {
	// Path is the folder scanned for deployment files, a slash path
	// relative to the artifact root.
	Path string
	// FileExtensions are the case-insensitive suffixes of deployment files.
	FileExtensions []string
	// PackagesPath is the folder of package sources, relative to Path.
	PackagesPath string
	// Substitution, when not nil, substitutes variables in the deployment files (not in
	// package sources, which OsmDeployments of one OSM share).
	Substitution *Substitution
}

// Settings are the resolved settings a revision was read with, for status
// and events.
type Settings struct {
	// Path is the scanned folder, a clean slash path relative to the
	// artifact root; "." is the root.
	Path string
	// FileExtensions are the deployment file suffixes.
	FileExtensions []string
	// PackagesPath is the folder of package sources, relative to Path.
	PackagesPath string
}

// PackagesDir is the folder of package sources relative to the root.
func (s Settings) PackagesDir() string {
	return path.Join(s.Path, s.PackagesPath)
}

// isDeploymentFile tells whether a file name ends with one of the
// extensions, ignoring case.
func (s Settings) isDeploymentFile(name string) bool {
	lower := strings.ToLower(name)
	return slices.ContainsFunc(s.FileExtensions, func(extension string) bool {
		return strings.HasSuffix(lower, strings.ToLower(extension))
	})
}

// origin is where a setting comes from, to report a problem with it there:
// a spec field, or a field of the settings file.
type origin struct {
	file  string
	line  int
	field string
}

// specOrigin is a field of the OsmDeployment spec.
func specOrigin(field string) origin {
	return origin{field: "spec." + field}
}

// problemf makes a problem about the setting.
func (o origin) problemf(format string, args ...any) Problem {
	return Problem{File: o.file, Line: o.line, Message: o.field + ": " + fmt.Sprintf(format, args...)}
}

// repoConfig is what the settings file sets; a nil field is not set.
type repoConfig struct {
	targetDir      *string
	targetDirAt    origin
	fileExtensions []string
}

// The fields of the settings file.
const (
	configTargetDir      = "targetDir"
	configFileExtensions = "fileExtensions"
	configConnectionFile = "connectionFile"
)

// settingsFields are the fields of the settings file; others are warned about and ignored.
var settingsFields = Schema.fieldsOf(SettingsFileKind, "")

// readRepoConfig reads the settings file at the root of fsys, if there is
// one. Unknown fields and connectionFile (the OSM connection now comes from
// the OsmCluster) give warnings; wrong values give problems.
func readRepoConfig(fsys fs.FS) (config repoConfig, warnings []string, problems []Problem, err error) {
	info, err := fs.Stat(fsys, ConfigFileName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return repoConfig{}, nil, nil, nil
	case err != nil:
		return repoConfig{}, nil, nil, err
	case !info.Mode().IsRegular():
		return repoConfig{}, nil, []Problem{problemf(ConfigFileName, 0, "the settings file is not a regular file")}, nil
	}
	data, tooBig, err := readBoundedFile(fsys, ConfigFileName)
	if err != nil || tooBig != nil {
		return repoConfig{}, nil, problemList(tooBig), err
	}
	top, _, problems := decodeSingleDocument(ConfigFileName, data)
	switch {
	case problems != nil:
		return repoConfig{}, nil, problems, nil
	case top == nil || top.ShortTag() == "!!null":
		return repoConfig{}, nil, nil, nil
	case top.Kind != yaml.MappingNode:
		return repoConfig{}, nil, []Problem{problemf(ConfigFileName, top.Line, "the settings file is %s; it must be a map", describeNode(top))}, nil
	}

	fields, problems := mappingFields(ConfigFileName, "", top)
	for _, field := range fields {
		if !slices.Contains(settingsFields, field.key) {
			warnings = append(warnings, fmt.Sprintf("%s:%d: unknown field %q is ignored", ConfigFileName, field.line, field.key))
			continue
		}
		at := origin{file: ConfigFileName, line: field.line, field: fmt.Sprintf("field %q", field.key)}
		switch field.key {
		case configTargetDir:
			value, problem := scalarString(ConfigFileName, field.key, field)
			if problem != nil {
				problems = append(problems, *problem)
				continue
			}
			config.targetDir, config.targetDirAt = &value, at
		case configFileExtensions:
			extensions, problem := extensionList(at, field.value)
			if problem != nil {
				problems = append(problems, *problem)
				continue
			}
			config.fileExtensions = extensions
		case configConnectionFile:
			warnings = append(warnings, fmt.Sprintf("%s:%d: %s is ignored: the OSM connection comes from the OsmCluster", ConfigFileName, field.line, configConnectionFile))
		}
	}
	return config, warnings, problems, nil
}

// problemList makes a list of the problem, if any.
func problemList(problem *Problem) []Problem {
	if problem == nil {
		return nil
	}
	return []Problem{*problem}
}

// extensionList reads the settings file's fileExtensions: a list of
// non-empty strings.
func extensionList(at origin, node *yaml.Node) ([]string, *Problem) {
	if node.Kind != yaml.SequenceNode {
		problem := at.problemf("must be a list of file name suffixes, not %s", describeNode(node))
		return nil, &problem
	}
	extensions := make([]string, 0, len(node.Content))
	for _, item := range node.Content {
		if item.Kind != yaml.ScalarNode {
			problem := at.problemf("must be a list of file name suffixes, not of %s", describeNode(item))
			return nil, &problem
		}
		extensions = append(extensions, item.Value)
	}
	if problem := checkExtensions(at, extensions); problem != nil {
		return nil, problem
	}
	return extensions, nil
}

// The bounds of fileExtensions, the CRD's own (api/v1alpha1, OsmDeploymentSpec.FileExtensions)
// applied to the settings file too: a suffix is a dot and letters, digits, dots, '_', '+' or
// '-', so that no item can hold two suffixes, a separator or a space.
const (
	maxFileExtensions      = 16
	maxFileExtensionLength = 64
)

var fileExtensionPattern = regexp.MustCompile(`^\.[A-Za-z0-9._+-]+$`)

// checkExtensions refuses an empty list and an empty suffix, which would
// take every file of the folder for a deployment file, and any suffix the
// CRD would refuse.
func checkExtensions(at origin, extensions []string) *Problem {
	var problem Problem
	switch {
	case len(extensions) == 0:
		problem = at.problemf("must list at least one file name suffix")
	case slices.Contains(extensions, ""):
		problem = at.problemf("must not hold an empty suffix")
	case len(extensions) > maxFileExtensions:
		problem = at.problemf("lists %d suffixes, more than the limit of %d", len(extensions), maxFileExtensions)
	default:
		for _, extension := range extensions {
			if len(extension) > maxFileExtensionLength || !fileExtensionPattern.MatchString(extension) {
				problem = at.problemf("%q is not a file name suffix: a dot, then at most %d letters, digits, dots, '_', '+' or '-'",
					truncate(extension, maxFileExtensionLength), maxFileExtensionLength-1)
				break
			}
		}
		if problem.Message == "" {
			return nil
		}
	}
	return &problem
}

// resolveSettings applies the precedence spec > settings file > defaults
// and checks the paths.
func resolveSettings(opts Options, config repoConfig) (Settings, []Problem) {
	var problems []Problem
	addProblem := func(problem *Problem) {
		if problem != nil {
			problems = append(problems, *problem)
		}
	}
	settings := Settings{Path: ".", FileExtensions: slices.Clone(defaultFileExtensions), PackagesPath: DefaultPackagesPath}
	var problem *Problem
	switch {
	case opts.Path != "":
		settings.Path, problem = relativePath(specOrigin("path"), opts.Path)
		addProblem(problem)
	case config.targetDir != nil && *config.targetDir != "":
		settings.Path, problem = relativePath(config.targetDirAt, *config.targetDir)
		addProblem(problem)
	}
	switch {
	case opts.FileExtensions != nil:
		settings.FileExtensions = opts.FileExtensions
		addProblem(checkExtensions(specOrigin("fileExtensions"), opts.FileExtensions))
	case config.fileExtensions != nil:
		settings.FileExtensions = config.fileExtensions
	}
	if opts.PackagesPath != "" {
		settings.PackagesPath, problem = relativePath(specOrigin("packagesPath"), opts.PackagesPath)
		addProblem(problem)
	}
	return settings, problems
}

// relativePath cleans a relative slash path, refusing one that is absolute
// or has a ".." part: the folders must stay inside the artifact.
func relativePath(at origin, p string) (string, *Problem) {
	if path.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..") {
		problem := at.problemf("%q must be a relative path inside the artifact, without \"..\"", p)
		return p, &problem
	}
	return path.Clean(p), nil
}
