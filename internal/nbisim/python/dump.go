package python

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/osmops/osmops/internal/pyjson"
	"github.com/osmops/osmops/internal/pyyaml"
)

// The NBI is written in Python, and some of what it returns is Python's
// rendering of a value rather than JSON from the wire: a KDU's params are
// stored as the string json.dumps makes, nested param values as
// "!!yaml " + yaml.safe_dump(v), and error messages quote values with repr().
// These functions reproduce those renderings so that the simulator's answers
// read like the real ones.

// pythonStyle is how Python prints values: json.dumps or repr().
type pythonStyle struct {
	quote            func(*strings.Builder, string)
	float            func(float64) string
	yes, no, nothing string
}

var (
	jsonStyle = pythonStyle{quote: writePythonString, float: FloatDumps, yes: "true", no: "false", nothing: "null"}
	reprStyle = pythonStyle{quote: writePythonStringRepr, float: floatRepr, yes: "True", no: "False", nothing: "None"}
)

// JSONDumps renders v as Python's json.dumps(v) does with its defaults:
// ", " and ": " separators and non-ASCII characters escaped.
func JSONDumps(v any) string {
	var b strings.Builder
	jsonStyle.write(&b, v)
	return b.String()
}

// Repr renders v as Python's repr() of the value json.loads or yaml.safe_load would give.
func Repr(v any) string {
	var b strings.Builder
	reprStyle.write(&b, v)
	return b.String()
}

func (style pythonStyle) write(b *strings.Builder, v any) {
	switch value := v.(type) {
	case *Dict:
		b.WriteByte('{')
		for i, m := range value.Members {
			if i > 0 {
				b.WriteString(", ")
			}
			style.write(b, m.Key)
			b.WriteString(": ")
			style.write(b, m.Value)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, item := range value {
			if i > 0 {
				b.WriteString(", ")
			}
			style.write(b, item)
		}
		b.WriteByte(']')
	case []string:
		items := make([]any, len(value))
		for i, s := range value {
			items[i] = s
		}
		style.write(b, items)
	case string:
		style.quote(b, value)
	case json.Number:
		b.WriteString(pythonNumber(value))
	case float64:
		b.WriteString(style.float(value))
	case *big.Int:
		b.WriteString(value.String())
	case pyDate:
		fmt.Fprintf(b, "datetime.date(%d, %d, %d)", value.year, value.month, value.day)
	case bool:
		b.WriteString(map[bool]string{true: style.yes, false: style.no}[value])
	case nil:
		b.WriteString(style.nothing)
	default:
		data, _ := json.Marshal(value)
		b.Write(data)
	}
}

// writePythonString writes s as a JSON string with ensure_ascii escaping.
func writePythonString(b *strings.Builder, s string) {
	b.WriteString(pyjson.Quote(s))
}

// pythonNumber renders a JSON number the way Python prints it after
// json.loads: integers as they are, floats with repr().
func pythonNumber(n json.Number) string {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return strconv.FormatInt(i, 10)
	}
	if f, err := n.Float64(); err == nil {
		return FloatDumps(f)
	}
	return string(n)
}

// FloatDumps is json.dumps(float), which is repr(float) for a finite float:
// the shortest round-trip digits, in positional notation from 1e-4 up to 1e16
// (with ".0" when integral), else in exponent notation such as 1e+16 or
// 1.5e-05; Infinity and NaN where repr writes inf and nan.
func FloatDumps(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	scientific := strconv.FormatFloat(f, 'e', -1, 64)
	mantissa, exponentText, _ := strings.Cut(scientific, "e")
	exponent, _ := strconv.Atoi(exponentText)
	if exponent >= -4 && exponent < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if exponent < 0 {
		sign, exponent = "-", -exponent
	}
	return fmt.Sprintf("%se%s%02d", mantissa, sign, exponent)
}

// floatRepr is repr(float): json.dumps writes Infinity and NaN, repr inf and nan.
func floatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return FloatDumps(f)
}

// writePythonStringRepr quotes s as Python's repr(str) does.
func writePythonStringRepr(b *strings.Builder, s string) { b.WriteString(pyjson.Repr(s)) }

// SafeDump renders v as yaml.safe_dump(v) does: block style, keys sorted,
// list items at their key's indentation, and a string quoted only when
// PyYAML's YAML 1.1 resolver would read its plain text as another type. So
// "yes" and "1_000" are quoted, but "5e3" and "0o17" are not (PyYAML reads
// them as strings; a YAML 1.2 reader would not), as in OSM's records.
func SafeDump(v any) string {
	var b strings.Builder
	encoder := yaml.NewEncoder(&b)
	encoder.SetIndent(2)
	encoder.CompactSeqIndent()
	if err := encoder.Encode(pyYAMLNode(v)); err != nil {
		// Values from parsed JSON always encode; keep the JSON if not.
		return JSONDumps(v)
	}
	if err := encoder.Close(); err != nil {
		return JSONDumps(v)
	}
	return b.String()
}

// pyYAMLNode is the node safe_dump writes for a value of parsed JSON.
func pyYAMLNode(v any) *yaml.Node {
	scalar := func(text string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Value: text}
	}
	switch value := v.(type) {
	case *Dict:
		node := &yaml.Node{Kind: yaml.MappingNode}
		members := slices.Clone(value.Members)
		slices.SortFunc(members, func(a, b Member) int {
			order, _ := Compare(a.Key, b.Key)
			return order
		})
		for _, m := range members {
			node.Content = append(node.Content, pyYAMLNode(m.Key), pyYAMLNode(m.Value))
		}
		return node
	case []any:
		node := &yaml.Node{Kind: yaml.SequenceNode}
		for _, item := range value {
			node.Content = append(node.Content, pyYAMLNode(item))
		}
		return node
	case json.Number:
		text := pythonNumber(value)
		if strings.Contains(text, "e") && !strings.Contains(text, ".") {
			// represent_float: 1e+17 becomes 1.0e+17, which YAML 1.1 reads as a float.
			text = strings.Replace(text, "e", ".0e", 1)
		}
		return scalar(text)
	case bool:
		return scalar(strconv.FormatBool(value))
	case nil:
		return scalar("null")
	case string:
		node := scalar(value)
		if pyyaml.ImplicitTag(value) != "!!str" {
			node.Style = yaml.SingleQuotedStyle
		}
		return node
	}
	return scalar(fmt.Sprint(v))
}
