package engram

import (
	"errors"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// CacheStats are a hot-row cache's counters since the buffer was made.
// Hits and Misses count remote-row lookups of inference fetches (own and
// out-of-range rows are neither); Bypassed the remote rows of fetches that
// skipped the cache (a hit rate under bypassBelow, see hotCache);
// Admitted and Rejected the misses offered to the cache; Evictions the
// rows displaced; Invalidated the rows dropped by Write, Invalidate or a
// failed fetch.
type CacheStats struct {
	Hits, Misses, Bypassed, Admitted, Rejected, Evictions, Invalidated int64
}

// HitRate is Hits / (Hits + Misses), 0 before any lookup.
func (s CacheStats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// hotCache is the per-rank device cache of remote rows (Config.CacheRows,
// beyond ElasticBuffer, in the spirit of FBGEMM's UVM cache).
//
// Admission and eviction are chosen for skewed traffic, TinyLFU style: a
// count-min sketch estimates each remote row's recent request frequency
// (4-bit counters, halved every 10·C requests so the estimate follows a
// drifting distribution); the eviction candidate is picked by CLOCK
// (rows hit since the hand last passed get a second chance); a missed row
// is admitted into a free slot, or in place of the candidate only when
// its estimated frequency is higher. Under Zipf traffic this keeps the
// head of the distribution and refuses one-off rows that would churn an
// LRU; under uniform traffic it admits rarely, so its cost is the lookups.
//
// Rows are admitted at Wait, by a device-to-device copy from the fetch's
// output queued on the fetch's stream after its reads (and after the
// drain that completes them), so Wait's one synchronisation covers both;
// a fetch that fails drops the rows it admitted, so a cache row is never
// served from an unfinished or failed read.
//
// The hot path costs no map and no allocation: rows are found in an
// open-addressing table (row → slot), the sketch takes one hash per row,
// and the hits are copied with one own-rank BatchGet. When the cache does
// not pay (uniform traffic: a hit rate under bypassBelow over a window of
// fetches) the fetches skip it entirely, lookups, sketch and admission
// alike, and every probeEvery-th fetch looks again, so the cache comes
// back when the traffic turns skewed.
type hotCache struct {
	rows  *acl.DeviceBuffer // C × row bytes
	reg   *hccl.LocalMem    // rows registered on the communicator
	descs []hccl.OneSideOpDesc
	c     int
	rb    int64
	slot  rowTable // global row → slot
	owner []int32  // slot → global row, -1 free
	ref   []bool   // CLOCK reference bits
	hand  int
	free  []int32
	sk    sketch
	stats CacheStats

	// Bypass: the hit rate of the current window of fetches, and how many
	// fetches still skip the cache.
	winHits, winLookups int64
	winFetches          int
	bypass              int  // fetches still to skip the cache
	probing             bool // this fetch is the probe after a bypass

	// The fetch in flight: hit copies (token, slot) and misses (token, row).
	hits     []int32
	missed   []int32
	admitted []int32 // rows admitted by the current admit
}

// Bypass policy. A window of fetches whose remote rows hit less than
// bypassBelow of the time makes the next probeEvery−1 fetches skip the
// cache; the fetch after them is a probe with the cache on. Under 25% hits
// a fetch saves under a quarter of its remote reads while every remote row
// pays the lookup and the sketch: on the HCCL fallback (BenchmarkCache,
// cpu-µs/fetch) uniform traffic over a 5% cache hits about 20% and the
// cache's work exceeded what the hits saved.
const (
	bypassBelow = 0.25
	windowSize  = 8  // fetches per hit-rate window
	probeEvery  = 16 // while bypassed, one fetch in probeEvery uses the cache
)

// newHotCache allocates the cache's rows and registers them on comm, so
// that a fetch's hits are one own-rank BatchGet (HCCL serves it locally,
// as it does the own rows) rather than a copy per row.
func newHotCache(dev *acl.Device, comm *hccl.Comm, c int, rb int64) (*hotCache, error) {
	size := max(int64(c)*rb, 1)
	d, err := dev.Malloc(uintptr(size), acl.MemMallocHugeFirst)
	if err != nil {
		return nil, err
	}
	var reg *hccl.LocalMem
	if err := dev.Do(func() error {
		var err error
		reg, err = comm.RegisterMem((comm.Rank()+1)%comm.Size(), hccl.MemDevice, d.Ptr(), uint64(size))
		return err
	}); err != nil {
		_ = d.Close()
		return nil, err
	}
	h := &hotCache{rows: d, reg: reg, c: c, rb: rb, owner: make([]int32, c), ref: make([]bool, c)}
	h.slot.init(c)
	h.sk.init(c)
	h.reset()
	return h, nil
}

// reset empties the cache (Write: every slice may have changed).
func (h *hotCache) reset() {
	h.stats.Invalidated += int64(h.slot.n)
	h.slot.clear()
	h.free = h.free[:0]
	for i := h.c - 1; i >= 0; i-- {
		h.owner[i], h.ref[i] = -1, false
		h.free = append(h.free, int32(i))
	}
}

// invalidate drops the given global rows.
func (h *hotCache) invalidate(rows []int32) {
	for _, g := range rows {
		if s, ok := h.slot.get(g); ok {
			h.slot.del(g)
			h.owner[s], h.ref[s] = -1, false
			h.free = append(h.free, s)
			h.stats.Invalidated++
		}
	}
}

// use reports whether this fetch goes through the cache, and counts it
// toward the bypass policy.
func (h *hotCache) use() bool {
	if h.bypass > 0 {
		if h.bypass--; h.bypass == 0 {
			h.probing = true
		}
		return false
	}
	return true
}

// bypassed counts a fetch that skipped the cache.
func (h *hotCache) bypassed(remote int) { h.stats.Bypassed += int64(remote) }

// lookup sorts a fetch's tokens: hits (remote rows in the cache) are
// recorded with their slots; every other token goes to missIdx/missTok
// for the planner. Rows of [lo, hi) are this rank's own and rows outside
// [0, global) out of range: neither is looked up.
func (h *hotCache) lookup(indices []int32, lo, hi, global int64, missIdx, missTok []int32) ([]int32, []int32) {
	h.hits, h.missed = h.hits[:0], h.missed[:0]
	var hits, lookups int64
	for i, g := range indices {
		if x := int64(g); x < 0 || x >= global || (x >= lo && x < hi) {
			missIdx, missTok = append(missIdx, g), append(missTok, int32(i))
			continue
		}
		lookups++
		hv := mix(g)
		h.sk.add(hv)
		if s, ok := h.slot.get(g); ok {
			h.ref[s] = true
			h.hits = append(h.hits, int32(i), s)
			hits++
			continue
		}
		h.missed = append(h.missed, int32(i), g)
		missIdx, missTok = append(missIdx, g), append(missTok, int32(i))
	}
	h.stats.Hits += hits
	h.stats.Misses += lookups - hits
	h.winHits, h.winLookups = h.winHits+hits, h.winLookups+lookups
	if h.winFetches++; h.winFetches >= windowSize || h.probing {
		// A probe is judged on its own fetch.
		if h.winLookups > 0 && float64(h.winHits) < bypassBelow*float64(h.winLookups) {
			h.bypass = probeEvery - 1
		}
		h.winHits, h.winLookups, h.winFetches, h.probing = 0, 0, 0, false
	}
	return missIdx, missTok
}

// issueHits queues the hit rows' copies from the cache to the output:
// one own-rank BatchGet.
func (h *hotCache) issueHits(be hccl.Backend, ch hccl.CommHandle, rank int, out unsafe.Pointer, sh acl.StreamHandle) error {
	if len(h.hits) == 0 {
		return nil
	}
	h.descs = h.descs[:0]
	base := uintptr(h.rows.Ptr())
	for k := 0; k < len(h.hits); k += 2 {
		tok, s := int64(h.hits[k]), int64(h.hits[k+1])
		h.descs = append(h.descs, hccl.OneSideOpDesc{LocalAddr: unsafe.Add(out, tok*h.rb), RemoteAddr: base + uintptr(s*h.rb),
			Count: uint64(h.rb), DataType: hccl.Uint8})
	}
	return be.BatchGet(ch, uint32(rank), h.descs, sh)
}

// admit offers the fetch's missed rows to the cache and queues the
// admitted rows' copies from out into their slots: one own-rank BatchPut
// on stream sh, after the fetch's reads; the caller's synchronisation of
// sh completes it, and a failure must be followed by dropAdmitted. Slots
// read by this fetch's hits may be reassigned: their copies were queued
// first.
func (h *hotCache) admit(be hccl.Backend, ch hccl.CommHandle, rank int, out unsafe.Pointer, sh acl.StreamHandle) error {
	h.descs = h.descs[:0]
	h.admitted = h.admitted[:0]
	defer func() { h.missed = h.missed[:0] }()
	for k := 0; k < len(h.missed); k += 2 {
		tok, g := h.missed[k], h.missed[k+1]
		if _, ok := h.slot.get(g); ok {
			continue // a duplicate of a row admitted just now
		}
		var s int32
		if n := len(h.free); n > 0 {
			s, h.free = h.free[n-1], h.free[:n-1]
		} else {
			for h.ref[h.hand] { // CLOCK: second chance for rows hit lately
				h.ref[h.hand] = false
				h.hand = (h.hand + 1) % h.c
			}
			s = int32(h.hand)
			if h.sk.estimate(mix(g)) <= h.sk.estimate(mix(h.owner[s])) {
				h.stats.Rejected++
				continue
			}
			h.hand = (h.hand + 1) % h.c
			h.slot.del(h.owner[s])
			h.stats.Evictions++
		}
		h.slot.put(g, s)
		h.owner[s], h.ref[s] = g, false
		h.stats.Admitted++
		h.admitted = append(h.admitted, g)
		h.descs = append(h.descs, hccl.OneSideOpDesc{LocalAddr: unsafe.Add(out, int64(tok)*h.rb),
			RemoteAddr: uintptr(h.rows.Ptr()) + uintptr(int64(s)*h.rb), Count: uint64(h.rb), DataType: hccl.Uint8})
	}
	if len(h.admitted) == 0 {
		return nil
	}
	if err := be.BatchPut(ch, uint32(rank), h.descs, sh); err != nil {
		h.dropAdmitted()
		return err
	}
	return nil
}

// dropAdmitted frees the slots of the last admit (its copies failed or
// the fetch they came from did).
func (h *hotCache) dropAdmitted() {
	h.invalidate(h.admitted)
	h.admitted = h.admitted[:0]
}

// close deregisters the rows (with the device bound) and frees them.
func (h *hotCache) close(dev *acl.Device) error {
	err := dev.Do(h.reg.Close)
	return errors.Join(err, h.rows.Close())
}

// sketch is a count-min sketch of 4-bit counters (4 rows), halved every
// 10·C additions (TinyLFU's reset). The rows' indices come from one 64-bit
// hash of the key (mix), split Kirsch–Mitzenmacher style.
type sketch struct {
	cnt    []uint8
	mask   uint64
	adds   int
	period int
}

func (s *sketch) init(c int) {
	// C counters a row (4-bit, in bytes): TinyLFU's size, small enough
	// to stay in cache while every remote row of a fetch updates it.
	w := 64
	for w < c {
		w *= 2
	}
	s.cnt, s.mask, s.period = make([]uint8, 4*w), uint64(w-1), 10*max(c, 1)
}

// mix is a 64-bit hash of a global row (splitmix64's finaliser).
func mix(g int32) uint64 {
	x := uint64(uint32(g))*0x9e3779b97f4a7c15 + 0xbf58476d1ce4e5b9
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return x
}

func (s *sketch) idx(h uint64, i int) int {
	return i*int(s.mask+1) + int((h+uint64(i)*(h>>32|1))&s.mask)
}

func (s *sketch) add(h uint64) {
	for i := 0; i < 4; i++ {
		if j := s.idx(h, i); s.cnt[j] < 15 {
			s.cnt[j]++
		}
	}
	if s.adds++; s.adds >= s.period {
		s.adds = 0
		for j := range s.cnt {
			s.cnt[j] >>= 1
		}
	}
}

func (s *sketch) estimate(h uint64) uint8 {
	m := uint8(15)
	for i := 0; i < 4; i++ {
		m = min(m, s.cnt[s.idx(h, i)])
	}
	return m
}

// rowTable maps global rows (≥ 0) to cache slots: open addressing with
// linear probing at a load of at most one half, deletion by backward
// shift (no tombstones), so a lookup is a hash and a probe or two.
type rowTable struct {
	keys  []int32 // -1: empty
	vals  []int32
	shift uint
	n     int
}

func (t *rowTable) init(c int) {
	size, bits := 16, uint(4)
	for size < 2*c {
		size, bits = size*2, bits+1
	}
	t.keys, t.vals, t.shift = make([]int32, size), make([]int32, size), 64-bits
	t.clear()
}

func (t *rowTable) clear() {
	for i := range t.keys {
		t.keys[i] = -1
	}
	t.n = 0
}

func (t *rowTable) home(g int32) int { return int(mix(g) >> t.shift) }

func (t *rowTable) get(g int32) (int32, bool) {
	m := len(t.keys) - 1
	for i := t.home(g); ; i = (i + 1) & m {
		switch t.keys[i] {
		case g:
			return t.vals[i], true
		case -1:
			return 0, false
		}
	}
}

// put sets g's slot (g not present, or present: overwritten).
func (t *rowTable) put(g, v int32) {
	m := len(t.keys) - 1
	i := t.home(g)
	for t.keys[i] != -1 && t.keys[i] != g {
		i = (i + 1) & m
	}
	if t.keys[i] == -1 {
		t.n++
	}
	t.keys[i], t.vals[i] = g, v
}

func (t *rowTable) del(g int32) {
	m := len(t.keys) - 1
	i := t.home(g)
	for t.keys[i] != g {
		if t.keys[i] == -1 {
			return
		}
		i = (i + 1) & m
	}
	t.n--
	// Backward shift: move later entries of the run into the hole when
	// the hole lies on their probe path (between their home and them).
	for j := (i + 1) & m; t.keys[j] != -1; j = (j + 1) & m {
		k := t.home(t.keys[j])
		if (j > i && (k <= i || k > j)) || (j < i && k <= i && k > j) {
			t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
			i = j
		}
	}
	t.keys[i] = -1
}
