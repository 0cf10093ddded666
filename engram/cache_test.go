package engram_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
)

// fetchAll fetches idx[r] on every rank and returns the rows read back.
func fetchAll(t *testing.T, c *cluster, bs []*engram.Buffer, idx [][]int32) [][]byte {
	t.Helper()
	ctx := ctxT(t)
	got := make([][]byte, len(bs))
	require.NoError(t, c.each(func(r int) error {
		p, err := bs[r].Fetch(idx[r], c.streams[r])
		if err != nil {
			return err
		}
		res, err := p.Wait(ctx)
		if err != nil {
			return err
		}
		defer res.Rows.Close()
		got[r] = make([]byte, int64(len(idx[r]))*bs[r].Config().RowBytes())
		return res.Rows.CopyToHostAt(got[r], 0)
	}))
	return got
}

func remoteCount(idx []int32, r int, e int64) int64 {
	n := int64(0)
	for _, g := range idx {
		if g >= 0 && int64(g)/e != int64(r) {
			n++
		}
	}
	return n
}

// With a cache, Zipf fetches return the gather every time, the counters
// add up, and the head of the distribution is served from the cache.
func TestCacheFetch(t *testing.T) {
	const w, e = 3, 2000
	c := newCluster(t, w)
	cfg := engram.Config{EntriesPerRank: e, Hidden: 24, DType: engram.BF16, Capacity: engram.CapacityAlign, CacheRows: 300, Policy: engram.IndexZeroFill}
	bs := c.buffers(cfg)
	tab := slices(5, w, cfg)
	ctx := ctxT(t)
	require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r]}) }))
	remote := make([]int64, w)
	for it := 0; it < 6; it++ {
		idx := make([][]int32, w)
		for r := range idx {
			idx[r] = zipf(rand.New(rand.NewPCG(uint64(it), uint64(r))), 3000, w*e, 1.05)
			idx[r][7] = -3 // zero-filled, never cached
			remote[r] += remoteCount(idx[r], r, e)
		}
		got := fetchAll(t, c, bs, idx)
		for r := range bs {
			require.True(t, bytes.Equal(gather(tab, e, cfg.RowBytes(), idx[r]), got[r]), "iteration %d rank %d", it, r)
		}
	}
	for r, b := range bs {
		st := b.CacheStats()
		assert.Equal(t, remote[r], st.Hits+st.Misses+st.Bypassed, "rank %d lookups", r)
		assert.Greater(t, st.HitRate(), 0.3, "rank %d hit rate %+v", r, st)
		assert.LessOrEqual(t, st.Admitted-st.Evictions, int64(300), "rank %d", r)
		assert.Positive(t, st.Rejected, "rank %d: admission must refuse cold rows", r)
	}
	_, err := engram.New(nil, c.devs[0], engram.Config{EntriesPerRank: 1, Hidden: 1, DType: engram.BF16, CacheRows: 4})
	require.ErrorIs(t, err, engram.ErrConfig)
}

// On uniform indices over a table much larger than the cache, the hit
// rate stays under the bypass threshold: fetches skip the cache (its rows
// count as Bypassed) and still return the gather.
func TestCacheBypassUniform(t *testing.T) {
	const w, e = 2, 5000
	c := newCluster(t, w)
	cfg := engram.Config{EntriesPerRank: e, Hidden: 4, DType: engram.FP32, Capacity: engram.CapacityAlign, CacheRows: 16}
	bs := c.buffers(cfg)
	tab := slices(11, w, cfg)
	ctx := ctxT(t)
	require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r]}) }))
	remote := make([]int64, w)
	for it := 0; it < 24; it++ {
		idx := make([][]int32, w)
		for r := range idx {
			idx[r] = uniform(rand.New(rand.NewPCG(uint64(it), uint64(r)+7)), 500, w*e)
			remote[r] += remoteCount(idx[r], r, e)
		}
		got := fetchAll(t, c, bs, idx)
		for r := range bs {
			require.True(t, bytes.Equal(gather(tab, e, cfg.RowBytes(), idx[r]), got[r]), "iteration %d rank %d", it, r)
		}
	}
	for r, b := range bs {
		st := b.CacheStats()
		assert.Equal(t, remote[r], st.Hits+st.Misses+st.Bypassed, "rank %d lookups", r)
		assert.Positive(t, st.Bypassed, "rank %d: %+v", r, st)
		assert.Less(t, st.HitRate(), 0.25, "rank %d: %+v", r, st)
	}
}

// No stale read: a Write of new rows empties the cache; with zero-copy
// storage updated in place, Invalidate makes the new bytes visible (and
// without it the cache keeps serving what it holds, as documented).
func TestCacheNoStaleRead(t *testing.T) {
	for _, zc := range []bool{false, true} {
		t.Run(fmt.Sprintf("zerocopy=%v", zc), func(t *testing.T) {
			const w, e = 2, 50
			c := newCluster(t, w)
			cfg := engram.Config{EntriesPerRank: e, Hidden: 8, DType: engram.FP32, CacheRows: 20}
			if !zc {
				cfg.Capacity = engram.CapacityAlign
			}
			bs := c.buffers(cfg)
			rb := cfg.RowBytes()
			tab := make([][]byte, w)
			for r := range tab {
				if zc {
					hb, err := c.devs[r].MallocHost(uintptr(e * rb))
					require.NoError(t, err)
					t.Cleanup(func() { _ = hb.Close() })
					tab[r] = hb.Bytes()[:e*rb]
				} else {
					tab[r] = make([]byte, e*rb)
				}
				copy(tab[r], slices(9, w, cfg)[r])
			}
			ctx := ctxT(t)
			write := func() {
				require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r], ZeroCopy: zc}) }))
			}
			write()
			// Hot remote rows: rank 0 reads 50..54, rank 1 reads 0..4, often.
			idx := make([][]int32, w)
			for r := range idx {
				for k := 0; k < 40; k++ {
					idx[r] = append(idx[r], int32((1-r)*e+k%5))
				}
			}
			for range 3 {
				fetchAll(t, c, bs, idx)
			}
			for r, b := range bs {
				require.Positive(t, b.CacheStats().Hits, "rank %d: the rows must be cached", r)
			}
			old := [][]byte{bytes.Clone(tab[0]), bytes.Clone(tab[1])}
			for r := range tab {
				for i := range tab[r] {
					tab[r][i] ^= 0x5a
				}
			}
			if zc {
				// Updated in place, not yet invalidated: the cache still
				// serves the rows it holds.
				got := fetchAll(t, c, bs, idx)
				require.True(t, bytes.Equal(gather(old, e, rb, idx[0]), got[0]), "the documented zero-copy contract")
				for _, b := range bs {
					var rows []int32
					for g := int32(0); g < w*e; g++ {
						rows = append(rows, g)
					}
					require.NoError(t, b.Invalidate(rows...))
				}
			} else {
				write()
			}
			got := fetchAll(t, c, bs, idx)
			for r := range bs {
				require.True(t, bytes.Equal(gather(tab, e, rb, idx[r]), got[r]), "rank %d read stale rows", r)
				assert.Positive(t, bs[r].CacheStats().Invalidated, "rank %d", r)
			}
		})
	}
}

// A fetch that skips the cache (bypass) copies nothing from it: the hits
// of the last fetch that used the cache are not replayed into the next
// one's output. Here they lie at tokens past the bypassed fetch's T, so
// replaying them would write outside its exactly sized output.
func TestCacheBypassCopiesNoHits(t *testing.T) {
	const w, e, tk = 2, 1000, 50
	c := newCluster(t, w)
	cfg := engram.Config{EntriesPerRank: e, Hidden: 4, DType: engram.FP32, Capacity: engram.CapacityAlign, CacheRows: 20}
	bs := c.buffers(cfg)
	tab := slices(13, w, cfg)
	ctx := ctxT(t)
	require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r]}) }))
	rb := cfg.RowBytes()
	fetch := func(idx []int32) []byte {
		t.Helper()
		out, err := c.devs[0].Malloc(uintptr(int64(len(idx))*rb), acl.MemMallocHugeFirst)
		require.NoError(t, err)
		defer out.Close()
		p, err := bs[0].FetchInto(idx, engram.Output{Rows: out}, c.streams[0])
		require.NoError(t, err)
		_, err = p.Wait(ctx)
		require.NoError(t, err)
		return readBack(t, out, int64(len(idx))*rb)
	}
	cold := int32(e) // rank 1's rows, each read once
	next := func(n int) []int32 {
		idx := make([]int32, n)
		for i := range idx {
			cold++
			idx[i] = cold
		}
		return idx
	}
	// A window of cold fetches that all ask for row 1500: the last hits
	// it at its tokens 40..49. The window's hit rate is low: the next
	// fetches skip the cache.
	for k := 0; k < 8; k++ {
		idx := next(tk)
		if k < 7 {
			idx[0], idx[1] = 1500, 1500 // asked for often: kept
		} else {
			for i := 40; i < tk; i++ {
				idx[i] = 1500
			}
		}
		require.Equal(t, gather(tab, e, rb, idx), fetch(idx), "fetch %d", k)
	}
	st := bs[0].CacheStats()
	require.Equal(t, int64(2*6+10), st.Hits, "%+v", st)
	idx := next(5)
	require.Equal(t, gather(tab, e, rb, idx), fetch(idx))
	st2 := bs[0].CacheStats()
	require.Equal(t, st.Hits, st2.Hits, "the fetch after the window skips the cache")
	require.Equal(t, st.Bypassed+5, st2.Bypassed)
}
