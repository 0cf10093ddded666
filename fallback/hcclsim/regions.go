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

// regions caches the allocations of one memory kind on one device that a
// batch's ranges fell in. Not safe for concurrent use; reset it before
// each batch (memory may have been freed since it was filled).
type regions struct {
	rs   []span // live allocations (or host registrations)
	hint int    // the region the last range fell in, tried first
	next int    // the entry a full cache replaces next
	// complete: every range hit or lookup found since the reset lies in a
	// region the cache still holds (none was replaced), so that
	// rechecking the regions rechecks the ranges.
	complete bool
}

// reset empties the cache.
func (g *regions) reset() {
	g.rs, g.hint, g.next, g.complete = g.rs[:0], 0, 0, true
}

// recheck reports whether every range found since the reset still
// lies in live memory of kind: each cached region is still one whole
// allocation of that kind (the memory may have been freed since, as a
// stream task runs after its call). False when that cannot be shown;
// the caller then checks range by range.
func (g *regions) recheck(c *comm, kind memKind) bool {
	if !g.complete {
		return false
	}
	for _, r := range g.rs {
		base, size, err := c.sim.env.region(c.dev, kind, ptrOf(r.addr))
		if err != nil || base != r.addr || size != r.size {
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
	return g.rs[g.hint].covers(a, n)
}

// lookup reports whether [a, a+n) lies inside one live allocation of kind
// on c's device: one of the cache's, or the one the NPU says contains a
// (then cached). When it does not, the caller asks the NPU for the range
// itself, whose error says why. n must be at least 1 and a+n must not
// wrap. Callers try hit first.
func (g *regions) lookup(c *comm, kind memKind, a uintptr, n uint64) bool {
	for i := range g.rs {
		if g.rs[i].covers(a, n) {
			g.hint = i
			return true
		}
	}
	base, size, err := c.sim.env.region(c.dev, kind, ptrOf(a))
	if err != nil {
		return false
	}
	r := span{base, size}
	if !r.covers(a, n) {
		return false
	}
	if len(g.rs) < regionsMax {
		g.hint = len(g.rs)
		g.rs = append(g.rs, r)
	} else {
		g.hint = g.next
		g.rs[g.next] = r
		g.next = (g.next + 1) % regionsMax
		g.complete = false
	}
	return true
}
