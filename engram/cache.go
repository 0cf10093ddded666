package engram

import (
	"encoding/binary"
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
// count-min sketch estimates how often each remote row missed lately
// (4-bit counters, halved every 10·C additions so the estimate follows a
// drifting distribution); the eviction candidate is picked by CLOCK
// (rows hit since the hand last passed get a second chance). Hits are not
// counted: a cached row is kept by its reference bit while it is hit, and
// counting every hit of the distribution's head cost more than the policy
// gained (BenchmarkCache: hit rate 0.81 → 0.80, fetch time −10%). A missed row
// is admitted into a free slot, or in place of the candidate only when
// its estimated frequency is higher and at least 2 (a doorkeeper against
// rows asked for once). Under Zipf traffic this keeps the
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
// and the hits are copied locally in one batch (localCopies). When the cache does
// not pay (uniform traffic: a hit rate under bypassBelow over a window of
// fetches) the fetches skip it entirely, lookups, sketch and admission
// alike, and every probeEvery-th fetch looks again, so the cache comes
// back when the traffic turns skewed.
type hotCache struct {
	rows  *acl.DeviceBuffer // C × row bytes
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
// cache's work exceeded what the hits saved. A probe costs about 1.6
// bypassed fetches (lookups, sketch, admission: BenchmarkCache with half
// the fetches probes), so one in 64 costs about 1% of uniform traffic's
// throughput (one in 16 cost 4–12%) and the cache is back within 64
// fetches of the traffic turning skewed.
const (
	bypassBelow = 0.25
	windowSize  = 8  // fetches per hit-rate window
	probeEvery  = 64 // while bypassed, one fetch in probeEvery uses the cache
)

// newHotCache allocates the cache's rows. A fetch's hits are local
// copies from them (localCopies), as the own rows are: HCCL refuses a
// one-sided batch addressed to the own rank.
func newHotCache(dev *acl.Device, c int, rb int64) (*hotCache, error) {
	size := max(int64(c)*rb, 1)
	d, err := dev.Malloc(uintptr(size), acl.MemMallocHugeFirst)
	if err != nil {
		return nil, err
	}
	h := &hotCache{rows: d, c: c, rb: rb, owner: make([]int32, c), ref: make([]bool, c)}
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
		// Nothing of the last fetch that used the cache may be replayed
		// into this one (issueHits, admit).
		h.hits, h.missed = h.hits[:0], h.missed[:0]
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
		if s, ok := h.slot.getH(g, hv); ok {
			h.ref[s] = true
			h.hits = append(h.hits, int32(i), s)
			hits++
			continue
		}
		h.sk.add(hv)
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
// local copies (localCopies).
func (h *hotCache) issueHits(rt acl.Backend, be hccl.Backend, ch hccl.CommHandle, out unsafe.Pointer, sh acl.StreamHandle) error {
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
	return localCopies(rt, be, ch, h.descs, h.rows.Ptr(), acl.MemcpyDeviceToDevice, sh)
}

// admit offers the fetch's missed rows to the cache and queues the
// admitted rows' copies from out into their slots: local copies
// (localCopies) on stream sh, after the fetch's reads; the caller's synchronisation of
// sh completes it, and a failure must be followed by dropAdmitted. Slots
// read by this fetch's hits may be reassigned: their copies were queued
// first.
func (h *hotCache) admit(rt acl.Backend, be hccl.Backend, ch hccl.CommHandle, out unsafe.Pointer, sh acl.StreamHandle) error {
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
			// A row replaces the victim only when asked for more often, and
			// at least twice lately (TinyLFU's doorkeeper): under uniform
			// traffic almost every row is new, victims age to zero, and
			// admitting rows seen once would churn the cache for nothing.
			if est := h.sk.estimate(mix(g)); est < 2 || est <= h.sk.estimate(mix(h.owner[s])) {
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
		h.descs = append(h.descs, hccl.OneSideOpDesc{LocalAddr: unsafe.Add(h.rows.Ptr(), int64(s)*h.rb),
			RemoteAddr: uintptr(out) + uintptr(int64(tok)*h.rb), Count: uint64(h.rb), DataType: hccl.Uint8})
	}
	if len(h.admitted) == 0 {
		return nil
	}
	if err := localCopies(rt, be, ch, h.descs, out, acl.MemcpyDeviceToDevice, sh); err != nil {
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

// close frees the rows.
func (h *hotCache) close() error { return h.rows.Close() }

// sketch is a count-min sketch of 4-bit counters (four per key), halved
// every 10·C additions (TinyLFU's reset). A key's four counters lie in
// one 64-byte block, one in each 16-byte quarter (a blocked count-min
// sketch, as Caffeine's frequency sketch): an update or estimate touches
// one cache line, not four. Block and counters come from one 64-bit hash
// of the key (mix).
type sketch struct {
	cnt    []uint8
	blocks uint64 // len(cnt)/64, a power of two
	adds   int
	period int
}

func (s *sketch) init(c int) {
	// 16·C counters (4-bit, in bytes; C per quarter of a block, as
	// Caffeine sizes its sketch), at least four blocks: wide enough that
	// the estimate of a row seen once stays low between two halvings
	// (10·C additions), small enough to stay in cache.
	w := 256
	for w < 16*c {
		w *= 2
	}
	s.cnt, s.blocks, s.period = make([]uint8, w), uint64(w/64), 10*max(c, 1)
}

// mix is a 64-bit hash of a global row (splitmix64's finaliser).
func mix(g int32) uint64 {
	x := uint64(uint32(g))*0x9e3779b97f4a7c15 + 0xbf58476d1ce4e5b9
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return x
}

// idx is counter i (0..3) of hash h: the block from the low bits, the
// counter within quarter i from 4 bits of the high half.
func (s *sketch) idx(h uint64, i int) int {
	return int((h&(s.blocks-1))*64) + i*16 + int(h>>(32+4*i)&15)
}

func (s *sketch) add(h uint64) {
	for i := 0; i < 4; i++ {
		if j := s.idx(h, i); s.cnt[j] < 15 {
			s.cnt[j]++
		}
	}
	if s.adds++; s.adds >= s.period {
		s.adds = 0
		s.halve()
	}
}

// halve halves every counter, eight at a time: counters are at most 15,
// so a byte's top bit is free to catch the bit shifted in from the next
// byte, which the mask clears.
func (s *sketch) halve() {
	for j := 0; j+8 <= len(s.cnt); j += 8 {
		x := binary.LittleEndian.Uint64(s.cnt[j:])
		binary.LittleEndian.PutUint64(s.cnt[j:], x>>1&0x7f7f7f7f7f7f7f7f)
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
// shift (no tombstones), so a lookup is a hash and a probe or two. A key
// and its slot share one word, so a probe touches one cache line.
type rowTable struct {
	ents  []uint64 // slot<<32 | uint32(row); empty: tEmpty
	shift uint
	n     int
}

const tEmpty = ^uint64(0) // row −1 (rows are ≥ 0)

func (t *rowTable) init(c int) {
	size, bits := 16, uint(4)
	for size < 2*c {
		size, bits = size*2, bits+1
	}
	t.ents, t.shift = make([]uint64, size), 64-bits
	t.clear()
}

func (t *rowTable) clear() {
	for i := range t.ents {
		t.ents[i] = tEmpty
	}
	t.n = 0
}

func (t *rowTable) home(g int32) int { return int(mix(g) >> t.shift) }

func (t *rowTable) get(g int32) (int32, bool) { return t.getH(g, mix(g)) }

// getH is get of a row whose hash (mix) the caller has.
func (t *rowTable) getH(g int32, h uint64) (int32, bool) {
	m := len(t.ents) - 1
	key := uint32(g)
	for i := int(h >> t.shift); ; i = (i + 1) & m {
		e := t.ents[i]
		switch {
		case uint32(e) == key:
			return int32(e >> 32), true
		case e == tEmpty:
			return 0, false
		}
	}
}

// put sets g's slot (g not present, or present: overwritten).
func (t *rowTable) put(g, v int32) {
	m := len(t.ents) - 1
	key := uint32(g)
	i := t.home(g)
	for t.ents[i] != tEmpty && uint32(t.ents[i]) != key {
		i = (i + 1) & m
	}
	if t.ents[i] == tEmpty {
		t.n++
	}
	t.ents[i] = uint64(uint32(v))<<32 | uint64(key)
}

func (t *rowTable) del(g int32) {
	m := len(t.ents) - 1
	key := uint32(g)
	i := t.home(g)
	for uint32(t.ents[i]) != key {
		if t.ents[i] == tEmpty {
			return
		}
		i = (i + 1) & m
	}
	t.n--
	// Backward shift: move later entries of the run into the hole when
	// the hole lies on their probe path (between their home and them).
	for j := (i + 1) & m; t.ents[j] != tEmpty; j = (j + 1) & m {
		k := t.home(int32(uint32(t.ents[j])))
		if (j > i && (k <= i || k > j)) || (j < i && k <= i && k > j) {
			t.ents[i] = t.ents[j]
			i = j
		}
	}
	t.ents[i] = tEmpty
}
