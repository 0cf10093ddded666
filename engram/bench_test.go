package engram_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
)

// benchRows are the row sizes of the benchmarks: Engram rows of 64–160 B
// (32–80 bf16) and a 2560 B row (hidden 1280 bf16, Engram-27B).
var benchRows = []int{64, 128, 160, 2560}

const benchT = 4096 // indices per rank per fetch

// BenchmarkFetch: every rank of an in-process world fetches benchT rows
// at once, steady state (reused outputs). Reported beside a single-thread
// Go gather of the same rows into a packed buffer, measured in the same
// run: GB/s, Mrows/s and the ratio x_gather (fetch bytes/s ÷ gather
// bytes/s).
func BenchmarkFetch(b *testing.B) {
	for _, w := range []int{2, 4, 8} {
		for _, rb := range benchRows {
			for _, dist := range []string{"uniform", "zipf"} {
				b.Run(fmt.Sprintf("W=%d/row=%d/%s", w, rb, dist), func(b *testing.B) { benchFetch(b, w, rb, dist) })
			}
		}
	}
}

func benchFetch(b *testing.B, w, rb int, dist string) {
	const e = 1 << 14
	c := newCluster(b, w)
	cfg := engram.Config{EntriesPerRank: e, Hidden: rb / 2, DType: engram.BF16}
	cfg.Capacity = alignCap(e * cfg.RowBytes())
	bs := c.buffers(cfg)
	tab := slices(1, w, cfg)
	ctx := context.Background()
	require.NoError(b, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r]}) }))
	idx := make([][]int32, w)
	outs := make([]engram.Output, w)
	for r := range idx {
		rng := rand.New(rand.NewPCG(uint64(r), 3))
		if dist == "zipf" {
			idx[r] = zipf(rng, benchT, int64(w)*e, 1.05)
		} else {
			idx[r] = uniform(rng, benchT, int64(w)*e)
		}
		d, err := c.devs[r].Malloc(uintptr(benchT*rb), acl.MemMallocHugeFirst)
		require.NoError(b, err)
		outs[r] = engram.Output{Rows: d}
	}
	// One goroutine per rank, started once: a fetch step is a send on each
	// rank's channel (no allocation) and a receive of its error.
	start := make([]chan struct{}, w)
	done := make(chan error, w)
	for r := range start {
		start[r] = make(chan struct{})
		go func() {
			for range start[r] {
				p, err := bs[r].FetchInto(idx[r], outs[r], c.streams[r])
				if err == nil {
					_, err = p.Wait(ctx)
				}
				done <- err
			}
		}()
	}
	defer func() {
		for _, ch := range start {
			close(ch)
		}
	}()
	step := func() error {
		for _, ch := range start {
			ch <- struct{}{}
		}
		var first error
		for range start {
			if err := <-done; err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	require.NoError(b, step()) // warm the plans' and HCCL's reused memory
	for r := range idx {
		require.Equal(b, gather(tab, e, int64(rb), idx[r]), readBack(b, outs[r].Rows, int64(benchT*rb)))
	}
	gatherBps := goGather(tab, e, rb, idx)
	bytesPerOp := int64(w) * benchT * int64(rb)
	b.SetBytes(bytesPerOp)
	b.ReportAllocs()
	t0 := time.Now()
	for b.Loop() {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
	sec := time.Since(t0).Seconds()
	bps := float64(bytesPerOp) * float64(b.N) / sec
	b.ReportMetric(bps/1e9, "GB/s")
	b.ReportMetric(float64(int64(w)*benchT)*float64(b.N)/sec/1e6, "Mrows/s")
	b.ReportMetric(bps/gatherBps, "x_gather")
	b.ReportMetric(float64(b.N*w), "fetches")
}

// goGather measures a single-thread Go gather of the same rows (copy of
// each row of the global table into a packed buffer) and returns its
// bytes per second: the best of several short windows, so that a loaded
// machine does not flatter the ratio.
func goGather(tab [][]byte, e int64, rb int, idx [][]int32) float64 {
	out := make([]byte, benchT*rb)
	best := 0.0
	for range 7 {
		var n int64
		t0 := time.Now()
		for time.Since(t0) < 10*time.Millisecond {
			for _, ix := range idx {
				for i, g := range ix {
					r, k := int64(g)/e, int64(g)%e
					copy(out[i*rb:(i+1)*rb], tab[r][k*int64(rb):(k+1)*int64(rb)])
				}
				n += int64(len(ix) * rb)
			}
		}
		best = max(best, float64(n)/time.Since(t0).Seconds())
	}
	return best
}
