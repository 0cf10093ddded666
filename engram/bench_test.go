package engram_test

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback/hcclsim"
)

// BenchmarkCache is the inference fetch with and without a hot-row cache
// of 5% of the table, on Zipf(1.05) and uniform indices (W = 4 in
// process), reporting remote rows read per fetch and the hit rate. The
// ratio of remote rows is the cache's effect; throughput on one host does
// not show the cost of a remote read: link=hccs runs the same under the
// HCCL fallback's link model with HCCS figures. cpu-µs/fetch is the
// process's CPU time per fetch of all ranks (user + system), which a
// loaded machine disturbs less than the wall clock.
func BenchmarkCache(b *testing.B) {
	const w, e, t = 4, 25000, 4096
	for _, link := range []string{"off", "hccs"} {
		for _, dist := range []string{"zipf1.05", "uniform"} {
			for _, cacheRows := range []int{0, w * e / 20} {
				b.Run(fmt.Sprintf("link=%s/%s/cache=%d", link, dist, cacheRows), func(b *testing.B) {
					var lm *hcclsim.LinkModel
					if link == "hccs" {
						lm = hcclsim.HCCSLink()
					}
					c := newClusterLink(b, w, lm)
					cfg := engram.Config{EntriesPerRank: e, Hidden: 64, DType: engram.BF16, Capacity: 4 * engram.CapacityAlign, CacheRows: cacheRows}
					bs := c.buffers(cfg)
					tab := slices(1, w, cfg)
					ctx := ctxT(b)
					require.NoError(b, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r]}) }))
					// A stream of fetches: fresh indices each time.
					const batches = 16
					idx := make([][][]int32, w)
					for r := range idx {
						rng := rand.New(rand.NewPCG(2, uint64(r)))
						for range batches {
							if dist == "uniform" {
								idx[r] = append(idx[r], uniform(rng, t, w*e))
							} else {
								idx[r] = append(idx[r], zipf(rng, t, w*e, 1.05))
							}
						}
					}
					outs := make([]*acl.DeviceBuffer, w)
					for r := range outs {
						var err error
						outs[r], err = c.devs[r].Malloc(uintptr(t*cfg.RowBytes()), acl.MemMallocHugeFirst)
						require.NoError(b, err)
						b.Cleanup(func() { _ = outs[r].Close() })
					}
					var remote int64
					b.ReportAllocs()
					cpu0 := cpuTime(b)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						require.NoError(b, c.each(func(r int) error {
							p, err := bs[r].FetchInto(idx[r][i%batches], engram.Output{Rows: outs[r]}, c.streams[r])
							if err != nil {
								return err
							}
							_, err = p.Wait(ctx)
							return err
						}))
					}
					b.StopTimer()
					cpu := cpuTime(b) - cpu0
					st := bs[0].CacheStats()
					if cacheRows > 0 {
						remote = st.Misses + st.Bypassed
					} else {
						for i := 0; i < b.N; i++ {
							remote += remoteCount(idx[0][i%batches], 0, e)
						}
					}
					b.ReportMetric(float64(remote)/float64(b.N), "remote-rows/fetch")
					b.ReportMetric(st.HitRate(), "hit-rate")
					b.ReportMetric(float64(b.N*t*w)/b.Elapsed().Seconds(), "rows/s")
					b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/fetch")
				})
			}
		}
	}
}

// BenchmarkTrain is one training step, FetchTrain and FetchGrad, on W = 2
// and 4 in-process ranks with Zipf(1.05) indices: rows/s and GB/s count
// the rows fetched forward plus the gradient rows sent back.
func BenchmarkTrain(b *testing.B) {
	const e, t, hidden = 20000, 4096, 64
	for _, w := range []int{2, 4} {
		b.Run(fmt.Sprintf("W%d", w), func(b *testing.B) {
			c := newCluster(b, w)
			cfg := engram.Config{EntriesPerRank: e, Hidden: hidden, DType: engram.BF16, Capacity: 2 * engram.CapacityAlign, MaxTokensPerRank: t}
			bs := c.buffers(cfg)
			tab := slices(3, w, cfg)
			ctx := ctxT(b)
			require.NoError(b, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r]}) }))
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

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
