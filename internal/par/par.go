// Package par splits a loop over goroutines: contiguous ranges, the first
// on the calling goroutine, so results never depend on the split when each
// index's work depends only on its own data.
package par

import (
	"runtime"
	"sync"
)

// For runs fn over [0,n) split into at most threads contiguous ranges of
// near-equal size, the first on the calling goroutine, and returns when
// every range is done.
func For(threads, n int, fn func(lo, hi int)) {
	t := min(threads, n)
	if t <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := 1; w < t; w++ {
		wg.Go(func() { fn(w*n/t, (w+1)*n/t) })
	}
	fn(0, n/t)
	wg.Wait()
}

// Threads returns how many threads a loop of n units should use so that
// each gets at least minPer units: at most GOMAXPROCS, at least 1.
func Threads(n, minPer int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/max(1, minPer)))
}
