package ge_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

func TestReductionsMisc(t *testing.T) {
	r := newRand(t)
	ops := []ge.OpType{ge.OpReduceL1, ge.OpReduceL2, ge.OpReduceLogSumExp, ge.OpReduceSumSquare,
		ge.OpReduceSum, ge.OpReduceMean, ge.OpReduceMax, ge.OpReduceMin, ge.OpReduceProd}
	cases := []struct {
		axes []int64
		keep bool
	}{{nil, true}, {nil, false}, {[]int64{1}, true}, {[]int64{-1, 0}, false}, {[]int64{2}, false}}
	for _, op := range ops {
		for _, dt := range append(floatTypes, acl.Int32, acl.Int64) {
			for _, c := range cases {
				if (op == ge.OpReduceLogSumExp || op == ge.OpReduceL2) && isIntRef(dt) {
					continue
				}
				if op == ge.OpReduceProd && isIntRef(dt) && c.axes == nil {
					continue // 60 factors overflow int64, where the float64 reference is inexact
				}
				t.Run(fmt.Sprintf("%s/%s/%v/%v", op, dt, c.axes, c.keep), func(t *testing.T) {
					checkOp(t, r, []acl.DataType{dt}, [][]int64{{3, 4, 5}}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
						return g.Reduce(op, in[0], c.axes, c.keep)
					}, dt)
				})
			}
		}
	}
	// ReduceLogSum needs positive sums: ReduceLogSum(|x|+1).
	for _, dt := range floatTypes {
		t.Run("ReduceLogSum/"+dt.String(), func(t *testing.T) {
			checkOp(t, r, []acl.DataType{dt}, [][]int64{{4, 6}}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
				return g.Reduce(ge.OpReduceLogSum, g.Reduce(ge.OpReduceL1, in[0], []int64{0}, true), nil, false)
			}, dt)
		})
	}
}

// TestReduceLogSumExpLarge: the maximum shift keeps large inputs finite.
func TestReduceLogSumExpLarge(t *testing.T) {
	out, err := ge.EvalOp(ge.OpReduceLogSumExp, ge.Attrs{ge.AttrKeepDims: ge.BoolAttr(false)},
		[]ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{2}}, Data: encodeFloats(acl.Float32, []float64{1000, 1000})}})
	require.NoError(t, err)
	require.InDelta(t, 1000+0.6931471805599453, decodeAll(acl.Float32, out[0].Data, 1)[0], 1e-3)
}

func TestReduceBadInput(t *testing.T) {
	x := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Bool, Dims: []int64{2}}, Data: []byte{1, 0}}
	_, err := ge.EvalOp(ge.OpReduceL1, nil, []ge.HostTensor{x})
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(err), "%v", err)
	x = ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{2}}, Data: make([]byte, 8)}
	_, err = ge.EvalOp(ge.OpReduceL2, ge.Attrs{ge.AttrAxes: ge.IntsAttr([]int64{3})}, []ge.HostTensor{x})
	require.Error(t, err)
}

func TestNLLLoss(t *testing.T) {
	r := newRand(t)
	three := int64(3)
	for _, dt := range floatTypes {
		for _, it := range []acl.DataType{acl.Int32, acl.Int64} {
			for _, red := range []string{"none", "sum", "mean"} {
				for _, weighted := range []bool{false, true} {
					for _, ig := range []*int64{nil, &three} {
						t.Run(fmt.Sprintf("%s/%s/%s/w%v/ii%v", dt, it, red, weighted, ig != nil), func(t *testing.T) {
							dts := []acl.DataType{dt, it}
							dims := [][]int64{{4, 10, 3}, {4, 3}}
							if weighted {
								dts, dims = append(dts, dt), append(dims, []int64{10})
							}
							checkOp(t, r, dts, dims, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
								var w *ge.Tensor
								if weighted {
									w = in[2]
								}
								return g.NLLLoss(in[0], in[1], w, red, ig)
							}, dt)
						})
					}
				}
			}
		}
	}
}

// TestNLLLossFloat64: -x[n, t[n]] summed, in float64.
func TestNLLLossFloat64(t *testing.T) {
	x := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float64, Dims: []int64{2, 3}}, Data: f64b(-1, -2, -3, -4, -5, -6)}
	tg := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int64, Dims: []int64{2}}, Data: encodeFloats(acl.Int64, []float64{2, 0})}
	out, err := ge.EvalOp(ge.OpNLLLoss, ge.Attrs{ge.AttrReduction: ge.StringAttr("sum")}, []ge.HostTensor{x, tg})
	require.NoError(t, err)
	require.Equal(t, []float64{7}, decodeAll(acl.Float64, out[0].Data, 1))
}

func f64b(v ...float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func TestNLLLossBadInput(t *testing.T) {
	x := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{2, 3}}, Data: make([]byte, 24)}
	tg := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int64, Dims: []int64{2}}, Data: encodeFloats(acl.Int64, []float64{1, 3})}
	_, err := ge.EvalOp(ge.OpNLLLoss, ge.Attrs{ge.AttrReduction: ge.StringAttr("sum")}, []ge.HostTensor{x, tg})
	require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)
	require.Contains(t, err.Error(), "out of range")
	// The ignored class may be anything.
	_, err = ge.EvalOp(ge.OpNLLLoss, ge.Attrs{ge.AttrIgnoreIndex: ge.IntAttr(3)}, []ge.HostTensor{x, tg})
	require.NoError(t, err)
	_, err = ge.EvalOp(ge.OpNLLLoss, ge.Attrs{ge.AttrReduction: ge.StringAttr("max")}, []ge.HostTensor{x, tg})
	require.Error(t, err)
	tg.Desc.DataType, tg.Data = acl.Float32, make([]byte, 8)
	_, err = ge.EvalOp(ge.OpNLLLoss, nil, []ge.HostTensor{x, tg})
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(err), "%v", err)
}

// checkOpData is checkOp on given input data: graph inputs of types dts,
// dims and bytes data; it compares output 0 with the reference.
func checkOpData(t *testing.T, dts []acl.DataType, dims [][]int64, data [][]byte, build func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor, tol float64) {
	t.Helper()
	g := ge.NewGraph("op")
	var ins []*ge.Tensor
	for i := range dims {
		ins = append(ins, g.Data(fmt.Sprintf("in%d", i), i, dts[i], dims[i]))
	}
	g.Output(build(g, ins))
	require.NoError(t, g.Err())
	want := refEval(t, g, data)
	got := runGraph(t, g, data)
	requireClose(t, want[0], got[0], tol, t.Name())
}

// randVals draws n values: integers in [lo, hi] when step is 1, else
// normal floats with sd hi.
func randInts(r interface{ IntN(int) int }, n int, lo, hi int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(lo + r.IntN(hi-lo+1))
	}
	return v
}

func TestQuantizeLinear(t *testing.T) {
	r := newRand(t)
	x := []int64{2, 3, 4}
	for _, dt := range []acl.DataType{acl.Float32, acl.Float16} {
		for _, zt := range []acl.DataType{acl.Uint8, acl.Int8, acl.Int32} {
			for _, perAxis := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/axis%v", dt, zt, perAxis), func(t *testing.T) {
					sd := []int64{}
					nc := 1
					if perAxis {
						sd, nc = []int64{3}, 3
					}
					scales := make([]float64, nc)
					for i := range scales {
						scales[i] = 0.01 + r.Float64()*0.05
					}
					lo, hi := quantRange(zt)
					zps := randInts(r, nc, int(max(lo, -20)), int(min(hi, 20)))
					xs := make([]float64, numel(x))
					for i := range xs {
						xs[i] = r.NormFloat64() * 3
					}
					checkOpData(t, []acl.DataType{dt, dt, zt}, [][]int64{x, sd, sd},
						[][]byte{encodeAny(dt, xs), encodeAny(dt, scales), encodeAny(zt, zps)},
						func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
							return g.AddOp(ge.OpQuantizeLinear, in, ge.Attrs{ge.AttrAxis: ge.IntAttr(1)}).Output(0)
						}, 0)
					// And back.
					qs := make([]float64, numel(x))
					for i := range qs {
						qs[i] = float64(r.IntN(100))
					}
					checkOpData(t, []acl.DataType{zt, dt, zt}, [][]int64{x, sd, sd},
						[][]byte{encodeAny(zt, qs), encodeAny(dt, scales), encodeAny(zt, zps)},
						func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
							return g.AddOp(ge.OpDequantizeLinear, in, ge.Attrs{ge.AttrAxis: ge.IntAttr(-2)}).Output(0)
						}, tolerance(dt))
				})
			}
		}
	}
}

func TestDynamicQuantizeLinear(t *testing.T) {
	r := newRand(t)
	for _, shift := range []float64{0, 5, -5} {
		xs := make([]float64, 40)
		for i := range xs {
			xs[i] = r.NormFloat64() + shift
		}
		checkOpData(t, []acl.DataType{acl.Float32}, [][]int64{{5, 8}}, [][]byte{encodeAny(acl.Float32, xs)},
			func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
				return g.AddOp(ge.OpDynamicQuantizeLinear, in, nil).Output(0)
			}, 0)
	}
	out, err := ge.EvalOp(ge.OpDynamicQuantizeLinear, nil, []ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{3}},
		Data: encodeAny(acl.Float32, []float64{-1, 0, 3})}})
	require.NoError(t, err)
	require.Equal(t, []float64{float64(float32(4) / 255)}, decodeAll(acl.Float32, out[1].Data, 1))
	require.Equal(t, []byte{64}, out[2].Data)
	require.Equal(t, []byte{0, 64, 255}, out[0].Data)
}

func TestIntegerMatMulAndConv(t *testing.T) {
	r := newRand(t)
	for _, at := range []acl.DataType{acl.Uint8, acl.Int8} {
		for _, bt := range []acl.DataType{acl.Uint8, acl.Int8} {
			vals := func(dt acl.DataType, n int) []byte {
				lo, hi := quantRange(dt)
				return encodeAny(dt, randInts(r, n, int(lo), int(hi)))
			}
			for _, c := range []struct{ a, b, az, bz []int64 }{
				{[]int64{4, 7}, []int64{7, 3}, []int64{}, []int64{}},
				{[]int64{2, 4, 7}, []int64{7, 3}, []int64{4}, []int64{3}},
				{[]int64{1, 4, 7}, []int64{2, 7, 3}, []int64{1}, []int64{3}},
			} {
				t.Run(fmt.Sprintf("MatMulInteger/%s/%s/%v%v", at, bt, c.a, c.b), func(t *testing.T) {
					checkOpData(t, []acl.DataType{at, bt, at, bt}, [][]int64{c.a, c.b, c.az, c.bz},
						[][]byte{vals(at, numel(c.a)), vals(bt, numel(c.b)), vals(at, numel(c.az)), vals(bt, numel(c.bz))},
						func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor { return g.AddOp(ge.OpMatMulInteger, in, nil).Output(0) }, 0)
				})
				t.Run(fmt.Sprintf("QLinearMatMul/%s/%s/%v%v", at, bt, c.a, c.b), func(t *testing.T) {
					f := acl.Float32
					checkOpData(t, []acl.DataType{at, f, at, bt, f, bt, f, acl.Uint8},
						[][]int64{c.a, c.az, c.az, c.b, c.bz, c.bz, {}, {}},
						[][]byte{vals(at, numel(c.a)), encodeAny(f, []float64{0.02, 0.03, 0.01, 0.05}[:numel(c.az)]), vals(at, numel(c.az)),
							vals(bt, numel(c.b)), encodeAny(f, []float64{0.04, 0.02, 0.03}[:numel(c.bz)]), vals(bt, numel(c.bz)),
							encodeAny(f, []float64{0.5}), encodeAny(acl.Uint8, []float64{128})},
						func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor { return g.AddOp(ge.OpQLinearMatMul, in, nil).Output(0) }, 0)
				})
			}
			for _, c := range []struct {
				x, w         []int64
				strides, pad []int64
				dil          []int64
				groups       int64
			}{
				{[]int64{1, 2, 5, 5}, []int64{3, 2, 3, 3}, []int64{1, 1}, []int64{1, 1, 1, 1}, []int64{1, 1}, 1},
				{[]int64{2, 4, 6, 5}, []int64{4, 2, 2, 3}, []int64{2, 1}, []int64{0, 1, 1, 0}, []int64{1, 2}, 2},
				{[]int64{1, 3, 9}, []int64{2, 3, 3}, []int64{2}, []int64{1, 2}, []int64{2}, 1},
			} {
				a := ge.Attrs{ge.AttrStrides: ge.IntsAttr(c.strides), ge.AttrPads: ge.IntsAttr(c.pad),
					ge.AttrDilations: ge.IntsAttr(c.dil), ge.AttrGroups: ge.IntAttr(c.groups)}
				m := int(c.w[0])
				t.Run(fmt.Sprintf("ConvInteger/%s/%s/%v%v", at, bt, c.x, c.w), func(t *testing.T) {
					checkOpData(t, []acl.DataType{at, bt, at, bt}, [][]int64{c.x, c.w, {}, {c.w[0]}},
						[][]byte{vals(at, numel(c.x)), vals(bt, numel(c.w)), vals(at, 1), vals(bt, m)},
						func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor { return g.AddOp(ge.OpConvInteger, in, a).Output(0) }, 0)
				})
				t.Run(fmt.Sprintf("QLinearConv/%s/%s/%v%v", at, bt, c.x, c.w), func(t *testing.T) {
					f := acl.Float32
					ws := make([]float64, m)
					for i := range ws {
						ws[i] = 0.001 + 0.002*float64(i)
					}
					checkOpData(t, []acl.DataType{at, f, at, bt, f, bt, f, acl.Int8, acl.Int32},
						[][]int64{c.x, {}, {}, c.w, {c.w[0]}, {c.w[0]}, {}, {}, {c.w[0]}},
						[][]byte{vals(at, numel(c.x)), encodeAny(f, []float64{0.05}), vals(at, 1), vals(bt, numel(c.w)),
							encodeAny(f, ws), vals(bt, m), encodeAny(f, []float64{0.3}), encodeAny(acl.Int8, []float64{-3}),
							encodeAny(acl.Int32, randInts(r, m, -500, 500))},
						func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor { return g.AddOp(ge.OpQLinearConv, in, a).Output(0) }, 0)
				})
			}
		}
	}
}

func TestQuantBadInput(t *testing.T) {
	f := func(dt acl.DataType, dims ...int64) ge.HostTensor {
		d := ge.TensorDesc{DataType: dt, Dims: dims}
		return ge.HostTensor{Desc: d, Data: make([]byte, d.Size())}
	}
	_, err := ge.EvalOp(ge.OpQuantizeLinear, nil, []ge.HostTensor{f(acl.Float32, 2, 3), f(acl.Float32, 2), f(acl.Uint8, 2)})
	require.Error(t, err, "per-axis scale of the wrong length")
	_, err = ge.EvalOp(ge.OpQuantizeLinear, nil, []ge.HostTensor{f(acl.Float32, 2, 3), f(acl.Float32), f(acl.Float32)})
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(err), "%v", err)
	_, err = ge.EvalOp(ge.OpMatMulInteger, nil, []ge.HostTensor{f(acl.Uint8, 2, 3), f(acl.Uint8, 4, 2), f(acl.Uint8), f(acl.Uint8)})
	require.Error(t, err)
	_, err = ge.EvalOp(ge.OpConvInteger, nil, []ge.HostTensor{f(acl.Float32, 1, 1, 3, 3), f(acl.Uint8, 1, 1, 2, 2), f(acl.Uint8), f(acl.Uint8)})
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(err), "%v", err)
	_, err = ge.EvalOp(ge.OpDynamicQuantizeLinear, nil, []ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{2}},
		Data: encodeAny(acl.Float32, []float64{math.Inf(1), 0})}})
	require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)
}

func TestRecurrent(t *testing.T) {
	r := newRand(t)
	const seq, batch, isz, h = 4, 3, 5, 6
	for _, op := range []ge.OpType{ge.OpRNN, ge.OpGRU, ge.OpLSTM} {
		g := map[ge.OpType]int64{ge.OpRNN: 1, ge.OpGRU: 3, ge.OpLSTM: 4}[op]
		for _, dir := range []string{"forward", "reverse", "bidirectional"} {
			for _, variant := range []string{"plain", "lens", "acts", "lbr"} {
				if variant == "lbr" && op != ge.OpGRU {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/%s", op, dir, variant), func(t *testing.T) {
					d := int64(1)
					if dir == "bidirectional" {
						d = 2
					}
					a := ge.Attrs{ge.AttrHiddenSize: ge.IntAttr(h), ge.AttrDirection: ge.StringAttr(dir)}
					dims := [][]int64{{seq, batch, isz}, {d, g * h, isz}, {d, g * h, h}, {d, 2 * g * h}, {d, batch, h}}
					if op == ge.OpLSTM {
						dims = append(dims, []int64{d, batch, h}, []int64{d, 3 * h})
					}
					dts := make([]acl.DataType, len(dims))
					var data [][]byte
					for i := range dims {
						dts[i] = acl.Float32
						data = append(data, randInput(r, acl.Float32, dims[i], 0.5))
					}
					switch variant {
					case "lens":
						dims, dts = append(dims, []int64{batch}), append(dts, acl.Int32)
						data = append(data, encodeFloats(acl.Int32, []float64{4, 1, 3}))
					case "acts":
						per := map[ge.OpType][]int64{ge.OpRNN: {ge.RNNActRelu}, ge.OpGRU: {ge.RNNActHardSigmoid, ge.RNNActSoftsign},
							ge.OpLSTM: {ge.RNNActSigmoid, ge.RNNActScaledTanh, ge.RNNActLeakyRelu}}[op]
						acts := append(append([]int64{}, per...), ge.RNNActElu, ge.RNNActAffine, ge.RNNActSoftplus)[:len(per)*int(d)]
						a[ge.AttrActivations] = ge.IntsAttr(acts)
						a[ge.RNNActAlpha(1)] = ge.FloatAttr(0.7)
						a[ge.RNNActBeta(1)] = ge.FloatAttr(0.9)
						a[ge.AttrClip] = ge.FloatAttr(0.8)
					case "lbr":
						a[ge.AttrLinearBeforeReset] = ge.BoolAttr(true)
					}
					hs := make([]ge.HostTensor, len(dims))
					for i := range dims {
						hs[i] = ge.HostTensor{Desc: ge.TensorDesc{DataType: dts[i], Dims: dims[i]}, Data: data[i]}
					}
					got, err := ge.EvalOp(op, a, hs)
					require.NoError(t, err)
					in := make([]refVal, len(dims))
					for i := range dims {
						in[i] = refVal{dts[i], dims[i], decodeAll(dts[i], data[i], numel(dims[i]))}
					}
					want := refRNN(op, in, a)
					require.Len(t, got, len(want))
					for i := range want {
						requireClose(t, want[i], got[i].Data, 1e-5, fmt.Sprintf("output %d", i))
					}
					// Output 0 through a compiled graph, in every float type.
					for _, dt := range floatTypes {
						dts2 := append([]acl.DataType{}, dts...)
						for i := range dts2 {
							if dts2[i] == acl.Float32 {
								dts2[i] = dt
							}
						}
						// Inputs at scale 0.5, as above: with unit-scale weights and
						// activations that do not saturate (the acts variant's Elu and
						// Affine), |∂h_t/∂h_{t-1}| reaches ~5 and float32 rounding grows
						// that much per step (20× the tolerance in 1 of 40000 draws at
						// scale 1; under 0.45× at 0.5).
						checkOpScaled(t, r, dts2, dims, func(gr *ge.Graph, in []*ge.Tensor) *ge.Tensor {
							if variant == "lens" {
								return gr.AddOp(op, in[:len(in)-1], a).Output(0) // random lengths are out of range
							}
							return gr.AddOp(op, in, a).Output(0)
						}, dt, 0.5)
					}
				})
			}
		}
	}
}

func TestRecurrentBadInput(t *testing.T) {
	f := func(dt acl.DataType, dims ...int64) ge.HostTensor {
		d := ge.TensorDesc{DataType: dt, Dims: dims}
		return ge.HostTensor{Desc: d, Data: make([]byte, d.Size())}
	}
	ins := []ge.HostTensor{f(acl.Float32, 2, 1, 3), f(acl.Float32, 1, 4, 3), f(acl.Float32, 1, 4, 4), f(acl.Float32, 1, 8), f(acl.Float32, 1, 1, 4)}
	a := ge.Attrs{ge.AttrHiddenSize: ge.IntAttr(4)}
	_, err := ge.EvalOp(ge.OpRNN, a, ins)
	require.NoError(t, err)
	lens := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int32, Dims: []int64{1}}, Data: encodeFloats(acl.Int32, []float64{3})}
	_, err = ge.EvalOp(ge.OpRNN, a, append(ins, lens))
	require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)
	_, err = ge.EvalOp(ge.OpRNN, ge.Attrs{ge.AttrHiddenSize: ge.IntAttr(4), ge.AttrDirection: ge.StringAttr("up")}, ins)
	require.Error(t, err)
	_, err = ge.EvalOp(ge.OpRNN, ge.Attrs{ge.AttrHiddenSize: ge.IntAttr(4), ge.AttrActivations: ge.IntsAttr([]int64{99})}, ins)
	require.Error(t, err)
	_, err = ge.EvalOp(ge.OpRNN, ge.Attrs{ge.AttrHiddenSize: ge.IntAttr(4), ge.AttrDirection: ge.StringAttr("bidirectional")}, ins)
	require.Error(t, err, "weights of one direction")
}

func TestDFTAndSTFT(t *testing.T) {
	r := newRand(t)
	for _, dt := range floatTypes {
		for _, c := range []struct {
			dims         []int64
			axis, length int64
			inverse, one bool
		}{
			{[]int64{2, 8, 1}, 1, 0, false, false},
			{[]int64{2, 7, 3, 2}, 1, 0, true, false},
			{[]int64{3, 5, 2}, -2, 8, false, true},
			{[]int64{2, 3, 9, 1}, 2, 6, false, true},
			{[]int64{4, 6, 2}, 0, 0, true, false},
		} {
			t.Run(fmt.Sprintf("DFT/%s/%v/axis%d/len%d/inv%v/one%v", dt, c.dims, c.axis, c.length, c.inverse, c.one), func(t *testing.T) {
				checkOp(t, r, []acl.DataType{dt}, [][]int64{c.dims}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					return g.AddOp(ge.OpDFT, in, ge.Attrs{ge.AttrAxis: ge.IntAttr(c.axis), ge.AttrLength: ge.IntAttr(c.length),
						ge.AttrInverse: ge.BoolAttr(c.inverse), ge.AttrOnesided: ge.BoolAttr(c.one)}).Output(0)
				}, dt)
			})
		}
		for _, c := range []struct {
			dims        []int64
			step, fl    int64
			window, one bool
		}{
			{[]int64{2, 40, 1}, 8, 16, false, true},
			{[]int64{1, 33, 2}, 5, 10, true, false},
			{[]int64{3, 20, 1}, 3, 7, true, true},
		} {
			t.Run(fmt.Sprintf("STFT/%s/%v/%d/%d/w%v/one%v", dt, c.dims, c.step, c.fl, c.window, c.one), func(t *testing.T) {
				dims, dts := [][]int64{c.dims}, []acl.DataType{dt}
				if c.window {
					dims, dts = append(dims, []int64{c.fl}), append(dts, dt)
				}
				checkOp(t, r, dts, dims, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					return g.AddOp(ge.OpSTFT, in, ge.Attrs{ge.AttrFrameStep: ge.IntAttr(c.step), ge.AttrFrameLength: ge.IntAttr(c.fl),
						ge.AttrOnesided: ge.BoolAttr(c.one)}).Output(0)
				}, dt)
			})
		}
	}
}

// TestMelWeightMatrix: ONNX's example (8 bins of a 16-point DFT at 8192 Hz
// over [0, 4096] Hz) gives a one per filter on the bins the reference
// lists.
func TestMelWeightMatrix(t *testing.T) {
	s := func(v float64) ge.HostTensor {
		return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{}}, Data: encodeFloats(acl.Float32, []float64{v})}
	}
	a := ge.Attrs{ge.AttrNumMelBins: ge.IntAttr(8), ge.AttrLength: ge.IntAttr(16), ge.AttrSampleRate: ge.IntAttr(8192)}
	out, err := ge.EvalOp(ge.OpMelWeightMatrix, a, []ge.HostTensor{s(0), s(4096)})
	require.NoError(t, err)
	require.Equal(t, []int64{9, 8}, out[0].Desc.Dims)
	got := decodeAll(acl.Float32, out[0].Data, 72)
	want := make([]float64, 72)
	for _, rc := range [][2]int{{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}} {
		want[rc[0]*8+rc[1]] = 1
	}
	require.Equal(t, want, got)
	_, err = ge.EvalOp(ge.OpMelWeightMatrix, a, []ge.HostTensor{s(0), s(9000)})
	require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)
	_, err = ge.EvalOp(ge.OpDFT, ge.Attrs{ge.AttrAxis: ge.IntAttr(-1)}, []ge.HostTensor{s(1)})
	require.Error(t, err)
	_, err = ge.EvalOp(ge.OpSTFT, ge.Attrs{ge.AttrFrameStep: ge.IntAttr(1), ge.AttrFrameLength: ge.IntAttr(50)},
		[]ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{1, 10, 1}}, Data: make([]byte, 40)}})
	require.Error(t, err)
}

// TestRandomKernels: the generators have the moments of their
// distribution and repeat for one seed (there is no value reference).
func TestRandomKernels(t *testing.T) {
	run := func(op ge.OpType, a ge.Attrs, in ...ge.HostTensor) []float64 {
		out, err := ge.EvalOp(op, a, in)
		require.NoError(t, err)
		again, err := ge.EvalOp(op, a, in)
		require.NoError(t, err)
		require.Equal(t, out[0].Data, again[0].Data, "one seed, one draw")
		return decodeAll(out[0].Desc.DataType, out[0].Data, int(out[0].Desc.NumElements()))
	}
	mom := func(v []float64) (float64, float64) {
		var m, s float64
		for _, x := range v {
			m += x
		}
		m /= float64(len(v))
		for _, x := range v {
			s += (x - m) * (x - m)
		}
		return m, s / float64(len(v))
	}
	for _, dt := range append(floatTypes, acl.Float64) {
		shape := ge.IntsAttr([]int64{100, 100})
		v := run(ge.OpRandomUniform, ge.Attrs{ge.AttrShape: shape, ge.AttrDstType: ge.IntAttr(int64(dt)), ge.AttrLow: ge.FloatAttr(2),
			ge.AttrHigh: ge.FloatAttr(4), ge.AttrSeed: ge.IntAttr(3)})
		for _, x := range v {
			require.True(t, x >= 2 && x <= 4, "%v", x)
		}
		m, s := mom(v)
		require.InDelta(t, 3, m, 0.03)
		require.InDelta(t, 4.0/12, s, 0.02)
		v = run(ge.OpRandomNormal, ge.Attrs{ge.AttrShape: shape, ge.AttrDstType: ge.IntAttr(int64(dt)), ge.AttrMean: ge.FloatAttr(-1),
			ge.AttrScale: ge.FloatAttr(0.5)})
		m, s = mom(v)
		require.InDelta(t, -1, m, 0.02)
		require.InDelta(t, 0.25, s, 0.02)
	}
	p := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{10000}}, Data: encodeFloats(acl.Float32, make([]float64, 10000))}
	for i := range 10000 {
		copy(p.Data[4*i:], encodeFloats(acl.Float32, []float64{0.3}))
	}
	v := run(ge.OpBernoulli, ge.Attrs{ge.AttrSeed: ge.IntAttr(9), ge.AttrDstType: ge.IntAttr(int64(acl.Int32))}, p)
	m, _ := mom(v)
	require.InDelta(t, 0.3, m, 4*math.Sqrt(0.21/10000))
	// Multinomial over log(1), log(3): class 1 three times as likely.
	logits := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{1, 2}}, Data: encodeFloats(acl.Float32, []float64{0, math.Log(3)})}
	v = run(ge.OpMultinomial, ge.Attrs{ge.AttrSampleSize: ge.IntAttr(8000), ge.AttrDstType: ge.IntAttr(int64(acl.Int64))}, logits)
	m, _ = mom(v)
	require.InDelta(t, 0.75, m, 4*math.Sqrt(0.1875/8000))

	bad := p
	bad.Data = encodeFloats(acl.Float32, make([]float64, 10000))
	copy(bad.Data, encodeFloats(acl.Float32, []float64{1.5}))
	_, err := ge.EvalOp(ge.OpBernoulli, nil, []ge.HostTensor{bad})
	require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)
	_, err = ge.EvalOp(ge.OpRandomUniform, ge.Attrs{ge.AttrShape: ge.IntsAttr([]int64{2}), ge.AttrDstType: ge.IntAttr(int64(acl.Int32))}, nil)
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(err), "%v", err)
	_, err = ge.EvalOp(ge.OpMultinomial, nil, []ge.HostTensor{p})
	require.Error(t, err, "Multinomial takes [batch, classes]")
}

// TestLogSoftmaxFloat64: SoftmaxCrossEntropyLoss of float64 models runs
// LogSoftmax in float64.
func TestLogSoftmaxFloat64(t *testing.T) {
	x := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float64, Dims: []int64{2, 3}}, Data: f64b(1, 2, 3, 0, 0, 1000)}
	out, err := ge.EvalOp(ge.OpLogSoftmax, ge.Attrs{ge.AttrAxis: ge.IntAttr(1)}, []ge.HostTensor{x})
	require.NoError(t, err)
	got := decodeAll(acl.Float64, out[0].Data, 6)
	ls := math.Log(math.Exp(1) + math.Exp(2) + math.Exp(3))
	require.InDeltaSlice(t, []float64{1 - ls, 2 - ls, 3 - ls, -1000, -1000, 0}, got, 1e-12)
}
