package sgemm

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallelWork is the M·N·K below which a product runs on one thread: a
// goroutine hand-off costs about as much as this many FMAs.
const parallelWork = 1 << 18

// barrier makes n goroutines wait for one another, any number of times.
// A waiter spins briefly (the threads of a step finish close together),
// then sleeps, so a descheduled peer does not cost a spinning core.
type barrier struct {
	n     int32
	count atomic.Int32
	gen   atomic.Uint32
	mu    sync.Mutex
	cond  sync.Cond
}

func newBarrier(n int) *barrier {
	b := &barrier{n: int32(n)}
	b.cond.L = &b.mu
	return b
}

// barrierSpins bounds the spinning of a waiter (a few tens of µs).
const barrierSpins = 2048

func (b *barrier) wait() {
	g := b.gen.Load()
	if b.count.Add(1) == b.n {
		b.count.Store(0)
		b.mu.Lock()
		b.gen.Add(1)
		b.mu.Unlock()
		b.cond.Broadcast()
		return
	}
	for i := range barrierSpins {
		if b.gen.Load() != g {
			return
		}
		if i%32 == 31 {
			runtime.Gosched()
		}
	}
	b.mu.Lock()
	for b.gen.Load() == g {
		b.cond.Wait()
	}
	b.mu.Unlock()
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
