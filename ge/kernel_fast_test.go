package ge_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// The float32 kernels of kernel_fastunary.go, kernel_dwconv.go,
// kernel_pool.go and kernel_elementwise.go against float64 references
// written here, on fresh random data.

func f32Tensor(dims []int64, v []float32) ge.HostTensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Format: acl.FormatND, Dims: dims}, Data: b}
}

func f32s(t ge.HostTensor) []float32 {
	v := make([]float32, len(t.Data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v
}

func randF32(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * 2)
	}
	return v
}

func closeTo(t *testing.T, got []float32, want []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i, w := range want {
		g := float64(got[i])
		if math.IsNaN(w) {
			require.True(t, math.IsNaN(g), "%s[%d]: %g, want NaN", what, i, g)
			continue
		}
		require.InDelta(t, w, g, tol*(1+math.Abs(w)), "%s[%d]", what, i)
	}
}

func TestFastUnaryMatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
	x := randF32(rng, 3000)
	x[0], x[1] = float32(math.NaN()), 0
	for _, c := range []struct {
		op    ge.OpType
		attrs ge.Attrs
		f     func(float64) float64
	}{
		{ge.OpSigmoid, nil, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{ge.OpTanh, nil, math.Tanh},
		{ge.OpErf, nil, math.Erf},
		{ge.OpExp, nil, math.Exp},
		{ge.OpHardSigmoid, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.3), ge.AttrBeta: ge.FloatAttr(0.4)},
			func(v float64) float64 { return math.Max(0, math.Min(1, 0.3*v+0.4)) }},
		{ge.OpHardSwish, nil, func(v float64) float64 { return v * math.Max(0, math.Min(1, v/6+0.5)) }},
		{ge.OpGeluErf, nil, func(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) }},
	} {
		out, err := ge.EvalOp(c.op, c.attrs, []ge.HostTensor{f32Tensor([]int64{3, 1000}, x)})
		require.NoError(t, err, c.op.String())
		want := make([]float64, len(x))
		for i, v := range x {
			want[i] = c.f(float64(v))
		}
		closeTo(t, f32s(out[0]), want, 1e-6, c.op.String())
	}
}

// poolRef is max/average pooling of a [N,C,H,W] tensor in float64, taps
// enumerated over the whole (dilated) window.
func poolRef(x []float32, n, c, h, w int, k, s, d, pads []int, ceil, isMax, incl bool) ([]float64, int, int) {
	out := func(in, k, s, d, pb, pe int) int {
		e := (k-1)*d + 1
		num := in + pb + pe - e
		o := num/s + 1
		if ceil && num%s != 0 {
			o++
			if (o-1)*s >= in+pb {
				o--
			}
		}
		return o
	}
	oh, ow := out(h, k[0], s[0], d[0], pads[0], pads[2]), out(w, k[1], s[1], d[1], pads[1], pads[3])
	var res []float64
	for p := range n * c {
		for y := range oh {
			for xo := range ow {
				acc, cnt, padCnt := 0.0, 0, 0
				if isMax {
					acc = math.Inf(-1)
				}
				for a := range k[0] {
					for b := range k[1] {
						iy, ix := y*s[0]-pads[0]+a*d[0], xo*s[1]-pads[1]+b*d[1]
						if iy < h+pads[2] && ix < w+pads[3] {
							padCnt++
						}
						if iy < 0 || iy >= h || ix < 0 || ix >= w {
							continue
						}
						v := float64(x[(p*h+iy)*w+ix])
						if isMax {
							acc = math.Max(acc, v)
						} else {
							acc += v
						}
						cnt++
					}
				}
				switch {
				case isMax:
				case incl:
					acc /= float64(padCnt)
				default:
					acc /= float64(cnt)
				}
				res = append(res, acc)
			}
		}
	}
	return res, oh, ow
}

func TestPoolMatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 2))
	for _, c := range []struct {
		k, s, d, pads []int
		ceil, incl    bool
	}{
		{[]int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1, 1, 1}, false, false},
		{[]int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1, 1, 1}, true, true},
		{[]int{2, 3}, []int{1, 2}, []int{2, 1}, []int{0, 1, 1, 0}, true, false},
		{[]int{7, 9}, []int{1, 1}, []int{1, 1}, []int{0, 0, 0, 0}, false, false}, // global
		{[]int{3, 2}, []int{3, 1}, []int{1, 2}, []int{2, 0, 2, 1}, false, true},
	} {
		x := randF32(rng, 2*3*7*9)
		for _, op := range []ge.OpType{ge.OpMaxPool, ge.OpAvgPool} {
			attrs := ge.Attrs{ge.AttrKernelShape: ge.IntsAttr(i64(c.k)), ge.AttrStrides: ge.IntsAttr(i64(c.s)),
				ge.AttrPads: ge.IntsAttr(i64(c.pads)), ge.AttrCeilMode: ge.BoolAttr(c.ceil)}
			if op == ge.OpMaxPool {
				attrs[ge.AttrDilations] = ge.IntsAttr(i64(c.d))
			} else {
				c.d = []int{1, 1}
				attrs[ge.AttrCountIncludePad] = ge.BoolAttr(c.incl)
			}
			out, err := ge.EvalOp(op, attrs, []ge.HostTensor{f32Tensor([]int64{2, 3, 7, 9}, x)})
			require.NoError(t, err, "%s %+v", op, c)
			want, oh, ow := poolRef(x, 2, 3, 7, 9, c.k, c.s, c.d, c.pads, c.ceil, op == ge.OpMaxPool, c.incl)
			require.Equal(t, []int64{2, 3, int64(oh), int64(ow)}, out[0].Desc.Dims, "%s %+v", op, c)
			closeTo(t, f32s(out[0]), want, 1e-6, op.String())
		}
	}
}

func i64(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// convRef is a grouped 2-D convolution in float64.
func convRef(x, w []float32, n, c, h, wd, m, groups, kh, kw, s, pad, dil int) ([]float64, int, int) {
	oh, ow := (h+2*pad-(kh-1)*dil-1)/s+1, (wd+2*pad-(kw-1)*dil-1)/s+1
	cg, mg := c/groups, m/groups
	out := make([]float64, n*m*oh*ow)
	for b := range n {
		for oc := range m {
			g := oc / mg
			for y := range oh {
				for xo := range ow {
					var acc float64
					for ic := range cg {
						for a := range kh {
							for e := range kw {
								iy, ix := y*s-pad+a*dil, xo*s-pad+e*dil
								if iy < 0 || iy >= h || ix < 0 || ix >= wd {
									continue
								}
								acc += float64(x[((b*c+g*cg+ic)*h+iy)*wd+ix]) * float64(w[((oc*cg+ic)*kh+a)*kw+e])
							}
						}
					}
					out[((b*m+oc)*oh+y)*ow+xo] = acc
				}
			}
		}
	}
	return out, oh, ow
}

func TestDepthwiseConvMatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 3))
	for _, c := range []struct{ c, m, k, s, pad, dil int }{
		{8, 8, 3, 1, 1, 1}, {6, 12, 3, 2, 1, 1}, {4, 4, 5, 2, 2, 2}, {5, 5, 3, 3, 0, 1},
	} {
		x := randF32(rng, 2*c.c*9*11)
		w := randF32(rng, c.m*c.k*c.k)
		attrs := ge.Attrs{ge.AttrGroups: ge.IntAttr(int64(c.c)), ge.AttrStrides: ge.IntsAttr([]int64{int64(c.s), int64(c.s)}),
			ge.AttrPads:      ge.IntsAttr([]int64{int64(c.pad), int64(c.pad), int64(c.pad), int64(c.pad)}),
			ge.AttrDilations: ge.IntsAttr([]int64{int64(c.dil), int64(c.dil)})}
		out, err := ge.EvalOp(ge.OpConv, attrs, []ge.HostTensor{f32Tensor([]int64{2, int64(c.c), 9, 11}, x),
			f32Tensor([]int64{int64(c.m), 1, int64(c.k), int64(c.k)}, w)})
		require.NoError(t, err, "%+v", c)
		want, oh, ow := convRef(x, w, 2, c.c, 9, 11, c.m, c.c, c.k, c.k, c.s, c.pad, c.dil)
		require.Equal(t, []int64{2, int64(c.m), int64(oh), int64(ow)}, out[0].Desc.Dims)
		closeTo(t, f32s(out[0]), want, 1e-5, "depthwise conv")
	}
}

// TestConvTransposeMatchesFloat64: ConvTranspose against its definition,
// every input tap scattered into the output (grouped, strided, padded).
func TestConvTransposeMatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 4))
	const n, c, h, wd, mg, groups, k, s, pad = 2, 4, 5, 6, 3, 2, 3, 2, 1
	x := randF32(rng, n*c*h*wd)
	w := randF32(rng, c*mg*k*k)
	attrs := ge.Attrs{ge.AttrGroups: ge.IntAttr(groups), ge.AttrStrides: ge.IntsAttr([]int64{s, s}),
		ge.AttrPads: ge.IntsAttr([]int64{pad, pad, pad, pad})}
	out, err := ge.EvalOp(ge.OpConvTranspose, attrs, []ge.HostTensor{f32Tensor([]int64{n, c, h, wd}, x),
		f32Tensor([]int64{c, mg, k, k}, w)})
	require.NoError(t, err)
	oh, ow := (h-1)*s-2*pad+k, (wd-1)*s-2*pad+k
	m, cg := mg*groups, c/groups
	want := make([]float64, n*m*oh*ow)
	for b := range n {
		for ic := range c {
			g := ic / cg
			for j := range mg {
				for y := range h {
					for xi := range wd {
						for a := range k {
							for e := range k {
								oy, ox := y*s-pad+a, xi*s-pad+e
								if oy < 0 || oy >= oh || ox < 0 || ox >= ow {
									continue
								}
								want[((b*m+g*mg+j)*oh+oy)*ow+ox] += float64(x[((b*c+ic)*h+y)*wd+xi]) * float64(w[((ic*mg+j)*k+a)*k+e])
							}
						}
					}
				}
			}
		}
	}
	require.Equal(t, []int64{n, int64(m), int64(oh), int64(ow)}, out[0].Desc.Dims)
	closeTo(t, f32s(out[0]), want, 1e-5, "conv transpose")
}

// TestPowScalarBitsOfMathPow: x², x³ and √x give exactly the bits of
// float32(math.Pow), special values included.
func TestPowScalarBitsOfMathPow(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 5))
	x := randF32(rng, 1000)
	copy(x, []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -3, 1e-30, 3e30})
	for _, y := range []float32{1, 2, 3, 0.5, 1.5} {
		out, err := ge.EvalOp(ge.OpPow, nil, []ge.HostTensor{f32Tensor([]int64{1000}, x), f32Tensor(nil, []float32{y})})
		require.NoError(t, err)
		for i, g := range f32s(out[0]) {
			w := float32(math.Pow(float64(x[i]), float64(y)))
			require.True(t, math.Float32bits(g) == math.Float32bits(w) || g != g && w != w, "pow(%g, %g) = %g, want %g", x[i], y, g, w)
		}
	}
}

// TestBroadcastBinaryCoalesced: broadcasts whose dims merge (a
// squeeze-excite scale, a bias over rows, a scalar-shaped left operand)
// give a[i] op b[j] at every index.
func TestBroadcastBinaryCoalesced(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 6))
	for _, c := range []struct{ a, b []int64 }{
		{[]int64{2, 3, 4, 5}, []int64{2, 3, 1, 1}},
		{[]int64{2, 3, 4, 5}, []int64{1, 3, 1, 5}},
		{[]int64{1, 1, 4, 1}, []int64{2, 3, 4, 5}},
		{[]int64{2, 1, 4, 5}, []int64{3, 1, 1}},
		{[]int64{6, 1}, []int64{1, 7}},
	} {
		na, nb := 1, 1
		for _, d := range c.a {
			na *= int(d)
		}
		for _, d := range c.b {
			nb *= int(d)
		}
		a, b := randF32(rng, na), randF32(rng, nb)
		for _, op := range []ge.OpType{ge.OpAdd, ge.OpSub, ge.OpMul, ge.OpDiv} {
			out, err := ge.EvalOp(op, nil, []ge.HostTensor{f32Tensor(c.a, a), f32Tensor(c.b, b)})
			require.NoError(t, err)
			od := out[0].Desc.Dims
			got := f32s(out[0])
			at := func(v []float32, d []int64, idx []int) float32 {
				off, st := 0, 1
				for i := len(d) - 1; i >= 0; i-- {
					j := idx[len(idx)-len(d)+i]
					if d[i] == 1 {
						j = 0
					}
					off += j * st
					st *= int(d[i])
				}
				return v[off]
			}
			idx := make([]int, len(od))
			for i := range got {
				x, y := at(a, c.a, idx), at(b, c.b, idx)
				var w float32
				switch op {
				case ge.OpAdd:
					w = x + y
				case ge.OpSub:
					w = x - y
				case ge.OpMul:
					w = x * y
				default:
					w = x / y
				}
				require.Equal(t, w, got[i], "%v %s %v at %v", c.a, op, c.b, idx)
				for d := len(od) - 1; d >= 0; d-- {
					if idx[d]++; idx[d] < int(od[d]) {
						break
					}
					idx[d] = 0
				}
			}
		}
	}
}

// TestReduceTrailingRows: reductions over a contiguous block of axes
// (trailing: the row path; inner axes kept: the block path) against
// float64 sums, NaN kept by Max and Min.
func TestReduceTrailingRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 8))
	x := randF32(rng, 4*3*5*6)
	x[7] = float32(math.NaN())
	for _, op := range []ge.OpType{ge.OpReduceMean, ge.OpReduceSum, ge.OpReduceMax, ge.OpReduceMin, ge.OpReduceSumSquare, ge.OpReduceL1, ge.OpReduceL2} {
		for _, c := range []struct {
			axes  []int64
			inner int
		}{{[]int64{3}, 1}, {[]int64{2, 3}, 1}, {[]int64{-1, -2, -3}, 1}, {[]int64{1, 2}, 6}, {[]int64{1}, 30}, {[]int64{0}, 90}} {
			axes := c.axes
			out, err := ge.EvalOp(op, ge.Attrs{ge.AttrAxes: ge.IntsAttr(axes), ge.AttrKeepDims: ge.BoolAttr(true)},
				[]ge.HostTensor{f32Tensor([]int64{4, 3, 5, 6}, x)})
			require.NoError(t, err)
			l := 1
			for _, a := range axes {
				l *= []int{4, 3, 5, 6}[(a+4)%4]
			}
			want := make([]float64, len(x)/l)
			for o := range want {
				ob, oi := o/c.inner, o%c.inner
				row := make([]float32, l)
				for r := range row {
					row[r] = x[(ob*l+r)*c.inner+oi]
				}
				acc := 0.0
				switch op {
				case ge.OpReduceMax:
					acc = math.Inf(-1)
				case ge.OpReduceMin:
					acc = math.Inf(1)
				}
				for _, v := range row {
					f := float64(v)
					switch op {
					case ge.OpReduceMax:
						acc = math.Max(acc, f) // NaN in, NaN out
					case ge.OpReduceMin:
						acc = math.Min(acc, f)
					case ge.OpReduceSumSquare, ge.OpReduceL2:
						acc += f * f
					case ge.OpReduceL1:
						acc += math.Abs(f)
					default:
						acc += f
					}
				}
				switch op {
				case ge.OpReduceMean:
					acc /= float64(l)
				case ge.OpReduceL2:
					acc = math.Sqrt(acc)
				}
				want[o] = acc
			}
			closeTo(t, f32s(out[0]), want, 1e-6, op.String())
		}
	}
}

// TestWhereBroadcastRows: Where over broadcast condition and operands
// (a causal mask over heads) picks x or y at every index.
func TestWhereBroadcastRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 10))
	for _, c := range []struct{ c, x, y []int64 }{
		{[]int64{1, 1, 5, 5}, []int64{2, 3, 5, 5}, []int64{1}},
		{[]int64{2, 1, 1, 5}, []int64{1, 3, 5, 1}, []int64{2, 3, 5, 5}},
		{[]int64{7}, []int64{3, 7}, []int64{3, 1}},
	} {
		nc, nx, ny := 1, 1, 1
		for _, d := range c.c {
			nc *= int(d)
		}
		for _, d := range c.x {
			nx *= int(d)
		}
		for _, d := range c.y {
			ny *= int(d)
		}
		cond := make([]byte, nc)
		for i := range cond {
			cond[i] = byte(rng.IntN(2))
		}
		xv, yv := randF32(rng, nx), randF32(rng, ny)
		ct := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Bool, Format: acl.FormatND, Dims: c.c}, Data: cond}
		out, err := ge.EvalOp(ge.OpWhere, nil, []ge.HostTensor{ct, f32Tensor(c.x, xv), f32Tensor(c.y, yv)})
		require.NoError(t, err)
		od := out[0].Desc.Dims
		got := f32s(out[0])
		idx := make([]int, len(od))
		off := func(d []int64) int {
			o, st := 0, 1
			for i := len(d) - 1; i >= 0; i-- {
				j := idx[len(idx)-len(d)+i]
				if d[i] == 1 {
					j = 0
				}
				o += j * st
				st *= int(d[i])
			}
			return o
		}
		for i := range got {
			want := yv[off(c.y)]
			if cond[off(c.c)] != 0 {
				want = xv[off(c.x)]
			}
			require.Equal(t, want, got[i], "%+v at %v", c, idx)
			for d := len(od) - 1; d >= 0; d-- {
				if idx[d]++; idx[d] < int(od[d]) {
					break
				}
				idx[d] = 0
			}
		}
	}
}
