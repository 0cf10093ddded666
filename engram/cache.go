package engram

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// CacheStats are a hot-row cache's counters since the buffer was made.
// Hits and Misses count remote-row lookups of inference fetches (own and
// out-of-range rows are neither); Admitted and Rejected the misses offered
// to the cache; Evictions the rows displaced; Invalidated the rows dropped
// by Write or Invalidate.
type CacheStats struct {
	Hits, Misses, Admitted, Rejected, Evictions, Invalidated int64
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
// Rows are admitted when the fetch that missed them completes (Wait), by a
// device-to-device copy from the fetch's output, so a cache row is never
// filled from an unfinished or failed read.
type hotCache struct {
	rows  *acl.DeviceBuffer // C × row bytes
	descs []hccl.OneSideOpDesc
	c     int
	rb    int64
	slot  map[int32]int32 // global row → slot
	owner []int32         // slot → global row, -1 free
	ref   []bool          // CLOCK reference bits
	hand  int
	free  []int32
	sk    sketch
	stats CacheStats

	// The fetch in flight: hit copies (token, slot) and misses (token, row).
	hits     []int32
	missed   []int32
	admitted []int32 // rows admitted by the current admit
}

// newHotCache allocates the cache's rows. A fetch's hits are local
// copies from them (localCopies), as the own rows are.
func newHotCache(dev *acl.Device, c int, rb int64) (*hotCache, error) {
	size := max(int64(c)*rb, 1)
	d, err := dev.Malloc(uintptr(size), acl.MemMallocHugeFirst)
	if err != nil {
		return nil, err
	}
	h := &hotCache{rows: d, c: c, rb: rb, slot: make(map[int32]int32, c), owner: make([]int32, c), ref: make([]bool, c)}
	h.sk.init(c)
	h.reset()
	return h, nil
}

// reset empties the cache (Write: every slice may have changed).
func (h *hotCache) reset() {
	h.stats.Invalidated += int64(len(h.slot))
	clear(h.slot)
	h.free = h.free[:0]
	for i := h.c - 1; i >= 0; i-- {
		h.owner[i], h.ref[i] = -1, false
		h.free = append(h.free, int32(i))
	}
}

// invalidate drops the given global rows.
func (h *hotCache) invalidate(rows []int32) {
	for _, g := range rows {
		if s, ok := h.slot[g]; ok {
			delete(h.slot, g)
			h.owner[s], h.ref[s] = -1, false
			h.free = append(h.free, s)
			h.stats.Invalidated++
		}
	}
}

// lookup sorts a fetch's tokens: hits (remote rows in the cache) are
// recorded with their slots; every other token goes to missIdx/missTok
// for the planner. isRemote says whether a global row is another rank's.
func (h *hotCache) lookup(indices []int32, isRemote func(int32) bool, missIdx, missTok []int32) ([]int32, []int32) {
	h.hits, h.missed = h.hits[:0], h.missed[:0]
	for i, g := range indices {
		if !isRemote(g) {
			missIdx, missTok = append(missIdx, g), append(missTok, int32(i))
			continue
		}
		h.sk.add(g)
		if s, ok := h.slot[g]; ok {
			h.ref[s] = true
			h.hits = append(h.hits, int32(i), s)
			h.stats.Hits++
			continue
		}
		h.stats.Misses++
		h.missed = append(h.missed, int32(i), g)
		missIdx, missTok = append(missIdx, g), append(missTok, int32(i))
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

// admit offers the completed fetch's missed rows to the cache, copying
// the admitted rows from out with one own-rank BatchPut on stream sh and
// waiting for it; on an error every slot of this round is freed, never
// left half filled.
func (h *hotCache) admit(rt acl.Backend, be hccl.Backend, ch hccl.CommHandle, out unsafe.Pointer, sh acl.StreamHandle) error {
	h.descs = h.descs[:0]
	h.admitted = h.admitted[:0]
	defer func() { h.missed = h.missed[:0] }()
	for k := 0; k < len(h.missed); k += 2 {
		tok, g := h.missed[k], h.missed[k+1]
		if _, ok := h.slot[g]; ok {
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
			if h.sk.estimate(g) <= h.sk.estimate(h.owner[s]) {
				h.stats.Rejected++
				continue
			}
			h.hand = (h.hand + 1) % h.c
			delete(h.slot, h.owner[s])
			h.stats.Evictions++
		}
		h.slot[g], h.owner[s], h.ref[s] = s, g, false
		h.stats.Admitted++
		h.admitted = append(h.admitted, g)
		h.descs = append(h.descs, hccl.OneSideOpDesc{LocalAddr: unsafe.Add(h.rows.Ptr(), int64(s)*h.rb),
			RemoteAddr: uintptr(out) + uintptr(int64(tok)*h.rb), Count: uint64(h.rb), DataType: hccl.Uint8})
	}
	if len(h.admitted) == 0 {
		return nil
	}
	err := localCopies(rt, be, ch, h.descs, out, acl.MemcpyDeviceToDevice, sh)
	if err == nil {
		err = rt.SynchronizeStream(sh)
	}
	if err != nil {
		h.invalidate(h.admitted)
	}
	return err
}

// close frees the rows.
func (h *hotCache) close() error { return h.rows.Close() }

// sketch is a count-min sketch of 4-bit counters (4 rows), halved every
// 10·C additions (TinyLFU's reset).
type sketch struct {
	cnt    []uint8
	mask   uint64
	adds   int
	period int
}

func (s *sketch) init(c int) {
	w := 64
	for w < 4*c {
		w *= 2
	}
	s.cnt, s.mask, s.period = make([]uint8, 4*w), uint64(w-1), 10*max(c, 1)
}

func (s *sketch) idx(g int32, i int) int {
	x := uint64(uint32(g))*0x9e3779b97f4a7c15 + uint64(i)*0xbf58476d1ce4e5b9
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return i*int(s.mask+1) + int(x&s.mask)
}

func (s *sketch) add(g int32) {
	for i := 0; i < 4; i++ {
		if j := s.idx(g, i); s.cnt[j] < 15 {
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

func (s *sketch) estimate(g int32) uint8 {
	m := uint8(15)
	for i := 0; i < 4; i++ {
		m = min(m, s.cnt[s.idx(g, i)])
	}
	return m
}
