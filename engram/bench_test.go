package engram_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback/hcclsim"
)

// BenchmarkCache is the inference fetch with and without a hot-row cache
// of 5% of the table, on Zipf(1.05) and uniform indices (W = 4 in
// process), under the HCCL fallback's link model with HCCS and with RoCE
// figures, for rows of 64, 160 (issue 9's sizes, where a read's latency
// weighs most) and 2560 bytes. Every iteration runs, one after the other
// on the same ranks and indices, four fetches of T rows per rank:
//
//   - nocache: a buffer without cache (remote rows read over the link);
//
//   - cached: a buffer with the cache (hits copied locally, misses read);
//
//   - limit: the same buffer without cache fetching only its own rows (the
//     indices mapped into the rank's slice), every row a local copy: a hit
//     rate of 1, what no cache can beat on this machine.
//
//   - control: a second buffer without cache, fetching what nocache does:
//     x_control (control/nocache, ideally 1) is the run's own noise floor
//     for the ratios (two identical buffers differ by up to ±10% here).
//
// The four take turns in a rotating order. Each reports rows/s; x_cached is cached/nocache, x_limit limit/nocache
// and cached/limit how close the cache comes to the limit, all from the
// same run. Where x_limit is under 2, the 2× target is beyond what
// this machine's simulator can show (its own copy work, not the link,
// bounds a fetch). remote-rows/fetch counts rows read over the link by a
// fetch of rank 0 (bypassed rows included), hit-rate the cache's.
func BenchmarkCache(b *testing.B) {
	const w, e, t = 4, 25000, 4096
	for _, hidden := range []int{32, 80, 1280} {
		for _, link := range []string{"hccs", "roce"} {
			for _, dist := range []string{"zipf1.05", "uniform"} {
				b.Run(fmt.Sprintf("row=%d/link=%s/%s", 2*hidden, link, dist), func(b *testing.B) {
					benchCache(b, w, e, t, hidden, link, dist)
				})
			}
		}
	}
}

func benchCache(b *testing.B, w int, e int64, t, hidden int, link, dist string) {
	lm := hcclsim.HCCSLink()
	if link == "roce" {
		lm = hcclsim.RoCELink()
	}
	c := newClusterLink(b, w, lm)
	cfg := engram.Config{EntriesPerRank: e, Hidden: hidden, DType: engram.BF16}
	cfg.Capacity = (e*cfg.RowBytes() + engram.CapacityAlign - 1) / engram.CapacityAlign * engram.CapacityAlign
	plain, control := c.buffers(cfg), c.buffers(cfg)
	cached := cfg
	cached.CacheRows = w * int(e) / 20
	withCache := c.buffers(cached)
	tab := slices(1, w, cfg)
	ctx := ctxT(b)
	require.NoError(b, c.each(func(r int) error {
		if err := plain[r].Write(ctx, engram.Storage{Rows: tab[r]}); err != nil {
			return err
		}
		if err := control[r].Write(ctx, engram.Storage{Rows: tab[r]}); err != nil {
			return err
		}
		return withCache[r].Write(ctx, engram.Storage{Rows: tab[r]})
	}))
	// A stream of fetches: fresh indices each time (the measured fetches
	// repeat no batch up to b.N = measured, so the cache cannot learn the
	// batches themselves); the limit's are the same draws mapped into the
	// rank's own slice. The last warm batches warm the cache up.
	const measured, warm = 48, 16
	const batches = measured + warm
	idx, own := make([][][]int32, w), make([][][]int32, w)
	for r := range idx {
		rng := rand.New(rand.NewPCG(2, uint64(r)))
		for range batches {
			var x []int32
			if dist == "uniform" {
				x = uniform(rng, t, int64(w)*e)
			} else {
				x = zipf(rng, t, int64(w)*e, 1.05)
			}
			o := make([]int32, len(x))
			for i, g := range x {
				o[i] = int32(int64(r)*e + int64(g)%e)
			}
			idx[r], own[r] = append(idx[r], x), append(own[r], o)
		}
	}
	outs := make([]*acl.DeviceBuffer, w)
	for r := range outs {
		var err error
		outs[r], err = c.devs[r].Malloc(uintptr(int64(t)*cfg.RowBytes()), acl.MemMallocHugeFirst)
		require.NoError(b, err)
		b.Cleanup(func() { _ = outs[r].Close() })
	}
	fetch := func(bs []*engram.Buffer, ix [][][]int32, i int) time.Duration {
		t0 := time.Now()
		require.NoError(b, c.each(func(r int) error {
			p, err := bs[r].FetchInto(ix[r][i], engram.Output{Rows: outs[r]}, c.streams[r])
			if err != nil {
				return err
			}
			_, err = p.Wait(ctx)
			return err
		}))
		return time.Since(t0)
	}
	// Warm up: the cache admits the head of the distribution.
	for i := measured; i < batches; i++ {
		fetch(withCache, idx, i)
	}
	st0 := withCache[0].CacheStats()
	var tPlain, tCached, tLimit, tControl time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The order rotates, so a drift of the machine's load weighs on
		// the three alike.
		for k := range 4 {
			switch (i + k) % 4 {
			case 0:
				tPlain += fetch(plain, idx, i%measured)
			case 1:
				tCached += fetch(withCache, idx, i%measured)
			case 2:
				tLimit += fetch(plain, own, i%measured)
			default:
				tControl += fetch(control, idx, i%measured)
			}
		}
	}
	b.StopTimer()
	st := withCache[0].CacheStats()
	var remote int64
	for i := 0; i < b.N; i++ {
		remote += remoteCount(idx[0][i%measured], 0, e)
	}
	cachedRemote := (st.Misses - st0.Misses) + (st.Bypassed - st0.Bypassed)
	hits, lookups := st.Hits-st0.Hits, st.Hits-st0.Hits+st.Misses-st0.Misses
	rows := float64(b.N * t * w)
	rate := func(d time.Duration) float64 { return rows / d.Seconds() }
	b.ReportMetric(float64(remote)/float64(b.N), "nocache-remote-rows/fetch")
	b.ReportMetric(float64(cachedRemote)/float64(b.N), "cached-remote-rows/fetch")
	if lookups > 0 {
		b.ReportMetric(float64(hits)/float64(lookups), "hit-rate")
	}
	b.ReportMetric(float64(st.Admitted-st0.Admitted)/float64(b.N), "admitted/fetch")
	b.ReportMetric(float64(st.Bypassed-st0.Bypassed)/float64(b.N), "bypassed-rows/fetch")
	b.ReportMetric(rate(tPlain), "nocache-rows/s")
	b.ReportMetric(rate(tCached), "cached-rows/s")
	b.ReportMetric(rate(tLimit), "limit-rows/s")
	b.ReportMetric(tPlain.Seconds()/tCached.Seconds(), "x_cached")
	b.ReportMetric(tPlain.Seconds()/tLimit.Seconds(), "x_limit")
	b.ReportMetric(tLimit.Seconds()/tCached.Seconds(), "cached/limit")
	b.ReportMetric(tPlain.Seconds()/tControl.Seconds(), "x_control")
}

// BenchmarkTrain is one training step, FetchTrain and FetchGrad, on W = 2
// and 4 in-process ranks with Zipf(1.05) indices: rows/s and GB/s count
// the rows fetched forward plus the gradient rows sent back.
func BenchmarkTrain(b *testing.B) {
	const e, t, hidden = 20000, 4096, 64
	for _, w := range []int{2, 4} {
		b.Run(fmt.Sprintf("W%d", w), func(b *testing.B) {
			c := newCluster(b, w)
			cfg := engram.Config{EntriesPerRank: e, Hidden: hidden, DType: engram.BF16, MaxTokensPerRank: t}
			bs := c.buffers(cfg)
			tab := slices(3, w, cfg)
			ctx := ctxT(b)
			tab = pinAll(b, c, tab)
			require.NoError(b, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r], ZeroCopy: true}) }))
			idx := make([][]int32, w)
			grads := make([]*acl.DeviceBuffer, w)
			for r := range idx {
				idx[r] = zipf(rand.New(rand.NewPCG(4, uint64(r))), t, int64(w)*e, 1.05)
				grads[r] = devBuf(b, c.devs[r], make([]byte, t*cfg.RowBytes()))
			}
			step := func(r int) error {
				res, tc, err := bs[r].FetchTrain(ctx, idx[r])
				if err != nil {
					return err
				}
				defer tc.Close()
				defer res.Rows.Close()
				g, err := bs[r].FetchGrad(ctx, engram.Grad{Data: grads[r], Rows: t, Hidden: hidden, DType: cfg.DType}, tc)
				if err != nil {
					return err
				}
				return g.Close()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				require.NoError(b, c.each(step))
			}
			rows := float64(2*b.N*t*w) / b.Elapsed().Seconds()
			b.ReportMetric(rows, "rows/s")
			b.ReportMetric(rows*float64(cfg.RowBytes())/1e9, "GB/s")
		})
	}
}
