package sgemm

import "unsafe"

// A kernel multiplies a packed mr×k panel of A by a packed k×nr panel of B
// and folds the product into an mr×nr tile of C (see the package doc for
// the arithmetic). Packed A holds a[p·mr+i] = op(A)[i,p], packed B holds
// b[p·nr+j] = op(B)[p,j].
type kernel struct {
	name   string
	id     kernelID
	mr, nr int
}

type kernelID uint8

const (
	idGo kernelID = iota
	idAVX512
	idAVX2
	// The AVX-512 kernel on the top 4 or 8 rows of its 12-row A panels
	// (the edge of M); not kernels of their own.
	idAVX512r4
	idAVX512r8
)

// call runs the kernel on a whole tile.
func (k kernel) call(kc int, a, b, c *float32, ldc int, alpha, beta float32) {
	callID(k.id, kc, a, b, c, ldc, alpha, beta)
}

// callID runs kernel id. A switch of direct calls rather than a func
// value: the compiler then knows the pointers do not escape, so a
// caller's Call can stay on its stack.
func callID(id kernelID, kc int, a, b, c *float32, ldc int, alpha, beta float32) {
	switch id {
	case idAVX512:
		kern512(kc, a, b, c, ldc, alpha, beta)
	case idAVX512r4:
		kern512r4(kc, a, b, c, ldc, alpha, beta)
	case idAVX512r8:
		kern512r8(kc, a, b, c, ldc, alpha, beta)
	case idAVX2:
		kern256(kc, a, b, c, ldc, alpha, beta)
	default:
		kernGo(kc, a, b, c, ldc, alpha, beta)
	}
}

// tile computes the top rows×cols corner of a tile into c (rows ldc
// apart): a and b are the tile's packed panels. A whole tile is stored by
// the kernel directly; a partial one is computed into tmp (mr·nr) and
// folded in. Near the bottom of M the AVX-512 kernel runs on the panel's
// top 4 or 8 rows only, which computes every element with the same FMA
// chain at a third or two thirds of the cost.
func (k kernel) tile(kc, rows, cols int, a, b *float32, c []float32, ldc int, alpha, beta float32, tmp []float32) {
	id, r := k.id, k.mr
	if k.id == idAVX512 && rows <= 8 {
		id, r = idAVX512r8, 8
		if rows <= 4 {
			id, r = idAVX512r4, 4
		}
	}
	if rows == r && cols == k.nr {
		callID(id, kc, a, b, &c[0], ldc, alpha, beta)
		return
	}
	callID(id, kc, a, b, &tmp[0], k.nr, alpha, 0)
	fold(c, ldc, tmp, k.nr, rows, cols, beta)
}

// kernels lists the kernels this CPU runs, fastest first; best is used.
var (
	kernels = append(archKernels(), kernel{"go", idGo, goMR, goNR})
	best    = kernels[0]
)

// Blocking. KC is fixed so that the reduction order never depends on the
// machine or the thread count; a KC×nr panel of B (32 KiB for nr = 32)
// stays in L1 while a mc×KC block of A (about 144 KiB) stays in L2; NC
// bounds the packed B block (2 MiB, in L3).
const (
	KC = 256
	NC = 2048
)

// mcRows is the height of the block of A packed at once, a multiple of mr.
func (k kernel) mcRows() int { return (144 + k.mr - 1) / k.mr * k.mr }

const goMR, goNR = 4, 8

// kernGo is the portable kernel: a goMR×goNR tile in local accumulators.
func kernGo(k int, a, b, c *float32, ldc int, alpha, beta float32) {
	var acc [goMR * goNR]float32
	if k > 0 {
		as := unsafe.Slice(a, k*goMR)
		bs := unsafe.Slice(b, k*goNR)
		for p := range k {
			ap := as[p*goMR : p*goMR+goMR]
			bp := bs[p*goNR : p*goNR+goNR]
			for i, ai := range ap {
				row := acc[i*goNR : i*goNR+goNR]
				for j, bj := range bp {
					row[j] += ai * bj
				}
			}
		}
	}
	for i := range acc {
		acc[i] = float32(alpha * acc[i])
	}
	fold(unsafe.Slice(c, (goMR-1)*ldc+goNR), ldc, acc[:], goNR, goMR, goNR, beta)
}

// fold writes an mr×nr corner of a tile (tile rows tnr apart) into c:
// c = tile when beta is 0, else c = tile + beta·c with the product rounded
// first, exactly as the assembly kernels store.
func fold(c []float32, ldc int, tile []float32, tnr, mr, nr int, beta float32) {
	for i := range mr {
		row := c[i*ldc : i*ldc+nr]
		t := tile[i*tnr : i*tnr+nr]
		if beta == 0 {
			copy(row, t)
			continue
		}
		for j := range row {
			row[j] = t[j] + float32(beta*row[j])
		}
	}
}
