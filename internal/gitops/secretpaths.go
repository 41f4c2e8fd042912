package gitops

import (
	"context"
	"fmt"
	"slices"
)

// SecretValuePaths returns the paths of the KDU's values that its Secret references set, as
// ResolveValues merges them: every leaf of a Secret's YAML document, and a targetPath. A path
// is its keys and list indexes from the top ("db", "password"; "hosts", "[0]"). A tool that
// shows values masks what is at these paths, so that no Secret's content is ever printed. The
// Secrets are read with get; one that does not resolve sets nothing.
func SecretValuePaths(ctx context.Context, kdu KDU, get ValuesGetter) ([][]string, error) {
	var paths [][]string
	for _, ref := range kdu.ValuesFrom {
		if ref.Kind != ValuesKindSecret {
			continue
		}
		object, found, err := get(ctx, ref.Kind, ref.Name)
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
		}
		data, hasKey := object.Data[ref.ValuesKey]
		if !found || !hasKey || len(data) > MaxValuesBytes {
			continue
		}
		values := map[string]any{}
		if ref.TargetPath != "" {
			// The path alone matters: a placeholder keeps the Secret's text out of the parse.
			if setPathValue(values, ref.TargetPath, "masked") != nil {
				continue
			}
		} else if values, _ = readValuesDocument(ref, data); values == nil {
			continue
		}
		paths = appendLeafPaths(paths, nil, values)
	}
	return paths, nil
}

// appendLeafPaths appends the path of every leaf of value below prefix; an empty map or list
// is a leaf.
func appendLeafPaths(paths [][]string, prefix []string, value any) [][]string {
	switch v := value.(type) {
	case map[string]any:
		if len(v) == 0 && prefix != nil {
			return append(paths, prefix)
		}
		for key, item := range v {
			paths = appendLeafPaths(paths, append(slices.Clip(prefix), key), item)
		}
	case []any:
		if len(v) == 0 {
			return append(paths, prefix)
		}
		for i, item := range v {
			paths = appendLeafPaths(paths, append(slices.Clip(prefix), fmt.Sprintf("[%d]", i)), item)
		}
	default:
		return append(paths, prefix)
	}
	return paths
}
