package ge

import (
	"math"

	sg "github.com/ascend-go/cann/internal/sgemm"

	"github.com/ascend-go/cann/internal/vmath"
)

// The gate math of the recurrent ops with their default activations
// (sigmoid gates, tanh cell and hidden; RNN: tanh) and no clip, in
// float32 over whole gate vectors: each step adds the input projection,
// the recurrent product and the summed biases for all gates of a batch
// row at once, then runs vmath's Sigmoid and Tanh over each gate (at most
// 3 ulp from float64). rnnKernel's per-element float64 path, with a
// closure call and math.Exp per gate element, was most of an LSTM's time
// at hidden sizes where the step GEMMs are small.

// rnnDefaultActs reports whether one direction's activation codes are
// the op's defaults.
func rnnDefaultActs(op OpType, acts []int64) bool {
	switch op {
	case OpRNN:
		return len(acts) == 1 && acts[0] == RNNActTanh
	case OpGRU:
		return len(acts) == 2 && acts[0] == RNNActSigmoid && acts[1] == RNNActTanh
	case OpLSTM:
		return len(acts) == 3 && acts[0] == RNNActSigmoid && acts[1] == RNNActTanh && acts[2] == RNNActTanh
	}
	return false
}

// rnnFastOK reports whether rnnKernel may use the float32 gate path for
// direction dir.
func rnnFastOK(op OpType, acts []int64, dir, per int, clip float64) bool {
	return math.IsInf(clip, 1) && rnnDefaultActs(op, acts[dir*per:(dir+1)*per])
}

// rnnBiasSum sets bs[k] = Wb[k] + Rb[k] for the gh gate columns of b
// ([Wb, Rb]).
func rnnBiasSum(bs, b []float32, gh int) {
	for k := range gh {
		bs[k] = b[k] + b[gh+k]
	}
}

// gruResetFast is the first half of a GRU step without
// linear_before_reset: rh = σ(x·Wr + h·Rr + Wbr + Rbr) ⊙ h(t-1) for one
// batch row (gx, hrow: that row's projections; tmp: h floats).
func gruResetFast(h int, gx, hrow, bs, hp, rh, tmp []float32) {
	r := tmp[:h]
	for j := range r {
		r[j] = gx[h+j] + hrow[h+j] + bs[h+j]
	}
	vmath.Sigmoid(r, r)
	for j, v := range r {
		rh[j] = v * hp[j]
	}
}

// rnnRowFast computes one batch row's new hidden state yt (and an LSTM's
// cell state c, updated in place) from its input projection gx, its
// recurrent product hrow ([G·H]), the biases b ([Wb, Rb]) and their sum
// bs, the peepholes p and the previous state hp. pre and tmp hold G·H and
// H floats.
func rnnRowFast(op OpType, lbr bool, h int, gx, hrow, b, bs, p, hp, c, yt, pre, tmp []float32) {
	gh := len(bs)
	pre = pre[:gh]
	for k := range pre {
		pre[k] = gx[k] + hrow[k] + bs[k]
	}
	yt, hp = yt[:h], hp[:h]
	switch op {
	case OpRNN:
		vmath.Tanh(yt, pre[:h])
	case OpGRU:
		z, hh := pre[:h], pre[2*h:3*h]
		if lbr {
			vmath.Sigmoid(pre[:2*h], pre[:2*h])
			r := pre[h : 2*h]
			for j := range hh {
				hh[j] = gx[2*h+j] + b[2*h+j] + r[j]*(hrow[2*h+j]+b[gh+2*h+j])
			}
		} else {
			vmath.Sigmoid(z, z)
		}
		vmath.Tanh(hh, hh)
		for j := range yt {
			yt[j] = (1-z[j])*hh[j] + z[j]*hp[j]
		}
	case OpLSTM:
		// ONNX gate order: i, o, f, c.
		i, o, f, g := pre[:h], pre[h:2*h], pre[2*h:3*h], pre[3*h:4*h]
		c = c[:h]
		for j, c0 := range c {
			i[j] += p[j] * c0
			f[j] += p[2*h+j] * c0
		}
		vmath.Sigmoid(i, i)
		vmath.Sigmoid(f, f)
		vmath.Tanh(g, g)
		tc := tmp[:h]
		for j, c0 := range c {
			cn := f[j]*c0 + i[j]*g[j]
			c[j] = cn
			o[j] += p[h+j] * cn
			tc[j] = cn
		}
		vmath.Sigmoid(o, o)
		vmath.Tanh(tc, tc)
		for j := range yt {
			yt[j] = o[j] * tc[j]
		}
	}
}

// rnnPackR returns the recurrent weights r ([G·H, H]) as the B operand of
// each step's product h(t-1)·Rᵀ: packed once into the kernels' panel
// layout when the product is large enough to be packed at all, so the
// steps do not repack R (a GRU's 768×256 matrix, every step), else as
// stored. cand is the candidate gate's rows alone, for a GRU without
// linear_before_reset, whose candidate product takes r ⊙ h(t-1).
func rnnPackR(s *scratch, r []float32, batch, h, gh int, gruReset bool) (all, cand sg.Matrix) {
	pack := func(rows []float32, n int) sg.Matrix {
		m := sg.Matrix{F32: rows, Stride: h, Trans: true}
		if sg.Unpacked(batch, n, h) {
			return m
		}
		nr := sg.PanelWidth()
		buf := s.f32(sg.PackedSize(h, n, nr))
		if sg.PackB(buf, m, h, n, nr) != nil {
			return m // cannot happen for a checked shape; the stored operand is equivalent
		}
		return sg.Packed(buf, h, n, nr)
	}
	all = pack(r[:gh*h], gh)
	if gruReset {
		cand = pack(r[2*h*h:gh*h], h)
	}
	return all, cand
}

// rnnGemm sets c (m×n, row stride ldc) = a (m×k, row-major) · op(b).
func rnnGemm(m, n, k int, a []float32, b sg.Matrix, c []float32, ldc int) {
	err := sg.Gemm(&sg.Call{M: m, N: n, K: k, Alpha: 1, A: sg.Matrix{F32: a, Stride: k}, B: b, C: c, LDC: ldc})
	if err != nil {
		panic("ge: recurrent step product: " + err.Error())
	}
}
