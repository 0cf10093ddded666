package sgemm

import "sync"

// parallelWork is the M·N·K below which a product runs on one thread: a
// goroutine hand-off costs about as much as this many FMAs.
const parallelWork = 1 << 18

// parallel runs fn over [0,n) split into at most threads contiguous ranges,
// the first on the calling goroutine.
func parallel(threads, n int, fn func(lo, hi int)) {
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

var bufPool = sync.Pool{New: func() any { return new([]float32) }}

func getBuf(n int) *[]float32 {
	p := bufPool.Get().(*[]float32)
	if cap(*p) < n {
		*p = make([]float32, n)
	}
	*p = (*p)[:n]
	return p
}
