package nbisim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	yaml "go.yaml.in/yaml/v3"
)

// object is a Python dict: its members in the order they were read or set.
// The NBI is Python: its dicts keep the order of the request and of the
// descriptor, and that order shows in every answer (operationParams,
// descriptors, the JSON string of a KDU's params). Go maps would sort it.
//
// It is the simulator's one model of a Python value (see pyyaml.go for the
// table): parsed JSON gives *object with string keys, []any, string,
// json.Number (an int or a float as json.loads reads it), bool and nil;
// yaml.safe_load also gives keys of other types, *big.Int, float64 and
// dates. pyEqual is the one equality of these values.
type object struct {
	members []member
}

type member struct {
	key   any
	value any
}

// newObject builds an object from key, value pairs.
func newObject(pairs ...any) *object {
	o := &object{}
	for i := 0; i+1 < len(pairs); i += 2 {
		o.set(pairs[i], pairs[i+1])
	}
	return o
}

// index is the position of the member whose key equals key as Python's
// dict finds it (1, 1.0 and True are one key), or -1.
func (o *object) index(key any) int {
	if o == nil {
		return -1
	}
	if s, isString := key.(string); isString {
		for i, m := range o.members {
			if k, isString := m.key.(string); isString && k == s {
				return i
			}
		}
		return -1
	}
	for i, m := range o.members {
		if pyEqual(m.key, key) {
			return i
		}
	}
	return -1
}

func (o *object) get(key any) (any, bool) {
	if i := o.index(key); i >= 0 {
		return o.members[i].value, true
	}
	return nil, false
}

// str returns the member's value when it is a string, else "".
func (o *object) str(key string) string {
	value, _ := o.get(key)
	s, _ := value.(string)
	return s
}

// obj returns the member's value when it is an object, else nil.
func (o *object) obj(key string) *object {
	value, _ := o.get(key)
	child, _ := value.(*object)
	return child
}

// list returns the member's value when it is an array, else nil.
func (o *object) list(key string) []any {
	value, _ := o.get(key)
	items, _ := value.([]any)
	return items
}

// set is o[key] = value: a new key goes last, an existing one keeps its place.
func (o *object) set(key, value any) {
	if i := o.index(key); i >= 0 {
		o.members[i].value = value
		return
	}
	o.members = append(o.members, member{key, value})
}

func (o *object) del(key any) {
	if i := o.index(key); i >= 0 {
		o.members = append(o.members[:i], o.members[i+1:]...)
	}
}

// keys are the keys of an object read from JSON, which are all strings.
func (o *object) keys() []string {
	keys := make([]string, len(o.members))
	for i, m := range o.members {
		keys[i], _ = m.key.(string)
	}
	return keys
}

// clone copies o deeply enough that changing the copy's members, or the
// members of its nested objects and arrays, leaves o unchanged.
func (o *object) clone() *object {
	if o == nil {
		return nil
	}
	return cloneValue(o).(*object)
}

func cloneValue(value any) any {
	switch v := value.(type) {
	case *object:
		c := &object{members: make([]member, len(v.members))}
		for i, m := range v.members {
			c.members[i] = member{m.key, cloneValue(m.value)}
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, item := range v {
			c[i] = cloneValue(item)
		}
		return c
	}
	return value
}

// MarshalJSON writes the members in order, without escaping <, > and &
// (Python's json.dumps does not).
func (o *object) MarshalJSON() ([]byte, error) {
	if o == nil {
		return []byte("null"), nil
	}
	var b, scratch bytes.Buffer
	encoder := json.NewEncoder(&scratch)
	encoder.SetEscapeHTML(false)
	write := func(value any) error {
		scratch.Reset()
		if err := encoder.Encode(value); err != nil {
			return err
		}
		b.Write(bytes.TrimSuffix(scratch.Bytes(), []byte("\n")))
		return nil
	}
	b.WriteByte('{')
	for i, m := range o.members {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := write(m.key); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := write(m.value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object keeping the order of its members; nested
// objects become *object, arrays []any and numbers json.Number.
func (o *object) UnmarshalJSON(data []byte) error {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	value, err := decodeJSONValue(decoder)
	if err != nil {
		return err
	}
	parsed, ok := value.(*object)
	if !ok {
		return errors.New("not a JSON object")
	}
	*o = *parsed
	return nil
}

// parseJSON reads one JSON value, keeping the order of object members, and
// refuses trailing data.
func parseJSON(data []byte) (any, error) {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	value, err := decodeJSONValue(decoder)
	if errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected end of JSON input")
	}
	if err != nil {
		return nil, err
	}
	if _, err := decoder.Token(); err == nil {
		return nil, fmt.Errorf("extra data after the JSON value at offset %d", decoder.InputOffset())
	}
	return value, nil
}

func decodeJSONValue(decoder *json.Decoder) (any, error) {
	token, err := decoder.Token()
	if err != nil {
		return nil, err
	}
	switch t := token.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{}
			for decoder.More() {
				keyToken, err := decoder.Token()
				if err != nil {
					return nil, err
				}
				value, err := decodeJSONValue(decoder)
				if err != nil {
					return nil, err
				}
				o.set(keyToken.(string), value)
			}
			_, err := decoder.Token() // the closing brace
			return o, err
		case '[':
			items := []any{}
			for decoder.More() {
				value, err := decodeJSONValue(decoder)
				if err != nil {
					return nil, err
				}
				items = append(items, value)
			}
			_, err := decoder.Token()
			return items, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return token, nil
}

// yamlToValue converts a parsed YAML node into the values object holds,
// keeping the order of mappings.
func yamlToValue(node *yaml.Node) (any, error) {
	switch node.Kind {
	case yaml.DocumentNode:
		if len(node.Content) == 0 {
			return nil, nil
		}
		return yamlToValue(node.Content[0])
	case yaml.AliasNode:
		return yamlToValue(node.Alias)
	case yaml.MappingNode:
		o := &object{}
		for i := 0; i+1 < len(node.Content); i += 2 {
			value, err := yamlToValue(node.Content[i+1])
			if err != nil {
				return nil, err
			}
			o.set(node.Content[i].Value, value)
		}
		return o, nil
	case yaml.SequenceNode:
		items := make([]any, 0, len(node.Content))
		for _, child := range node.Content {
			value, err := yamlToValue(child)
			if err != nil {
				return nil, err
			}
			items = append(items, value)
		}
		return items, nil
	}
	var scalar any
	if err := node.Decode(&scalar); err != nil {
		return nil, err
	}
	return scalar, nil
}
