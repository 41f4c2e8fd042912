package nbisim

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"

	"github.com/osmops/osmops/internal/pyjson"
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
	yes, no, nothing string
}

var (
	jsonStyle = pythonStyle{quote: writePythonString, yes: "true", no: "false", nothing: "null"}
	reprStyle = pythonStyle{quote: writePythonStringRepr, yes: "True", no: "False", nothing: "None"}
)

// pythonJSON renders v as Python's json.dumps(v) does with its defaults:
// ", " and ": " separators and non-ASCII characters escaped.
func pythonJSON(v any) string {
	var b strings.Builder
	jsonStyle.write(&b, v)
	return b.String()
}

// pythonRepr renders v as Python's repr() of the value json.loads would give.
func pythonRepr(v any) string {
	var b strings.Builder
	reprStyle.write(&b, v)
	return b.String()
}

func (style pythonStyle) write(b *strings.Builder, v any) {
	switch value := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, m := range value.members {
			if i > 0 {
				b.WriteString(", ")
			}
			style.quote(b, m.key)
			b.WriteString(": ")
			style.write(b, m.value)
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
		b.WriteString(pythonFloat(value))
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
		return pythonFloat(f)
	}
	return string(n)
}

// pythonFloat is Python's repr(float): the shortest round-trip digits, in
// positional notation from 1e-4 up to 1e16 (with ".0" when integral), else in
// exponent notation such as 1e+16 or 1.5e-05.
func pythonFloat(f float64) string {
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

// writePythonStringRepr quotes s as Python's repr(str) does: single quotes
// unless s holds a single quote and no double quote.
func writePythonStringRepr(b *strings.Builder, s string) {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	b.WriteRune(quote)
	for _, r := range s {
		switch {
		case r == quote || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError || !unicode.IsPrint(r):
			fmt.Fprintf(b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteRune(quote)
}

// pythonYAML renders v as yaml.safe_dump(v) does: block style, keys sorted.
// go.yaml.in/yaml/v2 writes the same layout as PyYAML (v3 indents lists
// differently); it quotes strings with double quotes where PyYAML uses
// single ones, a difference nobody reads the values for.
func pythonYAML(v any) string {
	data, err := yamlv2.Marshal(plainValue(v))
	if err != nil {
		// Values from parsed JSON always marshal; keep the JSON if not.
		return pythonJSON(v)
	}
	return string(data)
}

// plainValue turns object trees into maps (sorted by the YAML encoder, as
// PyYAML's sort_keys does) and numbers into Go numbers.
func plainValue(v any) any {
	switch value := v.(type) {
	case *object:
		m := make(map[string]any, len(value.members))
		for _, member := range value.members {
			m[member.key] = plainValue(member.value)
		}
		return m
	case []any:
		items := make([]any, len(value))
		for i, item := range value {
			items[i] = plainValue(item)
		}
		return items
	case json.Number:
		if i, err := value.Int64(); err == nil {
			return i
		}
		f, _ := value.Float64()
		return f
	}
	return v
}
