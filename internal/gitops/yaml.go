package gitops

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Bounds on the YAML files of a revision (deployment files and the settings
// file), which come from a Git repository and may be hostile.
const (
	// maxYAMLFileBytes is checked before a file is read.
	maxYAMLFileBytes = 1 << 20
	// maxYAMLDepth bounds nesting; Helm values rarely go past ten levels.
	maxYAMLDepth = 64
)

// Bounds on what parsing makes of a revision's YAML, which the bounds on bytes do not see: a
// 1 MiB file of tiny keys is millions of bytes of Go maps. The parsed size of a document
// counts ParsedNodeBytes for each node (key, value, list item) and twice the bytes of its text
// (a value is kept as a string and again in its canonical JSON); what a revision keeps once
// loaded is at most its parsed size (TestParsedRevisionAtItsBoundStaysWithinItsParsedSize).
const (
	// ParsedNodeBytes is what one YAML node counts: more than it costs once kept (measured: 40
	// bytes a map key or value, 18 a list item, canonical JSON included).
	ParsedNodeBytes = 48
	// MaxParsedFileBytes bounds the parsed size of one YAML document: a deployment file, the
	// settings file, a key of values from a ConfigMap or Secret.
	MaxParsedFileBytes = 8 << 20
	// MaxParsedRevisionBytes bounds the parsed size of a revision's deployment files together.
	MaxParsedRevisionBytes = 64 << 20
)

// readBoundedFile reads the file name of fsys, refusing it with a problem,
// before reading it, when it is over maxYAMLFileBytes.
func readBoundedFile(fsys fs.FS, name string) ([]byte, *Problem, error) {
	file, err := fsys.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = file.Close() }()
	info, err := file.Stat()
	if err != nil {
		return nil, nil, err
	}
	tooBig := problemf(name, 0, "the file is larger than the limit of %d bytes", maxYAMLFileBytes)
	if info.Size() > maxYAMLFileBytes {
		return nil, &tooBig, nil
	}
	// Bound the read too: the file may have grown since Stat.
	data, err := io.ReadAll(io.LimitReader(file, maxYAMLFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxYAMLFileBytes {
		return nil, &tooBig, nil
	}
	return data, nil, nil
}

// decodeSingleDocument parses data, which must hold at most one YAML
// document, and returns that document's top node, nil for a file without
// any document (empty or only comments), and its parsed size. The node has
// no alias, is at most maxYAMLDepth deep and of a parsed size at most
// MaxParsedFileBytes: yaml.v3 does not expand aliases into nodes, and
// refusing them here keeps an alias bomb from ever being expanded later.
func decodeSingleDocument(file string, data []byte) (*yaml.Node, int64, []Problem) {
	decoder := yaml.NewDecoder(bytes.NewReader(data))
	var document yaml.Node
	if err := decoder.Decode(&document); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, 0, nil
		}
		return nil, 0, []Problem{syntaxProblem(file, err)}
	}
	var next yaml.Node
	switch err := decoder.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, 0, []Problem{syntaxProblem(file, err)}
	default:
		return nil, 0, []Problem{problemf(file, documentLine(&next), "a second YAML document starts here; the file must hold only one")}
	}
	top := document.Content[0]
	var size int64
	if problem := checkNodes(file, top, 1, &size); problem != nil {
		return nil, 0, []Problem{*problem}
	}
	return top, size, nil
}

// documentLine is the line where a document's content starts.
func documentLine(document *yaml.Node) int {
	if len(document.Content) > 0 {
		return document.Content[0].Line
	}
	return document.Line
}

// checkNodes refuses aliases, nesting deeper than maxYAMLDepth, and a parsed size, added up
// in size, over MaxParsedFileBytes.
func checkNodes(file string, node *yaml.Node, depth int, size *int64) *Problem {
	if node.Kind == yaml.AliasNode {
		problem := problemf(file, node.Line, "YAML aliases (*%s) are not allowed", node.Value)
		return &problem
	}
	if depth > maxYAMLDepth {
		problem := problemf(file, node.Line, "the YAML is nested deeper than %d levels", maxYAMLDepth)
		return &problem
	}
	*size += ParsedNodeBytes + 2*int64(len(node.Value))
	if *size > MaxParsedFileBytes {
		problem := problemf(file, node.Line, "from this line on the YAML is larger than the limit of %d bytes once parsed (%d bytes a key, value or item, and twice its text)",
			MaxParsedFileBytes, ParsedNodeBytes)
		return &problem
	}
	for _, child := range node.Content {
		if problem := checkNodes(file, child, depth+1, size); problem != nil {
			return problem
		}
	}
	return nil
}

// yamlErrorLine matches the "yaml: line N: " that yaml.v3 puts in its syntax
// errors; it has no structured position, so the line is read from the text.
var yamlErrorLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxProblem turns a yaml.v3 parse error into a Problem at its line.
func syntaxProblem(file string, err error) Problem {
	message := err.Error()
	line := 0
	if match := yamlErrorLine.FindStringSubmatch(message); match != nil {
		line, _ = strconv.Atoi(match[1])
		message = message[len(match[0]):]
	}
	return problemf(file, line, "YAML syntax error: %s", strings.TrimPrefix(message, "yaml: "))
}

// describeNode names a node's type for messages: "a map", "a list", "null",
// "a string".
func describeNode(node *yaml.Node) string {
	switch {
	case node.Kind == yaml.MappingNode:
		return "a map"
	case node.Kind == yaml.SequenceNode:
		return "a list"
	case node.ShortTag() == "!!null":
		return "null"
	default:
		return "a scalar"
	}
}

// mappingField is one key and value of a YAML map.
type mappingField struct {
	key   string
	line  int
	value *yaml.Node
}

// mappingFields lists the fields of a map node in order, with a problem for
// each key that is not a scalar and each key given twice (yaml.v3 keeps
// both in a node tree, and which one wins would be a guess). name prefixes
// the keys in messages ("kdu." gives `field "kdu.name"`).
func mappingFields(file, name string, mapping *yaml.Node) ([]mappingField, []Problem) {
	var fields []mappingField
	var problems []Problem
	firstLine := map[string]int{}
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		key, value := mapping.Content[i], mapping.Content[i+1]
		if key.Kind != yaml.ScalarNode {
			problems = append(problems, problemf(file, key.Line, "this key is %s; keys must be strings", describeNode(key)))
			continue
		}
		if key.ShortTag() == "!!merge" {
			problems = append(problems, problemf(file, key.Line, "YAML merge keys (<<) are not supported"))
			continue
		}
		if first, repeated := firstLine[key.Value]; repeated {
			problems = append(problems, problemf(file, key.Line, "field %q is repeated (first at line %d)", name+key.Value, first))
			continue
		}
		firstLine[key.Value] = key.Line
		fields = append(fields, mappingField{key: key.Value, line: key.Line, value: value})
	}
	return fields, problems
}

// scalarString reads a scalar field as a string, whatever its YAML type
// (yaml.v2, which the first generation used, read `version: 1.0` into a
// string as "1.0" too). A map or a list is a problem; null reads as "".
func scalarString(file, name string, field mappingField) (value string, problem *Problem) {
	switch {
	case field.value.Kind != yaml.ScalarNode:
		p := problemf(file, field.value.Line, "field %q must be a string, not %s", name, describeNode(field.value))
		return "", &p
	case field.value.ShortTag() == "!!null":
		return "", nil
	default:
		return field.value.Value, nil
	}
}
