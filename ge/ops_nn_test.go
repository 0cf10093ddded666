package ge_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

// nnCheck is checkOp for every storable type: one Data per input with
// random data (or the given bytes), the op, and the float64 reference.
func nnCheck(t *testing.T, r *rand.Rand, dts []acl.DataType, dims [][]int64, data [][]byte, build func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor, tolDT acl.DataType) {
	t.Helper()
	g := ge.NewGraph("op")
	var ins []*ge.Tensor
	all := make([][]byte, len(dims))
	for i := range dims {
		ins = append(ins, g.Data(fmt.Sprintf("in%d", i), i, dts[i], dims[i]))
		if i < len(data) && data[i] != nil {
			all[i] = data[i]
		} else {
			all[i] = nnRand(r, dts[i], dims[i])
		}
	}
	g.Output(build(g, ins))
	require.NoError(t, g.Err())
	want := refEval(t, g, all)
	got := runGraph(t, g, all)
	requireClose(t, want[0], got[0], tolerance(tolDT), t.Name())
}

// nnOpts sets every attribute of a.
func nnOpts(a ge.Attrs) []ge.OpOption {
	var o []ge.OpOption
	for k, v := range a {
		o = append(o, ge.WithAttr(k, v))
	}
	return o
}

// nnRunErr compiles a one-op graph and runs it, returning the run error.
func nnRunErr(t *testing.T, g *ge.Graph, inputs [][]byte) error {
	t.Helper()
	require.NoError(t, g.Err())
	m, err := ge.Compile(g)
	require.NoError(t, err)
	_, err = getest.Run(m, inputs)
	return err
}

func TestResize(t *testing.T) {
	r := newRand(t)
	type rc struct {
		in, out []int64
		scales  []float64
		attrs   ge.Attrs
	}
	s := ge.StringAttr
	var cases []rc
	for _, coord := range []string{"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"} {
		for _, mode := range []string{"nearest", "linear", "cubic"} {
			cases = append(cases,
				rc{[]int64{2, 3, 4, 5}, []int64{2, 3, 7, 3}, []float64{1, 1, 1.75, 0.6}, ge.Attrs{ge.AttrResizeMode: s(mode), ge.AttrCoordTransform: s(coord)}},
				rc{[]int64{1, 2, 3, 2, 4}, []int64{1, 2, 6, 1, 9}, []float64{1, 1, 2, 0.5, 2.25}, ge.Attrs{ge.AttrResizeMode: s(mode), ge.AttrCoordTransform: s(coord)}})
		}
	}
	for _, nm := range []string{"round_prefer_ceil", "floor", "ceil", "simple"} {
		cases = append(cases, rc{[]int64{3, 5}, []int64{7, 2}, []float64{7.0 / 3, 0.4}, ge.Attrs{ge.AttrNearestMode: s(nm)}})
	}
	cases = append(cases,
		rc{[]int64{2, 6, 5}, []int64{2, 4, 8}, []float64{1, 4.0 / 6, 8.0 / 5}, ge.Attrs{ge.AttrResizeMode: s("cubic"), ge.AttrCubicCoeffA: ge.FloatAttr(-0.5), ge.AttrExcludeOutside: ge.BoolAttr(true)}},
		rc{[]int64{2, 9, 8}, []int64{2, 4, 3}, []float64{1, 4.0 / 9, 3.0 / 8}, ge.Attrs{ge.AttrResizeMode: s("linear"), ge.AttrAntialias: ge.BoolAttr(true)}},
		rc{[]int64{2, 9, 8}, []int64{2, 4, 3}, []float64{1, 4.0 / 9, 3.0 / 8}, ge.Attrs{ge.AttrResizeMode: s("cubic"), ge.AttrAntialias: ge.BoolAttr(true)}},
		rc{[]int64{2, 9, 8}, []int64{2, 5, 12}, []float64{1, 5.0 / 9, 1.5}, ge.Attrs{ge.AttrResizeMode: s("cubic"), ge.AttrAntialias: ge.BoolAttr(true), ge.AttrExcludeOutside: ge.BoolAttr(true)}},
	)
	for _, mode := range []string{"nearest", "linear", "cubic"} {
		cases = append(cases, rc{[]int64{1, 1, 4, 5}, []int64{1, 1, 3, 6}, []float64{1, 1, 0.75, 1.2}, ge.Attrs{ge.AttrResizeMode: s(mode), ge.AttrCoordTransform: s("tf_crop_and_resize"),
			ge.AttrResizeROI: s("0 0 0.4 -0.2 1 1 0.9 1.3"), ge.AttrExtrapolationVal: ge.FloatAttr(10)}})
	}
	for i, c := range cases {
		dts := floatTypes
		if c.attrs.String(ge.AttrResizeMode) == "nearest" || c.attrs.String(ge.AttrResizeMode) == "" {
			dts = append(dts[:len(dts):len(dts)], acl.Uint8, acl.Int64, acl.Float64)
		} else {
			dts = append(dts[:len(dts):len(dts)], acl.Float64)
		}
		for _, dt := range dts {
			t.Run(fmt.Sprintf("%d/%s/%v", i, dt, c.attrs), func(t *testing.T) {
				nnCheck(t, r, []acl.DataType{dt}, [][]int64{c.in}, nil, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					return g.Resize(in[0], c.out, c.scales, nnOpts(c.attrs)...)
				}, dt)
			})
		}
	}
}

func TestResizeRejects(t *testing.T) {
	for _, a := range []ge.Attrs{
		{ge.AttrResizeMode: ge.StringAttr("area")},
		{ge.AttrCoordTransform: ge.StringAttr("corner")},
		{ge.AttrNearestMode: ge.StringAttr("up")},
		{ge.AttrResizeMode: ge.StringAttr("nearest"), ge.AttrAntialias: ge.BoolAttr(true)},
		{ge.AttrCoordTransform: ge.StringAttr("tf_crop_and_resize"), ge.AttrResizeROI: ge.StringAttr("0 1")},
		{ge.AttrResizeScales: ge.StringAttr("1 x")},
		{ge.AttrResizeScales: ge.StringAttr("1 -2")},
		{ge.AttrResizeSizes: ge.IntsAttr([]int64{2, 0})},
		{ge.AttrResizeSizes: ge.IntsAttr([]int64{2})},
	} {
		full := ge.Attrs{ge.AttrResizeSizes: ge.IntsAttr([]int64{4, 4}), ge.AttrResizeScales: ge.StringAttr("2 2")}
		for k, v := range a {
			full[k] = v
		}
		_, err := ge.InferOp(ge.OpResize, full, []ge.TensorDesc{{DataType: acl.Float32, Dims: []int64{2, 2}}})
		require.Error(t, err, "%v", a)
	}
	_, err := ge.InferOp(ge.OpResize, ge.Attrs{ge.AttrResizeMode: ge.StringAttr("linear"), ge.AttrResizeSizes: ge.IntsAttr([]int64{4}),
		ge.AttrResizeScales: ge.StringAttr("2")}, []ge.TensorDesc{{DataType: acl.Int32, Dims: []int64{2}}})
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(err), "%v", err)
}

func TestGridSample(t *testing.T) {
	r := newRand(t)
	shapes := [][2][]int64{
		{{2, 3, 5, 6}, {2, 4, 7, 2}},
		{{1, 2, 3, 4, 5}, {1, 2, 3, 4, 3}},
		{{2, 2, 7}, {2, 5, 1}},
	}
	for _, sh := range shapes {
		for _, mode := range []string{"linear", "nearest", "cubic"} {
			for _, pad := range []string{"zeros", "border", "reflection"} {
				for _, align := range []bool{false, true} {
					for _, dt := range append(floatTypes[:len(floatTypes):len(floatTypes)], acl.Float64) {
						a := ge.Attrs{ge.AttrGridMode: ge.StringAttr(mode), ge.AttrPaddingMode: ge.StringAttr(pad), ge.AttrAlignCorners: ge.BoolAttr(align)}
						t.Run(fmt.Sprintf("%v/%s/%s/%v/%s", sh[0], mode, pad, align, dt), func(t *testing.T) {
							nnCheck(t, r, []acl.DataType{dt, dt}, sh[:], nil, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
								return g.GridSample(in[0], in[1], nnOpts(a)...)
							}, dt)
						})
					}
				}
			}
		}
	}
	_, err := ge.InferOp(ge.OpGridSample, nil, []ge.TensorDesc{{DataType: acl.Float32, Dims: []int64{1, 1, 4, 4}}, {DataType: acl.Float32, Dims: []int64{1, 3, 3, 3}}})
	require.Error(t, err)
	_, err = ge.InferOp(ge.OpGridSample, ge.Attrs{ge.AttrPaddingMode: ge.StringAttr("wrap")}, []ge.TensorDesc{{DataType: acl.Float32, Dims: []int64{1, 1, 4, 4}}, {DataType: acl.Float32, Dims: []int64{1, 3, 3, 2}}})
	require.Error(t, err)
}

func TestAffineGrid(t *testing.T) {
	r := newRand(t)
	for _, size := range [][]int64{{2, 3, 4, 5}, {1, 2, 3, 1, 4}, {2, 1, 1, 3}} {
		for _, align := range []bool{false, true} {
			for _, dt := range append(floatTypes[:len(floatTypes):len(floatTypes)], acl.Float64) {
				sp := int64(len(size) - 2)
				t.Run(fmt.Sprintf("%v/%v/%s", size, align, dt), func(t *testing.T) {
					nnCheck(t, r, []acl.DataType{dt}, [][]int64{{size[0], sp, sp + 1}}, nil, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
						return g.AffineGrid(in[0], size, align)
					}, dt)
				})
			}
		}
	}
	_, err := ge.InferOp(ge.OpAffineGrid, ge.Attrs{ge.AttrGridSize: ge.IntsAttr([]int64{1, 1, 4})}, []ge.TensorDesc{{DataType: acl.Float32, Dims: []int64{1, 1, 2}}})
	require.Error(t, err)
}

func TestNonMaxSuppression(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		b, n, cl, k int64
		center      bool
		score       bool
	}{{1, 6, 1, 3, false, false}, {2, 20, 3, 5, true, true}, {3, 9, 2, 20, false, true}} {
		for _, dt := range []acl.DataType{acl.Float32, acl.Float16, acl.Float64} {
			t.Run(fmt.Sprintf("%+v/%s", c, dt), func(t *testing.T) {
				nnCheck(t, r, []acl.DataType{dt, dt}, [][]int64{{c.b, c.n, 4}, {c.b, c.cl, c.n}}, nil, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					var opts []ge.OpOption
					if c.center {
						opts = append(opts, ge.WithAttr(ge.AttrCenterPointBox, ge.BoolAttr(true)))
					}
					if c.score {
						opts = append(opts, ge.WithAttr(ge.AttrScoreThreshold, ge.FloatAttr(0.1)))
					}
					sel, _ := g.NonMaxSuppression(in[0], in[1], c.k, 0.2, opts...)
					return sel
				}, acl.Float32)
			})
		}
	}
	_, err := ge.InferOp(ge.OpNonMaxSuppression, ge.Attrs{}, []ge.TensorDesc{{DataType: acl.Float32, Dims: []int64{1, 3, 4}}, {DataType: acl.Float32, Dims: []int64{1, 1, 3}}})
	require.Error(t, err, "max_output_boxes_per_class 0")
	_, err = ge.InferOp(ge.OpNonMaxSuppression, ge.Attrs{ge.AttrMaxOutputBoxes: ge.IntAttr(2)}, []ge.TensorDesc{{DataType: acl.Float32, Dims: []int64{1, 3, 4}}, {DataType: acl.Float32, Dims: []int64{1, 1, 4}}})
	require.Error(t, err)
}

func poolOpts(k, s, p, d []int64, ceil bool) []ge.OpOption {
	o := []ge.OpOption{ge.WithAttr(ge.AttrStrides, ge.IntsAttr(s)), ge.WithAttr(ge.AttrPads, ge.IntsAttr(p)), ge.WithAttr(ge.AttrCeilMode, ge.BoolAttr(ceil))}
	if d != nil {
		o = append(o, ge.WithAttr(ge.AttrDilations, ge.IntsAttr(d)))
	}
	return o
}

var poolCases = []struct {
	x, k, s, p, d []int64
	ceil          bool
}{
	{[]int64{2, 3, 7, 6}, []int64{3, 2}, []int64{2, 2}, []int64{1, 0, 1, 1}, nil, false},
	{[]int64{1, 2, 9, 8}, []int64{2, 3}, []int64{2, 3}, []int64{0, 1, 1, 1}, []int64{2, 1}, true},
	{[]int64{2, 2, 11}, []int64{3}, []int64{2}, []int64{1, 2}, []int64{2}, true},
	{[]int64{1, 2, 4, 5, 6}, []int64{2, 2, 3}, []int64{1, 2, 2}, []int64{0, 1, 1, 1, 0, 1}, nil, false},
}

func TestMaxPoolWithIndices(t *testing.T) {
	r := newRand(t)
	for _, c := range poolCases {
		for _, so := range []int64{0, 1} {
			for _, dt := range []acl.DataType{acl.Float32, acl.Float16, acl.BFloat16, acl.Float64, acl.Int8, acl.Uint8, acl.Int32} {
				t.Run(fmt.Sprintf("%v/k%v/so%d/%s", c.x, c.k, so, dt), func(t *testing.T) {
					g := ge.NewGraph("mp")
					x := g.Data("x", 0, dt, c.x)
					y, idx := g.MaxPoolWithIndices(x, c.k, append(poolOpts(c.k, c.s, c.p, c.d, c.ceil), ge.WithAttr(ge.AttrStorageOrder, ge.IntAttr(so)))...)
					g.Output(y, idx)
					require.NoError(t, g.Err())
					data := [][]byte{nnRand(r, dt, c.x)}
					got := runGraph(t, g, data)
					xv := refVal{dt, c.x, decodeAll(dt, data[0], numel(c.x))}
					a := ge.Attrs{ge.AttrKernelShape: ge.IntsAttr(c.k), ge.AttrStrides: ge.IntsAttr(c.s), ge.AttrPads: ge.IntsAttr(c.p), ge.AttrStorageOrder: ge.IntAttr(so)}
					if c.d != nil {
						a[ge.AttrDilations] = ge.IntsAttr(c.d)
					}
					wantV, wantI := refPoolIndexed(xv, a, y.Desc(), false)
					requireClose(t, refVal{dt, y.Desc().Dims, wantV}, got[0], 0, "values")
					require.Equal(t, wantI, decodeAll(acl.Int64, got[1], len(wantI)), "indices")
					// MaxPool itself agrees (float64 and integers run the nn kernel).
					nnCheck(t, r, []acl.DataType{dt}, [][]int64{c.x}, data, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
						return g.Pool(ge.OpMaxPool, in[0], c.k, poolOpts(c.k, c.s, c.p, c.d, c.ceil)...)
					}, dt)
				})
			}
		}
	}
	_, err := ge.InferOp(ge.OpMaxPool, ge.Attrs{ge.AttrKernelShape: ge.IntsAttr([]int64{2})}, []ge.TensorDesc{{DataType: acl.Bool, Dims: []int64{1, 1, 4}}})
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(err), "%v", err)
}

func TestLpPool(t *testing.T) {
	r := newRand(t)
	for _, c := range poolCases {
		for _, p := range []int64{1, 2, 3} {
			for _, dt := range append(floatTypes[:len(floatTypes):len(floatTypes)], acl.Float64) {
				t.Run(fmt.Sprintf("%v/k%v/p%d/%s", c.x, c.k, p, dt), func(t *testing.T) {
					nnCheck(t, r, []acl.DataType{dt}, [][]int64{c.x}, nil, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
						return g.LpPool(in[0], c.k, p, poolOpts(c.k, c.s, c.p, c.d, c.ceil)...)
					}, dt)
				})
			}
		}
	}
}

func TestMaxUnpool(t *testing.T) {
	r := newRand(t)
	for _, dt := range []acl.DataType{acl.Float32, acl.Float16, acl.Int64, acl.Uint8} {
		for _, it := range []acl.DataType{acl.Int64, acl.Int32} {
			t.Run(fmt.Sprintf("%s/%s", dt, it), func(t *testing.T) {
				// Pool 2x2/2 of [1, 2, 4, 6]: indices in the 4x6 plane,
				// unpooled into 5x7 with the positions kept.
				idx := encodeAny(it, []float64{7, 2, 16, 18, 14, 23, 1, 9, 11, 12, 20, 22})
				nnCheck(t, r, []acl.DataType{dt, it}, [][]int64{{1, 2, 2, 3}, {1, 2, 2, 3}}, [][]byte{nil, idx}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					return g.MaxUnpool(in[0], in[1], []int64{1, 2, 5, 7}, ge.WithAttr(ge.AttrIndexShape, ge.IntsAttr([]int64{1, 2, 4, 6})))
				}, acl.Float32)
			})
		}
	}
	for _, bad := range []float64{-1, 48, 1 << 40} {
		g := ge.NewGraph("unpool")
		x := g.Data("x", 0, acl.Float32, []int64{1, 1, 2})
		i := g.Data("i", 1, acl.Int64, []int64{1, 1, 2})
		g.Output(g.MaxUnpool(x, i, []int64{1, 1, 4}, ge.Name("up")))
		err := nnRunErr(t, g, [][]byte{make([]byte, 8), encodeAny(acl.Int64, []float64{1, bad})})
		require.Error(t, err)
		require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)
		require.Contains(t, err.Error(), "out of range")
	}
}

func TestNNNorms(t *testing.T) {
	r := newRand(t)
	for _, dt := range append(floatTypes[:len(floatTypes):len(floatTypes)], acl.Float64) {
		for _, c := range []struct {
			x     []int64
			g, sc int64
		}{{[]int64{2, 6, 3, 4}, 3, 6}, {[]int64{2, 6, 5}, 2, 2}, {[]int64{3, 4, 2, 2, 3}, 4, 4}, {[]int64{2, 4}, 1, 1}} {
			t.Run(fmt.Sprintf("GroupNorm/%v/g%d/s%d/%s", c.x, c.g, c.sc, dt), func(t *testing.T) {
				nnCheck(t, r, []acl.DataType{dt, dt, dt}, [][]int64{c.x, {c.sc}, {c.sc}}, nil, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					return g.GroupNorm(in[0], in[1], in[2], c.g, 1e-3)
				}, dt)
			})
		}
		for _, axis := range []int64{0, 1, -1} {
			for _, p := range []int64{1, 2} {
				t.Run(fmt.Sprintf("LpNorm/axis%d/p%d/%s", axis, p, dt), func(t *testing.T) {
					nnCheck(t, r, []acl.DataType{dt}, [][]int64{{3, 4, 5}}, nil, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
						return g.LpNorm(in[0], axis, p)
					}, dt)
				})
			}
		}
		for _, size := range []int64{1, 2, 3, 5} {
			t.Run(fmt.Sprintf("LRN/size%d/%s", size, dt), func(t *testing.T) {
				nnCheck(t, r, []acl.DataType{dt}, [][]int64{{2, 6, 3, 2}}, nil, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					return g.LRN(in[0], size, 0.02, 0.75, 1.5)
				}, dt)
			})
		}
		for _, axes := range [][]int64{{0, 2, 3}, {1}, {-1, 0}} {
			t.Run(fmt.Sprintf("MVN/%v/%s", axes, dt), func(t *testing.T) {
				nnCheck(t, r, []acl.DataType{dt}, [][]int64{{2, 3, 4, 3}}, nil, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					return g.MVN(in[0], axes)
				}, dt)
			})
		}
		t.Run("BatchNormTrain/"+dt.String(), func(t *testing.T) {
			g := ge.NewGraph("bn")
			dims := [][]int64{{3, 4, 2, 5}, {4}, {4}, {4}, {4}}
			var ins []*ge.Tensor
			var data [][]byte
			for i, d := range dims {
				ins = append(ins, g.Data(fmt.Sprintf("in%d", i), i, dt, d))
				data = append(data, nnRand(r, dt, d))
			}
			data[4] = encodeAny(dt, []float64{0.5, 1, 1.5, 2})
			y, rm, rv := g.BatchNormTrain(ins[0], ins[1], ins[2], ins[3], ins[4], 1e-3, 0.8)
			g.Output(y, rm, rv)
			require.NoError(t, g.Err())
			got := runGraph(t, g, data)
			x := refVal{dt, dims[0], decodeAll(dt, data[0], 120)}
			sc, bi := refVal{dt, dims[1], decodeAll(dt, data[1], 4)}, refVal{dt, dims[2], decodeAll(dt, data[2], 4)}
			want := refBatchNormTrain(t, []refVal{x, sc, bi}, ge.Attrs{ge.AttrEpsilon: ge.FloatAttr(1e-3)}, y.Desc())
			requireClose(t, want, got[0], tolerance(dt), "y")
			mean, variance := refBNStats(x)
			m0, v0 := decodeAll(dt, data[3], 4), decodeAll(dt, data[4], 4)
			for i := range mean {
				mean[i] = m0[i]*0.8 + mean[i]*0.2
				variance[i] = v0[i]*0.8 + variance[i]*0.2
			}
			requireClose(t, rounded(dt, []int64{4}, mean), got[1], tolerance(dt), "running mean")
			requireClose(t, rounded(dt, []int64{4}, variance), got[2], tolerance(dt), "running var")
		})
	}
	for _, bad := range []struct {
		op    ge.OpType
		a     ge.Attrs
		descs []ge.TensorDesc
	}{
		{ge.OpGroupNorm, ge.Attrs{ge.AttrNumGroups: ge.IntAttr(4)}, []ge.TensorDesc{{DataType: acl.Float32, Dims: []int64{1, 6, 2}}, {DataType: acl.Float32, Dims: []int64{6}}, {DataType: acl.Float32, Dims: []int64{6}}}},
		{ge.OpGroupNorm, ge.Attrs{ge.AttrNumGroups: ge.IntAttr(3)}, []ge.TensorDesc{{DataType: acl.Float32, Dims: []int64{1, 6, 2}}, {DataType: acl.Float32, Dims: []int64{4}}, {DataType: acl.Float32, Dims: []int64{6}}}},
		{ge.OpLpNorm, ge.Attrs{ge.AttrP: ge.IntAttr(3)}, []ge.TensorDesc{{DataType: acl.Float32, Dims: []int64{2, 3}}}},
		{ge.OpLRN, ge.Attrs{ge.AttrSize: ge.IntAttr(0)}, []ge.TensorDesc{{DataType: acl.Float32, Dims: []int64{2, 3}}}},
		{ge.OpMVN, ge.Attrs{ge.AttrAxes: ge.IntsAttr([]int64{0, 0})}, []ge.TensorDesc{{DataType: acl.Float32, Dims: []int64{2, 3}}}},
		{ge.OpLRN, ge.Attrs{ge.AttrSize: ge.IntAttr(3)}, []ge.TensorDesc{{DataType: acl.Int32, Dims: []int64{2, 3}}}},
	} {
		_, err := ge.InferOp(bad.op, bad.a, bad.descs)
		require.Error(t, err, "%s %v", bad.op, bad.a)
	}
}

func TestRoiAlign(t *testing.T) {
	r := newRand(t)
	rois := []float64{0.5, 1, 6.2, 5.5, 0, 0, 8, 8, 3, 2.5, 3.2, 2.6, -1, -2, 12, 3}
	for _, dt := range append(floatTypes[:len(floatTypes):len(floatTypes)], acl.Float64) {
		for _, mode := range []string{"avg", "max"} {
			for _, coord := range []string{"half_pixel", "output_half_pixel"} {
				for _, ratio := range []int64{0, 2} {
					t.Run(fmt.Sprintf("%s/%s/%s/r%d", dt, mode, coord, ratio), func(t *testing.T) {
						nnCheck(t, r, []acl.DataType{dt, dt, acl.Int64}, [][]int64{{2, 3, 7, 8}, {4, 4}, {4}},
							[][]byte{nil, encodeAny(dt, rois), encodeAny(acl.Int64, []float64{1, 0, 0, 1})}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
								return g.RoiAlign(in[0], in[1], in[2], ge.WithAttr(ge.AttrRoiMode, ge.StringAttr(mode)), ge.WithAttr(ge.AttrRoiCoordMode, ge.StringAttr(coord)),
									ge.WithAttr(ge.AttrSamplingRatio, ge.IntAttr(ratio)), ge.WithAttr(ge.AttrOutputHeight, ge.IntAttr(3)),
									ge.WithAttr(ge.AttrOutputWidth, ge.IntAttr(2)), ge.WithAttr(ge.AttrSpatialScale, ge.FloatAttr(0.75)))
							}, dt)
					})
				}
			}
		}
	}
	g := ge.NewGraph("roi")
	x := g.Data("x", 0, acl.Float32, []int64{1, 1, 4, 4})
	ro := g.Data("r", 1, acl.Float32, []int64{1, 4})
	bi := g.Data("b", 2, acl.Int64, []int64{1})
	g.Output(g.RoiAlign(x, ro, bi, ge.Name("roi")))
	err := nnRunErr(t, g, [][]byte{make([]byte, 64), make([]byte, 16), encodeAny(acl.Int64, []float64{1})})
	require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)
	require.Contains(t, err.Error(), "out of range")
}

func TestNNKernelLimits(t *testing.T) {
	// An antialiased resize by a tiny scale, and a region needing an
	// enormous sampling grid, are refused instead of allocating.
	g := ge.NewGraph("rs")
	x := g.Data("x", 0, acl.Float32, []int64{1, 4})
	g.Output(g.Resize(x, []int64{1, 2}, []float64{1, 1e-12}, ge.WithAttr(ge.AttrResizeMode, ge.StringAttr("linear")), ge.WithAttr(ge.AttrAntialias, ge.BoolAttr(true))))
	err := nnRunErr(t, g, [][]byte{make([]byte, 16)})
	require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)

	g = ge.NewGraph("roi")
	xr := g.Data("x", 0, acl.Float32, []int64{1, 1, 4, 4})
	ro := g.Data("r", 1, acl.Float32, []int64{1, 4})
	bi := g.Data("b", 2, acl.Int64, []int64{1})
	g.Output(g.RoiAlign(xr, ro, bi))
	err = nnRunErr(t, g, [][]byte{make([]byte, 64), encodeAny(acl.Float32, []float64{0, 0, 1e9, 1e9}), make([]byte, 8)})
	require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)
}

// TestNNKernelsSurviveGarbage feeds NaN, infinities and huge values to the
// kernels that turn data into indices or coordinates: they finish, or fail
// with a typed error, and never panic.
func TestNNKernelsSurviveGarbage(t *testing.T) {
	r := newRand(t)
	special := []float64{nnNaN(), 1e30, -1e30, nnInf(1), nnInf(-1), 0, -0.5, 3}
	garbage := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			if r.IntN(2) == 0 {
				v[i] = special[r.IntN(len(special))]
			} else {
				v[i] = r.NormFloat64() * 5
			}
		}
		return v
	}
	s := ge.StringAttr
	for round := range 20 {
		for name, build := range map[string]func(g *ge.Graph) ([]*ge.Tensor, [][]int64){
			"GridSample": func(g *ge.Graph) ([]*ge.Tensor, [][]int64) {
				x := g.Data("x", 0, acl.Float32, []int64{1, 2, 3, 4})
				gr := g.Data("g", 1, acl.Float32, []int64{1, 5, 2, 2})
				modes := []string{"linear", "nearest", "cubic"}
				pads := []string{"zeros", "border", "reflection"}
				g.Output(g.GridSample(x, gr, ge.WithAttr(ge.AttrGridMode, s(modes[round%3])), ge.WithAttr(ge.AttrPaddingMode, s(pads[round/3%3])),
					ge.WithAttr(ge.AttrAlignCorners, ge.BoolAttr(round%2 == 0))))
				return nil, [][]int64{{1, 2, 3, 4}, {1, 5, 2, 2}}
			},
			"Resize": func(g *ge.Graph) ([]*ge.Tensor, [][]int64) {
				x := g.Data("x", 0, acl.Float32, []int64{2, 5})
				modes := []string{"nearest", "linear", "cubic"}
				g.Output(g.Resize(x, []int64{3, 9}, []float64{1.5, 1.8}, ge.WithAttr(ge.AttrResizeMode, s(modes[round%3])),
					ge.WithAttr(ge.AttrCoordTransform, s("tf_crop_and_resize")), ge.WithAttr(ge.AttrResizeROI, s("-3 0.2 5 0.9")),
					ge.WithAttr(ge.AttrAntialias, ge.BoolAttr(round%3 != 0))))
				return nil, [][]int64{{2, 5}}
			},
			"RoiAlign": func(g *ge.Graph) ([]*ge.Tensor, [][]int64) {
				x := g.Data("x", 0, acl.Float32, []int64{1, 2, 4, 4})
				ro := g.Data("r", 1, acl.Float32, []int64{3, 4})
				bi := g.Const("bi", acl.Int64, []int64{3}, encodeAny(acl.Int64, []float64{0, 0, 0}))
				g.Output(g.RoiAlign(x, ro, bi, ge.WithAttr(ge.AttrRoiMode, s([]string{"avg", "max"}[round%2])), ge.WithAttr(ge.AttrSamplingRatio, ge.IntAttr(int64(round%3)))))
				return nil, [][]int64{{1, 2, 4, 4}, {3, 4}}
			},
			"NonMaxSuppression": func(g *ge.Graph) ([]*ge.Tensor, [][]int64) {
				b := g.Data("b", 0, acl.Float32, []int64{1, 6, 4})
				sc := g.Data("s", 1, acl.Float32, []int64{1, 2, 6})
				sel, _ := g.NonMaxSuppression(b, sc, 4, 0.3, ge.WithAttr(ge.AttrCenterPointBox, ge.BoolAttr(round%2 == 0)))
				g.Output(sel)
				return nil, [][]int64{{1, 6, 4}, {1, 2, 6}}
			},
			"MaxPoolWithIndices": func(g *ge.Graph) ([]*ge.Tensor, [][]int64) {
				x := g.Data("x", 0, acl.Float32, []int64{1, 1, 5, 5})
				y, i := g.MaxPoolWithIndices(x, []int64{3, 3}, ge.WithAttr(ge.AttrPads, ge.IntsAttr([]int64{2, 2, 2, 2})))
				g.Output(y, i)
				return nil, [][]int64{{1, 1, 5, 5}}
			},
		} {
			g := ge.NewGraph(name)
			_, dims := build(g)
			require.NoError(t, g.Err(), name)
			var in [][]byte
			for _, d := range dims {
				in = append(in, encodeAny(acl.Float32, garbage(numel(d))))
			}
			if err := nnRunErr(t, g, in); err != nil {
				require.NotEqual(t, acl.Code(0), acl.CodeOf(err), "%s: %v", name, err)
			}
		}
	}
}

func nnNaN() float64      { return nnInf(1) - nnInf(1) }
func nnInf(s int) float64 { return float64(s) * 1e308 * 10 }
