package healthexpr

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/kustomize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maxEvaluationAlloc is the most one evaluation may allocate, whatever the expression: what
// docs/operations.md's memory model states for a health check expression.
const maxEvaluationAlloc = 48 << 20

// widget is a health-checked object as a tenant may shape it: conditions, a long message and
// a long list, all within what the API server stores.
func widget() *unstructured.Unstructured {
	items := make([]any, 5000)
	for i := range items {
		items[i] = int64(i)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "w", "namespace": "tenant", "generation": int64(2)},
		"status": map[string]any{
			"observedGeneration": int64(2),
			"conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "reason": "Succeeded"},
				map[string]any{"type": "Healthy", "status": "True"},
			},
			"message": strings.Repeat("ab", 64<<10), // 128 KiB
			"items":   items,
		},
	}}
}

// TestHealthExpressionSemantics: Flux's expressions mean what they mean in Flux.
func TestHealthExpressionSemantics(t *testing.T) {
	ready := "status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')"
	for _, tc := range []struct {
		name  string
		exprs kustomize.HealthCheckExpressions
		want  status.Status
	}{
		{"current", kustomize.HealthCheckExpressions{Current: ready}, status.CurrentStatus},
		{"failed before current", kustomize.HealthCheckExpressions{Current: ready, Failed: "status.conditions.exists(e, e.type == 'Healthy')"}, status.FailedStatus},
		{"in progress first", kustomize.HealthCheckExpressions{Current: ready, InProgress: "true", Failed: "true"}, status.InProgressStatus},
		{"none true", kustomize.HealthCheckExpressions{Current: "status.conditions.size() == 0"}, status.InProgressStatus},
		{"within bounds", kustomize.HealthCheckExpressions{Current: "status.conditions[0].reason.replace('c', 'k').split('e').size() > 1 && " +
			"['x', 'y'].join('-') == 'x-y' && status.message.matches('^(ab)+$') && sets.contains(status.items, [1, 2])"}, status.CurrentStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := newEvaluator(tc.exprs)
			if err != nil {
				t.Fatal(err)
			}
			result, err := e.evaluate(context.Background(), widget(), &budget{})
			if err != nil {
				t.Fatal(err)
			}
			if result.Status != tc.want {
				t.Errorf("status %s, want %s", result.Status, tc.want)
			}
		})
	}
	stale := widget()
	stale.Object["metadata"].(map[string]any)["generation"] = int64(3)
	e, _ := newEvaluator(kustomize.HealthCheckExpressions{Current: "true"})
	if result, err := e.evaluate(context.Background(), stale, &budget{}); err != nil || result.Status != status.InProgressStatus {
		t.Errorf("an object whose observedGeneration lags: %v, %v; want InProgress", result, err)
	}
}

// nested builds a chain of count levels of step, each naming its variable v<i>: the shape of
// the doubling attacks, within MaxExpressionBytes.
func nested(first string, count int, step func(previous, v string) string, last func(v string) string) string {
	var open, close strings.Builder
	previous := first
	for i := range count {
		v := fmt.Sprintf("v%d", i)
		open.WriteString(step(previous, v))
		close.WriteString(")")
		previous = v
	}
	return open.String() + last(previous) + close.String()
}

// TestHealthExpressionCost: every expression a hostile tenant may write, at the bound of its
// length, is stopped within CostLimit and MaxValueBytes, with its allocations bounded.
func TestHealthExpressionCost(t *testing.T) {
	ten := "[0,1,2,3,4,5,6,7,8,9]"
	longA := strings.Repeat("a", 200)
	attacks := []struct {
		name string
		expr string
	}{
		{"nested comprehensions", nested("", 8, func(_, v string) string { return ten + ".all(" + v + ", " }, func(string) string { return "true" })},
		{"string doubling", nested("'"+longA+"'", 30, func(p, v string) string { return "[" + p + "+" + p + "].all(" + v + ", " },
			func(v string) string { return "size(" + v + ") > 0" })},
		{"list doubling compared", nested("[1,2,3,4,5,6,7,8]", 40, func(p, v string) string { return "[" + p + "+" + p + "].all(" + v + ", " },
			func(v string) string { return v + " == " + v })},
		{"replace amplification", "'a'" + strings.Repeat(".replace('a', '"+strings.Repeat("a", 60)+"')", 12) + " == ''"},
		{"encoding growth", strings.Repeat("base64.encode(bytes(", 36) + "'" + longA + "'" + strings.Repeat("))", 36) + " == ''"},
		{"references joined", "[" + strings.Repeat("status.message,", 40) + "status.message].join('') == ''"},
		{"references mapped and joined", "status.items.map(i, status.message).join('') == ''"},
		{"split into characters", "status.message.split('').size() > 0"},
		{"regular expression product", "status.message.matches('" + strings.Repeat("(a|b)", 150) + "')"},
		{"sets product", "sets.contains(status.items, status.items)"},
	}
	u := widget()
	for _, attack := range attacks {
		t.Run(attack.name, func(t *testing.T) {
			if len(attack.expr) > MaxExpressionBytes {
				t.Fatalf("the attack is %d bytes, over the bound it must be tested at", len(attack.expr))
			}
			expr, err := Parse(attack.expr)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = expr.EvaluateBoolean(context.Background(), u.UnstructuredContent(), &budget{})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCostLimit) {
				t.Errorf("evaluation: %v, want the cost limit", err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes: %v; allocated %d KiB", len(attack.expr), err, alloc>>10)
			if alloc > maxEvaluationAlloc {
				t.Errorf("allocated %d MiB, over %d MiB", alloc>>20, maxEvaluationAlloc>>20)
			}
		})
	}
	if _, err := Parse("'%.999999999f'.format([1.0]) == ''"); err == nil || !strings.Contains(err.Error(), "format") {
		t.Errorf("format: %v, want refused at parse", err)
	}
	if _, err := Parse(strings.Repeat(" ", MaxExpressionBytes) + "true"); err == nil {
		t.Errorf("an expression over %d bytes was parsed", MaxExpressionBytes)
	}
}

// TestHealthExpressionsShareOneBudget: the expressions of one reader (one reconcile) spend one
// budget together, so that 32 health checks of costly expressions that each pass cannot hold
// a worker 32 times as long.
func TestHealthExpressionsShareOneBudget(t *testing.T) {
	ten := "[0,1,2,3,4,5,6,7,8,9]"
	costly := nested("", 4, func(_, v string) string { return ten + ".all(" + v + ", " }, func(string) string { return "true" })
	expr, err := Parse(costly)
	if err != nil {
		t.Fatal(err)
	}
	left := &budget{}
	evaluations := 0
	for ; evaluations < 100; evaluations++ {
		if _, err := expr.EvaluateBoolean(context.Background(), widget().UnstructuredContent(), left); err != nil {
			if !errors.Is(err, ErrCostLimit) {
				t.Fatal(err)
			}
			break
		}
	}
	one := left.spent.Load() / uint64(evaluations)
	if evaluations == 100 || one*uint64(evaluations) < CostLimit || left.spent.Load() > 2*CostLimit {
		t.Errorf("%d evaluations of %d units each spent %d: want refused once %d are spent", evaluations, one, left.spent.Load(), CostLimit)
	}
}
