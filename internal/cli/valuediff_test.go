package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiffValues(t *testing.T) {
	for _, test := range []struct {
		name              string
		running, declared string
		masked            [][]string
		want              []ValueChange
		// applied are the values the applied commit declared in Git ("": unknown).
		applied string
	}{
		{"equal values, in another key order and number form, differ in nothing",
			`{"a":1,"b":{"c":"x"}}`, `{"b":{"c":"x"},"a":1}`, nil, nil, ""},
		{"a changed, an added and a removed leaf, in path order",
			`{"replicaCount":"1","old":true}`, `{"replicaCount":"2","service":{"type":"ClusterIP"}}`, nil,
			[]ValueChange{
				{Path: "old", Old: runningNotShown},
				{Path: "replicaCount", Old: runningNotShown, New: `"2"`},
				{Path: "service.type", New: `"ClusterIP"`},
			}, ""},
		{"list items and empty maps are leaves; odd keys are quoted",
			`{"hosts":["a","b"],"extra":{}}`, `{"hosts":["a"],"extra":{},"x.y":null}`, nil,
			[]ValueChange{
				{Path: `["x.y"]`, New: "null"},
				{Path: "hosts[1]", Old: runningNotShown},
			}, ""},
		{"a value from a Secret is masked on both sides, below its path too",
			`{"adminPassword":"old-secret","db":{"password":"p1","user":"u"}}`,
			`{"adminPassword":"new-secret","db":{"password":"p2","user":"v"}}`,
			[][]string{{"adminPassword"}, {"db", "password"}},
			[]ValueChange{
				{Path: "adminPassword", Old: "-", New: "-", Masked: true},
				{Path: "db.password", Old: "-", New: "-", Masked: true},
				{Path: "db.user", Old: runningNotShown, New: `"v"`},
			}, ""},
		// The running values came from a Secret through a valuesFrom the revision moved
		// (targetPath adminPassword, now admin.password) and one it dropped (db.password, now
		// in Git): neither shows.
		{"a running value is never shown, whatever the revision says of its path now",
			`{"adminPassword":"running-secret","db":{"password":"dropped-secret"}}`,
			`{"admin":{"password":"new-secret"},"db":{"password":"in-git"}}`,
			[][]string{{"admin", "password"}},
			[]ValueChange{
				{Path: "admin.password", New: "-", Masked: true},
				{Path: "adminPassword", Old: runningNotShown},
				{Path: "db.password", Old: runningNotShown, New: `"in-git"`},
			}, ""},
		{"a masked map hides every leaf below it",
			`{}`, `{"tls":{"key":"k","cert":"c"}}`, [][]string{{"tls"}},
			[]ValueChange{
				{Path: "tls.cert", New: "-", Masked: true},
				{Path: "tls.key", New: "-", Masked: true},
			}, ""},
		{"a create compares with nothing", ``, `{"replicaCount":"1"}`, nil,
			[]ValueChange{{Path: "replicaCount", New: `"1"`}}, ""},
		{"a running value that the applied commit declared so in Git shows, changed or removed",
			`{"replicaCount":"2","old":true}`, `{"replicaCount":"5"}`, nil,
			[]ValueChange{
				{Path: "old", Old: "true"},
				{Path: "replicaCount", Old: `"2"`, New: `"5"`},
			}, `{"old":true,"replicaCount":"2"}`},
		// What a Secret laid over Git's value (a valuesFrom of the applied commit) runs, and
		// what Git did not declare there (an earlier commit's Secret), never show.
		{"a running value Git did not declare so in the applied commit does not show",
			`{"adminPassword":"from-a-secret","token":"t0k"}`, `{"adminPassword":"in-git","token":"new"}`, nil,
			[]ValueChange{
				{Path: "adminPassword", Old: runningNotShown, New: `"in-git"`},
				{Path: "token", Old: runningNotShown, New: `"new"`},
			}, `{"adminPassword":"placeholder"}`},
	} {
		t.Run(test.name, func(t *testing.T) {
			if diff := cmp.Diff(test.want, diffValues(test.running, test.declared, test.masked, test.applied)); diff != "" {
				t.Errorf("diffValues (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderValueChange(t *testing.T) {
	for _, test := range []struct {
		change ValueChange
		want   string
	}{
		{ValueChange{Path: "a", New: `"1"`}, `+ a: "1"`},
		{ValueChange{Path: "a", Old: `"1"`}, `- a: "1"`},
		{ValueChange{Path: "a", Old: `"1"`, New: "2"}, `~ a: "1" → 2`},
		{ValueChange{Path: "p", New: "-", Masked: true}, `+ p: (from a Secret: not shown)`},
		{ValueChange{Path: "p", Old: "-", Masked: true}, `- p: (from a Secret: not shown)`},
		{ValueChange{Path: "p", Old: "-", New: "-", Masked: true}, `~ p: (from a Secret: not shown)`},
	} {
		if got := renderValueChange(test.change); got != test.want {
			t.Errorf("renderValueChange(%+v) = %q, want %q", test.change, got, test.want)
		}
	}
}
