package gitops

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/envsubst"
)

// SubstituteAnnotation is the annotation (or label) of a deployment file's metadata that, set
// to SubstituteDisabled, keeps variables from being substituted in it: Flux's
// kustomize-controller reads it on an object.
const (
	SubstituteAnnotation = "kustomize.toolkit.fluxcd.io/substitute"
	SubstituteDisabled   = "disabled"
)

// variableNamePattern is the name a variable must have (kustomize-controller's varsubRegex).
var variableNamePattern = regexp.MustCompile(`^[_[:alpha:]][_[:alpha:][:digit:]]*$`)

// Substitution replaces ${var} in deployment files before they are parsed, as Flux's
// kustomize-controller does with spec.postBuild: with github.com/fluxcd/pkg/envsubst (so
// ${var:=default} and the other bash forms work), a variable without value and without a
// default becoming "" unless Strict, where it is an error.
type Substitution struct {
	// Vars are the variables by name.
	Vars map[string]string
	// FromSecret names the variables whose values came from a Secret: a file that reads one
	// has its digest keyed by DigestKey (see NsInstance.Digest), and its problems never show
	// those values.
	FromSecret map[string]bool
	// DigestKey keys the digests of the instances that read a Secret's variable; the caller
	// derives it from the Secrets' UIDs and resourceVersions.
	DigestKey []byte
	// Strict makes a variable without value and without default an error.
	Strict bool
}

// checkVariableNames refuses the variables whose names envsubst could never read.
func (s *Substitution) checkVariableNames() []Problem {
	var problems []Problem
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range s.Vars {
			if !yield(name) {
				return
			}
		}
	}) {
		if !variableNamePattern.MatchString(name) {
			problems = append(problems, Problem{Message: fmt.Sprintf("spec.postBuild: variable %q has an invalid name: it must match %s",
				truncate(name, 64), variableNamePattern)})
		}
	}
	return problems
}

// substitute returns the deployment file's text with its variables substituted, unless its
// metadata opts out; readSecret tells whether it read a variable that came from a Secret. A
// failed substitution is a problem at the line of the first variable that fails.
func (s *Substitution) substitute(file string, data []byte) (substituted []byte, readSecret bool, problem *Problem) {
	if s == nil || substitutionDisabled(data) {
		return data, false, nil
	}
	lookup := func(name string) (string, bool) {
		value, set := s.Vars[name]
		readSecret = readSecret || set && s.FromSecret[name]
		return value, set || !s.Strict
	}
	output, err := envsubst.Eval(string(data), lookup)
	if err == nil {
		return []byte(output), readSecret, nil
	}
	// envsubst does not say where: the first line that fails alone is (a ${...} never spans
	// lines). Its errors name variables, never their values.
	line := 0
	for i, text := range strings.Split(string(data), "\n") {
		if _, lineErr := envsubst.Eval(text, lookup); lineErr != nil {
			line, err = i+1, lineErr
			break
		}
	}
	p := problemf(file, line, "variable substitution (spec.postBuild) failed: %v", err)
	return nil, readSecret, &p
}

// substitutionDisabled tells whether a deployment file's metadata opts out of substitution
// with the annotation or label SubstituteAnnotation: disabled, as Flux reads it on an object.
// A file that is not YAML is substituted: parsing it reports what is wrong.
func substitutionDisabled(data []byte) bool {
	node, problems := decodeSingleDocument("", data)
	if problems != nil || node == nil {
		return false
	}
	var top struct {
		Metadata struct {
			Annotations map[string]any `yaml:"annotations"`
			Labels      map[string]any `yaml:"labels"`
		} `yaml:"metadata"`
	}
	if node.Decode(&top) != nil {
		return false
	}
	return top.Metadata.Annotations[SubstituteAnnotation] == SubstituteDisabled ||
		top.Metadata.Labels[SubstituteAnnotation] == SubstituteDisabled
}

// redact replaces in the problems' messages the values of the Secret variables a file read, so
// that a problem of a substituted file never shows them.
func (s *Substitution) redact(problems []Problem) []Problem {
	for name := range s.FromSecret {
		value := s.Vars[name]
		if value == "" {
			continue
		}
		for i := range problems {
			problems[i].Message = strings.ReplaceAll(problems[i].Message, value, "<redacted: from a Secret>")
		}
	}
	return problems
}
