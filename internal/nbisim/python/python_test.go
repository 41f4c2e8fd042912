package python

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
)

func mustParse(t *testing.T, text string) any {
	t.Helper()
	value, err := ParseJSON([]byte(text))
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
		if got := JSONDumps(mustParse(t, test.in)); got != test.want {
			t.Errorf("JSONDumps(%s) = %s, want %s", test.in, got, test.want)
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
		{math.Inf(-1), "-inf"},
		{big.NewInt(7), "7"},
		{[]string{"a", "b"}, "['a', 'b']"},
		{NewDict("networks", json.Number("1"), "version", []any{"1.29"}), "{'networks': 1, 'version': ['1.29']}"},
	}
	for _, test := range tests {
		if got := Repr(test.in); got != test.want {
			t.Errorf("Repr(%#v) = %s, want %s", test.in, got, test.want)
		}
	}
}

func TestPythonYAML(t *testing.T) {
	got := SafeDump(mustParse(t, `{"service": {"type": "NodePort", "ports": [80, 443]}, "enabled": true}`))
	want := "enabled: true\nservice:\n  ports:\n  - 80\n  - 443\n  type: NodePort\n"
	if got != want {
		t.Errorf("SafeDump = %q, want %q", got, want)
	}
}

func TestObjectKeepsOrder(t *testing.T) {
	in := `{"z":1,"a":{"y":[1,{"c":2,"b":3}],"x":"s"}}`
	o := mustParse(t, in).(*Dict)
	out, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip = %s, want %s", out, in)
	}
	clone := o.Clone()
	clone.Obj("a").Set("x", "changed")
	if o.Obj("a").Str("x") != "s" {
		t.Error("changing a clone changed the original")
	}
	if _, err := ParseJSON([]byte(`{"a":1} {"b":2}`)); err == nil {
		t.Error("trailing data accepted")
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
		if got := SafeDump(mustParse(t, `{"rate": `+test.value+`}`)); got != test.want {
			t.Errorf("SafeDump({rate: %s}) = %q, want %q", test.value, got, test.want)
		}
	}
}

// TestOneEquality: a value read from JSON (a request, a record) and one read by yaml.safe_load
// (a descriptor) are one model, compared by Python's ==, and numbers are ordered exactly as
// Python orders them (a list filter), where float64 would round (2**53 + 1 > 2**53).
func TestOneEquality(t *testing.T) {
	fromJSON := mustParse(t, `{"a": [1, 2.0, true, "x"], "b": {"c": null}}`)
	fromYAML, err := SafeLoad([]byte("b: {c: ~}\na: [1.0, 2, 1, x]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(fromJSON, fromYAML) || !Equal(fromYAML, fromJSON) {
		t.Errorf("%s != %s", Repr(fromJSON), Repr(fromYAML))
	}
	if Equal(fromJSON, mustParse(t, `{"a": [1, 2.5, true, "x"], "b": {"c": null}}`)) {
		t.Error("2.0 == 2.5")
	}
	compare := func(a, b any) int {
		order, ok := Compare(a, b)
		if !ok {
			t.Fatalf("%s and %s are not ordered", Repr(a), Repr(b))
		}
		return order
	}
	if compare(json.Number("9007199254740993"), int64(9007199254740992)) <= 0 {
		t.Error("9007199254740993 is not greater than 9007199254740992")
	}
	if compare(json.Number("1e400"), 1e308) <= 0 || compare(json.Number("2"), true) <= 0 {
		t.Error("float('inf') > 1e308 and 2 > True")
	}
	if _, ok := Compare("1", json.Number("1")); ok {
		t.Error("a string and a number are ordered")
	}
}
