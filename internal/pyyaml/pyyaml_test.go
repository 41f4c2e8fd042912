package pyyaml

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// safeDumped holds, for each value, the text yaml.safe_dump({"rate": value}) writes and what
// yaml.safe_load reads back, both produced by PyYAML 6.0 (python3 -c 'import yaml; ...').
// PyYAML quotes a string exactly when its YAML 1.1 resolver would read the plain text as
// another type, so the round trip keeps every type; "5e3" and "0o17" are written plain, which
// a YAML 1.2 reader (go-yaml, sigs.k8s.io/yaml) takes for the numbers 5000 and 15.
var safeDumped = []struct{ value, dumped, loaded string }{
	{`"5e3"`, "rate: 5e3\n", `"5e3"`},
	{`"0o17"`, "rate: 0o17\n", `"0o17"`},
	{`"1e3"`, "rate: 1e3\n", `"1e3"`},
	{`"1.0e3"`, "rate: 1.0e3\n", `"1.0e3"`},
	{`"5E3"`, "rate: 5E3\n", `"5E3"`},
	{`"09"`, "rate: 09\n", `"09"`},
	{`"y"`, "rate: y\n", `"y"`},
	{`"yes"`, "rate: 'yes'\n", `"yes"`},
	{`"no"`, "rate: 'no'\n", `"no"`},
	{`"on"`, "rate: 'on'\n", `"on"`},
	{`"off"`, "rate: 'off'\n", `"off"`},
	{`"1_000"`, "rate: '1_000'\n", `"1_000"`},
	{`"1:20"`, "rate: '1:20'\n", `"1:20"`},
	{`"2024-01-01"`, "rate: '2024-01-01'\n", `"2024-01-01"`},
	{`"~"`, "rate: '~'\n", `"~"`},
	{`"null"`, "rate: 'null'\n", `"null"`},
	{`""`, "rate: ''\n", `""`},
	{`"1.5"`, "rate: '1.5'\n", `"1.5"`},
	{`"0x1F"`, "rate: '0x1F'\n", `"0x1F"`},
	{`"017"`, "rate: '017'\n", `"017"`},
	{`"+12"`, "rate: '+12'\n", `"+12"`},
	{`".inf"`, "rate: '.inf'\n", `".inf"`},
	{`"plain text"`, "rate: plain text\n", `"plain text"`},
	{`1000.0`, "rate: 1000.0\n", `1000.0`},
	{`1e+17`, "rate: 1.0e+17\n", `1e+17`},
	{`3`, "rate: 3\n", `3`},
	{`true`, "rate: true\n", `true`},
	{`null`, "rate: null\n", `null`},
}

func TestLoadJSONReadsAsPyYAML(t *testing.T) {
	for _, test := range safeDumped {
		loaded, err := LoadJSON([]byte(test.dumped))
		if err != nil {
			t.Errorf("LoadJSON(%q): %v", test.dumped, err)
			continue
		}
		var want any
		decoder := json.NewDecoder(strings.NewReader(`{"rate": ` + test.loaded + `}`))
		decoder.UseNumber()
		if err := decoder.Decode(&want); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(loaded)
		wantText, _ := json.Marshal(want)
		// Numbers compare by value: PyYAML's 1000.0 is JSON's 1000.
		if !sameJSON(t, got, wantText) {
			t.Errorf("LoadJSON(%q) = %s, want %s (PyYAML's safe_load)", test.dumped, got, wantText)
		}
	}
}

func TestLoadJSONRefusesWhatSafeDumpNeverWrites(t *testing.T) {
	for _, text := range []string{
		"a: &x [1]\nb: *x\n",
		"<<: {a: 1}\n",
		"a: !!python/name:os.system ''\n",
		"a: .nan\n",
	} {
		if got, err := LoadJSON([]byte(text)); err == nil {
			t.Errorf("LoadJSON(%q) = %v, want an error", text, got)
		}
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}
