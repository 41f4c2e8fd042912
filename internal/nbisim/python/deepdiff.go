package python

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// DeepDiff reproduces what the NBI reads of DeepDiff(t1, t2) (deepdiff
// 8.6.1, the NBI's requirements.txt) with its defaults, for the values of
// yaml.safe_load: whether there is any difference, and the paths of the
// values_changed report, in DeepDiff's order and form (root['kdu'][0]).
// Lists are compared in order: by index, or, when both hold only scalars,
// with difflib's SequenceMatcher when that reports fewer changes.
func DeepDiff(t1, t2 any) (changed bool, valuesChanged []string) {
	var d differ
	d.diff(t1, t2, "root", &d.reports)
	reports := mutualAddRemovesToValueChanges(d.reports)
	for _, r := range reports {
		if r.kind == reportValuesChanged {
			valuesChanged = append(valuesChanged, r.path)
		}
	}
	return len(reports) > 0, valuesChanged
}

// DeepDiff's report types.
const (
	reportValuesChanged = "values_changed"
	reportTypeChanges   = "type_changes"
	reportDictAdded     = "dictionary_item_added"
	reportDictRemoved   = "dictionary_item_removed"
	reportItemAdded     = "iterable_item_added"
	reportItemRemoved   = "iterable_item_removed"
	reportItemMoved     = "iterable_item_moved"
)

type diffReport struct {
	kind, path string
}

type differ struct {
	reports []diffReport
}

func report(out *[]diffReport, kind, path string) {
	*out = append(*out, diffReport{kind, path})
}

// diff is DeepDiff._diff for the types yaml.safe_load makes.
func (d *differ) diff(t1, t2 any, path string, out *[]diffReport) {
	if isYAMLNaN(t1) && isYAMLNaN(t2) {
		return // PyYAML's .nan is one object, and DeepDiff starts with "if level.t1 is level.t2"
	}
	if TypeName(t1) != TypeName(t2) {
		report(out, reportTypeChanges, path)
		return
	}
	switch x := t1.(type) {
	case *Dict:
		d.diffDict(x, t2.(*Dict), path, out)
	case []any:
		d.diffList(x, t2.([]any), path, out)
	case nil:
	case pyDatetime:
		// _diff_datetime reads a naive datetime as UTC.
		if !x.t.Equal(t2.(pyDatetime).t) {
			report(out, reportValuesChanged, path)
		}
	default:
		if !Equal(t1, t2) {
			report(out, reportValuesChanged, path)
		}
	}
}

// diffDict is DeepDiff._diff_dict: the keys added (in t2's order), then
// the keys removed (in t1's), then the common keys, in t2's order.
func (d *differ) diffDict(t1, t2 *Dict, path string, out *[]diffReport) {
	var common []any
	for _, m := range t2.Members {
		if t1.index(m.Key) >= 0 {
			common = append(common, m.Key)
		}
	}
	// threshold_to_diff_deeper (0.33 by default): dicts sharing too few
	// keys are one changed value.
	if union := len(t1.Members) + len(t2.Members) - len(common); union > 1 && float64(len(common))/float64(union) < 0.33 {
		report(out, reportValuesChanged, path)
		return
	}
	isCommon := func(key any) bool { return slices.ContainsFunc(common, func(c any) bool { return Equal(c, key) }) }
	for _, m := range t2.Members {
		if !isCommon(m.Key) {
			report(out, reportDictAdded, path+"["+deepDiffKey(m.Key)+"]")
		}
	}
	for _, m := range t1.Members {
		if !isCommon(m.Key) {
			report(out, reportDictRemoved, path+"["+deepDiffKey(m.Key)+"]")
		}
	}
	for _, key := range common {
		v1, _ := t1.Get(key)
		v2, _ := t2.Get(key)
		d.diff(v1, v2, path+"["+deepDiffKey(key)+"]", out)
	}
}

// deepDiffKey writes a dict key in a path: a string between quotes
// (DeepDiff's stringify_element, double quotes when the key has a single
// quote), any other key as its repr().
func deepDiffKey(key any) string {
	s, isString := key.(string)
	if !isString {
		return Repr(key)
	}
	if strings.Contains(s, "'") {
		return `"` + s + `"`
	}
	return "'" + s + "'"
}

// diffList is DeepDiff._diff_iterable_in_order.
func (d *differ) diffList(t1, t2 []any, path string, out *[]diffReport) {
	if !allBasic(t1) || !allBasic(t2) {
		d.diffByPairs(t1, t2, path, 0, len(t1), 0, len(t2), out)
		return
	}
	var byDifflib []diffReport
	d.diffByDifflib(t1, t2, path, &byDifflib)
	// "Sometimes DeepDiff's old iterable diff does a better job than DeepDiff"
	if len(byDifflib) > 1 {
		var byPairs []diffReport
		d.diffByPairs(t1, t2, path, 0, len(t1), 0, len(t2), &byPairs)
		if len(byDifflib) >= len(byPairs) {
			byDifflib = byPairs
		}
	}
	*out = append(*out, byDifflib...)
}

// allBasic tells whether a list holds only DeepDiff's basic types (strings,
// numbers, dates, booleans, None), which difflib can compare.
func allBasic(items []any) bool {
	for _, item := range items {
		switch item.(type) {
		case []any, *Dict:
			return false
		}
	}
	return true
}

// diffByPairs is DeepDiff._diff_by_forming_pairs_and_comparing_one_by_one:
// the items of t1[from1:to1] and t2[from2:to2] paired by their index in
// the slices. A removed item's path has its index in t1, an added one's
// its index in t2.
func (d *differ) diffByPairs(t1, t2 []any, path string, from1, to1, from2, to2 int, out *[]diffReport) {
	a, b := t1[from1:to1], t2[from2:to2]
	for i := range max(len(a), len(b)) {
		switch {
		case i >= len(b):
			report(out, reportItemRemoved, fmt.Sprintf("%s[%d]", path, i+from1))
		case i >= len(a):
			report(out, reportItemAdded, fmt.Sprintf("%s[%d]", path, i+from2))
		case i+from1 != i+from2 && Equal(a[i], b[i]):
			report(out, reportItemMoved, fmt.Sprintf("%s[%d]", path, i+from1))
		default:
			d.diff(a[i], b[i], fmt.Sprintf("%s[%d]", path, i+from1), out)
		}
	}
}

// diffByDifflib is DeepDiff._diff_ordered_iterable_by_difflib.
func (d *differ) diffByDifflib(t1, t2 []any, path string, out *[]diffReport) {
	for _, op := range sequenceOpcodes(t1, t2) {
		switch op.tag {
		case "replace":
			d.diffByPairs(t1, t2, path, op.i1, op.i2, op.j1, op.j2, out)
		case "delete":
			for i := op.i1; i < op.i2; i++ {
				report(out, reportItemRemoved, fmt.Sprintf("%s[%d]", path, i))
			}
		case "insert":
			for j := op.j1; j < op.j2; j++ {
				report(out, reportItemAdded, fmt.Sprintf("%s[%d]", path, j))
			}
		}
	}
}

// mutualAddRemovesToValueChanges is TreeResult's
// mutual_add_removes_to_become_value_changes: an item removed and an item
// added at the same path are a changed value, reported after the others.
// (DeepDiff walks a Python set of the paths there, whose order varies
// between runs of the NBI; the simulator keeps the order of removal.)
func mutualAddRemovesToValueChanges(reports []diffReport) []diffReport {
	added := map[string]bool{}
	for _, r := range reports {
		if r.kind == reportItemAdded {
			added[r.path] = true
		}
	}
	mutual := map[string]bool{}
	var changed []diffReport
	for _, r := range reports {
		if r.kind == reportItemRemoved && added[r.path] && !mutual[r.path] {
			mutual[r.path] = true
			changed = append(changed, diffReport{reportValuesChanged, r.path})
		}
	}
	if len(mutual) == 0 {
		return reports
	}
	kept := make([]diffReport, 0, len(reports))
	for _, r := range reports {
		if (r.kind == reportItemAdded || r.kind == reportItemRemoved) && mutual[r.path] {
			continue
		}
		kept = append(kept, r)
	}
	// values_changed is one ordered set: the mutual paths come after the
	// values changed found by the walk.
	return append(kept, changed...)
}

type opcode struct {
	tag            string
	i1, i2, j1, j2 int
}

// sequenceOpcodes is difflib.SequenceMatcher(None, a, b,
// autojunk=False).get_opcodes(), with Python's equality of the items.
func sequenceOpcodes(a, b []any) []opcode { //nolint:gocyclo // follows difflib's code, to match it step for step
	key := func(v any) string {
		if n, finite := pyNumber(v); finite {
			return "n" + n.RatString()
		}
		switch x := v.(type) {
		case string:
			return "s" + x
		case nil:
			return "z"
		}
		return fmt.Sprintf("%T%v", v, v)
	}
	b2j := map[string][]int{}
	for j, item := range b {
		k := key(item)
		b2j[k] = append(b2j[k], j)
	}
	findLongestMatch := func(alo, ahi, blo, bhi int) (int, int, int) {
		besti, bestj, bestsize := alo, blo, 0
		j2len := map[int]int{}
		for i := alo; i < ahi; i++ {
			newj2len := map[int]int{}
			for _, j := range b2j[key(a[i])] {
				if j < blo {
					continue
				}
				if j >= bhi {
					break
				}
				k := j2len[j-1] + 1
				newj2len[j] = k
				if k > bestsize {
					besti, bestj, bestsize = i-k+1, j-k+1, k
				}
			}
			j2len = newj2len
		}
		for besti > alo && bestj > blo && Equal(a[besti-1], b[bestj-1]) {
			besti, bestj, bestsize = besti-1, bestj-1, bestsize+1
		}
		for besti+bestsize < ahi && bestj+bestsize < bhi && Equal(a[besti+bestsize], b[bestj+bestsize]) {
			bestsize++
		}
		return besti, bestj, bestsize
	}
	type block struct{ i, j, size int }
	var blocks []block
	queue := [][4]int{{0, len(a), 0, len(b)}}
	for len(queue) > 0 {
		q := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		alo, ahi, blo, bhi := q[0], q[1], q[2], q[3]
		i, j, k := findLongestMatch(alo, ahi, blo, bhi)
		if k > 0 {
			blocks = append(blocks, block{i, j, k})
			if alo < i && blo < j {
				queue = append(queue, [4]int{alo, i, blo, j})
			}
			if i+k < ahi && j+k < bhi {
				queue = append(queue, [4]int{i + k, ahi, j + k, bhi})
			}
		}
	}
	slices.SortFunc(blocks, func(x, y block) int {
		if x.i != y.i {
			return x.i - y.i
		}
		if x.j != y.j {
			return x.j - y.j
		}
		return x.size - y.size
	})
	var collapsed []block
	var i1, j1, k1 int
	for _, bl := range blocks {
		if i1+k1 == bl.i && j1+k1 == bl.j {
			k1 += bl.size
			continue
		}
		if k1 > 0 {
			collapsed = append(collapsed, block{i1, j1, k1})
		}
		i1, j1, k1 = bl.i, bl.j, bl.size
	}
	if k1 > 0 {
		collapsed = append(collapsed, block{i1, j1, k1})
	}
	collapsed = append(collapsed, block{len(a), len(b), 0})

	var codes []opcode
	i, j := 0, 0
	for _, bl := range collapsed {
		tag := ""
		switch {
		case i < bl.i && j < bl.j:
			tag = "replace"
		case i < bl.i:
			tag = "delete"
		case j < bl.j:
			tag = "insert"
		}
		if tag != "" {
			codes = append(codes, opcode{tag, i, bl.i, j, bl.j})
		}
		i, j = bl.i+bl.size, bl.j+bl.size
		if bl.size > 0 {
			codes = append(codes, opcode{"equal", bl.i, i, bl.j, j})
		}
	}
	return codes
}

func isYAMLNaN(v any) bool {
	f, isFloat := v.(float64)
	return isFloat && math.IsNaN(f)
}
