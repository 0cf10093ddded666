package par

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every index is visited exactly once, in contiguous ranges, for any
// thread count including more threads than indices.
func TestForCoversEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 100, 1001} {
		for _, threads := range []int{-1, 0, 1, 2, 3, 8, 2000} {
			hits := make([]atomic.Int32, n)
			var calls atomic.Int32
			For(threads, n, func(lo, hi int) {
				calls.Add(1)
				assert.LessOrEqual(t, lo, hi)
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			})
			for i := range hits {
				assert.Equal(t, int32(1), hits[i].Load(), "n=%d threads=%d i=%d", n, threads, i)
			}
			assert.LessOrEqual(t, int(calls.Load()), max(1, min(threads, n)), "n=%d threads=%d", n, threads)
		}
	}
}

func TestThreads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	assert.Equal(t, 1, Threads(0, 10))
	assert.Equal(t, 1, Threads(19, 10))
	assert.Equal(t, 2, Threads(20, 10))
	assert.Equal(t, 4, Threads(1000, 10))
	assert.Equal(t, 4, Threads(1000, 0))
}
