package nbisim

// countedRules are the faults or the operation failures in force, in the
// order they were added: each applies until cleared, or only as many more
// times as its count says.
type countedRules[T any] struct {
	rules []*countedRule[T]
}

type countedRule[T any] struct {
	rule      T
	limited   bool
	remaining int
}

// add puts a rule in force; a count of 0 keeps it until cleared.
func (c *countedRules[T]) add(rule T, count int) {
	c.rules = append(c.rules, &countedRule[T]{rule: rule, limited: count > 0, remaining: count})
}

func (c *countedRules[T]) clear() { c.rules = nil }

// list returns the rules, each with what remains of its count set by withCount.
func (c *countedRules[T]) list(withCount func(rule T, remaining int) T) []T {
	rules := make([]T, len(c.rules))
	for i, r := range c.rules {
		rules[i] = withCount(r.rule, r.remaining)
	}
	return rules
}

// take returns the rules that apply, in order (all of them, or the first
// only), each using one of its count; a rule whose count is used up goes.
func (c *countedRules[T]) take(applies func(T) bool, firstOnly bool) []T {
	var taken []T
	kept := c.rules[:0]
	for _, r := range c.rules {
		if (!firstOnly || len(taken) == 0) && applies(r.rule) {
			taken = append(taken, r.rule)
			if r.limited {
				r.remaining--
				if r.remaining == 0 {
					continue
				}
			}
		}
		kept = append(kept, r)
	}
	clear(c.rules[len(kept):])
	c.rules = kept
	return taken
}
