package gitops

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fluxcd/pkg/envsubst"
	"github.com/fluxcd/pkg/envsubst/parse"
)

// SubstituteAnnotation is the annotation (or label) of a deployment file's metadata that, set
// to SubstituteDisabled, keeps variables from being substituted in it: Flux's
// kustomize-controller reads it on an object.
const (
	SubstituteAnnotation = "kustomize.toolkit.fluxcd.io/substitute"
	SubstituteDisabled   = "disabled"
)

// Bounds on substitution, which multiplies what a file holds: each reference may expand to a
// whole variable, so that a 4 KiB file of ${v} with a 16 KiB variable would be 16 MiB. They
// hold whatever the variables, which may come from Secrets, are.
const (
	// MaxVariableBytes bounds the value of each variable.
	MaxVariableBytes = 64 << 10
	// MaxSubstitutedFileBytes bounds a deployment file once substituted: the bound on a file
	// as read. Arguments of a reference (a default, a replacement) count as envsubst expands
	// them, whether used or not.
	MaxSubstitutedFileBytes = maxYAMLFileBytes
	// MaxVariableReferences bounds the references (each ${) of one deployment file: parsing
	// them takes envsubst about 250 bytes of memory each, heap and stack.
	MaxVariableReferences = 4096
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
	// Versions identify, by name, the values of the variables that came from a Secret
	// without telling them (its uid and resourceVersion): a change of one is told by the
	// variable's name.
	Versions map[string]string
	// DigestKey keys the digests of the instances that read a Secret's variable; the caller
	// derives it from the Secrets' UIDs and resourceVersions.
	DigestKey []byte
	// Strict makes a variable without value and without default an error.
	Strict bool
}

// checkVariables refuses the variables whose names envsubst could never read, and those
// over MaxVariableBytes, naming them, never telling their values.
func (s *Substitution) checkVariables() []Problem {
	var problems []Problem
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range s.Vars {
			if !yield(name) {
				return
			}
		}
	}) {
		switch {
		case !variableNamePattern.MatchString(name):
			problems = append(problems, Problem{Message: fmt.Sprintf("spec.postBuild: variable %q has an invalid name: it must match %s",
				truncate(name, 64), variableNamePattern)})
		case len(s.Vars[name]) > MaxVariableBytes:
			problems = append(problems, Problem{Message: fmt.Sprintf("spec.postBuild: variable %q is %d bytes long, more than the limit of %d",
				name, len(s.Vars[name]), MaxVariableBytes)})
		}
	}
	return problems
}

// substitute returns the deployment file's text with its variables substituted, unless its
// metadata opts out, and the origins of the variables it read; readSecret tells whether it
// read a variable that came from a Secret. A failed substitution is a problem at the line of
// the first variable that fails.
func (s *Substitution) substitute(file string, data []byte) (substituted []byte, read []Origin, readSecret bool, problem *Problem) {
	if s == nil || substitutionDisabled(data) {
		return data, nil, false, nil
	}
	if problem := s.checkExpansion(file, data); problem != nil {
		return nil, nil, false, problem
	}
	lookup := func(name string) (string, bool) {
		value, set := s.Vars[name]
		readSecret = readSecret || set && s.FromSecret[name]
		if len(read) < MaxOrigins && !slices.ContainsFunc(read, func(o Origin) bool { return o.Name == "variable "+name }) {
			read = append(read, s.origin(name))
		}
		return value, set || !s.Strict
	}
	output, err := envsubst.Eval(string(data), lookup)
	if err == nil {
		return []byte(output), read, readSecret, nil
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
	return nil, nil, readSecret, &p
}

// origin is variable name's origin: its value's fingerprint, or its Secret's version's.
func (s *Substitution) origin(name string) Origin {
	value, set := s.Vars[name]
	switch {
	case !set:
		value = "\x00unset"
	case s.FromSecret[name]:
		value = "\x00secret " + s.Versions[name]
	}
	return newOrigin("variable "+name, value)
}

// checkExpansion refuses, before anything is expanded, a file of more than
// MaxVariableReferences references, or whose substituted text could be larger than
// MaxSubstitutedFileBytes: it adds up, in file order, the text and what each reference can
// write (expansionBound), and stops at the first that goes past the bound, reported at its
// line. A file envsubst cannot parse passes: substituting it reports the error.
func (s *Substitution) checkExpansion(file string, data []byte) *Problem {
	if line := lineOfReference(data, MaxVariableReferences+1); line > 0 {
		p := problemf(file, line, "variable substitution (spec.postBuild) failed: the file has more than %d variable references (${)", MaxVariableReferences)
		return &p
	}
	tree, err := parse.Parse(string(data))
	if err != nil {
		return nil
	}
	w := &expansionWalk{vars: s.Vars}
	var written int64
	// The root is a chain of lists, one deeper per reference: walked with a stack.
	pending := []parse.Node{tree.Root}
	for len(pending) > 0 {
		node := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if list, ok := node.(*parse.ListNode); ok {
			for _, v := range slices.Backward(list.Nodes) {
				pending = append(pending, v)
			}
			continue
		}
		line := w.newlines + 1
		if _, work := w.bound(node); written+work <= MaxSubstitutedFileBytes {
			written += work
			continue
		}
		p := problemf(file, line, "variable substitution (spec.postBuild) failed: from this line on the file is larger than the limit of %d bytes",
			MaxSubstitutedFileBytes)
		switch node := node.(type) {
		case *parse.TextNode:
			p.Line += strings.Count(node.Value[:MaxSubstitutedFileBytes-written], "\n")
		case *parse.FuncNode:
			p.Message = fmt.Sprintf("variable substitution (spec.postBuild) failed: expanding variable %q here makes the file larger than the limit of %d bytes",
				truncate(node.Param, 64), MaxSubstitutedFileBytes)
		}
		return &p
	}
	return nil
}

// lineOfReference is the line of the nth reference (${) of data, 0 when there are fewer.
func lineOfReference(data []byte, n int) int {
	offset := 0
	for range n {
		i := bytes.Index(data[offset:], []byte("${"))
		if i < 0 {
			return 0
		}
		offset += i + len("${")
	}
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}

// expansionWalk bounds what envsubst writes for the nodes of a parse tree, without expanding
// them, and counts the lines of the text it walks.
type expansionWalk struct {
	vars     map[string]string
	newlines int
}

// bound returns an upper bound of the bytes node writes to its output, and of all it writes
// (its arguments first, each in a buffer of its own), both capped past
// MaxSubstitutedFileBytes. It is exact for all but the case functions, counted as three
// bytes per byte (an invalid one becomes U+FFFD), the suffix trims (${v%...}, ${v%%...}),
// three per byte and six more, and a ${v//pattern/...} whose pattern is itself a reference,
// counted as if it matched everywhere.
func (w *expansionWalk) bound(node parse.Node) (output, work int64) {
	switch node := node.(type) {
	case *parse.TextNode:
		w.newlines += strings.Count(node.Value, "\n")
		output = int64(len(node.Value))
		return output, output
	case *parse.ListNode:
		for _, item := range node.Nodes {
			itemOutput, itemWork := w.bound(item)
			output, work = capped(output+itemOutput), capped(work+itemWork)
		}
		return output, work
	case *parse.FuncNode:
		output = w.functionBound(node, &work)
		return output, capped(work + output)
	default:
		return 0, 0
	}
}

// functionBound is bound's output of a function (see lookupFunc in envsubst's template.go),
// adding the work of its arguments to work.
func (w *expansionWalk) functionBound(node *parse.FuncNode, work *int64) int64 {
	args := make([]int64, len(node.Args))
	for i, arg := range node.Args {
		var argWork int64
		args[i], argWork = w.bound(arg)
		*work = capped(*work + argWork)
	}
	value := w.vars[node.Param]
	length := int64(len(value))
	arg := func(i int) int64 {
		if i < len(args) {
			return args[i]
		}
		return 0
	}
	switch node.Name {
	case "#":
		if len(args) == 0 {
			return int64(len("9223372036854775807")) // the length itself
		}
		return length
	case "##", ":":
		return length
	case ",", ",,", "^", "^^":
		return capped(3 * length)
	case "%", "%%":
		// The suffix trims reverse the value rune by rune (an invalid byte becomes U+FFFD), cut
		// bytes off its start, maybe within a rune, and reverse again: the up to three bytes
		// left of a cut rune become U+FFFD each (two more bytes each).
		return capped(3*length + 2*(utf8.UTFMax-1))
	case "/", "/#", "/%":
		return capped(length + arg(1))
	case "//":
		matches := length + 1 // an empty pattern matches before every rune and at the end
		if pattern, ok := node.Args[0].(*parse.TextNode); ok {
			matches = int64(strings.Count(value, pattern.Value))
		}
		return capped(length + matches*arg(1))
	default: // the default functions and ${v}: the value, or else the arguments
		if length > 0 {
			return length
		}
		var joined int64
		for _, a := range args {
			joined = capped(joined + a)
		}
		return joined
	}
}

// capped keeps a bound from growing past MaxSubstitutedFileBytes+1 (nor overflowing): past
// the limit, by how much does not matter.
func capped(n int64) int64 {
	return min(n, MaxSubstitutedFileBytes+1)
}

// substitutionDisabled tells whether a deployment file's metadata opts out of substitution
// with the annotation or label SubstituteAnnotation: disabled, as Flux reads it on an object.
// A file that is not YAML is substituted: parsing it reports what is wrong.
func substitutionDisabled(data []byte) bool {
	node, _, problems := decodeSingleDocument("", data)
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
// problem of a substituted file never shows them; whole, when they are too large to mask.
func (s *Substitution) redact(problems []Problem) []Problem {
	var mask Mask
	tooLarge := mask.Add(s.SecretValues()) != nil
	for i := range problems {
		if tooLarge {
			problems[i].Message = SecretMask
		} else {
			problems[i].Message = mask.Apply(problems[i].Message)
		}
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
