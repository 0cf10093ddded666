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

// Buffers are pooled by purpose, so that a small request never takes (and
// a large one never outgrows and drops) another purpose's buffer.
var (
	packedBPool = new(bufPool) // packed B blocks
	packedAPool = new(bufPool) // packed A blocks with the edge tile
	widenPool   = new(bufPool) // half-precision rows widened for packing
	colPool     = new(bufPool) // im2col / col2im matrices
)

type bufPool struct{ p sync.Pool }

func (bp *bufPool) get(n int) *[]float32 {
	p, _ := bp.p.Get().(*[]float32)
	if p == nil {
		p = new([]float32)
	}
	if cap(*p) < n {
		*p = make([]float32, n)
	}
	*p = (*p)[:n]
	return p
}

func (bp *bufPool) put(p *[]float32) { bp.p.Put(p) }
