package nbisim

// table holds records by _id in insertion order, the order the NBI's
// database lists them in, with constant-time insert, look-up and delete so
// that tens of thousands of NS instances cost nothing extra per request.
type table[T any] struct {
	byID       map[string]*tableNode[T]
	head, tail *tableNode[T]
}

type tableNode[T any] struct {
	value      T
	prev, next *tableNode[T]
}

func newTable[T any]() *table[T] {
	return &table[T]{byID: map[string]*tableNode[T]{}}
}

func (t *table[T]) add(id string, value T) {
	node := &tableNode[T]{value: value, prev: t.tail}
	if t.tail != nil {
		t.tail.next = node
	} else {
		t.head = node
	}
	t.tail = node
	t.byID[id] = node
}

func (t *table[T]) get(id string) (T, bool) {
	node, found := t.byID[id]
	if !found {
		var zero T
		return zero, false
	}
	return node.value, true
}

// lookup is get for an index: the value with this id, if any.
func (t *table[T]) lookup(id string) []T {
	if value, found := t.get(id); found {
		return []T{value}
	}
	return nil
}

func (t *table[T]) remove(id string) {
	node, found := t.byID[id]
	if !found {
		return
	}
	delete(t.byID, id)
	if node.prev != nil {
		node.prev.next = node.next
	} else {
		t.head = node.next
	}
	if node.next != nil {
		node.next.prev = node.prev
	} else {
		t.tail = node.prev
	}
}

// all returns the values in insertion order.
func (t *table[T]) all() []T {
	values := make([]T, 0, len(t.byID))
	for node := t.head; node != nil; node = node.next {
		values = append(values, node.value)
	}
	return values
}
