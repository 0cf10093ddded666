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
