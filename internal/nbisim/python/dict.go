package python

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	yaml "go.yaml.in/yaml/v3"
)

// Dict is a Python dict: its members in the order they were read or set.
// The NBI is Python: its dicts keep the order of the request and of the
// descriptor, and that order shows in every answer (operationParams,
// descriptors, the JSON string of a KDU's params). Go maps would sort it.
//
// It is the simulator's one model of a Python value (see values.go for the
// table): parsed JSON gives *Dict with string keys, []any, string,
// json.Number (an int or a float as json.loads reads it), bool and nil;
// yaml.safe_load also gives keys of other types, *big.Int, float64 and
// dates. Equal is the one equality of these values.
type Dict struct {
	Members []Member
}

// Member is a key of a Dict with its value.
type Member struct {
	Key   any
	Value any
}

// NewDict builds an object from key, value pairs.
func NewDict(pairs ...any) *Dict {
	o := &Dict{}
	for i := 0; i+1 < len(pairs); i += 2 {
		o.Set(pairs[i], pairs[i+1])
	}
	return o
}

// index is the position of the Member whose key equals key as Python's
// dict finds it (1, 1.0 and True are one key), or -1.
func (o *Dict) index(key any) int {
	if o == nil {
		return -1
	}
	if s, isString := key.(string); isString {
		for i, m := range o.Members {
			if k, isString := m.Key.(string); isString && k == s {
				return i
			}
		}
		return -1
	}
	for i, m := range o.Members {
		if Equal(m.Key, key) {
			return i
		}
	}
	return -1
}

func (o *Dict) Get(key any) (any, bool) {
	if i := o.index(key); i >= 0 {
		return o.Members[i].Value, true
	}
	return nil, false
}

// str returns the Member's value when it is a string, else "".
func (o *Dict) Str(key string) string {
	value, _ := o.Get(key)
	s, _ := value.(string)
	return s
}

// obj returns the Member's value when it is an object, else nil.
func (o *Dict) Obj(key string) *Dict {
	value, _ := o.Get(key)
	child, _ := value.(*Dict)
	return child
}

// list returns the Member's value when it is an array, else nil.
func (o *Dict) List(key string) []any {
	value, _ := o.Get(key)
	items, _ := value.([]any)
	return items
}

// set is o[key] = value: a new key goes last, an existing one keeps its place.
func (o *Dict) Set(key, value any) {
	if i := o.index(key); i >= 0 {
		o.Members[i].Value = value
		return
	}
	o.Members = append(o.Members, Member{key, value})
}

func (o *Dict) Del(key any) {
	if i := o.index(key); i >= 0 {
		o.Members = append(o.Members[:i], o.Members[i+1:]...)
	}
}

// keys are the keys of an object read from JSON, which are all strings.
func (o *Dict) Keys() []string {
	keys := make([]string, len(o.Members))
	for i, m := range o.Members {
		keys[i], _ = m.Key.(string)
	}
	return keys
}

// MembersOrNone is the members of o, none when o is nil.
func (o *Dict) MembersOrNone() []Member {
	if o == nil {
		return nil
	}
	return o.Members
}

// clone copies o deeply enough that changing the copy's members, or the
// members of its nested objects and arrays, leaves o unchanged.
func (o *Dict) Clone() *Dict {
	if o == nil {
		return nil
	}
	return CloneValue(o).(*Dict)
}

func CloneValue(value any) any {
	switch v := value.(type) {
	case *Dict:
		c := &Dict{Members: make([]Member, len(v.Members))}
		for i, m := range v.Members {
			c.Members[i] = Member{m.Key, CloneValue(m.Value)}
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, item := range v {
			c[i] = CloneValue(item)
		}
		return c
	}
	return value
}

// MarshalJSON writes the members in order, without escaping <, > and &
// (Python's json.dumps does not).
func (o *Dict) MarshalJSON() ([]byte, error) {
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
	for i, m := range o.Members {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := write(m.Key); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := write(m.Value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object keeping the order of its members; nested
// objects become *Dict, arrays []any and numbers json.Number.
func (o *Dict) UnmarshalJSON(data []byte) error {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	value, err := decodeJSONValue(decoder)
	if err != nil {
		return err
	}
	parsed, ok := value.(*Dict)
	if !ok {
		return errors.New("not a JSON object")
	}
	*o = *parsed
	return nil
}

// ParseJSON reads one JSON value, keeping the order of object members, and
// refuses trailing data.
func ParseJSON(data []byte) (any, error) {
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
			o := &Dict{}
			for decoder.More() {
				keyToken, err := decoder.Token()
				if err != nil {
					return nil, err
				}
				value, err := decodeJSONValue(decoder)
				if err != nil {
					return nil, err
				}
				o.Set(keyToken.(string), value)
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

// FromYAML converts a parsed YAML node into the values a Dict holds,
// keeping the order of mappings.
func FromYAML(node *yaml.Node) (any, error) {
	switch node.Kind {
	case yaml.DocumentNode:
		if len(node.Content) == 0 {
			return nil, nil
		}
		return FromYAML(node.Content[0])
	case yaml.AliasNode:
		return FromYAML(node.Alias)
	case yaml.MappingNode:
		o := &Dict{}
		for i := 0; i+1 < len(node.Content); i += 2 {
			value, err := FromYAML(node.Content[i+1])
			if err != nil {
				return nil, err
			}
			o.Set(node.Content[i].Value, value)
		}
		return o, nil
	case yaml.SequenceNode:
		items := make([]any, 0, len(node.Content))
		for _, child := range node.Content {
			value, err := FromYAML(child)
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
