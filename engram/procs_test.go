package engram_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/internal/engramjob"
)

// TestMain lets the test binary serve as a rank process of the process
// tests and benchmarks.
func TestMain(m *testing.M) {
	if engramjob.IsRank() {
		os.Exit(engramjob.ServeRank(os.Stdout))
	}
	os.Exit(m.Run())
}

// Ranks as processes: every rank writes its slice, fetches and checks
// every byte against the table's function.
func TestFetchProcesses(t *testing.T) {
	for _, j := range []engramjob.Job{
		{Ranks: 2, Entries: 1000, Hidden: 64, DType: engram.BF16, T: 5000, Iters: 1},
		{Ranks: 3, Entries: 333, Hidden: 7, DType: engram.FP32, T: 3000, Zipf: 1.05, Iters: 1, ZeroCopy: true},
		{Ranks: 4, Entries: 500, Hidden: 1280, DType: engram.BF16, T: 800, Zipf: 1.05, Iters: 1},
	} {
		t.Run(fmt.Sprintf("W%d/%v/h%d/zc=%v", j.Ranks, j.DType, j.Hidden, j.ZeroCopy), func(t *testing.T) {
			j.Seed, j.Timeout = 7, testTimeout
			var errOut strings.Builder
			reps, err := engramjob.Launch(j, []string{"-test.run=^$"}, &errOut)
			require.NoError(t, err, "stderr:\n%s", errOut.String())
			for _, r := range reps {
				require.True(t, r.OK, "rank %d: %s", r.Rank, r.Err)
			}
		})
	}
}

// BenchmarkFetchProcesses: ranks as processes (2 and 4), every rank
// fetching in a loop; one benchmark iteration is one job. Reports the
// mean per-rank GB/s, Mrows/s and heap allocations per fetch.
func BenchmarkFetchProcesses(b *testing.B) {
	for _, w := range []int{2, 4} {
		for _, rb := range benchRows {
			for _, z := range []float64{0, 1.05} {
				name := fmt.Sprintf("W=%d/row=%d/uniform", w, rb)
				if z > 0 {
					name = fmt.Sprintf("W=%d/row=%d/zipf", w, rb)
				}
				b.Run(name, func(b *testing.B) {
					j := engramjob.Job{Ranks: w, Entries: 1 << 14, Hidden: rb / 2, DType: engram.BF16, T: benchT, Zipf: z,
						Iters: 20, Seed: 1, Timeout: testTimeout}
					var gbs, mrows, allocs float64
					n := 0
					for b.Loop() {
						reps, err := engramjob.Launch(j, []string{"-test.run=^$"}, os.Stderr)
						if err != nil {
							b.Fatal(err)
						}
						for _, r := range reps {
							gbs += r.GBps()
							mrows += r.Mrows()
							allocs += r.Allocs
							n++
						}
					}
					b.ReportMetric(gbs/float64(n), "GB/s/rank")
					b.ReportMetric(mrows/float64(n), "Mrows/s/rank")
					b.ReportMetric(allocs/float64(n), "allocs/fetch")
				})
			}
		}
	}
}
