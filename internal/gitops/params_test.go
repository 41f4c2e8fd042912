package gitops

import (
	"fmt"
	"math"
	"testing"

	"github.com/osmops/osmops/internal/osm"
)

func TestEqualParams(t *testing.T) {
	tests := []struct {
		name     string
		declared map[string]any
		live     string
		want     bool
		wantErr  bool
	}{
		{name: "none and empty", declared: nil, live: "", want: true},
		{name: "none and null", declared: nil, live: "null", want: true},
		{name: "none and {}", declared: nil, live: " {} ", want: true},
		{name: "empty and empty", declared: map[string]any{}, live: "", want: true},
		{name: "OSM's string", declared: map[string]any{"replicaCount": "2"}, live: `{"replicaCount": "2"}`, want: true},
		{name: "string is not number", declared: map[string]any{"replicaCount": "2"}, live: `{"replicaCount": 2}`, want: false},
		{name: "int and float", declared: map[string]any{"replicaCount": int64(2)}, live: `{"replicaCount": 2.0}`, want: true},
		{name: "int and exponent", declared: map[string]any{"n": int64(100)}, live: `{"n": 1e2}`, want: true},
		{name: "plain int", declared: map[string]any{"n": 3}, live: `{"n": 3}`, want: true},
		{name: "fraction", declared: map[string]any{"ratio": 0.5}, live: `{"ratio": 0.50}`, want: true},
		{
			name:     "nested, key order",
			declared: map[string]any{"a": map[string]any{"x": int64(1), "y": []any{int64(1), "b"}}, "b": true},
			live:     `{"b":true,"a":{"y":[1,"b"],"x":1}}`,
			want:     true,
		},
		{name: "list order matters", declared: map[string]any{"l": []any{int64(1), int64(2)}}, live: `{"l":[2,1]}`, want: false},
		{name: "a live key more", declared: map[string]any{"a": "1"}, live: `{"a":"1","b":"2"}`, want: false},
		{name: "null value", declared: map[string]any{"a": nil}, live: `{"a":null}`, want: true},
		{name: "null value is not absent", declared: map[string]any{"a": nil}, live: `{}`, want: false},
		{name: "large integers keep every digit", declared: map[string]any{"n": int64(9007199254740993)}, live: `{"n":9007199254740993}`, want: true},
		{name: "large integers differ", declared: map[string]any{"n": int64(9007199254740993)}, live: `{"n":9007199254740992}`, want: false},
		{name: "HTML characters", declared: map[string]any{"q": "<a&b>"}, live: `{"q":"\u003ca\u0026b\u003e"}`, want: true},
		{name: "not JSON", declared: nil, live: `{"a":`, wantErr: true},
		{name: "two JSON values", declared: nil, live: `{} {}`, wantErr: true},
		{name: "declared NaN", declared: map[string]any{"x": math.NaN()}, live: `{}`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := equalParams(tc.declared, tc.live)
			if (err != nil) != tc.wantErr {
				t.Fatalf("equalParams error = %v, want an error: %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("equalParams = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParamsJSON(t *testing.T) {
	tests := []struct {
		params map[string]any
		want   string
	}{
		{nil, "{}"},
		{map[string]any{}, "{}"},
		{map[string]any{"b": int64(2), "a": []any{"x<y", nil, 1.5, true}}, `{"a":["x<y",null,1.5,true],"b":2}`},
	}
	for _, tc := range tests {
		if got := (NsInstance{}).ParamsJSON("openldap", KDU{Params: tc.params}); got != tc.want {
			t.Errorf("ParamsJSON(%v) = %s, want %s", tc.params, got, tc.want)
		}
	}
}

func TestDigest(t *testing.T) {
	parse := func(text string) NsInstance { return mustParse(t, text) }
	base := parse(deployment("ldap") + "  params:\n    replicaCount: 2\n    image: {tag: \"1\", repository: r}\n")
	// sha256 of {"nsdName":"openldap_ns","vnfName":"openldap","vimAccountName":"mylocation1",
	// "kduName":"ldap","params":{"image":{"repository":"r","tag":"1"},"replicaCount":2},"description":""}
	// (on one line). A change here changes every OsmDeployment's inventory.
	const want = "sha256:2f616a25cc49c493ed598737e51479d042f36b27ca2681d1f8ac6781a43e39fe"
	if got := base.Digest(); got != want {
		t.Errorf("Digest = %s, want %s", got, want)
	}
	tests := []struct {
		name     string
		instance NsInstance
		same     bool
	}{
		{"key order, 2.0 for 2, another file and name", parse("# moved\n" + deployment("other") +
			"  params:\n    image: {repository: r, tag: \"1\"}\n    replicaCount: 2.0\n"), true},
		{"a string instead of a number", parse(deployment("ldap") + "  params:\n    replicaCount: \"2\"\n    image: {tag: \"1\", repository: r}\n"), false},
		{"a description", parse(deployment("ldap") + "  params:\n    replicaCount: 2\n    image: {tag: \"1\", repository: r}\ndescription: d\n"), false},
		{"another NSD", func() NsInstance { n := base; n.NsdName = "x"; return n }(), false},
		{"another VNF", func() NsInstance { n := base; n.VnfName = "x"; return n }(), false},
		{"another VIM", func() NsInstance { n := base; n.VimAccountName = "x"; return n }(), false},
		{"another KDU", func() NsInstance { n := base; n.KDU.Name = "x"; return n }(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.instance.Digest() == base.Digest(); got != tc.same {
				t.Errorf("same digest = %v, want %v", got, tc.same)
			}
		})
	}
	noParams, emptyParams := parse(deployment("a")), parse(deployment("a")+"  params: {}\n")
	if noParams.Digest() != emptyParams.Digest() {
		t.Error("no params and empty params have different digests")
	}
}

// equalParams is ParamsEqual of declared values that Load did not build: it can test values
// JSON cannot encode, which are an error.
func equalParams(declared map[string]any, liveJSON string) (bool, error) {
	declaredJSON, err := canonicalJSON(paramsOrEmpty(declared))
	if err != nil {
		return false, fmt.Errorf("the declared params: %w", err)
	}
	return equalsCanonical(declaredJSON, liveJSON)
}

// OSM keeps nested params as "!!yaml " + yaml.safe_dump(value); the texts below are what
// PyYAML 6.0's safe_dump writes, and PyYAML (LCM) reads every one back as the declared value.
// A YAML 1.2 reader would take 5e3 for 5000 and 0o17 for 15, and so call an instance that
// runs its declaration a changed one.
func TestLCMParamsEqualReadsAsPyYAML(t *testing.T) {
	declared := map[string]any{"tuning": map[string]any{
		"rate": "5e3", "mode": "0o17", "flag": "yes", "count": "1_000", "day": "2024-01-01", "none": "~", "n": int64(3),
	}}
	stored := map[string]osm.LooseString{
		"tuning": "!!yaml count: '1_000'\nday: '2024-01-01'\nflag: 'yes'\nmode: 0o17\nn: 3\nnone: '~'\nrate: 5e3\n",
	}
	if !LCMParamsEqual(declared, stored, "") {
		t.Errorf("%v differs from %v", declared, stored)
	}
	stored["tuning"] = "!!yaml count: 1_000\nday: '2024-01-01'\nflag: 'yes'\nmode: 0o17\nn: 3\nnone: '~'\nrate: 5e3\n"
	if LCMParamsEqual(declared, stored, "") {
		t.Errorf("the number 1000 equals the string %q", "1_000")
	}
}
