package ge_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/floatx"
	"github.com/ascend-go/cann/ge"
)

// This file is the float64 reference the kernels are tested against. It is
// written from the op definitions, independently of the kernels: every op
// works on flat float64 slices through multi-index arithmetic, and each
// result is rounded once to the op's storage type.

type refVal struct {
	dt   acl.DataType
	dims []int64
	v    []float64
}

func numel(d []int64) int {
	n := 1
	for _, x := range d {
		n *= int(x)
	}
	return n
}

func unravel(i int, dims []int64) []int {
	idx := make([]int, len(dims))
	for k := len(dims) - 1; k >= 0; k-- {
		idx[k] = i % int(dims[k])
		i /= int(dims[k])
	}
	return idx
}

func ravel(idx []int, dims []int64) int {
	f := 0
	for k := range dims {
		f = f*int(dims[k]) + idx[k]
	}
	return f
}

// bcastIndex maps an output multi-index to the flat index of an operand
// with dims d under numpy broadcasting.
func bcastIndex(idx []int, d []int64) int {
	sub := make([]int, len(d))
	off := len(idx) - len(d)
	for k := range d {
		if d[k] != 1 {
			sub[k] = idx[off+k]
		}
	}
	return ravel(sub, d)
}

func decodeAll(dt acl.DataType, b []byte, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		switch dt {
		case acl.Float32:
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		case acl.Float64:
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		case acl.Float16:
			v[i] = float64(floatx.F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
		case acl.BFloat16:
			v[i] = float64(floatx.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
		case acl.Float8E4M3FN:
			v[i] = float64(floatx.E4M3FNToF32(b[i]))
		case acl.Float8E5M2:
			v[i] = float64(floatx.E5M2ToF32(b[i]))
		case acl.Int8:
			v[i] = float64(int8(b[i]))
		case acl.Uint8:
			v[i] = float64(b[i])
		case acl.Bool:
			if b[i] != 0 {
				v[i] = 1
			}
		case acl.Int16:
			v[i] = float64(int16(binary.LittleEndian.Uint16(b[2*i:])))
		case acl.Int32:
			v[i] = float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case acl.Int64:
			v[i] = float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
		case acl.Uint16:
			v[i] = float64(binary.LittleEndian.Uint16(b[2*i:]))
		case acl.Uint32:
			v[i] = float64(binary.LittleEndian.Uint32(b[4*i:]))
		case acl.Uint64:
			v[i] = float64(binary.LittleEndian.Uint64(b[8*i:]))
		default:
			panic("decodeAll: " + dt.String())
		}
	}
	return v
}

// roundTo rounds x to the precision of float type dt.
func roundTo(dt acl.DataType, x float64) float64 {
	switch dt {
	case acl.Float32:
		return float64(float32(x))
	case acl.Float16:
		return float64(floatx.F16ToF32(floatx.F64ToF16(x)))
	case acl.BFloat16:
		return float64(floatx.BF16ToF32(floatx.F64ToBF16(x)))
	}
	return x
}

func rounded(dt acl.DataType, dims []int64, v []float64) refVal {
	for i := range v {
		v[i] = roundTo(dt, v[i])
	}
	return refVal{dt, dims, v}
}

// encodeFloats stores float values as dt bytes, rounding to nearest even.
func encodeFloats(dt acl.DataType, v []float64) []byte {
	b := make([]byte, len(v)*dt.Size())
	for i, x := range v {
		switch dt {
		case acl.Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
		case acl.Float16:
			binary.LittleEndian.PutUint16(b[2*i:], floatx.F64ToF16(x))
		case acl.BFloat16:
			binary.LittleEndian.PutUint16(b[2*i:], floatx.F64ToBF16(x))
		case acl.Int32:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(x)))
		case acl.Int64:
			binary.LittleEndian.PutUint64(b[8*i:], uint64(int64(x)))
		default:
			panic("encodeFloats: " + dt.String())
		}
	}
	return b
}

// randInput returns random bytes for a tensor: normal floats with sd, or
// ints in [0, 10).
func randInput(r *rand.Rand, dt acl.DataType, dims []int64, sd float64) []byte {
	v := make([]float64, numel(dims))
	for i := range v {
		if dt == acl.Int32 || dt == acl.Int64 {
			v[i] = float64(r.IntN(10))
		} else {
			v[i] = r.NormFloat64() * sd
		}
	}
	return encodeFloats(dt, v)
}

func refMatMul(a, b refVal, ta, tb bool) refVal {
	ad, bd := a.dims, b.dims
	m, k := ad[len(ad)-2], ad[len(ad)-1]
	if ta {
		m, k = k, m
	}
	n := bd[len(bd)-1]
	if tb {
		n = bd[len(bd)-2]
	}
	ab, bb := ad[:len(ad)-2], bd[:len(bd)-2]
	nb := max(len(ab), len(bb))
	batch := make([]int64, nb)
	for i := range batch {
		x, y := int64(1), int64(1)
		if j := i - nb + len(ab); j >= 0 {
			x = ab[j]
		}
		if j := i - nb + len(bb); j >= 0 {
			y = bb[j]
		}
		batch[i] = max(x, y)
	}
	out := make([]float64, numel(batch)*int(m*n))
	for bi := range numel(batch) {
		idx := unravel(bi, batch)
		ao := bcastIndex(idx, ab) * int(m*k)
		bo := bcastIndex(idx, bb) * int(k*n)
		for i := range int(m) {
			for j := range int(n) {
				var s float64
				for p := range int(k) {
					av := a.v[ao+i*int(k)+p]
					if ta {
						av = a.v[ao+p*int(m)+i]
					}
					bv := b.v[bo+p*int(n)+j]
					if tb {
						bv = b.v[bo+j*int(k)+p]
					}
					s += av * bv
				}
				out[bi*int(m*n)+i*int(n)+j] = s
			}
		}
	}
	return rounded(a.dt, append(append([]int64{}, batch...), m, n), out)
}

func refBinary(op ge.OpType, a, b refVal) refVal {
	r := max(len(a.dims), len(b.dims))
	dims := make([]int64, r)
	for i := range dims {
		x, y := int64(1), int64(1)
		if j := i - r + len(a.dims); j >= 0 {
			x = a.dims[j]
		}
		if j := i - r + len(b.dims); j >= 0 {
			y = b.dims[j]
		}
		dims[i] = max(x, y)
	}
	out := make([]float64, numel(dims))
	for i := range out {
		idx := unravel(i, dims)
		x, y := a.v[bcastIndex(idx, a.dims)], b.v[bcastIndex(idx, b.dims)]
		switch op {
		case ge.OpAdd:
			out[i] = x + y
		case ge.OpSub:
			out[i] = x - y
		case ge.OpMul:
			out[i] = x * y
		case ge.OpDiv:
			out[i] = x / y
		}
	}
	return rounded(a.dt, dims, out)
}

func refUnary(op ge.OpType, a refVal) refVal {
	out := make([]float64, len(a.v))
	for i, x := range a.v {
		switch op {
		case ge.OpRelu:
			out[i] = math.Max(x, 0)
		case ge.OpGelu:
			out[i] = 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*math.Pow(x, 3))))
		case ge.OpSilu:
			out[i] = x / (1 + math.Exp(-x))
		}
	}
	return rounded(a.dt, a.dims, out)
}

func normAxisRef(axis int64, r int) int {
	if axis < 0 {
		axis += int64(r)
	}
	return int(axis)
}

func refSoftmax(a refVal, axis int) refVal {
	out := make([]float64, len(a.v))
	for i := range out {
		idx := unravel(i, a.dims)
		mx := math.Inf(-1)
		for j := range int(a.dims[axis]) {
			idx[axis] = j
			mx = math.Max(mx, a.v[ravel(idx, a.dims)])
		}
		var sum float64
		for j := range int(a.dims[axis]) {
			idx[axis] = j
			sum += math.Exp(a.v[ravel(idx, a.dims)] - mx)
		}
		out[i] = math.Exp(a.v[i]-mx) / sum
	}
	return rounded(a.dt, a.dims, out)
}

func refNorm(x, gamma refVal, beta *refVal, eps float64) refVal {
	l := int(x.dims[len(x.dims)-1])
	out := make([]float64, len(x.v))
	for r0 := 0; r0 < len(x.v); r0 += l {
		row := x.v[r0 : r0+l]
		mean, ms := 0.0, 0.0
		for _, v := range row {
			mean += v / float64(l)
		}
		if beta == nil {
			mean = 0
		}
		for _, v := range row {
			ms += (v - mean) * (v - mean) / float64(l)
		}
		for j, v := range row {
			y := (v - mean) / math.Sqrt(ms+eps) * gamma.v[j]
			if beta != nil {
				y += beta.v[j]
			}
			out[r0+j] = y
		}
	}
	return rounded(x.dt, x.dims, out)
}

func refGather(p, idx refVal, axis int) (refVal, error) {
	dims := append(append(append([]int64{}, p.dims[:axis]...), idx.dims...), p.dims[axis+1:]...)
	out := make([]float64, numel(dims))
	for i := range out {
		oi := unravel(i, dims)
		pi := append([]int{}, oi[:axis]...)
		k := int(idx.v[ravel(oi[axis:axis+len(idx.dims)], idx.dims)])
		if k < 0 || k >= int(p.dims[axis]) {
			return refVal{}, fmt.Errorf("index %d out of range", k)
		}
		pi = append(append(pi, k), oi[axis+len(idx.dims):]...)
		out[i] = p.v[ravel(pi, p.dims)]
	}
	return refVal{p.dt, dims, out}, nil
}

func refConcat(xs []refVal, axis int) refVal {
	dims := append([]int64{}, xs[0].dims...)
	for _, x := range xs[1:] {
		dims[axis] += x.dims[axis]
	}
	out := make([]float64, numel(dims))
	for i := range out {
		idx := unravel(i, dims)
		j := idx[axis]
		for _, x := range xs {
			if j < int(x.dims[axis]) {
				idx[axis] = j
				out[i] = x.v[ravel(idx, x.dims)]
				break
			}
			j -= int(x.dims[axis])
		}
	}
	return refVal{xs[0].dt, dims, out}
}

func refSlice(x refVal, begin, size []int64) refVal {
	sz := append([]int64{}, size...)
	for i := range sz {
		if sz[i] == -1 {
			sz[i] = x.dims[i] - begin[i]
		}
	}
	out := make([]float64, numel(sz))
	for i := range out {
		idx := unravel(i, sz)
		for k := range idx {
			idx[k] += int(begin[k])
		}
		out[i] = x.v[ravel(idx, x.dims)]
	}
	return refVal{x.dt, sz, out}
}

// refOps holds the float64 references of ops added after 0.1.0, one file
// per family registering its ops in init: in are the op's inputs, a its
// attributes and out its inferred output (dims and type to produce).
var refOps = map[ge.OpType]func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal{}

// refEval evaluates a graph (built in topological order) in float64 and
// returns the values of its NetOutput inputs.
func refEval(t testing.TB, g *ge.Graph, inputs [][]byte) []refVal {
	vals := map[*ge.Tensor]refVal{}
	var outs []refVal
	for _, n := range g.Nodes() {
		in := make([]refVal, len(n.Inputs()))
		for i, x := range n.Inputs() {
			in[i] = vals[x]
		}
		a := n.Attrs()
		var o refVal
		switch n.Op() {
		case ge.OpData:
			d := n.Output(0).Desc()
			o = refVal{d.DataType, d.Dims, decodeAll(d.DataType, inputs[a.Int(ge.AttrIndex, 0)], numel(d.Dims))}
		case ge.OpConst:
			d := n.Output(0).Desc()
			o = refVal{d.DataType, d.Dims, decodeAll(d.DataType, n.Value(), numel(d.Dims))}
		case ge.OpNetOutput:
			outs = in
			continue
		case ge.OpMatMul:
			o = refMatMul(in[0], in[1], a.Bool(ge.AttrTransposeA), a.Bool(ge.AttrTransposeB))
		case ge.OpAdd, ge.OpSub, ge.OpMul, ge.OpDiv:
			o = refBinary(n.Op(), in[0], in[1])
		case ge.OpRelu, ge.OpGelu, ge.OpSilu:
			o = refUnary(n.Op(), in[0])
		case ge.OpSoftmax:
			o = refSoftmax(in[0], normAxisRef(a.Int(ge.AttrAxis, -1), len(in[0].dims)))
		case ge.OpLayerNorm:
			o = refNorm(in[0], in[1], &in[2], a.Float(ge.AttrEpsilon, 0))
		case ge.OpRMSNorm:
			o = refNorm(in[0], in[1], nil, a.Float(ge.AttrEpsilon, 0))
		case ge.OpGather:
			var err error
			o, err = refGather(in[0], in[1], normAxisRef(a.Int(ge.AttrAxis, 0), len(in[0].dims)))
			require.NoError(t, err)
		case ge.OpReshape, ge.OpIdentity:
			o = refVal{in[0].dt, n.Output(0).Desc().Dims, in[0].v}
		case ge.OpConcat:
			o = refConcat(in, normAxisRef(a.Int(ge.AttrAxis, 0), len(in[0].dims)))
		case ge.OpSlice:
			o = refSlice(in[0], a.Ints(ge.AttrBegin), a.Ints(ge.AttrSize))
		default:
			f := refOps[n.Op()]
			if f == nil {
				t.Fatalf("refEval: op %s", n.Op())
			}
			o = f(t, in, a, n.Output(0).Desc())
		}
		vals[n.Output(0)] = o
	}
	return outs
}

// tolerance per storage type: about one unit in the last place.
func tolerance(dt acl.DataType) float64 {
	switch dt {
	case acl.Float16:
		return 1e-3
	case acl.BFloat16:
		return 1e-2
	}
	return 1e-5
}

// requireClose compares got (bytes of dt) with the reference: every element
// within tol·|want| + tol·rms(want), the second term absorbing cancellation
// near zero.
func requireClose(t testing.TB, want refVal, got []byte, tol float64, what string) {
	t.Helper()
	g := decodeAll(want.dt, got, len(want.v))
	var rms float64
	finite := 0
	for _, w := range want.v {
		if !math.IsInf(w, 0) && !math.IsNaN(w) {
			rms += w * w
			finite++
		}
	}
	rms = math.Sqrt(rms / float64(max(finite, 1)))
	bad, first := 0, -1
	for i, w := range want.v {
		if (math.IsNaN(w) && math.IsNaN(g[i])) || (math.IsInf(w, 0) && w == g[i]) {
			continue
		}
		if !(math.Abs(g[i]-w) <= tol*math.Abs(w)+tol*rms) {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	if bad > 0 {
		require.Failf(t, "mismatch", "%s: %d of %d elements off (tol %g, rms %g); first at %d: got %v want %v",
			what, bad, len(want.v), tol, rms, first, g[first], want.v[first])
	}
}
