package gitops

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/osmops/osmops/internal/pyyaml"
)

// jsonValue converts the YAML node of a Helm value into the types
// encoding/json produces and consumes (map[string]any, []any, string,
// int64, float64, bool, nil), so that declared values compare and hash the
// same way as the JSON that OSM reports. Integers stay int64 rather than
// float64 so that large ones keep every digit. The string "2" and the number
// 2 stay different: Helm templates tell them apart. Timestamps and binary
// values keep their YAML text, as a string.
func jsonValue(file, name string, node *yaml.Node) (any, []Problem) {
	switch node.Kind {
	case yaml.MappingNode:
		fields, problems := mappingFields(file, name+".", node)
		values := make(map[string]any, len(fields))
		for _, field := range fields {
			value, fieldProblems := jsonValue(file, name+"."+field.key, field.value)
			problems = append(problems, fieldProblems...)
			values[field.key] = value
		}
		return values, problems
	case yaml.SequenceNode:
		var problems []Problem
		values := make([]any, 0, len(node.Content))
		for i, item := range node.Content {
			value, itemProblems := jsonValue(file, fmt.Sprintf("%s[%d]", name, i), item)
			problems = append(problems, itemProblems...)
			values = append(values, value)
		}
		return values, problems
	default:
		value, problem := jsonScalar(file, name, node)
		if problem != nil {
			return nil, []Problem{*problem}
		}
		return value, nil
	}
}

// jsonScalar converts a scalar node with the YAML type yaml.v3 resolves.
func jsonScalar(file, name string, node *yaml.Node) (any, *Problem) {
	switch node.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool", "!!int", "!!float":
	default:
		return node.Value, nil
	}
	var decoded any
	if err := node.Decode(&decoded); err != nil {
		problem := problemf(file, node.Line, "field %q: %v", name, err)
		return nil, &problem
	}
	switch number := decoded.(type) {
	case int:
		return int64(number), nil
	case uint64:
		// Beyond int64: JSON readers, OSM's included, take it as a float.
		return float64(number), nil
	case float64:
		if math.IsNaN(number) || math.IsInf(number, 0) {
			problem := problemf(file, node.Line, "field %q: %s is not a number JSON can hold", name, node.Value)
			return nil, &problem
		}
	}
	return decoded, nil
}

// canonicalJSON encodes v with map keys sorted (encoding/json's order) and
// without HTML escaping, so that equal values give equal bytes.
func canonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	encoder := json.NewEncoder(&buf)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// mustCanonicalJSON is canonicalJSON for values that Load built, which are
// always encodable; a failure is a caller's bug (a NaN put in Params by hand).
func mustCanonicalJSON(v any) []byte {
	encoded, err := canonicalJSON(v)
	if err != nil {
		panic(fmt.Sprintf("gitops: a value JSON cannot encode: %v", err))
	}
	return encoded
}

// ParamsEqual tells whether the Helm values of kdu, a KDU of VNF member, equal the live ones that OSM reports
// as a JSON string (a KDU's additionalParams), comparing values rather than text: key order
// and spacing do not matter, nor whether a number is written 2 or 2.0, but the string "2"
// differs from the number 2. No params, an empty map, an empty liveJSON and "null" are all
// equal. The error is for a liveJSON that is not JSON. It uses the canonical JSON that Load
// computed once.
func (n NsInstance) ParamsEqual(member string, kdu KDU, liveJSON string) (bool, error) {
	return equalsCanonical([]byte(n.ParamsJSON(member, kdu)), liveJSON)
}

// equalsCanonical compares the canonical JSON of declared values with live ones.
func equalsCanonical(declaredJSON []byte, liveJSON string) (bool, error) {
	if liveJSON == string(declaredJSON) {
		// Canonical already (the observation encodes the live values sorted and compact):
		// spares the decoding and encoding that most KDUs, the unchanged ones, would cost.
		return true, nil
	}
	var live any
	if trimmed := strings.TrimSpace(liveJSON); trimmed != "" {
		decoder := json.NewDecoder(strings.NewReader(trimmed))
		decoder.UseNumber()
		if err := decoder.Decode(&live); err != nil {
			return false, fmt.Errorf("the live params are not JSON: %w", err)
		}
		if decoder.More() {
			return false, fmt.Errorf("the live params hold more than one JSON value")
		}
	}
	liveValue := withNumbersNormalised(live)
	if liveValue == nil {
		liveValue = map[string]any{}
	}
	liveCanonical, err := canonicalJSON(liveValue)
	if err != nil {
		return false, fmt.Errorf("the live params: %w", err)
	}
	return bytes.Equal(declaredJSON, liveCanonical), nil
}

// paramsOrEmpty makes no params and empty params the same value.
func paramsOrEmpty(params map[string]any) map[string]any {
	if params == nil {
		return map[string]any{}
	}
	return params
}

// withNumbersNormalised replaces each json.Number with an int64 when it is a
// whole number in range, else a float64: the types jsonValue gives, which
// encoding/json writes the same way (2.0 and 2 both as "2").
func withNumbersNormalised(v any) any {
	switch value := v.(type) {
	case map[string]any:
		for key, item := range value {
			value[key] = withNumbersNormalised(item)
		}
		return value
	case []any:
		for i, item := range value {
			value[i] = withNumbersNormalised(item)
		}
		return value
	case json.Number:
		if integer, err := value.Int64(); err == nil {
			return integer
		}
		float, _ := value.Float64()
		return float
	default:
		return v
	}
}

// lcmYAMLPrefix marks a parameter value that OSM's NBI turned from a map or a list into YAML
// text (instance_topics.py, _format_additional_params).
const lcmYAMLPrefix = "!!yaml "

// LCMParamsEqual tells whether declared NS or VNF parameters equal those OSM keeps in a record
// (additionalParamsForNs, additionalParamsForVnf), leaving out the key ignore (the owner's
// marker). OSM keeps a map or a list as "!!yaml <its YAML>" (yaml.safe_dump), which is read
// back with PyYAML's rules, as LCM reads it, and compared as a value, and a scalar as it came, compared by its JSON text (so the string "2" and the
// number 2 are equal there: OSM's primitives read both as text).
func LCMParamsEqual[S ~string](declared map[string]any, live map[string]S, ignore string) bool {
	count := 0
	for key, value := range live {
		if key == ignore {
			continue
		}
		count++
		want, declaredHere := declared[key]
		if !declaredHere || !lcmParamEqual(want, string(value)) {
			return false
		}
	}
	return count == len(declared)
}

// lcmParamEqual compares one declared parameter with OSM's text of it.
func lcmParamEqual(declared any, live string) bool {
	switch value := declared.(type) {
	case string:
		return value == live
	case nil:
		return live == ""
	case map[string]any, []any:
		text, isYAML := strings.CutPrefix(live, lcmYAMLPrefix)
		if !isYAML {
			return false
		}
		liveValue, err := pyyaml.LoadJSON([]byte(text))
		if err != nil {
			return false
		}
		liveJSON, err := canonicalJSON(liveValue)
		if err != nil {
			return false
		}
		equal, err := equalsCanonical(mustCanonicalJSON(value), string(liveJSON))
		return err == nil && equal
	default:
		equal, err := equalsCanonical(mustCanonicalJSON(value), live)
		return err == nil && equal
	}
}
