package sgemm

import "github.com/ascend-go/cann/internal/par"

// smallWork is the M·N·K up to which a float32 product is computed by
// plain dot products: packing would cost more than it saves.
const smallWork = 4096

// run computes a validated call with kernel kern on at most threads threads.
func run(c *Call, kern kernel, threads int) {
	m, n, k := c.M, c.N, c.K
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || c.Alpha == 0 {
		scaleC(c)
		c.Epi.applyAll(c)
		return
	}
	if c.work() <= smallWork && c.A.Kind == F32 && c.B.Kind == F32 {
		switch {
		case c.B.Im2col != nil:
			smallIm2col(c)
		case c.B.PackedNR != 0:
			unpackSmall(c)
		default:
			small(c)
		}
		c.Epi.applyAll(c)
		return
	}
	if w := c.work(); w < parallelWork*threads {
		threads = max(1, w/parallelWork)
	}
	// The short path's threads each pack all of A, worth it when A is
	// small next to B.
	if m <= kern.mcRows() && (threads == 1 || n >= 4*m) {
		runShort(c, kern, threads)
		return
	}
	nr := kern.nr
	nc := min(NC, (n+nr-1)/nr*nr)
	if threads > 1 {
		if shareRows(c, kern) {
			runRowsShared(*c, kern, threads)
		} else {
			runParallel(*c, kern, nc, threads)
		}
		return
	}
	bpBuf := packedBPool.get(KC * nc)
	defer packedBPool.put(bpBuf)
	for jc := 0; jc < n; jc += NC {
		for pc := 0; pc < k; pc += KC {
			s := newStep(c, kern, *bpBuf, pc, jc)
			s.packB(0, s.panelsN())
			s.block(0, m, 0, s.panelsN())
		}
	}
}

// newStep returns the step of c at K offset pc and N offset jc.
func newStep(c *Call, kern kernel, bp []float32, pc, jc int) step {
	beta := c.Beta
	if pc > 0 {
		beta = 1
	}
	kb := min(KC, c.K-pc)
	s := step{c: c, kern: kern, bp: bp, pc: pc, kb: kb, jc: jc, nb: min(NC, c.N-jc), beta: beta}
	if v := c.B.packedView(pc, kb, jc, kern.nr); v != nil {
		s.bp, s.prepacked = v, true // B was packed for this kernel: read it in place
	}
	return s
}

// runParallel computes c on threads goroutines forked once for the whole
// product, split along the longer side at tile boundaries, so every
// element is computed exactly as on one thread. Rows go in chunks the
// threads claim (a thread that starts late takes fewer), each chunk
// packing every step's B panels itself (a B packed ahead costs nothing;
// runRowsShared shares one B when it must be packed); B panels go one
// share per thread, each thread packing all of A's rows. The packing done
// twice is a small part of the product's work, and in exchange the
// threads never wait for one another — no barrier per step, where a
// descheduled or late thread would stall the others.
//
// It takes a copy of the Call: the goroutines see only values made here,
// so the caller's Call (often on its stack) does not escape to the heap
// on the serial path.
func runParallel(c Call, kern kernel, nc, threads int) {
	mr := kern.mr
	m, pm := c.M, (c.M+mr-1)/mr
	if pm >= (min(c.N, NC)+kern.nr-1)/kern.nr {
		// Rows, in chunks the threads claim (a late thread takes fewer);
		// a B packed ahead costs nothing to read again, so it gets two
		// chunks per thread, a B packed per chunk one.
		per := 1
		if c.B.PackedNR != 0 {
			per = 2
		}
		par.ForChunks(threads, pm, chunkGrain(pm, threads, per), func(lo, hi int) {
			buf := packedBPool.get(KC * nc)
			defer packedBPool.put(buf)
			for jc := 0; jc < c.N; jc += NC {
				for pc := 0; pc < c.K; pc += KC {
					s := newStep(&c, kern, *buf, pc, jc)
					pn := s.panelsN()
					s.packB(0, pn)
					s.block(lo*mr, min(hi*mr, m), 0, pn)
				}
			}
		})
		return
	}
	par.For(threads, threads, func(w, _ int) {
		buf := packedBPool.get(KC * nc)
		defer packedBPool.put(buf)
		for jc := 0; jc < c.N; jc += NC {
			for pc := 0; pc < c.K; pc += KC {
				s := newStep(&c, kern, *buf, pc, jc)
				pn := s.panelsN()
				lo, hi := w*pn/threads, (w+1)*pn/threads
				s.packB(lo, hi)
				s.block(0, m, lo, hi)
			}
		}
	})
}

// chunkGrain is the chunk size that splits units into per chunks per
// thread.
func chunkGrain(units, threads, per int) int {
	return max(1, (units+threads*per-1)/(threads*per))
}

// runShort computes a product whose A fits in one mc block (M ≤ mc, the
// usual inference shape: a batch of activations times a weight matrix).
// Each B panel is then used by one pass over A only, so packing all of a
// KC×NC block first (written to and read back from L2/L3) costs more than
// it saves: instead each thread owns a contiguous range of B panels for
// the whole product — one fork and join per call — and packs each panel
// into an L1-sized buffer just before the kernel runs down A with it.
// Every tile gets the same kernel calls with the same K blocks as in
// block, so the result is bit-identical to the blocked path.
func runShort(c *Call, kern kernel, threads int) {
	pn := (c.N + kern.nr - 1) / kern.nr
	if threads <= 1 {
		shortPanels(c, kern, 0, pn, nil)
		return
	}
	// Panels in chunks the threads claim, four per thread (a thread that
	// starts late takes fewer). Each thread packs all of A once, for
	// every K block, before it claims its first chunk, and keeps it.
	cc := *c // the goroutines get a copy, so the caller's Call stays on its stack
	pm := (c.M + kern.mr - 1) / kern.mr
	aps := make([]*[]float32, threads)
	setup := func(w int) {
		aps[w] = packedAllAPool.get(pm*kern.mr*cc.K + maxNR*KC)
		all, wbuf := (*aps[w])[:pm*kern.mr*cc.K], (*aps[w])[pm*kern.mr*cc.K:]
		for pc := 0; pc < cc.K; pc += KC {
			packA(all[pm*kern.mr*pc:], &cc.A, 0, cc.M, pc, min(KC, cc.K-pc), kern.mr, wbuf)
		}
	}
	par.ForChunksSetup(threads, pn, chunkGrain(pn, threads, 4), setup, func(w, lo, hi int) {
		shortPanels(&cc, kern, lo, hi, (*aps[w])[:pm*kern.mr*cc.K])
	})
	for _, p := range aps {
		if p != nil {
			packedAllAPool.put(p)
		}
	}
}

// shortPanels computes the columns of B panels [jp0,jp1) of a short
// product (see runShort). apAll, when set, is all of A packed, K block
// pc at pm·mr·pc; else each K block of A is packed here.
func shortPanels(c *Call, kern kernel, jp0, jp1 int, apAll []float32) {
	m, n, k := c.M, c.N, c.K
	mr, nr := kern.mr, kern.nr
	kbMax := min(KC, k)
	pm := (m + mr - 1) / mr
	abuf := packedAPool.get(pm*mr*kbMax + mr*nr + nr*kbMax + maxNR*kbMax)
	defer packedAPool.put(abuf)
	buf := *abuf
	ap, buf := buf[:pm*mr*kbMax], buf[pm*mr*kbMax:]
	tile, buf := buf[:mr*nr], buf[mr*nr:]
	bpan, wbuf := buf[:nr*kbMax], buf[nr*kbMax:]
	ldc := c.LDC
	epi := c.Epi.active()
	for pc := 0; pc < k; pc += KC {
		kb, beta := min(KC, k-pc), c.Beta
		if pc > 0 {
			beta = 1
		}
		last := epi && pc+kb == k
		if apAll != nil {
			ap = apAll[pm*mr*pc:]
		} else {
			packA(ap, &c.A, 0, m, pc, kb, mr, wbuf)
		}
		for jp := jp0; jp < jp1; jp++ {
			j := jp * nr
			cols := min(nr, n-j)
			// A B packed ahead is copied into the L1 panel, a sequential
			// stream, rather than read in place: the kernel's loads do
			// not hide a miss to memory.
			if v := c.B.packedView(pc, kb, j, nr); v != nil {
				copy(bpan, v[:kb*nr])
			} else {
				packBPanel(bpan, &c.B, pc, kb, j, cols, nr, wbuf)
			}
			bp := bpan
			for ip := range pm {
				i := ip * mr
				rows := min(mr, m-i)
				apan := ap[ip*mr*kb:]
				kern.tile(kb, rows, cols, &apan[0], &bp[0], c.C[i*ldc+j:], ldc, c.Alpha, beta, tile)
			}
			if last && ((jp-jp0+1)%epiPanels == 0 || jp == jp1-1) {
				j0 := (jp0 + (jp-jp0)/epiPanels*epiPanels) * nr
				c.Epi.apply(c.C[j0:], ldc, 0, j0, m, j+cols-j0)
			}
		}
	}
}

// epiPanels is how many B panels of C columns the epilogue runs over at
// once: row segments long enough for the vector activations to run at
// full speed (a call per 32 elements costs them half again), a block of C
// small enough to still be in L2.
const epiPanels = 8

// step is one (NC, KC) block of the product: B rows [pc,pc+kb) and
// columns [jc,jc+nb), packed into bp, applied to all of C's rows.
type step struct {
	c         *Call
	kern      kernel
	bp        []float32
	pc, kb    int
	jc, nb    int
	beta      float32
	prepacked bool        // bp is a view of a B packed ahead (PackB)
	share     *panelShare // bp is shared by threads that pack its panels on demand (runRowsShared)
}

func (s *step) panelsN() int { return (s.nb + s.kern.nr - 1) / s.kern.nr }

// packB packs B panels [lo,hi) of the step.
func (s *step) packB(lo, hi int) {
	if s.prepacked {
		return
	}
	nr, kb := s.kern.nr, s.kb
	buf := widenPool.get(nr * kb)
	for jp := lo; jp < hi; jp++ {
		packBPanel(s.bp[jp*nr*kb:(jp+1)*nr*kb], &s.c.B, s.pc, kb, s.jc+jp*nr, min(nr, s.nb-jp*nr), nr, *buf)
	}
	widenPool.put(buf)
}

// block computes rows [i0,i1) × B panels [jp0,jp1) of the step: packs A mc
// rows at a time, then runs the kernel on every tile. Edge tiles go
// through a local tile.
func (s *step) block(i0, i1, jp0, jp1 int) {
	c, kern, kb := s.c, s.kern, s.kb
	mr, nr := kern.mr, kern.nr
	mc := kern.mcRows()
	abuf := packedAPool.get(mc*kb + mr*nr + mr*kb)
	defer packedAPool.put(abuf)
	ap := (*abuf)[:mc*kb]
	tile := (*abuf)[mc*kb : mc*kb+mr*nr]
	wbuf := (*abuf)[mc*kb+mr*nr:]
	ldc := c.LDC
	last := c.Epi.active() && s.pc+kb == c.K
	for ic := i0; ic < i1; ic += mc {
		mb := min(mc, i1-ic)
		packA(ap, &c.A, ic, mb, s.pc, kb, mr, wbuf)
		for jp := jp0; jp < jp1; jp++ {
			j := s.jc + jp*nr
			cols := min(nr, s.nb-jp*nr)
			bpan := s.bp[jp*nr*kb:]
			if s.share != nil {
				bpan = s.share.panel(s, jp)
			}
			for ip := 0; ip*mr < mb; ip++ {
				i := ic + ip*mr
				rows := min(mr, mb-ip*mr)
				apan := ap[ip*mr*kb:]
				kern.tile(kb, rows, cols, &apan[0], &bpan[0], c.C[i*ldc+j:], ldc, c.Alpha, s.beta, tile)
			}
			if last && ((jp-jp0+1)%epiPanels == 0 || jp == jp1-1) {
				j0 := s.jc + (jp0+(jp-jp0)/epiPanels*epiPanels)*nr
				c.Epi.apply(c.C[ic*ldc+j0:], ldc, ic, j0, mb, j+cols-j0)
			}
		}
	}
}

// smallIm2col writes a small Im2col operand out (K·N ≤ smallWork) and
// runs small on it, so that a small convolution takes the same path, and
// rounding, as explicit im2col then Gemm.
func smallIm2col(c *Call) {
	var buf [smallWork]float32
	k, n := c.K, c.N
	c.B.Im2col.pack(buf[:k*n], 0, k, 0, n, n)
	d := *c
	d.B = Matrix{F32: buf[:k*n], Stride: n}
	small(&d)
}

// small computes a tiny float32 product directly: per element a sequential
// dot product, then C = alpha·acc (+ beta·C), rounded as in the kernels.
func small(c *Call) {
	switch {
	case !c.B.Trans && c.N == 1 && c.B.Stride == 1 && !c.A.Trans:
		// A matrix-vector product (a 1×1 convolution of a 1×1 image):
		// B's one column is contiguous, a transposed B of one row.
		d := *c
		d.B = Matrix{F32: c.B.F32, Stride: c.K, Trans: true}
		smallDots(&d)
	case !c.B.Trans && c.N <= smallRow:
		smallRows(c)
	case c.B.Trans && !c.A.Trans:
		smallDots(c)
	default:
		smallGeneric(c)
	}
}

// smallGeneric is small for any operand layout.
func smallGeneric(c *Call) {
	a, b := c.A.F32, c.B.F32
	// Element (i,p) of op(A) is a[i·ai + p·ap]; (p,j) of op(B) is b[p·bp + j·bj].
	ai, ap := c.A.Stride, 1
	if c.A.Trans {
		ai, ap = 1, c.A.Stride
	}
	bp, bj := c.B.Stride, 1
	if c.B.Trans {
		bp, bj = 1, c.B.Stride
	}
	for i := range c.M {
		row := c.C[i*c.LDC : i*c.LDC+c.N]
		for j := range row {
			var acc float32
			for p := range c.K {
				acc += float32(a[i*ai+p*ap] * b[p*bp+j*bj]) // rounded product, as smallRows and axpyAVX2
			}
			acc = float32(c.Alpha * acc)
			if c.Beta != 0 {
				acc += float32(c.Beta * row[j])
			}
			row[j] = acc
		}
	}
}

// smallDots is small for a row-major A and a transposed B (a recurrent
// layer's weights stored [N, K]): every element is the dot product of two
// contiguous rows. Four columns (or, for the last N mod 4, four rows) are
// computed at once, four independent add chains instead of one, each the
// same sequence of rounded products and adds as small's, so the bits are
// small's.
func smallDots(c *Call) {
	a, b, k := c.A.F32, c.B.F32, c.K
	as, bs := c.A.Stride, c.B.Stride
	for i := range c.M {
		ar := a[i*as:][:k]
		row := c.C[i*c.LDC:][:c.N]
		for j := 0; j+4 <= len(row); j += 4 {
			b0, b1, b2, b3 := b[j*bs:][:k], b[(j+1)*bs:][:k], b[(j+2)*bs:][:k], b[(j+3)*bs:][:k]
			var s0, s1, s2, s3 float32
			for p, x := range ar {
				s0 += float32(x * b0[p])
				s1 += float32(x * b1[p])
				s2 += float32(x * b2[p])
				s3 += float32(x * b3[p])
			}
			smallStore(c, row, j, s0)
			smallStore(c, row, j+1, s1)
			smallStore(c, row, j+2, s2)
			smallStore(c, row, j+3, s3)
		}
	}
	// The last N mod 4 columns, four rows at a time.
	for j := c.N &^ 3; j < c.N; j++ {
		br := b[j*bs:][:k]
		i := 0
		for ; i+4 <= c.M; i += 4 {
			a0, a1, a2, a3 := a[i*as:][:k], a[(i+1)*as:][:k], a[(i+2)*as:][:k], a[(i+3)*as:][:k]
			var s0, s1, s2, s3 float32
			for p, x := range br {
				s0 += float32(a0[p] * x)
				s1 += float32(a1[p] * x)
				s2 += float32(a2[p] * x)
				s3 += float32(a3[p] * x)
			}
			smallStore(c, c.C[i*c.LDC:], j, s0)
			smallStore(c, c.C[(i+1)*c.LDC:], j, s1)
			smallStore(c, c.C[(i+2)*c.LDC:], j, s2)
			smallStore(c, c.C[(i+3)*c.LDC:], j, s3)
		}
		for ; i < c.M; i++ {
			ar := a[i*as:][:k]
			var acc float32
			for p, x := range ar {
				acc += float32(x * br[p])
			}
			smallStore(c, c.C[i*c.LDC:], j, acc)
		}
	}
}

// smallStore folds a finished dot product into row[j] as small does.
func smallStore(c *Call, row []float32, j int, acc float32) {
	acc = float32(c.Alpha * acc)
	if c.Beta != 0 {
		acc += float32(c.Beta * row[j])
	}
	row[j] = acc
}

// scaleC sets C = Beta·C (C = 0 when Beta is 0, whatever C held).
func scaleC(c *Call) {
	for i := range c.M {
		row := c.C[i*c.LDC : i*c.LDC+c.N]
		if c.Beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= c.Beta
		}
	}
}

// smallRow is the widest output row smallRows accumulates on the stack.
const smallRow = 256

// smallRows is small for a B stored by rows: it adds a(i,p)·B's row p into
// a row of accumulators, p ascending, so each element gets the same sums in
// the same order as small's dot product (bit-identical) while the inner
// loop runs over contiguous memory.
func smallRows(c *Call) {
	var buf [smallRow]float32
	acc := buf[:c.N]
	a, b := c.A.F32, c.B.F32
	ai, ap := c.A.Stride, 1
	if c.A.Trans {
		ai, ap = 1, c.A.Stride
	}
	for i := range c.M {
		clear(acc)
		for p := range c.K {
			x := a[i*ai+p*ap]
			brow := b[p*c.B.Stride:][:len(acc)]
			if hasAXPY && len(acc) >= 8 {
				axpyAVX2(&acc[0], &brow[0], len(acc), x)
				continue
			}
			for j := range acc {
				acc[j] += float32(x * brow[j]) // the conversion forbids fusing into an FMA
			}
		}
		row := c.C[i*c.LDC:][:len(acc)]
		for j, v := range acc {
			v = float32(c.Alpha * v)
			if c.Beta != 0 {
				v += float32(c.Beta * row[j])
			}
			row[j] = v
		}
	}
}
