package nbisim

import (
	"encoding/json"
	"testing"
)

func mustParse(t *testing.T, text string) any {
	t.Helper()
	value, err := parseJSON([]byte(text))
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return value
}

func TestPythonJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"replicaCount": "2"}`, `{"replicaCount": "2"}`},
		{`{"b":1,"a":[true,null,1.50,1e3]}`, `{"b": 1, "a": [true, null, 1.5, 1000.0]}`},
		{`{"text":"é \"q\" \\ \n <&>"}`, `{"text": "\u00e9 \"q\" \\ \n <&>"}`},
		{`{"emoji":"😀"}`, `{"emoji": "\ud83d\ude00"}`},
		{`{}`, `{}`},
	}
	for _, test := range tests {
		if got := pythonJSON(mustParse(t, test.in)); got != test.want {
			t.Errorf("pythonJSON(%s) = %s, want %s", test.in, got, test.want)
		}
	}
}

func TestPythonRepr(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{nil, "None"},
		{true, "True"},
		{"it's", `"it's"`},
		{`say "hi"`, `'say "hi"'`},
		{`both ' and "`, `'both \' and "'`},
		{json.Number("2"), "2"},
		{json.Number("0.00001"), "1e-05"},
		{1e16, "1e+16"},
		{123.0, "123.0"},
		{[]string{"a", "b"}, "['a', 'b']"},
		{newObject("networks", json.Number("1"), "version", []any{"1.29"}), "{'networks': 1, 'version': ['1.29']}"},
	}
	for _, test := range tests {
		if got := pythonRepr(test.in); got != test.want {
			t.Errorf("pythonRepr(%#v) = %s, want %s", test.in, got, test.want)
		}
	}
}

func TestPythonYAML(t *testing.T) {
	got := pythonYAML(mustParse(t, `{"service": {"type": "NodePort", "ports": [80, 443]}, "enabled": true}`))
	want := "enabled: true\nservice:\n  ports:\n  - 80\n  - 443\n  type: NodePort\n"
	if got != want {
		t.Errorf("pythonYAML = %q, want %q", got, want)
	}
}

func TestObjectKeepsOrder(t *testing.T) {
	in := `{"z":1,"a":{"y":[1,{"c":2,"b":3}],"x":"s"}}`
	o := mustParse(t, in).(*object)
	out, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip = %s, want %s", out, in)
	}
	clone := o.clone()
	clone.obj("a").set("x", "changed")
	if o.obj("a").str("x") != "s" {
		t.Error("changing a clone changed the original")
	}
	if _, err := parseJSON([]byte(`{"a":1} {"b":2}`)); err == nil {
		t.Error("trailing data accepted")
	}
}

func TestSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema *schema
		body   string
		want   string
	}{
		{"valid action", nsActionSchema, `{"primitive":"upgrade","primitive_params":{}}`, ""},
		{"missing required", nsActionSchema, `{"primitive_params":{}}`, "Format error  ''primitive' is a required property' "},
		{"type", nsActionSchema, `{"primitive":"upgrade","primitive_params":[1]}`, "Format error at 'primitive_params' '[1] is not of type 'object'' "},
		{"shallowest first", nsActionSchema, `{"primitive":"","x":1}`, "Format error  ''primitive_params' is a required property' "},
		{"additional properties", nsTerminateSchema, `{"a":1,"b":2}`, "Format error  'Additional properties are not allowed ('a', 'b' were unexpected)' "},
		{"minimum", nsTerminateSchema, `{"timeout_ns_terminate":0}`, "Format error at 'timeout_ns_terminate' '0 is less than the minimum of 1' "},
		{"too short", nsActionSchema, `{"primitive":"","primitive_params":{}}`, "Format error at 'primitive' ''' is too short' "},
		{"not enough properties", nsInstantiateSchema, `{"nsName":"a","nsdId":"0b5ae4d6-51a3-4e18-b7df-868c115dcb17","vimAccountId":"0b5ae4d6-51a3-4e18-b7df-868c115dcb17","additionalParamsForVnf":[{"member-vnf-index":"m"}]}`,
			"Format error at 'additionalParamsForVnf:0' '{'member-vnf-index': 'm'} does not have enough properties' "},
		{"pattern", nsInstantiateSchema, `{"nsName":"a,b","nsdId":"0b5ae4d6-51a3-4e18-b7df-868c115dcb17","vimAccountId":"0b5ae4d6-51a3-4e18-b7df-868c115dcb17"}`,
			`Format error at 'nsName' ''a,b' does not match '^[^,;()\'"]+$'' `},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			problem := test.schema.validate(mustParse(t, test.body))
			got := ""
			if problem != nil {
				got = problem.formatError()
			}
			if got != test.want {
				t.Errorf("got  %q\nwant %q", got, test.want)
			}
		})
	}
}

// TestPythonYAMLQuotesAsPyYAML: the expectations are what PyYAML 6.0's yaml.safe_dump writes
// of {"rate": value}: a string is quoted only when YAML 1.1 would read it as another type.
func TestPythonYAMLQuotesAsPyYAML(t *testing.T) {
	tests := []struct{ value, want string }{
		{`"5e3"`, "rate: 5e3\n"},
		{`"0o17"`, "rate: 0o17\n"},
		{`"y"`, "rate: y\n"},
		{`"yes"`, "rate: 'yes'\n"},
		{`"off"`, "rate: 'off'\n"},
		{`"1_000"`, "rate: '1_000'\n"},
		{`"1:20"`, "rate: '1:20'\n"},
		{`"2024-01-01"`, "rate: '2024-01-01'\n"},
		{`"~"`, "rate: '~'\n"},
		{`"1.5"`, "rate: '1.5'\n"},
		{`1e+17`, "rate: 1.0e+17\n"},
		{`1000.0`, "rate: 1000.0\n"},
		{`null`, "rate: null\n"},
	}
	for _, test := range tests {
		if got := pythonYAML(mustParse(t, `{"rate": `+test.value+`}`)); got != test.want {
			t.Errorf("pythonYAML({rate: %s}) = %q, want %q", test.value, got, test.want)
		}
	}
}

// TestOneEquality: a value read from JSON (a request, a record) and one read by yaml.safe_load
// (a descriptor) are one model, compared by Python's ==, and a query compares exactly as
// Python does, where float64 would round (2**53 + 1 > 2**53).
func TestOneEquality(t *testing.T) {
	fromJSON := mustParse(t, `{"a": [1, 2.0, true, "x"], "b": {"c": null}}`)
	fromYAML, err := pyYAMLLoad([]byte("b: {c: ~}\na: [1.0, 2, 1, x]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !pyEqual(fromJSON, fromYAML) || !pyEqual(fromYAML, fromJSON) {
		t.Errorf("%s != %s", pythonRepr(fromJSON), pythonRepr(fromYAML))
	}
	if pyEqual(fromJSON, mustParse(t, `{"a": [1, 2.5, true, "x"], "b": {"c": null}}`)) {
		t.Error("2.0 == 2.5")
	}
	big := json.Number("9007199254740993")
	if !compareField(big, "gt", int64(9007199254740992)) || compareField(big, "lte", int64(9007199254740992)) {
		t.Error("9007199254740993 is not greater than 9007199254740992")
	}
	if !compareField(json.Number("1e400"), "gt", 1e308) || !compareField(json.Number("2"), "gte", true) {
		t.Error("float('inf') > 1e308 and 2 >= True")
	}
}
