// Package pyyaml reads YAML as OSM's Python code does with PyYAML (yaml.safe_load: YAML 1.1's
// implicit types), where Go's YAML libraries follow other rules: the NBI keeps a map or a list
// of params as "!!yaml " + yaml.safe_dump(value), which writes the string "5e3" or "0o17"
// plain because PyYAML reads them as strings, while a YAML 1.2 reader makes numbers of them.
// The simulator (to store and compare alike) and the client (to read what OSM stores) need it.
//
// It imports no other osmops package, so that both sides (client and simulator) may use it.
package pyyaml

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// PyYAML's implicit resolvers (resolver.py), tried in this order.
var resolvers = []struct {
	tag         string
	firstChars  string
	matchesNone bool // also tried for the empty scalar
	pattern     *regexp.Regexp
}{
	{"!!bool", "yYnNtTfFoO", false, regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)},
	{"!!float", "-+0123456789.", false, regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)},
	{"!!int", "-+0123456789", false, regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)},
	{"!!null", "~nN", true, regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)},
	{"!!timestamp", "0123456789", false, regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)},
}

// ImplicitTag is the tag PyYAML gives a plain scalar: "!!str" unless a resolver claims it.
func ImplicitTag(value string) string {
	for _, resolver := range resolvers {
		applies := value == "" && resolver.matchesNone || value != "" && strings.ContainsRune(resolver.firstChars, []rune(value)[0])
		if applies && resolver.pattern.MatchString(value) {
			return resolver.tag
		}
	}
	return "!!str"
}

// Int is SafeConstructor.construct_yaml_int.
func Int(text string) (*big.Int, bool) {
	value := strings.ReplaceAll(text, "_", "")
	if value == "" {
		return nil, false
	}
	sign := int64(1)
	if value[0] == '-' {
		sign = -1
	}
	if value[0] == '-' || value[0] == '+' {
		value = value[1:]
	}
	n := new(big.Int)
	ok := true
	switch {
	case value == "0":
	case strings.HasPrefix(value, "0b"):
		_, ok = n.SetString(value[2:], 2)
	case strings.HasPrefix(value, "0x"):
		_, ok = n.SetString(value[2:], 16)
	case strings.HasPrefix(value, "0"):
		_, ok = n.SetString(value, 8)
	case strings.Contains(value, ":"):
		base := big.NewInt(1)
		parts := strings.Split(value, ":")
		for _, part := range slices.Backward(parts) {
			digit, isInt := new(big.Int).SetString(part, 10)
			if !isInt {
				return nil, false
			}
			n.Add(n, digit.Mul(digit, base))
			base.Mul(base, big.NewInt(60))
		}
	default:
		_, ok = n.SetString(value, 10)
	}
	return n.Mul(n, big.NewInt(sign)), ok
}

// Float is SafeConstructor.construct_yaml_float.
func Float(text string) (float64, bool) {
	value := strings.ToLower(strings.ReplaceAll(text, "_", ""))
	if value == "" {
		return 0, false
	}
	sign := 1.0
	if value[0] == '-' {
		sign = -1
	}
	if value[0] == '-' || value[0] == '+' {
		value = value[1:]
	}
	switch {
	case value == ".inf":
		return sign * math.Inf(1), true
	case value == ".nan":
		return math.NaN(), true
	case strings.Contains(value, ":"):
		total, base := 0.0, 1.0
		parts := strings.Split(value, ":")
		for _, part := range slices.Backward(parts) {
			digit, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return 0, false
			}
			total += digit * base
			base *= 60
		}
		return sign * total, true
	}
	f, err := strconv.ParseFloat(value, 64)
	return sign * f, err == nil
}

// ErrNotJSON is a document whose value JSON cannot hold as yaml.safe_load reads it, or one
// that yaml.safe_dump of a JSON value never writes (aliases, merge keys, tags, non-finite
// numbers).
var ErrNotJSON = errors.New("not a JSON value as yaml.safe_load reads it")

// LoadJSON reads a document that yaml.safe_dump wrote of a JSON value, with PyYAML's types,
// into the types encoding/json gives: map[string]any, []any, string, float64, bool and nil. A timestamp keeps its text. Aliases are refused rather than
// expanded: safe_dump writes none for a tree, and expanding them would let a small answer
// become a large value.
func LoadJSON(data []byte) (any, error) {
	var node yaml.Node
	if err := yaml.Unmarshal(data, &node); err != nil {
		return nil, err
	}
	if node.Kind == 0 || len(node.Content) == 0 {
		return nil, nil
	}
	return loadJSON(node.Content[0])
}

func loadJSON(node *yaml.Node) (any, error) {
	switch node.Kind {
	case yaml.SequenceNode:
		items := make([]any, 0, len(node.Content))
		for _, child := range node.Content {
			item, err := loadJSON(child)
			if err != nil {
				return nil, err
			}
			items = append(items, item)
		}
		return items, nil
	case yaml.MappingNode:
		values := make(map[string]any, len(node.Content)/2)
		for i := 0; i+1 < len(node.Content); i += 2 {
			key := node.Content[i]
			if key.Kind != yaml.ScalarNode || key.Tag == "!!merge" {
				return nil, ErrNotJSON
			}
			value, err := loadJSON(node.Content[i+1])
			if err != nil {
				return nil, err
			}
			values[key.Value] = value
		}
		return values, nil
	case yaml.ScalarNode:
		return scalarJSON(node)
	}
	return nil, ErrNotJSON
}

func scalarJSON(node *yaml.Node) (any, error) {
	if node.Style&yaml.TaggedStyle != 0 {
		return nil, ErrNotJSON
	}
	if node.Style != 0 {
		return node.Value, nil // quoted, literal or folded: a string
	}
	switch ImplicitTag(node.Value) {
	case "!!null":
		return nil, nil
	case "!!bool":
		switch strings.ToLower(node.Value) {
		case "yes", "true", "on":
			return true, nil
		}
		return false, nil
	case "!!int":
		if n, ok := Int(node.Value); ok {
			f, _ := new(big.Float).SetInt(n).Float64()
			return f, nil
		}
		return nil, ErrNotJSON
	case "!!float":
		f, ok := Float(node.Value)
		if !ok || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, ErrNotJSON
		}
		return f, nil
	}
	return node.Value, nil
}
