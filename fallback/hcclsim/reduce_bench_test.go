package hcclsim

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkReduceSum measures the SUM kernels on 16 MiB of sources (n
// sources of 16/n MiB, one destination, as one rank's share of an
// AllReduce) for fp32 and the narrow floats, which are widened, summed in
// float32 and rounded once. x_copy is a single-thread copy() of the
// sources' bytes over the kernel's time, timed alternately in the same
// run: 1 would be a reduction as fast as copying its inputs.
func BenchmarkReduceSum(b *testing.B) {
	const size = 16 << 20
	src, dst := make([]byte, size), make([]byte, size)
	for i := range src {
		src[i] = byte(i*7) & 0x3f // small exponents: finite sums
	}
	for _, dt := range []dtype{dtFP32, dtBF16, dtFP16} {
		for _, n := range []int{2, 4} {
			srcs := make([][]byte, n)
			for k := range srcs {
				srcs[k] = src[k*size/n : (k+1)*size/n]
			}
			out := dst[:size/n]
			b.Run(fmt.Sprintf("%v/n%d", dt, n), func(b *testing.B) {
				var r reducer
				kernel := func() { r.reduceBlocks(dt, opSum, [][]byte{out}, srcs) }
				b.SetBytes(size) // bytes read
				b.ReportAllocs()
				for b.Loop() {
					kernel()
				}
				var tc, tk []time.Duration
				for range 7 {
					t0 := time.Now()
					copy(dst, src)
					tc = append(tc, time.Since(t0))
					t0 = time.Now()
					kernel()
					tk = append(tk, time.Since(t0))
				}
				slices.Sort(tc)
				slices.Sort(tk)
				b.ReportMetric(float64(tc[3])/float64(tk[3]), "x_copy")
			})
		}
	}
}
