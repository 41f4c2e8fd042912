package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ValueChange is one leaf of a KDU's Helm values that differs between what runs and what the
// revision declares.
type ValueChange struct {
	// Path names the leaf: keys joined by dots, list indexes in brackets ("db.hosts[0]").
	Path string
	// Old is the running value as JSON when Git declared it so in the applied commit, else
	// runningNotShown; "" when the leaf is new. New is the declared value as JSON, "" when the
	// leaf goes away.
	Old, New string
	// Masked: the leaf's value comes from a Secret, so Old and New are never set.
	Masked bool
}

// leaf is one leaf of a values tree, its path as segments.
type leaf struct {
	path  []string
	value string
}

// runningNotShown stands for a running value that Git did not declare as it is in the applied
// commit: it may have come from a Secret (of that revision or an earlier one: a valuesFrom
// since dropped, a targetPath since moved, a Secret's value since replaced by one in Git), and
// nothing in OSM says which, so it is not printed.
const runningNotShown = "(running value not shown)"

// diffValues compares two JSON objects of Helm values leaf by leaf (an empty map or list is a
// leaf), in path order. A running value shows only when it is the one Git declared at its path
// in the applied commit (appliedJSON, those values of its deployment file; "" when unknown):
// otherwise it is runningNotShown. The leaves at or below a path of masked
// (gitops.SecretValuePaths) show neither value. A text that is not JSON counts as no values.
func diffValues(runningJSON, declaredJSON string, masked [][]string, appliedJSON string) []ValueChange {
	running, declared, inGit := leaves(runningJSON), leaves(declaredJSON), leaves(appliedJSON)
	var changes []ValueChange
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, side := range []map[string]leaf{running, declared} {
			for name := range side {
				if !seen[name] {
					seen[name] = true
					if !yield(name) {
						return
					}
				}
			}
		}
	}) {
		old, wasSet := running[name]
		next, isSet := declared[name]
		if wasSet && isSet && old.value == next.value {
			continue
		}
		change := ValueChange{Path: name}
		segments := old.path
		if isSet {
			segments = next.path
		}
		if isMasked(segments, masked) {
			change.Masked = true
			// Which side has the leaf still shows, as an added or removed leaf; the values do not.
			if wasSet {
				change.Old = "-"
			}
			if isSet {
				change.New = "-"
			}
		} else {
			change.New = next.value
			switch git, declaredSo := inGit[name]; {
			case wasSet && declaredSo && git.value == old.value:
				change.Old = old.value
			case wasSet:
				change.Old = runningNotShown
			}
		}
		changes = append(changes, change)
	}
	return changes
}

// isMasked tells whether path is at or below one of masked.
func isMasked(path []string, masked [][]string) bool {
	return slices.ContainsFunc(masked, func(prefix []string) bool {
		return len(prefix) <= len(path) && slices.Equal(prefix, path[:len(prefix)])
	})
}

// leaves flattens a JSON object into its leaves by rendered path.
func leaves(text string) map[string]leaf {
	decoder := json.NewDecoder(strings.NewReader(text))
	decoder.UseNumber()
	var value any
	if decoder.Decode(&value) != nil {
		return map[string]leaf{}
	}
	out := map[string]leaf{}
	var walk func(path []string, value any)
	walk = func(path []string, value any) {
		switch v := value.(type) {
		case map[string]any:
			if len(v) > 0 || path == nil {
				for key, item := range v {
					walk(append(slices.Clip(path), key), item)
				}
				return
			}
		case []any:
			if len(v) > 0 {
				for i, item := range v {
					walk(append(slices.Clip(path), fmt.Sprintf("[%d]", i)), item)
				}
				return
			}
		}
		out[renderPath(path)] = leaf{path: path, value: compactJSON(value)}
	}
	walk(nil, value)
	return out
}

// plainKey is a key shown bare in a path; others are quoted.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// renderPath joins segments as "a.b[0]"; a key with dots, brackets or spaces is quoted.
func renderPath(segments []string) string {
	var b strings.Builder
	for _, segment := range segments {
		switch {
		case strings.HasPrefix(segment, "[") && strings.HasSuffix(segment, "]"):
			b.WriteString(segment)
		case plainKey.MatchString(segment):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(segment)
		default:
			fmt.Fprintf(&b, "[%q]", segment)
		}
	}
	return b.String()
}

// compactJSON is value as JSON without HTML escaping.
func compactJSON(value any) string {
	var b bytes.Buffer
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	if encoder.Encode(value) != nil {
		return fmt.Sprint(value)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
