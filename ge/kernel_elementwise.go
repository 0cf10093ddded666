package ge

import (
	"math"
	"slices"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/par"
	sg "github.com/ascend-go/cann/internal/sgemm"
	"github.com/ascend-go/cann/internal/vmath"
)

// broadcastStrides returns element strides of a tensor with dims d when
// broadcast to out: 0 along broadcast (size-1 or missing) dims.
func broadcastStrides(d, out []int64) []int {
	st := make([]int, len(out))
	s := 1
	for i := len(out) - 1; i >= 0; i-- {
		j := len(d) - len(out) + i
		if j >= 0 && d[j] != 1 {
			st[i] = s
			s *= int(d[j])
		}
	}
	return st
}

func binaryKernel(t *Task, args [][]byte) error {
	switch dt, et := t.Inputs[0].DataType, t.Inputs[1].DataType; {
	case isInteger(dt) && isInteger(et):
		return intBinaryKernel(t, args)
	case dt == acl.Float64 || dt != et || (t.Op == OpMod && isFloat(dt)) || isInteger(dt):
		return f64BinaryKernel(t, args)
	}
	var s scratch
	defer s.release()
	ad, bd, od := t.Inputs[0], t.Inputs[1], t.Outputs[0]
	a := readFloats(&s, ad.DataType, args[0], prod(ad.Dims))
	b := readFloats(&s, bd.DataType, args[1], prod(bd.Dims))
	n := prod(od.Dims)
	out := outFloats(&s, od.DataType, args[2], n)
	sa, sb := -1, -1
	switch {
	case dimsEqual(ad.Dims, bd.Dims):
		sa, sb = 1, 1
	case len(b) == 1 && len(a) == n:
		sa, sb = 1, 0
	case len(a) == 1 && len(b) == n:
		sa, sb = 0, 1
	}
	switch th := par.Threads(n, parallelElems); {
	case sa < 0:
		broadcastBinary(t.Op, out, od.Dims, a, ad.Dims, b, bd.Dims)
	case th > 1:
		op, sa, sb := t.Op, sa, sb // the goroutines' copies: the serial path keeps its own on the stack
		par.Chunked(th, n, func(lo, hi int) { binLoop(op, out[lo:hi], a[lo*sa:], sa, b[lo*sb:], sb) })
	default:
		binLoop(t.Op, out, a, sa, b, sb)
	}
	storeFloats(od.DataType, args[2], out)
	return nil
}

// broadcastBinary walks the output in rows of its last dim; an odometer over
// the outer dims tracks where each row starts in a and b.
func broadcastBinary(op OpType, out []float32, od []int64, a []float32, ad []int64, b []float32, bd []int64) {
	if len(od) > maxCoalesce {
		broadcastBinaryRows(op, out, od, a, broadcastStrides(ad, od), b, broadcastStrides(bd, od))
		return
	}
	var sa0, sb0 [maxCoalesce]int
	stridesInto(sa0[:len(od)], ad, od)
	stridesInto(sb0[:len(od)], bd, od)
	var sa, sb, dims [maxCoalesce]int
	r := coalesce(sa0[:len(od)], sb0[:len(od)], od, &sa, &sb, &dims)
	var d64 [maxCoalesce]int64
	for i := range r {
		d64[i] = int64(dims[i])
	}
	rows := len(out) / max(1, dims[r-1])
	if th := par.Threads(len(out), parallelElems); th > 1 && rows > 1 {
		// Rows are independent: a large output splits them over
		// threads. The goroutines get copies of the dims and strides,
		// so these stay on the stack on the serial path.
		dc, sac, sbc := slices.Clone(d64[:r]), slices.Clone(sa[:r]), slices.Clone(sb[:r])
		par.Chunked(th, rows, func(lo, hi int) { broadcastRowRange(op, out, dc, a, sac, b, sbc, lo, hi) })
		return
	}
	broadcastBinaryRows(op, out, d64[:r], a, sa[:r], b, sb[:r])
}

// maxCoalesce is the rank up to which broadcastBinary works on the stack.
const maxCoalesce = 8

// broadcastBinaryRows walks the output in rows of its last dim od[r-1];
// an odometer over the outer dims tracks where each row starts in a and b
// (element strides sa, sb: 0 along broadcast dims).
func broadcastBinaryRows(op OpType, out []float32, od []int64, a []float32, sa []int, b []float32, sb []int) {
	broadcastRowRange(op, out, od, a, sa, b, sb, 0, len(out)/max(1, int(od[len(od)-1])))
}

// broadcastRowRange is broadcastBinaryRows for output rows [r0,r1).
func broadcastRowRange(op OpType, out []float32, od []int64, a []float32, sa []int, b []float32, sb []int, r0, r1 int) {
	r := len(od)
	row := int(od[r-1])
	if row == 0 || r1 <= r0 {
		return
	}
	var idxv [maxCoalesce]int
	idx := idxv[:0]
	if r > len(idxv) {
		idx = make([]int, r)
	}
	idx = idx[:r]
	// Where row r0 starts in a and b: its index in each outer dim times
	// that dim's strides.
	offA, offB := 0, 0
	for d, q := r-2, r0; d >= 0; d-- {
		idx[d] = q % int(od[d])
		q /= int(od[d])
		offA += idx[d] * sa[d]
		offB += idx[d] * sb[d]
	}
	for o := r0 * row; o < r1*row; o += row {
		binLoop(op, out[o:o+row], a[offA:], sa[r-1], b[offB:], sb[r-1])
		for d := r - 2; d >= 0; d-- {
			idx[d]++
			offA += sa[d]
			offB += sb[d]
			if idx[d] < int(od[d]) {
				break
			}
			offA -= sa[d] * idx[d]
			offB -= sb[d] * idx[d]
			idx[d] = 0
		}
	}
}

// stridesInto is broadcastStrides into st (len(out) values).
func stridesInto(st []int, d, out []int64) {
	s := 1
	for i := len(out) - 1; i >= 0; i-- {
		st[i] = 0
		j := len(d) - len(out) + i
		if j >= 0 && d[j] != 1 {
			st[i] = s
			s *= int(d[j])
		}
	}
}

// coalesce merges adjacent output dims that both operands walk alike
// (contiguous in both, or broadcast in both), so a [N,C,H,W]·[N,C,1,1]
// product runs rows of H·W, not of W. Size-1 dims drop out (the last dim
// always stays). It writes the merged strides and dims to ra, rb, ro and
// returns how many there are.
func coalesce(sa, sb []int, od []int64, ra, rb, ro *[maxCoalesce]int) int {
	n := 0
	for i, d := range od {
		if d == 1 && i < len(od)-1 {
			continue
		}
		if n > 0 && (ra[n-1] == sa[i]*int(d) || ra[n-1] == 0 && sa[i] == 0) && (rb[n-1] == sb[i]*int(d) || rb[n-1] == 0 && sb[i] == 0) {
			ro[n-1] *= int(d)
			ra[n-1], rb[n-1] = sa[i], sb[i]
			continue
		}
		ra[n], rb[n], ro[n] = sa[i], sb[i], int(d)
		n++
	}
	return n
}

// binLoop computes out[i] = a[i·sa] op b[i·sb]; strides are 0 or 1.
func binLoop(op OpType, out, a []float32, sa int, b []float32, sb int) {
	if binLoopFast(op, out, a, sa, b, sb) {
		return
	}
	switch op {
	case OpAdd:
		for i := range out {
			out[i] = a[i*sa] + b[i*sb]
		}
	case OpSub:
		for i := range out {
			out[i] = a[i*sa] - b[i*sb]
		}
	case OpMul:
		for i := range out {
			out[i] = a[i*sa] * b[i*sb]
		}
	case OpDiv:
		for i := range out {
			out[i] = a[i*sa] / b[i*sb]
		}
	default:
		for i := range out {
			out[i] = floatBinOp(op, a[i*sa], b[i*sb])
		}
	}
}

// binLoopFast is binLoop for the four arithmetic ops on same-shape
// operands or one scalar operand (a residual add, a scale): loops over
// plain slices the compiler checks once, not a bounds check and a stride
// multiply per element. It reports whether it handled the case.
func binLoopFast(op OpType, out, a []float32, sa int, b []float32, sb int) bool {
	n := len(out)
	if n == 0 {
		return false
	}
	var vop sg.VecOp
	switch op {
	case OpAdd:
		vop = sg.VecAdd
	case OpSub:
		vop = sg.VecSub
	case OpMul:
		vop = sg.VecMul
	case OpDiv:
		vop = sg.VecDiv
	case OpPow:
		return sa == 1 && sb == 0 && powScalar(out, a[:n], b[0])
	default:
		return false
	}
	switch {
	case sa == 1 && sb == 1:
		sg.Vec(vop, out, a, b)
	case sa == 1 && sb == 0:
		sg.VecScalar(vop, out, a, b[0])
	case sa == 0 && sb == 1:
		sg.ScalarVec(vop, out, a[0], b)
	default:
		return false
	}
	return true
}

func unaryKernel(t *Task, args [][]byte) error {
	if !isFloat(t.Inputs[0].DataType) {
		return elemUnaryKernel(t, args) // float64, integers
	}
	var s scratch
	defer s.release()
	d := t.Inputs[0]
	n := prod(d.Dims)
	x := readFloats(&s, d.DataType, args[0], n)
	out := outFloats(&s, d.DataType, args[1], n)
	if th := par.Threads(n, parallelElems); th > 1 {
		par.Chunked(th, n, func(lo, hi int) { unary(t.Op, out[lo:hi], x[lo:hi]) })
	} else {
		unary(t.Op, out, x)
	}
	storeFloats(d.DataType, args[1], out)
	return nil
}

// parallelElems is the number of elements below which an elementwise or
// row kernel is not worth splitting over threads (a goroutine hand-off
// costs some µs). Each element's result depends only on the element, so
// the split never changes a bit.
const parallelElems = 1 << 14

// unary sets out = op(x) elementwise for Relu, Gelu and Silu.
func unary(op OpType, out, x []float32) {
	switch op {
	case OpRelu:
		vmath.Relu(out, x)
	case OpGelu:
		vmath.Gelu(out, x)
	case OpSilu:
		vmath.Silu(out, x)
	}
}

// powScalar sets out = a^y for the exponents decomposed models use
// (x² and x³ of LayerNorm and tanh-GELU, √x) with the operations and
// roundings math.Pow performs for them, so each result is the bits of
// float32(math.Pow(x, y)); other exponents report false.
func powScalar(out, a []float32, y float32) bool {
	switch y {
	case 1:
		copy(out, a)
	case 2:
		for i, x := range a {
			out[i] = x * x // exact in float64, so one rounding either way
		}
	case 3:
		for i, x := range a {
			v := float64(x)
			out[i] = float32(v * (v * v))
		}
	case 0.5:
		for i, x := range a {
			switch {
			case x == 0:
				out[i] = 0 // Pow(±0, 0.5) = +0
			case math.IsInf(float64(x), -1):
				out[i] = float32(math.Inf(1))
			default:
				out[i] = float32(math.Sqrt(float64(x)))
			}
		}
	default:
		return false
	}
	return true
}
