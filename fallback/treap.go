package fallback

// treap is an ordered map from uint64 keys to values: a randomized binary
// search tree with O(log n) expected insert, delete and floor/ceiling
// search. The allocator uses it to find the allocation containing an
// address and the best-fitting free block; the registration table uses it
// for host ranges. It is not safe for concurrent use; owners lock around it.
type treap[V any] struct {
	root *tnode[V]
	n    int
	rng  uint64
}

type tnode[V any] struct {
	key  uint64
	prio uint64
	val  V
	l, r *tnode[V]
}

// next is xorshift64*: priorities only need to be well spread, not secure.
func (t *treap[V]) next() uint64 {
	if t.rng == 0 {
		t.rng = 0x9E3779B97F4A7C15
	}
	x := t.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	t.rng = x
	return x * 2685821657736338717
}

// Len is the number of keys.
func (t *treap[V]) Len() int { return t.n }

// get returns the value stored under key.
func (t *treap[V]) get(key uint64) (V, bool) {
	for n := t.root; n != nil; {
		switch {
		case key < n.key:
			n = n.l
		case key > n.key:
			n = n.r
		default:
			return n.val, true
		}
	}
	var zero V
	return zero, false
}

// floor returns the entry with the greatest key ≤ key.
func (t *treap[V]) floor(key uint64) (uint64, V, bool) {
	var best *tnode[V]
	for n := t.root; n != nil; {
		if n.key <= key {
			best = n
			n = n.r
		} else {
			n = n.l
		}
	}
	if best == nil {
		var zero V
		return 0, zero, false
	}
	return best.key, best.val, true
}

// ceil returns the entry with the smallest key ≥ key.
func (t *treap[V]) ceil(key uint64) (uint64, V, bool) {
	var best *tnode[V]
	for n := t.root; n != nil; {
		if n.key >= key {
			best = n
			n = n.l
		} else {
			n = n.r
		}
	}
	if best == nil {
		var zero V
		return 0, zero, false
	}
	return best.key, best.val, true
}

// last returns the entry with the greatest key.
func (t *treap[V]) last() (uint64, V, bool) {
	n := t.root
	if n == nil {
		var zero V
		return 0, zero, false
	}
	for n.r != nil {
		n = n.r
	}
	return n.key, n.val, true
}

// insert stores val under key, replacing any previous value.
func (t *treap[V]) insert(key uint64, val V) {
	for n := t.root; n != nil; {
		switch {
		case key < n.key:
			n = n.l
		case key > n.key:
			n = n.r
		default:
			n.val = val
			return
		}
	}
	l, r := split(t.root, key)
	t.root = merge(merge(l, &tnode[V]{key: key, prio: t.next(), val: val}), r)
	t.n++
}

// delete removes key and reports whether it was present.
func (t *treap[V]) delete(key uint64) bool {
	var ok bool
	t.root, ok = del(t.root, key)
	if ok {
		t.n--
	}
	return ok
}

// each calls fn for every entry in key order until fn returns false.
func (t *treap[V]) each(fn func(key uint64, val V) bool) {
	walk(t.root, fn)
}

// clear removes every entry.
func (t *treap[V]) clear() { t.root, t.n = nil, 0 }

func walk[V any](n *tnode[V], fn func(uint64, V) bool) bool {
	for n != nil {
		if !walk(n.l, fn) || !fn(n.key, n.val) {
			return false
		}
		n = n.r
	}
	return true
}

// split returns the trees of keys < key and keys ≥ key.
func split[V any](n *tnode[V], key uint64) (*tnode[V], *tnode[V]) {
	if n == nil {
		return nil, nil
	}
	if n.key < key {
		a, b := split(n.r, key)
		n.r = a
		return n, b
	}
	a, b := split(n.l, key)
	n.l = b
	return a, n
}

// merge joins two trees where every key of a is below every key of b.
func merge[V any](a, b *tnode[V]) *tnode[V] {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio > b.prio:
		a.r = merge(a.r, b)
		return a
	default:
		b.l = merge(a, b.l)
		return b
	}
}

func del[V any](n *tnode[V], key uint64) (*tnode[V], bool) {
	if n == nil {
		return nil, false
	}
	var ok bool
	switch {
	case key < n.key:
		n.l, ok = del(n.l, key)
		return n, ok
	case key > n.key:
		n.r, ok = del(n.r, key)
		return n, ok
	}
	return merge(n.l, n.r), true
}
