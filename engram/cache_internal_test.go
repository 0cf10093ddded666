package engram

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The cache's row table agrees with a map under random puts, deletes and
// lookups, on a key range small enough that probe runs collide and wrap.
func TestRowTable(t *testing.T) {
	for _, c := range []int{1, 7, 64, 1000} {
		var tab rowTable
		tab.init(c)
		ref := map[int32]int32{}
		rng := rand.New(rand.NewPCG(uint64(c), 1))
		keys := int32(3 * c)
		for op := 0; op < 40*c+200; op++ {
			g := rng.Int32N(keys)
			switch {
			case rng.IntN(3) == 0:
				tab.del(g)
				delete(ref, g)
			case len(ref) < c:
				v := rng.Int32()
				tab.put(g, v)
				ref[g] = v
			}
			require.Equal(t, len(ref), tab.n, "c=%d op %d", c, op)
			if op%31 == 0 {
				for k := int32(0); k < keys; k++ {
					v, ok := tab.get(k)
					if rv, rok := ref[k]; ok != rok || v != rv {
						t.Fatalf("c=%d op %d key %d: table (%d, %v), map (%d, %v)", c, op, k, v, ok, rv, rok)
					}
				}
			}
		}
		tab.clear()
		_, ok := tab.get(0)
		require.False(t, ok)
		require.Zero(t, tab.n)
	}
}

// The bypass: a window of fetches whose remote rows miss makes the next
// probeEvery−1 fetches skip the cache; the probe after them turns it back
// on when its rows hit, and keeps it off when they miss.
func TestCacheBypass(t *testing.T) {
	const c, e = 8, 100
	h := &hotCache{c: c, owner: make([]int32, c), ref: make([]bool, c)}
	h.slot.init(c)
	h.sk.init(c)
	h.reset()
	// Rank 0 of 2: rows [100, 200) are remote; row 150 is cached.
	h.slot.put(150, 0)
	h.owner[0] = 150
	cold := []int32{101, 102, 103, 104, 5, 6} // remote misses and own rows
	hot := []int32{150, 150, 150, 101}
	look := func(idx []int32) {
		h.lookup(idx, 0, e, 2*e, nil, nil)
	}
	for range windowSize {
		require.True(t, h.use())
		look(cold)
	}
	for i := 1; i < probeEvery; i++ {
		require.False(t, h.use(), "fetch %d after the window must skip the cache", i)
	}
	require.True(t, h.use(), "the probe")
	look(cold)
	for i := 1; i < probeEvery; i++ {
		require.False(t, h.use(), "a cold probe keeps the cache off (fetch %d)", i)
	}
	require.True(t, h.use(), "the next probe")
	look(hot)
	for range 2 * windowSize {
		require.True(t, h.use(), "a probe that hits turns the cache back on")
		look(hot)
	}
	require.Equal(t, int64(3+3*2*windowSize), h.stats.Hits)
}

// Halving the sketch halves every counter, as a byte-wise shift would.
func TestSketchHalve(t *testing.T) {
	var s sketch
	s.init(100)
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range s.cnt {
		s.cnt[i] = uint8(rng.IntN(16))
	}
	want := make([]uint8, len(s.cnt))
	for i, c := range s.cnt {
		want[i] = c >> 1
	}
	s.halve()
	require.Equal(t, want, s.cnt)
}
