package gitops

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fluxcd/pkg/envsubst"

	"github.com/osmops/osmops/internal/printable"
	"github.com/osmops/osmops/internal/pyjson"
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

// redact masks in the problems' messages the values of the Secret variables, so that a
// problem of a substituted file never shows them.
func (s *Substitution) redact(problems []Problem) []Problem {
	secrets := s.SecretValues()
	for i := range problems {
		problems[i].Message = MaskSecrets(problems[i].Message, secrets)
	}
	return problems
}

// SecretValues are the values of the variables that came from a Secret.
func (s *Substitution) SecretValues() []string {
	if s == nil {
		return nil
	}
	var values []string
	for name := range s.FromSecret {
		if s.FromSecret[name] && s.Vars[name] != "" {
			values = append(values, s.Vars[name])
		}
	}
	return values
}

// SecretMask is what a message shows instead of a value from a Secret.
const SecretMask = "<redacted: from a Secret>"

// MaskSecrets replaces in text each secret in every form a message may quote it: as is, quoted
// by Go (%q, with and without ASCII escapes), by JSON (Go's, Python's) and escaped for display
// (printable.String), longest first so that a form containing another goes whole. When in
// doubt it masks: a short secret masks its text wherever it appears.
func MaskSecrets(text string, secrets []string) string {
	var forms []string
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		quoted, ascii, python := strconv.Quote(secret), strconv.QuoteToASCII(secret), pyjson.Quote(secret)
		forms = append(forms, secret, printable.String(secret), quoted[1:len(quoted)-1], ascii[1:len(ascii)-1], python[1:len(python)-1])
		if encoded, err := json.Marshal(secret); err == nil {
			forms = append(forms, string(encoded[1:len(encoded)-1]))
		}
	}
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	for _, form := range slices.Compact(forms) {
		text = strings.ReplaceAll(text, form, SecretMask)
	}
	return text
}
