package ge_test

import (
	"math"
	"slices"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// Float64 references of the misc family (reductions, losses,
// quantization, signal), written from the ONNX operator definitions.

func init() {
	for _, op := range []ge.OpType{ge.OpReduceL1, ge.OpReduceL2, ge.OpReduceLogSum, ge.OpReduceLogSumExp,
		ge.OpReduceSumSquare, ge.OpReduceSum, ge.OpReduceMean, ge.OpReduceMax, ge.OpReduceMin, ge.OpReduceProd} {
		refOps[op] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
			return refReduce(op, in[0], a.Ints(ge.AttrAxes), out)
		}
	}
}

// refReduce groups the elements of x by their index with the reduced axes
// dropped and applies the reduction to each group.
func refReduce(op ge.OpType, x refVal, axes []int64, out ge.TensorDesc) refVal {
	red := make([]bool, len(x.dims))
	for _, ax := range axes {
		red[normAxisRef(ax, len(x.dims))] = true
	}
	if len(axes) == 0 {
		for i := range red {
			red[i] = true
		}
	}
	var kept []int64
	for i, d := range x.dims {
		if !red[i] {
			kept = append(kept, d)
		}
	}
	groups := make([][]float64, numel(kept))
	for i, v := range x.v {
		idx := unravel(i, x.dims)
		var k []int
		for j := range idx {
			if !red[j] {
				k = append(k, idx[j])
			}
		}
		g := ravel(k, kept)
		groups[g] = append(groups[g], v)
	}
	res := make([]float64, len(groups))
	for g, vs := range groups {
		var r float64
		switch op {
		case ge.OpReduceSum, ge.OpReduceMean, ge.OpReduceLogSum:
			for _, v := range vs {
				r += v
			}
		case ge.OpReduceL1:
			for _, v := range vs {
				r += math.Abs(v)
			}
		case ge.OpReduceL2, ge.OpReduceSumSquare:
			for _, v := range vs {
				r += v * v
			}
		case ge.OpReduceLogSumExp:
			for _, v := range vs {
				r += math.Exp(v)
			}
			r = math.Log(r)
		case ge.OpReduceMax:
			r = slices.Max(vs)
		case ge.OpReduceMin:
			r = slices.Min(vs)
		case ge.OpReduceProd:
			r = 1
			for _, v := range vs {
				r *= v
			}
		}
		switch op {
		case ge.OpReduceMean:
			r /= float64(len(vs))
		case ge.OpReduceL2:
			r = math.Sqrt(r)
		case ge.OpReduceLogSum:
			r = math.Log(r)
		}
		if isIntRef(out.DataType) {
			r = wrapInt(out.DataType, math.Trunc(r))
		}
		res[g] = r
	}
	return rounded(out.DataType, out.Dims, res)
}

func isIntRef(dt acl.DataType) bool {
	switch dt {
	case acl.Int8, acl.Uint8, acl.Int16, acl.Int32, acl.Int64:
		return true
	}
	return false
}

// wrapInt wraps an integral value into dt's range (two's complement), as
// integer arithmetic does on overflow.
func wrapInt(dt acl.DataType, r float64) float64 {
	switch dt {
	case acl.Int32:
		return float64(int32(int64(r)))
	case acl.Int8:
		return float64(int8(int64(r)))
	case acl.Uint8:
		return float64(uint8(int64(r)))
	case acl.Int16:
		return float64(int16(int64(r)))
	}
	return r
}

func init() {
	refOps[ge.OpNLLLoss] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		x, tg := in[0], in[1]
		n, c := int(x.dims[0]), int(x.dims[1])
		inner := numel(x.dims[2:])
		ig, hasIg := a[ge.AttrIgnoreIndex]
		loss := make([]float64, n*inner)
		var sum, wsum float64
		for i := range loss {
			b, j := i/inner, i%inner
			cls := int(tg.v[i])
			if hasIg && int64(cls) == ig.I {
				continue
			}
			w := 1.0
			if len(in) == 3 {
				w = in[2].v[cls]
			}
			loss[i] = -x.v[(b*c+cls)*inner+j] * w
			sum += loss[i]
			wsum += w
		}
		switch a.String(ge.AttrReduction) {
		case "none":
			return rounded(out.DataType, out.Dims, loss)
		case "sum":
			return rounded(out.DataType, out.Dims, []float64{sum})
		}
		return rounded(out.DataType, out.Dims, []float64{sum / wsum})
	}
}

// quantRange is the range of a quantized type.
func quantRange(dt acl.DataType) (float64, float64) {
	switch dt {
	case acl.Int8:
		return -128, 127
	case acl.Uint8:
		return 0, 255
	case acl.Int16:
		return -32768, 32767
	}
	return math.MinInt32, math.MaxInt32
}

func refSat(dt acl.DataType, v float64) float64 {
	lo, hi := quantRange(dt)
	return math.Max(lo, math.Min(hi, math.RoundToEven(v)))
}

// refChannel maps element i of x to its per-axis parameter index.
func refChannel(i int, x []int64, n int, a ge.Attrs) int {
	if n == 1 {
		return 0
	}
	ax := normAxisRef(a.Int(ge.AttrAxis, 1), len(x))
	return unravel(i, x)[ax]
}

func init() {
	refOps[ge.OpQuantizeLinear] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		res := make([]float64, len(in[0].v))
		for i, x := range in[0].v {
			c := refChannel(i, in[0].dims, len(in[1].v), a)
			res[i] = refSat(out.DataType, math.RoundToEven(float64(float32(x)/float32(in[1].v[c])))+in[2].v[c])
		}
		return refVal{out.DataType, out.Dims, res}
	}
	refOps[ge.OpDequantizeLinear] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		res := make([]float64, len(in[0].v))
		for i, x := range in[0].v {
			c := refChannel(i, in[0].dims, len(in[1].v), a)
			res[i] = (x - in[2].v[c]) * in[1].v[c]
		}
		return rounded(out.DataType, out.Dims, res)
	}
	refOps[ge.OpDynamicQuantizeLinear] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		lo, hi := 0.0, 0.0
		for _, x := range in[0].v {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		scale := float64(float32(hi-lo) / 255)
		zp := refSat(acl.Uint8, float64(-float32(lo)/float32(scale))) // float32 division, as ONNX's reference
		res := make([]float64, len(in[0].v))
		for i, x := range in[0].v {
			res[i] = refSat(acl.Uint8, math.RoundToEven(float64(float32(x)/float32(scale)))+zp)
		}
		return refVal{out.DataType, out.Dims, res}
	}
	qmm := func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		ai, bi, az, bz := 0, 1, 2, 3
		if len(in) == 8 {
			ai, bi, az, bz = 0, 3, 2, 5
		}
		A, B := in[ai], in[bi]
		m, k, n := int(A.dims[len(A.dims)-2]), int(A.dims[len(A.dims)-1]), int(B.dims[len(B.dims)-1])
		res := make([]float64, numel(out.Dims))
		batch := out.Dims[:len(out.Dims)-2]
		for i := range res {
			idx := unravel(i, out.Dims)
			bidx := idx[:len(batch)]
			r, c := idx[len(batch)], idx[len(batch)+1]
			ao := bcastIndex(bidx, A.dims[:len(A.dims)-2]) * m * k
			bo := bcastIndex(bidx, B.dims[:len(B.dims)-2]) * k * n
			za, zb := in[az].v[min(r, len(in[az].v)-1)], in[bz].v[min(c, len(in[bz].v)-1)]
			var s float64
			for p := range k {
				s += (A.v[ao+r*k+p] - za) * (B.v[bo+p*n+c] - zb)
			}
			if len(in) == 8 {
				as, bs := in[1].v[min(r, len(in[1].v)-1)], in[4].v[min(c, len(in[4].v)-1)]
				s = refSat(out.DataType, s*as*bs/in[6].v[0]+in[7].v[0])
			}
			res[i] = s
		}
		return refVal{out.DataType, out.Dims, res}
	}
	refOps[ge.OpMatMulInteger] = qmm
	refOps[ge.OpQLinearMatMul] = qmm
	qconv := func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		xi, wi, xz, wz := 0, 1, 2, 3
		if len(in) >= 8 {
			xi, wi, xz, wz = 0, 3, 2, 5
		}
		X, W := in[xi], in[wi]
		sp := len(X.dims) - 2
		strides, pads, dil := a.Ints(ge.AttrStrides), a.Ints(ge.AttrPads), a.Ints(ge.AttrDilations)
		g := int(a.Int(ge.AttrGroups, 1))
		m, cg := int(W.dims[0]), int(W.dims[1])
		res := make([]float64, numel(out.Dims))
		for i := range res {
			oi := unravel(i, out.Dims)
			b, oc := oi[0], oi[1]
			grp := oc / (m / g)
			zw := in[wz].v[min(oc, len(in[wz].v)-1)]
			var s float64
			for wIdx := range numel(W.dims[1:]) {
				ki := unravel(wIdx, W.dims[1:])
				xidx := []int{b, grp*cg + ki[0]}
				ok := true
				for d := range sp {
					p := oi[2+d]*int(strides[d]) - int(pads[d]) + ki[1+d]*int(dil[d])
					ok = ok && p >= 0 && p < int(X.dims[2+d])
					xidx = append(xidx, p)
				}
				if ok {
					s += (X.v[ravel(xidx, X.dims)] - in[xz].v[0]) * (W.v[oc*numel(W.dims[1:])+wIdx] - zw)
				}
			}
			if len(in) >= 8 {
				if len(in) == 9 {
					s += in[8].v[oc]
				}
				s = refSat(out.DataType, s*in[1].v[0]*in[4].v[min(oc, len(in[4].v)-1)]/in[6].v[0]+in[7].v[0])
			}
			res[i] = s
		}
		return refVal{out.DataType, out.Dims, res}
	}
	refOps[ge.OpConvInteger] = qconv
	refOps[ge.OpQLinearConv] = qconv
}

func init() {
	for _, op := range []ge.OpType{ge.OpRNN, ge.OpGRU, ge.OpLSTM} {
		refOps[op] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
			return refRNN(op, in, a)[0]
		}
	}
}

func refActivation(code int64, alpha, beta, v float64) float64 {
	switch code {
	case ge.RNNActRelu:
		return math.Max(0, v)
	case ge.RNNActTanh:
		return math.Tanh(v)
	case ge.RNNActSigmoid:
		return 1 / (1 + math.Exp(-v))
	case ge.RNNActAffine:
		return alpha*v + beta
	case ge.RNNActLeakyRelu:
		return math.Max(v, 0) + alpha*math.Min(v, 0)
	case ge.RNNActThresholdedRelu:
		if v > alpha {
			return v
		}
		return 0
	case ge.RNNActScaledTanh:
		return alpha * math.Tanh(beta*v)
	case ge.RNNActHardSigmoid:
		return math.Max(0, math.Min(1, alpha*v+beta))
	case ge.RNNActElu:
		if v < 0 {
			return alpha * (math.Exp(v) - 1)
		}
		return v
	case ge.RNNActSoftsign:
		return v / (1 + math.Abs(v))
	case ge.RNNActSoftplus:
		return math.Log(1 + math.Exp(v))
	}
	panic("activation")
}

// refRNN runs the ONNX recurrence equations step by step for every
// direction and returns Y, Y_h (and Y_c).
func refRNN(op ge.OpType, in []refVal, a ge.Attrs) []refVal {
	g := map[ge.OpType]int{ge.OpRNN: 1, ge.OpGRU: 3, ge.OpLSTM: 4}[op]
	nActs := map[ge.OpType]int{ge.OpRNN: 1, ge.OpGRU: 2, ge.OpLSTM: 3}[op]
	req := 5
	if op == ge.OpLSTM {
		req = 7
	}
	X := in[0]
	seq, batch, isz := int(X.dims[0]), int(X.dims[1]), int(X.dims[2])
	h := int(a.Int(ge.AttrHiddenSize, 0))
	dirs := 1
	if a.String(ge.AttrDirection) == "bidirectional" {
		dirs = 2
	}
	acts := a.Ints(ge.AttrActivations)
	if acts == nil {
		def := map[ge.OpType][]int64{ge.OpRNN: {ge.RNNActTanh}, ge.OpGRU: {ge.RNNActSigmoid, ge.RNNActTanh},
			ge.OpLSTM: {ge.RNNActSigmoid, ge.RNNActTanh, ge.RNNActTanh}}[op]
		acts = append(append([]int64{}, def...), def...)
	}
	clip, hasClip := a[ge.AttrClip]
	f := func(dir, k int, v float64) float64 {
		if hasClip {
			v = math.Max(-clip.F, math.Min(clip.F, v))
		}
		i := dir*nActs + k
		code := acts[i]
		da, db := map[int64]float64{ge.RNNActAffine: 1, ge.RNNActLeakyRelu: 0.01, ge.RNNActThresholdedRelu: 1,
			ge.RNNActScaledTanh: 1, ge.RNNActHardSigmoid: 0.2, ge.RNNActElu: 1}[code],
			map[int64]float64{ge.RNNActScaledTanh: 1, ge.RNNActHardSigmoid: 0.5}[code]
		return refActivation(code, a.Float(ge.RNNActAlpha(i), da), a.Float(ge.RNNActBeta(i), db), v)
	}
	lens := make([]int, batch)
	for i := range lens {
		lens[i] = seq
		if len(in) > req {
			lens[i] = int(in[req].v[i])
		}
	}
	W, R, B, H0 := in[1].v, in[2].v, in[3].v, in[4].v
	Y := make([]float64, seq*dirs*batch*h)
	YH := make([]float64, dirs*batch*h)
	YC := make([]float64, dirs*batch*h)
	// dot of row k of a [G·H, n] matrix of direction dir with v.
	dot := func(m []float64, dir, rows, n, k int, v []float64) float64 {
		var s float64
		for j := range n {
			s += m[(dir*rows+k)*n+j] * v[j]
		}
		return s
	}
	for dir := range dirs {
		rev := dir == 1 || a.String(ge.AttrDirection) == "reverse"
		for n := range batch {
			hp := append([]float64{}, H0[(dir*batch+n)*h:(dir*batch+n+1)*h]...)
			cp := make([]float64, h)
			if op == ge.OpLSTM {
				copy(cp, in[5].v[(dir*batch+n)*h:])
			}
			for step := range lens[n] {
				tm := step
				if rev {
					tm = lens[n] - 1 - step
				}
				xt := X.v[(tm*batch+n)*isz : (tm*batch+n+1)*isz]
				wb := func(k int) float64 { return B[dir*2*g*h+k] }
				rb := func(k int) float64 { return B[dir*2*g*h+g*h+k] }
				hn := make([]float64, h)
				switch op {
				case ge.OpRNN:
					for j := range h {
						hn[j] = f(dir, 0, dot(W, dir, g*h, isz, j, xt)+dot(R, dir, g*h, h, j, hp)+wb(j)+rb(j))
					}
				case ge.OpGRU:
					z, r := make([]float64, h), make([]float64, h)
					for j := range h {
						z[j] = f(dir, 0, dot(W, dir, g*h, isz, j, xt)+dot(R, dir, g*h, h, j, hp)+wb(j)+rb(j))
						r[j] = f(dir, 0, dot(W, dir, g*h, isz, h+j, xt)+dot(R, dir, g*h, h, h+j, hp)+wb(h+j)+rb(h+j))
					}
					rh := make([]float64, h)
					for j := range h {
						rh[j] = r[j] * hp[j]
					}
					for j := range h {
						var c float64
						if a.Bool(ge.AttrLinearBeforeReset) {
							c = f(dir, 1, dot(W, dir, g*h, isz, 2*h+j, xt)+r[j]*(dot(R, dir, g*h, h, 2*h+j, hp)+rb(2*h+j))+wb(2*h+j))
						} else {
							c = f(dir, 1, dot(W, dir, g*h, isz, 2*h+j, xt)+dot(R, dir, g*h, h, 2*h+j, rh)+rb(2*h+j)+wb(2*h+j))
						}
						hn[j] = (1-z[j])*c + z[j]*hp[j]
					}
				case ge.OpLSTM:
					P := in[6].v[dir*3*h:]
					gate := func(k, j int) float64 {
						return dot(W, dir, g*h, isz, k*h+j, xt) + dot(R, dir, g*h, h, k*h+j, hp) + wb(k*h+j) + rb(k*h+j)
					}
					for j := range h {
						i := f(dir, 0, gate(0, j)+P[j]*cp[j])
						fg := f(dir, 0, gate(2, j)+P[2*h+j]*cp[j])
						c := fg*cp[j] + i*f(dir, 1, gate(3, j))
						o := f(dir, 0, gate(1, j)+P[h+j]*c)
						cp[j] = c
						hn[j] = o * f(dir, 2, c)
					}
				}
				hp = hn
				copy(Y[((tm*dirs+dir)*batch+n)*h:], hn)
			}
			copy(YH[(dir*batch+n)*h:], hp)
			copy(YC[(dir*batch+n)*h:], cp)
		}
	}
	dt := X.dt
	out := []refVal{rounded(dt, []int64{int64(seq), int64(dirs), int64(batch), int64(h)}, Y),
		rounded(dt, []int64{int64(dirs), int64(batch), int64(h)}, YH)}
	if op == ge.OpLSTM {
		out = append(out, rounded(dt, []int64{int64(dirs), int64(batch), int64(h)}, YC))
	}
	return out
}

// refDFT is the textbook transform of n complex values into bins, with
// the twiddles computed directly from the angle.
func refDFT(re, im []float64, n, bins int, inverse bool) ([]float64, []float64) {
	or, oi := make([]float64, bins), make([]float64, bins)
	sign, scale := -1.0, 1.0
	if inverse {
		sign, scale = 1, 1/float64(n)
	}
	for k := range bins {
		for j := range n {
			ang := sign * 2 * math.Pi * float64(j) * float64(k) / float64(n)
			or[k] += (re[j]*math.Cos(ang) - im[j]*math.Sin(ang)) * scale
			oi[k] += (re[j]*math.Sin(ang) + im[j]*math.Cos(ang)) * scale
		}
	}
	return or, oi
}

func init() {
	refOps[ge.OpDFT] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		x := in[0]
		r := len(x.dims)
		axis := normAxisRef(a.Int(ge.AttrAxis, 1), r)
		n := int(a.Int(ge.AttrLength, 0))
		if n == 0 {
			n = int(x.dims[axis])
		}
		res := make([]float64, numel(out.Dims))
		// One transform per index of the other signal dims.
		other := append([]int64{}, x.dims[:r-1]...)
		other[axis] = 1
		for o := range numel(other) {
			idx := unravel(o, other)
			re, im := make([]float64, n), make([]float64, n)
			for j := range min(n, int(x.dims[axis])) {
				idx[axis] = j
				xi := append(append([]int{}, idx...), 0)
				re[j] = x.v[ravel(xi, x.dims)]
				if x.dims[r-1] == 2 {
					xi[r-1] = 1
					im[j] = x.v[ravel(xi, x.dims)]
				}
			}
			or, oi := refDFT(re, im, n, int(out.Dims[axis]), a.Bool(ge.AttrInverse))
			for k := range or {
				idx[axis] = k
				res[ravel(append(append([]int{}, idx...), 0), out.Dims)] = or[k]
				res[ravel(append(append([]int{}, idx...), 1), out.Dims)] = oi[k]
			}
		}
		return rounded(out.DataType, out.Dims, res)
	}
	refOps[ge.OpSTFT] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		x := in[0]
		step, fl := int(a.Int(ge.AttrFrameStep, 0)), int(a.Int(ge.AttrFrameLength, 0))
		res := make([]float64, numel(out.Dims))
		batch, frames, bins := int(out.Dims[0]), int(out.Dims[1]), int(out.Dims[2])
		comp := int(x.dims[2])
		for b := range batch {
			for f := range frames {
				re, im := make([]float64, fl), make([]float64, fl)
				for j := range fl {
					w := 1.0
					if len(in) == 2 {
						w = in[1].v[j]
					}
					re[j] = x.v[(b*int(x.dims[1])+f*step+j)*comp] * w
					if comp == 2 {
						im[j] = x.v[(b*int(x.dims[1])+f*step+j)*comp+1] * w
					}
				}
				or, oi := refDFT(re, im, fl, bins, false)
				for k := range bins {
					res[((b*frames+f)*bins+k)*2], res[((b*frames+f)*bins+k)*2+1] = or[k], oi[k]
				}
			}
		}
		return rounded(out.DataType, out.Dims, res)
	}
}
