package healthexpr

// What bounds each evaluation beyond cel-go's own runtime cost tracking.
//
// cel-go charges most calls after they return, from their arguments' sizes. That bounds the
// work of a call whose time and result are linear in what it was given, since what it was given
// was charged when it was built. It does not bound three kinds of call, each of which a few
// hundred bytes of expression can turn into gigabytes or minutes:
//   - a call whose result is far larger than its arguments (replace, split, join): bounded here
//     before the result is built (MaxValueBytes);
//   - a call whose time is the product of its arguments' sizes (matches, sets.*): bounded here
//     before it runs (CostLimit), and charged that product;
//   - a list concatenation, which cel-go builds lazily at a constant charge, so that doubling a
//     list fifty times, or a list of references to one large value, costs nothing until a
//     comparison walks it: resultCost charges what the concatenation adds, walked in depth
//     (deepSize), so that every list an evaluation holds was paid for element by element.

import (
	"errors"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// errValueTooLarge is a call refused before it builds a value over MaxValueBytes, or spends
// over CostLimit in one step.
var errValueTooLarge = errors.New("the call would exceed the bound of one value or step")

// Cost factors, as cel-go's runtime cost tracker counts them (common.StringTraversalCostFactor,
// common.RegexStringLengthCostFactor).
const (
	stringTraversalCost = 0.1
	regexLengthCost     = 0.25
)

// boundedFunctions replaces the implementations of the library functions whose one call can
// build or spend far more than its arguments cost; each signature is exactly the one it
// replaces (ext.Strings, ext.Sets, the standard library), with the same results within bounds.
func boundedFunctions() []cel.EnvOption {
	str, listOfStrings, anyList := cel.StringType, cel.ListType(cel.StringType), cel.ListType(cel.TypeParamType("T"))
	return []cel.EnvOption{
		cel.Function("replace",
			cel.MemberOverload("string_replace_string_string", []*cel.Type{str, str, str}, str,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val { return boundedReplace(args[0], args[1], args[2], -1) })),
			cel.MemberOverload("string_replace_string_string_int", []*cel.Type{str, str, str, cel.IntType}, str,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					return boundedReplace(args[0], args[1], args[2], int64(args[3].(types.Int)))
				}))),
		cel.Function("split",
			cel.MemberOverload("string_split_string", []*cel.Type{str, str}, listOfStrings,
				cel.BinaryBinding(func(s, sep ref.Val) ref.Val { return boundedSplit(s, sep, -1) })),
			cel.MemberOverload("string_split_string_int", []*cel.Type{str, str, cel.IntType}, listOfStrings,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					return boundedSplit(args[0], args[1], int64(args[2].(types.Int)))
				}))),
		cel.Function("join",
			cel.MemberOverload("list_join", []*cel.Type{listOfStrings}, str,
				cel.UnaryBinding(func(list ref.Val) ref.Val { return boundedJoin(list, "") })),
			cel.MemberOverload("list_join_string", []*cel.Type{listOfStrings, str}, str,
				cel.BinaryBinding(func(list, sep ref.Val) ref.Val { return boundedJoin(list, string(sep.(types.String))) }))),
		// One binding for both overloads, as the standard library has it: the function's name
		// is also its global overload's id.
		cel.Function(overloads.Matches,
			cel.Overload(overloads.Matches, []*cel.Type{str, str}, cel.BoolType),
			cel.MemberOverload(overloads.MatchesString, []*cel.Type{str, str}, cel.BoolType),
			cel.SingletonBinaryBinding(boundedMatches)),
		cel.Function("sets.contains",
			cel.Overload("list_sets_contains_list", []*cel.Type{anyList, anyList}, cel.BoolType,
				cel.BinaryBinding(func(list, sub ref.Val) ref.Val { return boundedSets(list, sub, 1, setsContains) }))),
		cel.Function("sets.equivalent",
			cel.Overload("list_sets_equivalent_list", []*cel.Type{anyList, anyList}, cel.BoolType,
				cel.BinaryBinding(func(a, b ref.Val) ref.Val {
					return boundedSets(a, b, 2, func(a, b traits.Lister) ref.Val {
						if contains := setsContains(a, b); contains != types.True {
							return contains
						}
						return setsContains(b, a)
					})
				}))),
		cel.Function("sets.intersects",
			cel.Overload("list_sets_intersects_list", []*cel.Type{anyList, anyList}, cel.BoolType,
				cel.BinaryBinding(func(a, b ref.Val) ref.Val { return boundedSets(a, b, 1, setsIntersects) }))),
	}
}

// tooLarge is the error value of a refused call.
func tooLarge(what string) ref.Val {
	return types.NewErr("%s: %s", what, errValueTooLarge)
}

// boundedReplace is ext.Strings' replace, refused when its result would be over MaxValueBytes.
func boundedReplace(s, old, replacement ref.Val, n int64) ref.Val {
	text, from, to := string(s.(types.String)), string(old.(types.String)), string(replacement.(types.String))
	count := int64(strings.Count(text, from)) // an empty old counts every rune boundary
	if n >= 0 && n < count {
		count = n
	}
	if int64(len(text))+count*int64(len(to)-len(from)) > MaxValueBytes {
		return tooLarge("replace")
	}
	return types.String(strings.Replace(text, from, to, int(n)))
}

// boundedSplit is ext.Strings' split, refused when its list would be over MaxValueBytes
// elements' worth (each element at least a string header).
func boundedSplit(s, sep ref.Val, n int64) ref.Val {
	text, separator := string(s.(types.String)), string(sep.(types.String))
	parts := int64(strings.Count(text, separator)) + 1
	if separator == "" {
		parts = int64(utf8.RuneCountInString(text))
	}
	if n >= 0 && n < parts {
		parts = n
	}
	if parts*16 > MaxValueBytes {
		return tooLarge("split")
	}
	return types.DefaultTypeAdapter.NativeToValue(strings.SplitN(text, separator, int(n)))
}

// boundedJoin is ext.Strings' join, refused when its result would be over MaxValueBytes:
// a list of references to one long string is cheap to build and long to join.
func boundedJoin(list ref.Val, separator string) ref.Val {
	l := list.(traits.Lister)
	size := int64(l.Size().(types.Int))
	total := max(size-1, 0) * int64(len(separator))
	parts := make([]string, 0, min(size, 1024))
	for i := int64(0); i < size && total <= MaxValueBytes; i++ {
		elem, ok := l.Get(types.Int(i)).(types.String)
		if !ok {
			return types.NewErr("join: invalid input: %v", l.Get(types.Int(i)))
		}
		total += int64(len(elem))
		parts = append(parts, string(elem))
	}
	if total > MaxValueBytes {
		return tooLarge("join")
	}
	return types.String(strings.Join(parts, separator))
}

// matchCost is what cel-go charges a regular expression match: the string's length times the
// pattern's (RE2 is linear in the product).
func matchCost(s, pattern ref.Val) uint64 {
	return uint64(math.Ceil((1+float64(len(s.(types.String))))*stringTraversalCost) *
		math.Ceil(float64(len(pattern.(types.String)))*regexLengthCost))
}

// boundedMatches is the standard matches, refused before it runs when one match would cost
// more than a whole evaluation may.
func boundedMatches(s, pattern ref.Val) ref.Val {
	if _, ok := s.(types.String); !ok {
		return types.MaybeNoSuchOverloadErr(s)
	}
	if _, ok := pattern.(types.String); !ok {
		return types.MaybeNoSuchOverloadErr(pattern)
	}
	if matchCost(s, pattern) > CostLimit {
		return tooLarge("matches")
	}
	return s.(traits.Matcher).Match(pattern)
}

// boundedSets runs one of ext.Sets' functions, refused before it runs when its comparisons
// (the product of the lists' sizes, times factor) would cost more than a whole evaluation may.
func boundedSets(a, b ref.Val, factor uint64, run func(a, b traits.Lister) ref.Val) ref.Val {
	la, lb := a.(traits.Lister), b.(traits.Lister)
	if setsCost(la, lb, factor) > CostLimit {
		return tooLarge("sets")
	}
	return run(la, lb)
}

func setsCost(a, b traits.Lister, factor uint64) uint64 {
	return factor * uint64(a.Size().(types.Int)) * uint64(b.Size().(types.Int))
}

// setsContains and setsIntersects are ext.Sets' (unexported there).
func setsContains(list, sub traits.Lister) ref.Val {
	for it := sub.Iterator(); it.HasNext() == types.True; {
		if found := list.Contains(it.Next()); found != types.True {
			return found
		}
	}
	return types.True
}

func setsIntersects(a, b traits.Lister) ref.Val {
	for it := a.Iterator(); it.HasNext() == types.True; {
		if b.Contains(it.Next()) == types.True {
			return types.True
		}
	}
	return types.False
}

// resultCost charges, after a call, what cel-go's default tracker does not: a string or list
// built by a library function (ext.Strings, ext.Encoders) by its size, a list concatenation by
// what it adds walked in depth, and the product-cost calls by their product. Nil leaves a call
// to cel-go's default charge.
type resultCost struct{}

func (resultCost) CallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	var cost uint64
	switch {
	case overloadID == overloads.AddList && len(args) == 2:
		a, b := args[0].(traits.Lister), args[1].(traits.Lister)
		smaller := args[1]
		if a.Size().(types.Int) < b.Size().(types.Int) {
			smaller = args[0]
		}
		cost = 1 + deepSize(smaller, CostLimit+1)
	case function == overloads.Matches && len(args) == 2:
		cost = matchCost(args[0], args[1])
	case function == "sets.contains" || function == "sets.intersects":
		cost = setsCost(args[0].(traits.Lister), args[1].(traits.Lister), 1)
	case function == "sets.equivalent":
		cost = setsCost(args[0].(traits.Lister), args[1].(traits.Lister), 2)
	default:
		switch r := result.(type) {
		case types.String:
			cost = 1 + uint64(math.Ceil(float64(len(r))*stringTraversalCost))
		case types.Bytes:
			cost = 1 + uint64(math.Ceil(float64(len(r))*stringTraversalCost))
		case traits.Lister:
			cost = 1 + uint64(r.Size().(types.Int))
		default:
			return nil
		}
	}
	return &cost
}

// deepSize counts the elements, entries and string bytes (a tenth each, as cel-go charges a
// traversal) of v and of everything it holds, stopping at limit: what a comparison of v walks.
func deepSize(v ref.Val, limit uint64) uint64 {
	var size uint64
	var walk func(v ref.Val)
	walk = func(v ref.Val) {
		if size > limit {
			return
		}
		size++
		switch value := v.(type) {
		case types.String:
			size += uint64(float64(len(value)) * stringTraversalCost)
		case traits.Mapper:
			for it := value.Iterator(); it.HasNext() == types.True && size <= limit; {
				key := it.Next()
				walk(key)
				walk(value.Get(key))
			}
		case traits.Lister:
			for it := value.Iterator(); it.HasNext() == types.True && size <= limit; {
				walk(it.Next())
			}
		}
	}
	walk(v)
	return size
}
