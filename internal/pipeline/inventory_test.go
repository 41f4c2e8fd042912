package pipeline

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// TestEngineMappingKeepsEveryField: a status mapped to the engine's types and back, and the
// engine's mapped to the status and back, is what it was. Every field is set (by reflection),
// so a field added to either side and not mapped fails the test; nil lists stay nil, empty
// ones empty.
func TestEngineMappingKeepsEveryField(t *testing.T) {
	for _, tc := range []struct {
		name      string
		roundTrip func(t *testing.T) (want, got any)
	}{
		{"inventory from the API", func(t *testing.T) (any, any) {
			in := filled[gitopsv1alpha1.Inventory](t)
			return in, *APIInventory(EngineInventory(in))
		}},
		{"inventory from the engine", func(t *testing.T) (any, any) {
			in := filled[engine.Inventory](t)
			return in, EngineInventory(*APIInventory(in))
		}},
		{"operations from the API", func(t *testing.T) (any, any) {
			in := filled[[]gitopsv1alpha1.OperationEntry](t)
			return in, APIOperations(EngineOperations(in))
		}},
		{"operations from the engine", func(t *testing.T) (any, any) {
			in := filled[[]engine.OperationRecord](t)
			return in, EngineOperations(APIOperations(in))
		}},
		{"nil lists", func(t *testing.T) (any, any) {
			var in gitopsv1alpha1.Inventory
			return []any{in, []gitopsv1alpha1.OperationEntry(nil)}, []any{*APIInventory(EngineInventory(in)), APIOperations(EngineOperations(nil))}
		}},
		{"empty lists", func(t *testing.T) (any, any) {
			in := gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{}, Packages: []gitopsv1alpha1.PackageEntry{}}
			return in, *APIInventory(EngineInventory(in))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := tc.roundTrip(t)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEngineStatesAreTheAPIs: each NS instance state the CRD allows is one of the engine's, of
// the same value, both ways.
func TestEngineStatesAreTheAPIs(t *testing.T) {
	states := map[gitopsv1alpha1.NsInstanceState]engine.InstanceState{
		gitopsv1alpha1.NsInstanceCreating:    engine.InstanceCreating,
		gitopsv1alpha1.NsInstanceReady:       engine.InstanceReady,
		gitopsv1alpha1.NsInstanceProgressing: engine.InstanceProgressing,
		gitopsv1alpha1.NsInstanceFailed:      engine.InstanceFailed,
		gitopsv1alpha1.NsInstanceDeleting:    engine.InstanceDeleting,
		gitopsv1alpha1.NsInstanceOrphaned:    engine.InstanceOrphaned,
		gitopsv1alpha1.NsInstanceReplacing:   engine.InstanceReplacing,
		gitopsv1alpha1.NsInstanceDrifted:     engine.InstanceDrifted,
	}
	enum := testenv.InstanceStateEnum(t)
	if len(enum) != len(states) {
		t.Errorf("the CRD allows the states %v, the test maps %d", enum, len(states))
	}
	for _, value := range enum {
		state := gitopsv1alpha1.NsInstanceState(value)
		want, known := states[state]
		switch {
		case !known:
			t.Errorf("state %q of the CRD has no state of the engine", value)
		case EngineState(state) != want || APIState(want) != state:
			t.Errorf("state %q maps to %q and back to %q", value, EngineState(state), APIState(want))
		}
	}
	if APIState(engine.NoInstance) != "" {
		t.Errorf("engine.NoInstance maps to %q, want no state", APIState(engine.NoInstance))
	}
}

// filled is a T whose every field holds a value of its own, none zero: a mapping that drops or
// mixes up a field changes it.
func filled[T any](t *testing.T) T {
	t.Helper()
	var v T
	n := 0
	fill(t, reflect.ValueOf(&v).Elem(), &n)
	return v
}

func fill(t *testing.T, v reflect.Value, n *int) {
	*n++
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, *n, 0, time.UTC)))
	case v.Kind() == reflect.String:
		v.SetString("value-" + strconv.Itoa(*n))
	case v.Kind() == reflect.Int32:
		v.SetInt(int64(*n))
	case v.Kind() == reflect.Bool:
		v.SetBool(true)
	case v.Kind() == reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range v.Len() {
			fill(t, v.Index(i), n)
		}
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				t.Fatalf("%s.%s: unexported, not filled", v.Type(), v.Type().Field(i).Name)
			}
			fill(t, v.Field(i), n)
		}
	default:
		t.Fatalf("no value for a %s", v.Type())
	}
}
