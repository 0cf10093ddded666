package hcclsim

// Batches of small transfers (one-sided batches and CopyLocal: up to
// hundreds of 64–160-byte rows) fall in a handful of allocations: rows
// gathered into one buffer, read from one table shard or one cache. A
// regions cache checks each allocation once per batch with the NPU (one
// locked lookup) and every descriptor of the batch against the cached
// bounds with a compare, instead of asking the NPU once per descriptor.

// regionsMax bounds a cache: a batch spread over more allocations than
// this replaces entries in turn (correct, only slower).
const regionsMax = 8

// region is one live allocation (or host registration).
type region struct {
	base uintptr
	size uint64
}

// holds reports whether [a, a+n) lies inside r.
func (r *region) holds(a uintptr, n uint64) bool {
	return a >= r.base && uint64(a-r.base) <= r.size && n <= r.size-uint64(a-r.base)
}

// regions caches the allocations of one memory kind on one device that a
// batch's ranges fell in. Not safe for concurrent use; reset it before
// each batch (memory may have been freed since it was filled).
type regions struct {
	rs   []region
	hint int // the region the last range fell in, tried first
	next int // the entry a full cache replaces next
	// covers: every range hit or lookup found since the reset lies in a
	// region the cache still holds (none was replaced), so that
	// rechecking the regions rechecks the ranges.
	covers bool
}

// reset empties the cache.
func (g *regions) reset() {
	g.rs, g.hint, g.next, g.covers = g.rs[:0], 0, 0, true
}

// recheck reports whether every range found since the reset still
// lies in live memory of kind: each cached region is still one whole
// allocation of that kind (the memory may have been freed since, as a
// stream task runs after its call). False when that cannot be shown;
// the caller then checks range by range.
func (g *regions) recheck(c *comm, kind memKind) bool {
	if !g.covers {
		return false
	}
	for _, r := range g.rs {
		base, size, err := c.sim.env.region(c.dev, kind, ptrOf(r.base))
		if err != nil || base != r.base || size != r.size {
			return false
		}
	}
	return true
}

// hit reports whether [a, a+n) lies in the region the last range fell in:
// the common case, small enough to inline into a batch's loop.
func (g *regions) hit(a uintptr, n uint64) bool {
	if g.hint >= len(g.rs) {
		return false
	}
	return g.rs[g.hint].holds(a, n)
}

// lookup reports whether [a, a+n) lies inside one live allocation of kind
// on c's device: one of the cache's, or the one the NPU says contains a
// (then cached). When it does not, the caller asks the NPU for the range
// itself, whose error says why. n must be at least 1 and a+n must not
// wrap. Callers try hit first.
func (g *regions) lookup(c *comm, kind memKind, a uintptr, n uint64) bool {
	for i := range g.rs {
		if g.rs[i].holds(a, n) {
			g.hint = i
			return true
		}
	}
	base, size, err := c.sim.env.region(c.dev, kind, ptrOf(a))
	if err != nil {
		return false
	}
	r := region{base, size}
	if !r.holds(a, n) {
		return false
	}
	if len(g.rs) < regionsMax {
		g.hint = len(g.rs)
		g.rs = append(g.rs, r)
	} else {
		g.hint = g.next
		g.rs[g.next] = r
		g.next = (g.next + 1) % regionsMax
		g.covers = false
	}
	return true
}
