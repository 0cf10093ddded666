package hcclsim

import (
	"fmt"
	"testing"
)

// BenchmarkReduceFP32Sum measures the reduction kernel beside a plain copy
// of the same bytes, so the ratio is measured in one run.
func BenchmarkReduceFP32Sum(b *testing.B) {
	const size = 16 << 20
	for _, n := range []int{2, 4} {
		srcs := make([][]byte, n)
		for k := range srcs {
			srcs[k] = make([]byte, size/n)
		}
		dst := make([]byte, size/n)
		b.Run(fmt.Sprintf("kernel/n%d", n), func(b *testing.B) {
			var r reducer
			b.SetBytes(int64(size)) // bytes read
			b.ReportAllocs()
			for b.Loop() {
				r.reduceBlocks(dtFP32, opSum, [][]byte{dst}, srcs)
			}
		})
	}
	src, dst := make([]byte, size), make([]byte, size)
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			copy(dst, src)
		}
	})
}
