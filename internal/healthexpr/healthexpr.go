// Package healthexpr evaluates the CEL expressions of an OsmDeployment's spec.healthCheckExprs
// within a bounded cost, so that no tenant's expression holds a worker of the shared manager or
// fills its memory.
//
// The semantics are Flux's (fluxcd/pkg/runtime/cel, RFC 0009): the same CEL library, an object
// whose status.observedGeneration differs from its generation is InProgress, then inProgress,
// failed and current are evaluated in that order. Flux evaluates without any cost limit; here
// every evaluation runs with cel-go's runtime cost tracking and limit (as Kubernetes bounds CEL
// in admission and CRD validation), and the few library functions whose one call can build a
// value, or spend time, far beyond what its arguments cost are replaced by versions that check
// their bound before they run (bounded.go). The worst case of one evaluation is then
// CostLimit units of work (a few tenths of a second on a busy core), twice that for all the
// expressions of one reconcile, and MaxValueBytes for the largest
// value any one call builds; docs/operations.md's memory model states it.
//
// It is a leaf below the controller: it imports no osmops package.
package healthexpr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	kstatusreaders "github.com/fluxcd/cli-utils/pkg/kstatus/polling/statusreaders"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	celenv "github.com/google/cel-go/common/env"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The bounds of one expression.
const (
	// MaxExpressionBytes bounds the text of each expression.
	MaxExpressionBytes = 1024
	// CostLimit bounds the work of one evaluation, in cel-go's cost units (one unit is about
	// one comparison or one element of a comprehension; a string operation costs a tenth of
	// its length). Kubernetes uses the same figure per call of a validation rule.
	CostLimit = 1_000_000
	// MaxValueBytes bounds the string or list one library call may build (bounded.go), before
	// it is built.
	MaxValueBytes = 1 << 20
)

// ErrCostLimit is an evaluation stopped at CostLimit, or a call refused at MaxValueBytes: the
// expression, not the object, is at fault.
var ErrCostLimit = errors.New("the expression exceeds osmops' cost limit")

// refusedFunctions cannot be bounded before they run: format's precision builds a string of
// any length from a few bytes of text.
var refusedFunctions = []string{"format"}

// environment is the CEL environment every expression is parsed in: Flux's library, with the
// bounded replacements of bounded.go declared after it (cel-go lets a later declaration
// replace an overload's implementation when the signatures are the same).
var environment = sync.OnceValues(func() (*cel.Env, error) {
	// The standard library's matches has one binding for all its overloads, which cannot be
	// replaced: it is left out, and declared again bounded.
	standard := celenv.NewLibrarySubset()
	standard.ExcludeFunctions = []*celenv.Function{celenv.NewFunction(overloads.Matches)}
	return cel.NewCustomEnv(append([]cel.EnvOption{
		cel.StdLib(cel.StdLibSubset(standard)),
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Sets(),
		ext.Encoders(),
	}, boundedFunctions()...)...)
})

// Expression is one parsed expression, ready to evaluate within CostLimit.
type Expression struct {
	text    string
	program cel.Program
}

// Parse parses text into an Expression, refusing one over MaxExpressionBytes or one that
// calls a function of refusedFunctions.
func Parse(text string) (*Expression, error) {
	if len(text) > MaxExpressionBytes {
		return nil, fmt.Errorf("the expression is longer than %d bytes", MaxExpressionBytes)
	}
	env, err := environment()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	// Parsed, not compiled, as Flux does: the object's top-level fields vary with its kind,
	// so no variable can be declared.
	parsed, issues := env.Parse(text)
	if issues != nil && issues.Err() != nil {
		return nil, fmt.Errorf("parsing %q: %s", text, issues.Err())
	}
	if name := firstCall(parsed.NativeRep().Expr(), refusedFunctions); name != "" {
		return nil, fmt.Errorf("%q calls %s, which osmops does not evaluate: its result cannot be bounded before it is built", text, name)
	}
	program, err := env.Program(parsed,
		cel.CostLimit(CostLimit),
		cel.CostTracking(resultCost{}),
		// Comprehensions also check the context, as Kubernetes' evaluations do.
		cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, fmt.Errorf("%q: %w", text, err)
	}
	return &Expression{text: text, program: program}, nil
}

// firstCall returns the first function of names that e calls, "" when none.
func firstCall(e ast.Expr, names []string) string {
	found := ""
	visitor := ast.NewExprVisitor(func(e ast.Expr) {
		if found == "" && e.Kind() == ast.CallKind {
			for _, name := range names {
				if e.AsCall().FunctionName() == name {
					found = name
				}
			}
		}
	})
	ast.PostOrderVisit(e, visitor)
	return found
}

// budget is the work left to the evaluations of one reader, shared by all its expressions:
// one reconcile evaluates at most 3 expressions for each of its health checks.
type budget struct{ spent atomic.Uint64 }

// EvaluateBoolean evaluates the expression on data, within what is left of spent; an
// evaluation over the cost limit is an error that wraps ErrCostLimit.
func (e *Expression) EvaluateBoolean(ctx context.Context, data map[string]any, left *budget) (bool, error) {
	if left.spent.Load() >= CostLimit {
		return false, fmt.Errorf("%q not evaluated: %w: the health checks before it spent it", e.text, ErrCostLimit)
	}
	value, details, err := e.program.ContextEval(ctx, data)
	if details != nil && details.ActualCost() != nil {
		left.spent.Add(*details.ActualCost())
	}
	if err != nil {
		if overBudget(err) {
			return false, fmt.Errorf("%q: %w (%d units, or a value of %d bytes)", e.text, ErrCostLimit, CostLimit, MaxValueBytes)
		}
		return false, fmt.Errorf("evaluating %q: %w", e.text, err)
	}
	result, ok := value.(types.Bool)
	if !ok {
		return false, fmt.Errorf("%q is not a boolean", e.text)
	}
	return bool(result), nil
}

// overBudget tells an evaluation stopped by the cost limit, or by a bounded call, from one
// that failed on the object.
func overBudget(err error) bool {
	return strings.Contains(err.Error(), "actual cost limit exceeded") || strings.Contains(err.Error(), errValueTooLarge.Error())
}

// evaluator computes one object's status from the three expressions of a kind, as Flux's
// StatusEvaluator does.
type evaluator struct {
	current, failed, inProgress *Expression
}

func newEvaluator(exprs kustomize.HealthCheckExpressions) (*evaluator, error) {
	if exprs.Current == "" {
		return nil, errors.New("expression current not specified")
	}
	var e evaluator
	for _, field := range []struct {
		name string
		text string
		into **Expression
	}{{"current", exprs.Current, &e.current}, {"failed", exprs.Failed, &e.failed}, {"inProgress", exprs.InProgress, &e.inProgress}} {
		if field.text == "" {
			continue
		}
		parsed, err := Parse(field.text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field.name, err)
		}
		*field.into = parsed
	}
	return &e, nil
}

func (e *evaluator) evaluate(ctx context.Context, u *unstructured.Unstructured, left *budget) (*status.Result, error) {
	content := u.UnstructuredContent()
	if observed, ok, err := unstructured.NestedInt64(content, "status", "observedGeneration"); err == nil && ok {
		if generation, ok, err := unstructured.NestedInt64(content, "metadata", "generation"); err == nil && ok && observed != generation {
			return &status.Result{Status: status.InProgressStatus}, nil
		}
	}
	for _, step := range []struct {
		expr   *Expression
		status status.Status
	}{{e.inProgress, status.InProgressStatus}, {e.failed, status.FailedStatus}, {e.current, status.CurrentStatus}} {
		if step.expr == nil {
			continue
		}
		result, err := step.expr.EvaluateBoolean(ctx, content, left)
		if err != nil {
			return nil, err
		}
		if result {
			return &status.Result{Status: step.status}, nil
		}
	}
	return &status.Result{Status: status.InProgressStatus}, nil
}

// NewStatusReader compiles the health checks into a kstatus StatusReader for their kinds, as
// Flux's cel.NewStatusReader does, each expression bounded as Parse and EvaluateBoolean say,
// and all the evaluations of one reader together within about twice CostLimit (the last one
// may start with almost nothing left): make one reader per reconcile.
func NewStatusReader(checks []kustomize.CustomHealthCheck) (func(meta.RESTMapper) engine.StatusReader, error) {
	evaluators := make(map[schema.GroupKind]*evaluator, len(checks))
	for i, check := range checks {
		gk := schema.FromAPIVersionAndKind(check.APIVersion, check.Kind).GroupKind()
		if check.Kind == "" {
			gk = schema.GroupKind{Group: gk.Group}
		}
		if _, duplicate := evaluators[gk]; duplicate {
			return nil, fmt.Errorf("healthCheckExprs[%d]: a second health check for %s", i, gk)
		}
		e, err := newEvaluator(check.HealthCheckExpressions)
		if err != nil {
			return nil, fmt.Errorf("healthCheckExprs[%d]: %w", i, err)
		}
		evaluators[gk] = e
	}
	return func(mapper meta.RESTMapper) engine.StatusReader {
		return &statusReader{mapper: mapper, evaluators: evaluators, left: &budget{}}
	}, nil
}

// statusReader is the engine.StatusReader of the kinds that have expressions.
type statusReader struct {
	mapper     meta.RESTMapper
	evaluators map[schema.GroupKind]*evaluator
	left       *budget
}

func (r *statusReader) evaluatorOf(gk schema.GroupKind) *evaluator {
	if e, found := r.evaluators[gk]; found {
		return e
	}
	return r.evaluators[schema.GroupKind{Group: gk.Group}]
}

func (r *statusReader) Supports(gk schema.GroupKind) bool { return r.evaluatorOf(gk) != nil }

func (r *statusReader) ReadStatus(ctx context.Context, reader engine.ClusterReader, resource object.ObjMetadata) (*event.ResourceStatus, error) {
	e := r.evaluatorOf(resource.GroupKind)
	if e == nil {
		return nil, fmt.Errorf("no health check expression for %s", resource.GroupKind)
	}
	return kstatusreaders.NewGenericStatusReader(r.mapper, func(u *unstructured.Unstructured) (*status.Result, error) {
		return e.evaluate(ctx, u, r.left)
	}).ReadStatus(ctx, reader, resource)
}

func (r *statusReader) ReadStatusForObject(ctx context.Context, reader engine.ClusterReader, u *unstructured.Unstructured) (*event.ResourceStatus, error) {
	gk := u.GroupVersionKind().GroupKind()
	e := r.evaluatorOf(gk)
	if e == nil {
		return nil, fmt.Errorf("no health check expression for %s", gk)
	}
	return kstatusreaders.NewGenericStatusReader(r.mapper, func(u *unstructured.Unstructured) (*status.Result, error) {
		return e.evaluate(ctx, u, r.left)
	}).ReadStatusForObject(ctx, reader, u)
}
