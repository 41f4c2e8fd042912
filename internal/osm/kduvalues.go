package osm

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/osmops/osmops/internal/kduoptions"
)

// The words of a KDU action: its primitives, and the fields of its body, which the NBI keeps as
// the operation's operationParams.
const (
	primitiveUpgrade         = "upgrade"
	primitiveRollback        = "rollback"
	memberVnfIndexField      = "member_vnf_index"
	legacyMemberVnfIndexName = "vnf_member_index"
	kduNameField             = "kdu_name"
	primitiveField           = "primitive"
	primitiveParamsField     = "primitive_params"
)

// KDUAction is a primitive run on one KDU, as an operation record holds it.
type KDUAction struct {
	MemberVnfIndex string
	KDUName        string
	// Primitive is "upgrade", "rollback", "status", or a primitive of the descriptor.
	Primitive string
	// Params are the primitive_params, options included.
	Params map[string]any
}

// KDUAction reads the KDU primitive an action operation ran; false for other operations.
// The NBI stores a non-empty primitive_params as a JSON string (instance_topics.py,
// NsLcmOpTopic.new), an empty one as an object.
func (o Operation) KDUAction() (KDUAction, bool, error) {
	params := o.OperationParams
	if o.LCMOperationType != OperationTypeAction || params == nil {
		return KDUAction{}, false, nil
	}
	action := KDUAction{
		MemberVnfIndex: stringField(params, memberVnfIndexField),
		KDUName:        stringField(params, kduNameField),
		Primitive:      stringField(params, primitiveField),
	}
	if action.MemberVnfIndex == "" {
		action.MemberVnfIndex = stringField(params, legacyMemberVnfIndexName)
	}
	if action.KDUName == "" {
		return KDUAction{}, false, nil
	}
	switch raw := params[primitiveParamsField].(type) {
	case nil:
	case map[string]any:
		action.Params = raw
	case string:
		if strings.TrimSpace(raw) != "" {
			if err := json.Unmarshal([]byte(raw), &action.Params); err != nil {
				return KDUAction{}, false, fmt.Errorf("operation %s: primitive_params are not a JSON object: %w", o.ID, err)
			}
		}
	default:
		return KDUAction{}, false, fmt.Errorf("operation %s: primitive_params are a %T, not an object", o.ID, raw)
	}
	return action, true, nil
}

func stringField(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// HelmRelease is what a KDU's Helm release runs: its values and its chart (OSM's kdu model).
type HelmRelease struct {
	Values map[string]any
	Model  string
}

// ReplayHelmRelease works out what a KDU's Helm release runs, from what it was instantiated
// with (the VNF record's values and helm-chart, which OSM never rewrites) and the completed
// actions run on it since, oldest first. It follows LCM's action() and Helm:
//   - with kdu_reset_values the release runs the upgrade's params alone;
//   - otherwise (Helm's --reuse-values, LCM's default) LCM lays the params over the
//     instantiation values (a shallow update) and Helm merges the result into the release's
//     values (a deep merge: the new values win, a null removes a key);
//   - an upgrade runs the chart its kdu_model names, else the deployed one (the
//     instantiation's) without its version, unless the chart is a file of the package;
//   - a rollback makes a new release revision with the values and chart of the one before the
//     current one, so that two rollbacks in a row come back to where they started.
//
// An upgrade with no params fails in LCM, so it is never among the completed actions.
func ReplayHelmRelease(instantiated HelmRelease, actions []KDUAction) HelmRelease {
	revisions := []HelmRelease{instantiated}
	for _, action := range actions {
		current := revisions[len(revisions)-1]
		switch action.Primitive {
		case primitiveUpgrade:
			model := upgradeModel(instantiated.Model, action.Params)
			params, reset := upgradeValues(action.Params)
			if reset {
				revisions = append(revisions, HelmRelease{Values: params, Model: model})
				continue
			}
			sent := maps.Clone(instantiated.Values)
			if sent == nil {
				sent = map[string]any{}
			}
			maps.Copy(sent, params)
			revisions = append(revisions, HelmRelease{Values: mergeValues(sent, current.Values), Model: model})
		case primitiveRollback:
			if n := len(revisions); n > 1 {
				revisions = append(revisions, revisions[n-2])
			}
		}
	}
	return revisions[len(revisions)-1]
}

// ChartFloats tells whether LCM resolves chart, a kdu_model, to the newest version of its
// repository: a chart of a repository ("repo/name"), not a file or folder of the package (two
// slashes or more) nor a URL, named without a version.
func ChartFloats(chart string) bool {
	return chart != "" && strings.Count(chart, "/") == 1 && !strings.Contains(chart, "://") && !strings.Contains(chart, ":")
}

// upgradeModel is the chart an upgrade runs (LCM's action(), "upgrade"): its kdu_model, else
// the deployed one, whose version LCM drops unless the chart is a file of the package (two
// slashes or more).
func upgradeModel(deployed string, params map[string]any) string {
	if model, ok := params[kduoptions.Model].(string); ok && model != "" {
		return model
	}
	if strings.Count(deployed, "/") < 2 {
		if parts := strings.Split(deployed, ":"); len(parts) == 2 {
			return parts[0]
		}
	}
	return deployed
}

// upgradeValues separates the Helm values of an upgrade's params from LCM's options.
func upgradeValues(params map[string]any) (map[string]any, bool) {
	values := maps.Clone(params)
	reset := isTrue(values[kduoptions.ResetValues])
	// LCM pops these; kdu_reset_then_reuse_values it only reads, so Helm gets it as a value.
	for _, key := range []string{kduoptions.Model, kduoptions.AtomicUpgrade, kduoptions.ResetValues, kduoptions.ReuseValues} {
		delete(values, key)
	}
	return values, reset
}

// isTrue reads an LCM option as LCM does: "yes", "true" or "1", in any case.
func isTrue(v any) bool {
	s, ok := v.(string)
	return ok && slices.Contains([]string{"yes", "true", "1"}, strings.ToLower(s))
}

// mergeValues is Helm's merge of new values into a release's previous ones (chartutil's
// CoalesceTables): a nested map is merged key by key, any other new value replaces the old,
// and a null removes the key. Written here rather than imported: Helm's module would be a
// large dependency for these few lines.
func mergeValues(newer, older map[string]any) map[string]any {
	merged := maps.Clone(newer)
	for key, old := range older {
		value, present := merged[key]
		if !present {
			merged[key] = old
			continue
		}
		newMap, newIsMap := value.(map[string]any)
		oldMap, oldIsMap := old.(map[string]any)
		if newIsMap && oldIsMap {
			merged[key] = mergeValues(newMap, oldMap)
		}
	}
	for key, value := range merged {
		if value == nil {
			delete(merged, key)
		}
	}
	return merged
}
