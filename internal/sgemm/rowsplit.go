package sgemm

import (
	"sync/atomic"
	"time"

	"github.com/ascend-go/cann/internal/par"
)

// Panel states of a row-split product's shared B (see runRowsShared).
const (
	panelFree uint32 = iota
	panelPacking
	panelPacked
)

// maxSharedB bounds the packed B (floats) runRowsShared keeps whole: past
// it the threads pack their own B per step (runParallel).
const maxSharedB = 4 << 20

// panelWait bounds how long a thread waits for a panel another thread is
// packing before packing a private copy itself (a descheduled packer
// must not stall it).
const panelWait = 20 * time.Microsecond

// shareRows reports whether c, on threads threads, splits its rows and
// should share one packed B: B must be packed (not packed ahead), every
// step splits by rows (more row tiles than B panels), and all of B fits
// maxSharedB.
func shareRows(c *Call, kern kernel) bool {
	pm := (c.M + kern.mr - 1) / kern.mr
	pn := (min(c.N, NC) + kern.nr - 1) / kern.nr
	padded := (c.N + kern.nr - 1) / kern.nr * kern.nr
	return c.B.PackedNR == 0 && pm >= pn && c.K*padded <= maxSharedB
}

// runRowsShared computes c with its rows split over threads (at tile
// boundaries, so every element is computed exactly as on one thread) and
// B packed once into one buffer for the whole product: the threads claim
// chunks of rows and compute each through every step, taking each panel
// as packed, packing it themselves if no thread has begun it, or waiting
// briefly for the thread packing it. No thread waits for another to
// finish a step (no barrier), and, unlike runParallel's row split, no B
// panel is packed twice unless a packer stalls.
func runRowsShared(c Call, kern kernel, threads int) {
	nr, mr := kern.nr, kern.mr
	padded := (c.N + nr - 1) / nr * nr
	buf := packedBPool.get(c.K * padded)
	defer packedBPool.put(buf)
	steps := ((c.N + NC - 1) / NC) * ((c.K + KC - 1) / KC)
	maxPn := (min(c.N, NC) + nr - 1) / nr
	state := make([]atomic.Uint32, steps*maxPn)
	m, pm := c.M, (c.M+mr-1)/mr
	// Rows in chunks the threads claim, two per thread (a late thread
	// takes fewer); each chunk goes through every step. The first chunks
	// (one per thread, unless a thread is late) first pack their share of
	// all of B, so the threads do not take turns packing the panels they
	// all need next.
	grain := chunkGrain(pm, threads, 2)
	par.ForChunks(threads, pm, grain, func(lo, hi int) {
		priv := widenPool.get(2 * nr * KC) // a private panel and its widening buffer
		defer widenPool.put(priv)
		sh := panelShare{state: state, priv: *priv}
		if k := lo / grain; k < threads {
			si, off := 0, 0
			for jc := 0; jc < c.N; jc += NC {
				for pc := 0; pc < c.K; pc += KC {
					kb, nb := min(KC, c.K-pc), min(NC, c.N-jc)
					pn := (nb + nr - 1) / nr
					s := newStep(&c, kern, (*buf)[off:off+kb*nr*pn], pc, jc)
					sh.base = si * maxPn
					for jp := k * pn / threads; jp < (k+1)*pn/threads; jp++ {
						sh.claim(&s, jp)
					}
					si++
					off += kb * nr * pn
				}
			}
		}
		si, off := 0, 0
		for jc := 0; jc < c.N; jc += NC {
			for pc := 0; pc < c.K; pc += KC {
				kb, nb := min(KC, c.K-pc), min(NC, c.N-jc)
				pn := (nb + nr - 1) / nr
				s := newStep(&c, kern, (*buf)[off:off+kb*nr*pn], pc, jc)
				sh.base = si * maxPn
				s.share = &sh
				s.block(lo*mr, min(hi*mr, m), 0, pn)
				si++
				off += kb * nr * pn
			}
		}
	})
}

// panelShare is one thread's view of the shared panels' states.
type panelShare struct {
	state []atomic.Uint32
	base  int       // the step's first state
	priv  []float32 // a private panel (nr·KC) and its widening buffer
}

// claim packs panel jp of step s if no thread has begun it.
func (sh *panelShare) claim(s *step, jp int) {
	st := &sh.state[sh.base+jp]
	if st.Load() == panelFree && st.CompareAndSwap(panelFree, panelPacking) {
		nr, kb := s.kern.nr, s.kb
		packBPanel(s.bp[jp*nr*kb:(jp+1)*nr*kb], &s.c.B, s.pc, kb, s.jc+jp*nr, min(nr, s.nb-jp*nr), nr, sh.priv[nr*KC:])
		st.Store(panelPacked)
	}
}

// panel returns panel jp of step s packed: the shared one (packed here if
// no thread has begun it), or, if the thread packing it does not finish
// within panelWait, a private copy.
func (sh *panelShare) panel(s *step, jp int) []float32 {
	nr, kb := s.kern.nr, s.kb
	st := &sh.state[sh.base+jp]
	if st.Load() != panelPacked {
		sh.claim(s, jp)
		var t0 time.Time
		for i := 1; st.Load() != panelPacked; i++ {
			if i%64 != 0 {
				continue
			}
			if t0.IsZero() {
				t0 = time.Now()
			} else if time.Since(t0) > panelWait {
				p := sh.priv[:nr*kb]
				packBPanel(p, &s.c.B, s.pc, kb, s.jc+jp*nr, min(nr, s.nb-jp*nr), nr, sh.priv[nr*KC:])
				return p
			}
		}
	}
	return s.bp[jp*nr*kb:]
}
