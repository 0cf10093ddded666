package sgemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every way GemmBatch can split a batch — serial (too little work),
// whole calls per thread (even share, or many calls), each call on all
// threads (few large calls) — gives each call exactly Gemm's result on one
// thread, at any GOMAXPROCS.
func TestGemmBatchSplits(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	cases := []struct {
		n       int
		m, k, q int // M, N, K of every call
	}{
		{8, 8, 8, 8},       // attention heads at seq 8: serial
		{8, 64, 64, 64},    // whole calls per thread
		{3, 96, 96, 96},    // 3 calls, no even share, each small: whole calls
		{3, 160, 200, 300}, // 3 large calls: each on all threads
		{1, 150, 170, 300}, // one call
		{13, 40, 50, 200},  // many calls, no even share
	}
	if raceBuild {
		cases = cases[:3]
	}
	for _, c := range cases {
		var ps []*problem
		for range c.n {
			ps = append(ps, newProblem(r, F32, c.m, c.k, c.q, r.IntN(2) == 1, r.IntN(2) == 1, 0, 1, 0.5))
		}
		want := make([][]uint32, len(ps))
		for i, p := range ps {
			p.reset()
			require.NoError(t, GemmThreads(&p.Call, 1))
			want[i] = bits(p.C)
		}
		for _, procs := range []int{1, 2, 3} {
			old := runtime.GOMAXPROCS(procs)
			calls := make([]Call, len(ps))
			for i, p := range ps {
				p.reset()
				calls[i] = p.Call
			}
			err := GemmBatch(calls)
			runtime.GOMAXPROCS(old)
			require.NoError(t, err)
			for i := range calls {
				require.Equal(t, want[i], bits(calls[i].C), "%d×%dx%dx%d GOMAXPROCS=%d call %d", c.n, c.m, c.k, c.q, procs, i)
			}
		}
	}
}

// A batch allocates nothing at two threads either: not the tiny batches
// of a small attention (once a heap copy of the calls per batch, then a
// goroutine per call), nor a batch split over the threads.
func TestGemmBatchAllocs(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector allocates")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(13, 14))
	for _, s := range [][4]int{{16, 8, 8, 8}, {8, 64, 64, 64}} {
		var calls [16]Call
		for i := range s[0] {
			calls[i] = newProblem(r, F32, s[1], s[2], s[3], false, false, 0, 1, 0).Call
		}
		batch := calls[:s[0]]
		require.NoError(t, GemmBatch(batch))
		// testing.AllocsPerRun would run at GOMAXPROCS 1.
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range 50 {
			require.NoError(t, GemmBatch(batch))
		}
		runtime.ReadMemStats(&m1)
		require.Zero(t, (m1.Mallocs-m0.Mallocs)/50, fmt.Sprintf("batch of %d %d×%d×%d", s[0], s[1], s[2], s[3]))
	}
}
