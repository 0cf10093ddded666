package sgemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// peakGFLOPS is one core's FMA peak, measured once per run by a
// register-only FMA loop at the widest vector width (0 without FMA).
var peakGFLOPS = sync.OnceValue(func() float64 {
	loop, per := PeakLoop()
	if loop == nil {
		return 0
	}
	// Many short samples (about 1 ms each): on a shared machine the
	// fastest of them is one that ran without being descheduled.
	best := 0.0
	for range 50 {
		const n = 1 << 18
		start := time.Now()
		loop(n)
		best = max(best, float64(n*per)/float64(time.Since(start).Nanoseconds()))
	}
	return best
})

func BenchmarkPeak(b *testing.B) {
	loop, per := PeakLoop()
	if loop == nil {
		b.Skip("no FMA")
	}
	for b.Loop() {
		loop(1 << 16)
	}
	b.ReportMetric(float64(b.N)*(1<<16)*float64(per)/float64(b.Elapsed().Nanoseconds()), "GFLOPS")
}

// BenchmarkGemm reports, for each shape and thread count, GFLOP/s, the
// fraction of one core's FMA peak (pct_peak, per thread), the speed-up
// over gonum's sgemm on the same shape and threads (x_gonum) and, for 2
// threads, over this package on 1 thread (x_1thread, from the fastest of
// alternating runs) — all measured in the same run.
func BenchmarkGemm(b *testing.B) {
	shapes := [][3]int{{1024, 1024, 1024}, {64, 1024, 1024}, {128, 768, 256}, {1, 16, 16}, {17, 33, 65}}
	for _, s := range shapes {
		for _, threads := range []int{1, 2} {
			if threads > 1 && s[0]*s[1]*s[2] < 1<<24 {
				continue
			}
			b.Run(fmt.Sprintf("%dx%dx%d/threads=%d", s[0], s[1], s[2], threads), func(b *testing.B) {
				benchGemm(b, s[0], s[1], s[2], threads)
			})
		}
	}
}

func benchGemm(b *testing.B, m, n, k, threads int) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
	r := rand.New(rand.NewPCG(1, 1))
	p := newProblem(r, F32, m, n, k, false, false, 0, 1, 0)
	flops := 2 * float64(m*n*k)
	timeOf := func(f func()) float64 {
		f()
		reps := max(1, int(2e8/flops))
		start := time.Now()
		for range reps {
			f()
		}
		return float64(time.Since(start).Nanoseconds()) / float64(reps)
	}
	gonum := timeOf(func() {
		blas32.Gemm(blas.NoTrans, blas.NoTrans, 1,
			blas32.General{Rows: m, Cols: k, Stride: k, Data: p.a.F32},
			blas32.General{Rows: k, Cols: n, Stride: n, Data: p.b.F32},
			0, blas32.General{Rows: m, Cols: n, Stride: n, Data: p.C})
	})
	// The scaling: one thread and threads threads in alternation, fastest
	// of each, so a load that comes and goes during the run (other
	// processes on the cores) does not land on one side only.
	var scaling float64
	if threads > 1 {
		best1, bestN := time.Duration(1<<62), time.Duration(1<<62)
		for range max(5, int(1e9/flops)) {
			for _, th := range []int{1, threads} {
				start := time.Now()
				_ = GemmThreads(&p.Call, th)
				if d := time.Since(start); th == 1 {
					best1 = min(best1, d)
				} else {
					bestN = min(bestN, d)
				}
			}
		}
		scaling = float64(best1) / float64(bestN)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = GemmThreads(&p.Call, threads)
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(flops/ns, "GFLOPS")
	if pk := peakGFLOPS(); pk > 0 {
		b.ReportMetric(100*flops/ns/pk/float64(threads), "pct_peak")
	}
	b.ReportMetric(gonum/ns, "x_gonum")
	if scaling > 0 {
		b.ReportMetric(scaling, "x_1thread")
	}
}
