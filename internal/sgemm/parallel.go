package sgemm

import "sync"

// parallelWork is the M·N·K below which a product runs on one thread: a
// goroutine hand-off costs about as much as this many FMAs.
const parallelWork = 1 << 18

// Buffers are pooled by purpose, so that a small request never takes (and
// a large one never outgrows and drops) another purpose's buffer.
var (
	packedBPool    = new(bufPool) // packed B blocks
	packedAPool    = new(bufPool) // packed A blocks with the edge tile
	packedAllAPool = new(bufPool) // all of a short product's A, packed (runShort's threads)
	widenPool      = new(bufPool) // half-precision rows widened for packing
	colPool        = new(bufPool) // im2col / col2im matrices
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
