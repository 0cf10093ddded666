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

// region is one live allocation (or host registration) and its bytes.
type region struct {
	base uintptr
	b    []byte
}

// sub is the view of [a, a+n) when it lies inside r.
func (r region) sub(a uintptr, n uint64) ([]byte, bool) {
	off := a - r.base
	if a < r.base || uint64(off) > uint64(len(r.b)) || n > uint64(len(r.b))-uint64(off) {
		return nil, false
	}
	return r.b[off : uint64(off)+n], true
}

// regions caches the allocations of one memory kind on one device that a
// batch's ranges fell in. Not safe for concurrent use; reset it before
// each batch (memory may have been freed since it was filled).
type regions struct {
	rs   []region
	hint int // the region the last range fell in, tried first
	next int // the entry a full cache replaces next
	// covers: every range view found since the reset lies in a region
	// the cache still holds (none was replaced), so that rechecking the
	// regions rechecks the ranges.
	covers bool
}

// reset empties the cache (and drops its views of device memory).
func (g *regions) reset() {
	clear(g.rs)
	g.rs, g.hint, g.next, g.covers = g.rs[:0], 0, 0, true
}

// recheck reports whether every range view found since the reset still
// lies in live memory of kind: each cached region is still one whole
// allocation of that kind (the memory may have been freed since, as a
// stream task runs after its call). False when that cannot be shown;
// the caller then checks range by range.
func (g *regions) recheck(c *comm, kind memKind) bool {
	if !g.covers {
		return false
	}
	for _, r := range g.rs {
		base, b, err := c.sim.env.region(c.dev, kind, ptrOf(r.base))
		if err != nil || base != r.base || len(b) != len(r.b) {
			return false
		}
	}
	return true
}

// view returns [a, a+n) if it lies inside one live allocation of kind on
// c's device: from the cache, or after asking the NPU for the allocation
// containing a. ok is false otherwise; the caller then asks the NPU for
// the range itself, whose error says why. n must be at least 1 and a+n
// must not wrap.
func (g *regions) view(c *comm, kind memKind, a uintptr, n uint64) (b []byte, ok bool) {
	if g.hint < len(g.rs) {
		if b, ok := g.rs[g.hint].sub(a, n); ok {
			return b, true
		}
	}
	for i := range g.rs {
		if b, ok := g.rs[i].sub(a, n); ok {
			g.hint = i
			return b, true
		}
	}
	base, mem, err := c.sim.env.region(c.dev, kind, ptrOf(a))
	if err != nil {
		return nil, false
	}
	r := region{base, mem}
	if b, ok = r.sub(a, n); !ok {
		return nil, false
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
	return b, true
}
