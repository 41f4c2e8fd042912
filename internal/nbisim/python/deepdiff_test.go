package python

import (
	"strings"
	"testing"
)

// TestDeepDiffLists checks the comparison of lists of scalars, where
// DeepDiff prefers difflib's opcodes when they report fewer changes (the
// expectations are DeepDiff's).
func TestDeepDiffLists(t *testing.T) {
	tests := []struct {
		old, new string
		changed  bool
		paths    []string
	}{
		{"[a, b]", "[a, c]", true, []string{"root[1]"}},
		{"[a, b, c]", "[b, c]", true, nil},                         // one item removed
		{"[a, b]", "[b, c]", true, []string{"root[0]", "root[1]"}}, // a tie: by index
		{"[x, a, b, c, d]", "[a, b, c, d, y]", true, nil},          // difflib: removed, added
		{"[a, b]", "[a, b]", false, nil},
		{"[1, 2]", "[1.0, 2]", false, nil}, // difflib finds 1 == 1.0: no type change in a list of scalars
		{"[1, 2]", "[1.0, 3]", true, []string{"root[1]"}},
		{"[.nan]", "[.nan]", false, nil}, // PyYAML's one NaN object
	}
	for _, test := range tests {
		old, _ := SafeLoad([]byte(test.old))
		updated, _ := SafeLoad([]byte(test.new))
		changed, paths := DeepDiff(old, updated)
		if changed != test.changed || strings.Join(paths, " ") != strings.Join(test.paths, " ") {
			t.Errorf("%s -> %s: %v %v, want %v %v", test.old, test.new, changed, paths, test.changed, test.paths)
		}
	}
}
