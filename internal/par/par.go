// Package par splits a loop over goroutines: contiguous ranges, the first
// on the calling goroutine, so results never depend on the split when each
// index's work depends only on its own data.
//
// The other ranges go to a team of persistent helper goroutines (see
// team.go) rather than a goroutine each: a model's kernels run one after
// another on a goroutine locked to its OS thread (acl), and from there a
// fresh goroutine and the wait for it each cost a futex hand-off of the P
// between OS threads — tens of µs, more than many kernels take. Helpers
// spin a little after each range, so the next parallel kernel of a model
// finds them awake.
package par

import (
	"runtime"
	"sync"
)

// For runs fn over [0,n) split into at most threads contiguous ranges of
// near-equal size, the first on the calling goroutine, and returns when
// every range is done. Every range runs on its own goroutine, at the same
// time as the others (a range may wait for another, as sgemm's steps do
// at a barrier), except that the caller may run a range no helper has
// started by the time its own is done.
func For(threads, n int, fn func(lo, hi int)) {
	t := min(threads, n)
	if t <= 1 {
		fn(0, n)
		return
	}
	if shared.run(t, n, fn) {
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
