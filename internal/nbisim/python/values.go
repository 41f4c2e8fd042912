package python

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/osmops/osmops/internal/pyyaml"
)

// The NBI compares an in-use descriptor with its update as the Python
// values yaml.safe_load makes of them. PyYAML reads YAML 1.1, where yes,
// on and 0777 are not strings, and Python tells int from float and bool
// from int, which JSON values do not. The values below are Python's:
//
//	None         nil
//	bool         bool
//	int          *big.Int
//	float        float64
//	str          string
//	datetime.date, datetime.datetime   pyDate, pyDatetime
//	list         []any
//	dict         *Dict
//
// Values read from JSON hold numbers as json.Number, which pyScalar turns
// into the int or float json.loads makes.

type pyDate struct{ year, month, day int }

// pyDatetime is a datetime.datetime; a naive one keeps its wall clock in UTC.
type pyDatetime struct {
	t     time.Time
	aware bool
}

// TypeName is type(v).__name__ as Python's messages print it.
func TypeName(v any) string {
	switch pyScalar(v).(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case *big.Int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case pyDate:
		return "datetime.date"
	case pyDatetime:
		return "datetime.datetime"
	case []any:
		return "list"
	case *Dict:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// pyScalar is the Python value of a number read from JSON (json.loads
// makes an int of an integer literal, else a float; a float too large is
// inf) or of a query (an int64); other values are returned as they are.
func pyScalar(v any) any {
	switch n := v.(type) {
	case json.Number:
		if i, isInt := new(big.Int).SetString(string(n), 10); isInt {
			return i
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return v
		}
		return f
	case int64:
		return big.NewInt(n)
	case int:
		return big.NewInt(int64(n))
	}
	return v
}

// pyNumber is a Python number as an exact rational: bool, int or a finite
// float, which Python compares by value (1 == 1.0 == True).
func pyNumber(v any) (*big.Rat, bool) {
	switch n := pyScalar(v).(type) {
	case bool:
		if n {
			return big.NewRat(1, 1), true
		}
		return new(big.Rat), true
	case *big.Int:
		return new(big.Rat).SetInt(n), true
	case float64:
		if math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, false
		}
		return new(big.Rat).SetFloat64(n), true
	}
	return nil, false
}

// pyFloat is float(v) of a Python number.
func pyFloat(v any) float64 {
	switch n := pyScalar(v).(type) {
	case bool:
		if n {
			return 1
		}
	case *big.Int:
		f, _ := new(big.Float).SetInt(n).Float64()
		return f
	case float64:
		return n
	}
	return 0
}

func isPyNumber(v any) bool {
	switch pyScalar(v).(type) {
	case bool, *big.Int, float64:
		return true
	}
	return false
}

// Equal is Python's ==.
func Equal(a, b any) bool {
	a, b = pyScalar(a), pyScalar(b)
	if isPyNumber(a) && isPyNumber(b) {
		x, finiteX := pyNumber(a)
		y, finiteY := pyNumber(b)
		if finiteX && finiteY {
			return x.Cmp(y) == 0
		}
		f, isFloat := a.(float64)
		g, isFloatToo := b.(float64)
		return isFloat && isFloatToo && f == g // infinities; NaN equals nothing
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case pyDate:
		y, ok := b.(pyDate)
		return ok && x == y
	case pyDatetime:
		y, ok := b.(pyDatetime)
		return ok && x.aware == y.aware && x.t.Equal(y.t)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Dict:
		y, ok := b.(*Dict)
		if !ok || len(x.Members) != len(y.Members) {
			return false
		}
		for _, m := range x.Members {
			other, found := y.Get(m.Key)
			if !found || !Equal(m.Value, other) {
				return false
			}
		}
		return true
	}
	return false
}

// Truthy is Python's bool(v).
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case *big.Int:
		return x.Sign() != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case *Dict:
		return len(x.Members) > 0
	}
	return true
}

// errPyYAML is a document PyYAML would not load.
var errPyYAML = errors.New("not loadable by yaml.safe_load")

// SafeLoad reads a YAML document as PyYAML's yaml.safe_load does: YAML
// 1.1's implicit types (resolver.py), merge keys and duplicate keys
// (SafeConstructor), into the values above. An empty document is None.
func SafeLoad(data []byte) (any, error) {
	var node yaml.Node
	if err := yaml.Unmarshal(data, &node); err != nil {
		return nil, err
	}
	if node.Kind == 0 {
		return nil, nil
	}
	return constructPy(&node)
}

func constructPy(node *yaml.Node) (any, error) {
	switch node.Kind {
	case yaml.DocumentNode:
		if len(node.Content) == 0 {
			return nil, nil
		}
		return constructPy(node.Content[0])
	case yaml.AliasNode:
		return constructPy(node.Alias)
	case yaml.SequenceNode:
		items := make([]any, 0, len(node.Content))
		for _, child := range node.Content {
			item, err := constructPy(child)
			if err != nil {
				return nil, err
			}
			items = append(items, item)
		}
		return items, nil
	case yaml.MappingNode:
		return constructPyMapping(node)
	}
	return constructPyScalar(node)
}

// constructPyMapping is SafeConstructor.construct_mapping after
// flatten_mapping: the pairs of the merged mappings come first, and a
// later pair with the same key replaces the value in place.
func constructPyMapping(node *yaml.Node) (any, error) {
	pairs, err := flattenMapping(node)
	if err != nil {
		return nil, err
	}
	dict := &Dict{}
	for i := 0; i+1 < len(pairs); i += 2 {
		key, err := constructPy(pairs[i])
		if err != nil {
			return nil, err
		}
		switch key.(type) {
		case []any, *Dict:
			return nil, errPyYAML // found unhashable key
		}
		value, err := constructPy(pairs[i+1])
		if err != nil {
			return nil, err
		}
		dict.Set(key, value)
	}
	return dict, nil
}

func flattenMapping(node *yaml.Node) ([]*yaml.Node, error) {
	var merge, own []*yaml.Node
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i], node.Content[i+1]
		if key.Kind != yaml.ScalarNode || key.Tag != "!!merge" {
			own = append(own, key, value)
			continue
		}
		for value.Kind == yaml.AliasNode {
			value = value.Alias
		}
		switch value.Kind {
		case yaml.MappingNode:
			pairs, err := flattenMapping(value)
			if err != nil {
				return nil, err
			}
			merge = append(merge, pairs...)
		case yaml.SequenceNode:
			var submerge [][]*yaml.Node
			for _, sub := range value.Content {
				for sub.Kind == yaml.AliasNode {
					sub = sub.Alias
				}
				if sub.Kind != yaml.MappingNode {
					return nil, errPyYAML
				}
				pairs, err := flattenMapping(sub)
				if err != nil {
					return nil, err
				}
				submerge = append(submerge, pairs)
			}
			for _, s := range slices.Backward(submerge) {
				merge = append(merge, s...)
			}
		default:
			return nil, errPyYAML
		}
	}
	return append(merge, own...), nil
}

func constructPyScalar(node *yaml.Node) (any, error) {
	tag := "!!str"
	switch {
	case node.Style&yaml.TaggedStyle != 0:
		tag = node.Tag
	case node.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0:
		tag = pyyaml.ImplicitTag(node.Value)
	}
	value := node.Value
	switch tag {
	case "!!str", "!!merge":
		return value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		switch strings.ToLower(value) {
		case "yes", "true", "on":
			return true, nil
		case "no", "false", "off":
			return false, nil
		}
	case "!!int":
		if n, ok := pyyaml.Int(value); ok {
			return n, nil
		}
	case "!!float":
		if f, ok := pyyaml.Float(value); ok {
			return f, nil
		}
	case "!!timestamp":
		if t, ok := pyYAMLTimestamp(value); ok {
			return t, nil
		}
	}
	return nil, errPyYAML
}

var pyYAMLTimestampParts = regexp.MustCompile(`^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?)?$`)

// pyYAMLTimestamp is SafeConstructor.construct_yaml_timestamp.
func pyYAMLTimestamp(text string) (any, bool) {
	m := pyYAMLTimestampParts.FindStringSubmatch(text)
	if m == nil {
		return nil, false
	}
	number := func(s string) int {
		n, _ := strconv.Atoi(s)
		return n
	}
	year, month, day := number(m[1]), number(m[2]), number(m[3])
	date := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	if date.Year() != year || int(date.Month()) != month || date.Day() != day {
		return nil, false // datetime.date raises a ValueError
	}
	if m[4] == "" {
		return pyDate{year, month, day}, true
	}
	hour, minute, second := number(m[4]), number(m[5]), number(m[6])
	if hour > 23 || minute > 59 || second > 59 {
		return nil, false
	}
	fraction := m[7]
	if len(fraction) > 6 {
		fraction = fraction[:6]
	}
	micro := number(fraction + strings.Repeat("0", 6-len(fraction)))
	t := time.Date(year, time.Month(month), day, hour, minute, second, micro*1000, time.UTC)
	aware := m[8] != ""
	if m[9] != "" {
		offset := time.Duration(number(m[10]))*time.Hour + time.Duration(number(m[11]))*time.Minute
		if m[9] == "-" {
			offset = -offset
		}
		t = t.Add(-offset)
	}
	return pyDatetime{t: t, aware: aware}, true
}

// Compare orders two values as Python does, numbers with numbers and
// strings with strings; ok is false where Python raises a TypeError.
func Compare(a, b any) (int, bool) {
	if isPyNumber(a) {
		if !isPyNumber(b) {
			return 0, false
		}
		x, finiteX := pyNumber(a)
		y, finiteY := pyNumber(b)
		if finiteX && finiteY {
			return x.Cmp(y), true
		}
		return cmp.Compare(pyFloat(a), pyFloat(b)), true
	}
	x, ok := a.(string)
	y, okToo := b.(string)
	if !ok || !okToo {
		return 0, false
	}
	return strings.Compare(x, y), true
}
