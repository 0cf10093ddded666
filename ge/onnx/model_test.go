package onnx_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/onnx"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

func f32Input(dims []int64, v []float32) ge.HostTensor {
	return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Format: acl.FormatND, Dims: dims}, Data: f32Bytes(v)}
}

func randF32(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// TestModelSymbolicShapes: a model with a symbolic batch, loaded once,
// runs at several batches; each shape tuple compiles once, shape
// arithmetic folds at that shape, and the result equals a float64
// reference.
func TestModelSymbolicShapes(t *testing.T) {
	m, err := onnx.Load(symbolicMLP())
	require.NoError(t, err)
	require.False(t, m.Static())
	in := m.Inputs()
	require.Equal(t, []int64{-1, 4}, in[0].Dims)
	require.Equal(t, []string{"N", ""}, in[0].Symbols)
	require.Equal(t, []int64{-1, 3}, m.Outputs()[0].Dims)

	w := make([]float64, 12)
	for i := range w {
		w[i] = float64(i%5) - 2
	}
	b := []float64{0.5, -0.25, 0}
	r := rand.New(rand.NewPCG(rand.Uint64(), 1))
	for round := range 2 {
		for _, n := range []int64{1, 3, 7, 64} {
			x := randF32(r, int(n)*4)
			out, err := m.Run(context.Background(), []ge.HostTensor{f32Input([]int64{n, 4}, x)})
			require.NoError(t, err)
			require.Equal(t, []int64{n, 3}, out[0].Desc.Dims)
			got := bytesF32(out[0].Data)
			for i := range n {
				for j := range 3 {
					s := b[j]
					for k := range 4 {
						s += float64(x[int(i)*4+k]) * w[k*3+j]
					}
					require.InDelta(t, max(s, 0), got[i*3+int64(j)], 1e-5, "batch %d row %d col %d (round %d)", n, i, j, round)
				}
			}
		}
	}
	st := m.Stats()
	require.Equal(t, int64(4), st.Compiles, "one plan per shape")
	require.Equal(t, int64(4), st.Hits, "the second round finds every plan")
	require.Equal(t, 4, st.Plans)
	require.Zero(t, st.Interpreted, "shape arithmetic folds: no run is interpreted")
}

// TestModelPlanEviction: the plan cache keeps the bound and counts what it
// drops.
func TestModelPlanEviction(t *testing.T) {
	m, err := onnx.Load(symbolicMLP(), onnx.WithMaxPlans(2))
	require.NoError(t, err)
	for _, n := range []int64{1, 2, 3, 1} {
		_, err := m.Run(context.Background(), []ge.HostTensor{f32Input([]int64{n, 4}, make([]float32, n*4))})
		require.NoError(t, err)
	}
	st := m.Stats()
	require.Equal(t, 2, st.Plans)
	require.Equal(t, int64(4), st.Compiles, "batch 1 was evicted by batch 3 and built again")
	require.Equal(t, int64(2), st.Evictions)
}

// TestModelShapeErrors: what a run's shapes must obey, each refusal typed
// and naming what is at fault.
func TestModelShapeErrors(t *testing.T) {
	g := graph("two",
		[]*pb.NodeProto{nd("Add", []string{"a", "b"}, []string{"y"})},
		[]*pb.ValueInfoProto{vi("a", tFloat, "N", 2), vi("b", tFloat, "N", 2)},
		[]*pb.ValueInfoProto{vi("y", tFloat, "N", 2)})
	m, err := onnx.Load(modelBytes(g, 14))
	require.NoError(t, err)
	run := func(a, b []int64) error {
		_, err := m.Run(context.Background(), []ge.HostTensor{
			f32Input(a, make([]float32, max(ge.TensorDesc{Dims: a}.NumElements(), 0))),
			f32Input(b, make([]float32, max(ge.TensorDesc{Dims: b}.NumElements(), 0)))})
		return err
	}
	require.NoError(t, run([]int64{3, 2}, []int64{3, 2}))
	for _, tc := range []struct {
		name  string
		a, b  []int64
		parts []string
	}{
		{"symbol", []int64{3, 2}, []int64{4, 2}, []string{`"N"`, `"a"`, `"b"`, "3", "4"}},
		{"fixed dim", []int64{3, 5}, []int64{3, 5}, []string{`"a"`, "fixes it at 2"}},
		{"rank", []int64{3, 2, 1}, []int64{3, 2}, []string{`"a"`, "rank 3"}},
		{"overflow", []int64{1 << 62, 2}, []int64{1 << 62, 2}, []string{`"a"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.a, tc.b)
			require.ErrorIs(t, err, onnx.ErrShapeMismatch)
			var e *onnx.Error
			require.True(t, errors.As(err, &e))
			require.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
			for _, p := range tc.parts {
				require.ErrorContains(t, err, p)
			}
		})
	}
	_, err = m.Run(context.Background(), []ge.HostTensor{f32Input([]int64{3, 2}, make([]float32, 6))})
	require.ErrorIs(t, err, onnx.ErrShapeMismatch, "one input for two")
	require.NoError(t, run([]int64{0, 2}, []int64{0, 2}), "empty inputs run interpreted: Add of two is empty")
	short := f32Input([]int64{3, 2}, make([]float32, 5))
	_, err = m.Run(context.Background(), []ge.HostTensor{short, short})
	require.ErrorIs(t, err, onnx.ErrShapeMismatch, "data shorter than its desc")
}

// TestModelInputRange: WithInputRange bounds a symbolic dim as ATC's
// --input_shape_range does; Inputs reports the ranges.
func TestModelInputRange(t *testing.T) {
	_, err := onnx.Load(symbolicMLP(), onnx.WithInputRange("x", [][2]int64{{1, 8}, {3, 3}}))
	require.ErrorIs(t, err, onnx.ErrInvalidModel, "a range that excludes the fixed dim 4")
	_, err = onnx.Load(symbolicMLP(), onnx.WithInputRange("y", [][2]int64{{1, 8}, {4, 4}}))
	require.ErrorIs(t, err, onnx.ErrInvalidModel, "not an input")
	m, err := onnx.Load(symbolicMLP(), onnx.WithInputRange("x", [][2]int64{{2, 8}, {4, 4}}))
	require.NoError(t, err)
	require.Equal(t, [][2]int64{{2, 8}, {4, 4}}, m.Inputs()[0].Ranges)
	plain, err := onnx.Load(symbolicMLP())
	require.NoError(t, err)
	require.Equal(t, [][2]int64{{0, -1}, {4, 4}}, plain.Inputs()[0].Ranges)
	for _, n := range []int64{1, 9} {
		_, err = m.Run(context.Background(), []ge.HostTensor{f32Input([]int64{n, 4}, make([]float32, n*4))})
		require.ErrorIs(t, err, onnx.ErrShapeMismatch)
		require.ErrorContains(t, err, "outside its range [2, 8]")
	}
	_, err = m.Run(context.Background(), []ge.HostTensor{f32Input([]int64{8, 4}, make([]float32, 32))})
	require.NoError(t, err)
}

// TestModelEndlessLoop: a Loop of 2^62 iterations whose condition stays
// true ends when the run's context does, with ErrCanceled and
// ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT, not by hanging.
func TestModelEndlessLoop(t *testing.T) {
	m, err := onnx.Load(endlessLoop())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = m.Run(ctx, []ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Int64, Format: acl.FormatND}, Data: i64Bytes(0)}})
	require.ErrorIs(t, err, onnx.ErrCanceled)
	require.Equal(t, acl.CodeGEModelExecuteTimeout, acl.CodeOf(err))
	require.Less(t, time.Since(start), 5*time.Second)
	require.Equal(t, int64(1), m.Stats().Interpreted)
}

// TestModelDataDependentControlFlow: If on an input's value and a Loop
// whose trip count is an input run interpreted, reading outer-scope
// values from their subgraphs.
func TestModelDataDependentControlFlow(t *testing.T) {
	then := graph("then", []*pb.NodeProto{nd("Add", []string{"x", "one"}, []string{"t"})}, nil, []*pb.ValueInfoProto{viAny("t", tFloat)})
	els := graph("else", []*pb.NodeProto{nd("Mul", []string{"x", "x"}, []string{"e"})}, nil, []*pb.ValueInfoProto{viAny("e", tFloat)})
	// Loop body: acc = acc + x (outer scope) each iteration; scan out acc.
	body := graph("body",
		[]*pb.NodeProto{nd("Identity", []string{"c"}, []string{"c2"}), nd("Add", []string{"acc", "x"}, []string{"acc2"}), nd("Identity", []string{"acc2"}, []string{"s"})},
		[]*pb.ValueInfoProto{vi("i", tInt64), vi("c", tBool), viAny("acc", tFloat)},
		[]*pb.ValueInfoProto{vi("c2", tBool), viAny("acc2", tFloat), viAny("s", tFloat)})
	g := graph("cf",
		[]*pb.NodeProto{
			nd("If", []string{"flag"}, []string{"y"}, attrG("then_branch", then), attrG("else_branch", els)),
			nd("Loop", []string{"n", "", "y"}, []string{"acc", "scan"}, attrG("body", body)),
		},
		[]*pb.ValueInfoProto{vi("x", tFloat, "N"), vi("flag", tBool), vi("n", tInt64)},
		[]*pb.ValueInfoProto{vi("acc", tFloat, "N"), viAny("scan", tFloat)},
		f32Tensor("one", nil, []float32{1}))
	m, err := onnx.Load(modelBytes(g, 13))
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(rand.Uint64(), 2))
	for _, flag := range []bool{true, false} {
		for _, n := range []int64{1, 4} {
			x := randF32(r, 5)
			fb := byte(0)
			if flag {
				fb = 1
			}
			out, err := m.Run(context.Background(), []ge.HostTensor{
				f32Input([]int64{5}, x),
				{Desc: ge.TensorDesc{DataType: acl.Bool, Format: acl.FormatND}, Data: []byte{fb}},
				{Desc: ge.TensorDesc{DataType: acl.Int64, Format: acl.FormatND}, Data: i64Bytes(n)}})
			require.NoError(t, err)
			require.Equal(t, []int64{5}, out[0].Desc.Dims)
			require.Equal(t, []int64{n, 5}, out[1].Desc.Dims)
			acc, scan := bytesF32(out[0].Data), bytesF32(out[1].Data)
			for i, xi := range x {
				y := xi * xi
				if flag {
					y = xi + 1
				}
				for k := range n {
					y += xi
					require.InDelta(t, y, scan[k*5+int64(i)], 1e-5)
				}
				require.InDelta(t, y, acc[i], 1e-5)
			}
		}
	}
	require.Equal(t, int64(4), m.Stats().Interpreted)
}

// TestModelMalformedSubgraphs: each a typed ErrInvalidModel, at load or at
// the first run.
func TestModelMalformedSubgraphs(t *testing.T) {
	x := []*pb.ValueInfoProto{vi("x", tFloat, 2)}
	y := []*pb.ValueInfoProto{vi("y", tFloat, 2)}
	branch := func(in string) *pb.GraphProto {
		return graph("b", []*pb.NodeProto{nd("Relu", []string{in}, []string{"o"})}, nil, []*pb.ValueInfoProto{viAny("o", tFloat)})
	}
	cond := boolTensor("c", true)
	for _, tc := range []struct {
		name string
		g    *pb.GraphProto
		part string
	}{
		{"missing branch", graph("g", []*pb.NodeProto{nd("If", []string{"c"}, []string{"y"}, attrG("then_branch", branch("x")))}, x, y, cond), "else_branch"},
		{"missing outer name", graph("g", []*pb.NodeProto{nd("If", []string{"c"}, []string{"y"}, attrG("then_branch", branch("nowhere")), attrG("else_branch", branch("x")))}, x, y, cond), `"nowhere"`},
		{"cycle", graph("g", []*pb.NodeProto{nd("Add", []string{"x", "z"}, []string{"z"}), nd("Relu", []string{"z"}, []string{"y"})}, x, y), `"z"`},
		{"body arity", graph("g", []*pb.NodeProto{nd("Loop", []string{"", "c", "x"}, []string{"y"}, attrG("body", branch("x")))}, x, y, cond), "body has"},
		{"unsupported op in a subgraph", graph("g", []*pb.NodeProto{nd("If", []string{"c"}, []string{"y"},
			attrG("then_branch", graph("b", []*pb.NodeProto{nd("NoSuchOp", []string{"x"}, []string{"o"})}, nil, []*pb.ValueInfoProto{viAny("o", tFloat)})),
			attrG("else_branch", branch("x")))}, x, y, cond), "NoSuchOp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := onnx.Load(modelBytes(tc.g, 13))
			if err == nil {
				_, err = m.Run(context.Background(), []ge.HostTensor{f32Input([]int64{2}, []float32{1, 2})})
			}
			require.Error(t, err)
			var e *onnx.Error
			require.True(t, errors.As(err, &e), "%T %v", err, err)
			require.NotZero(t, acl.CodeOf(err))
			require.ErrorContains(t, err, tc.part)
		})
	}
}

// TestModelMemoryLimit: a value past the run's memory limit fails the run
// with ErrOutOfMemory and its ACL code; so does an input past it.
func TestModelMemoryLimit(t *testing.T) {
	g := graph("expand",
		[]*pb.NodeProto{nd("Expand", []string{"x", "shape"}, []string{"y"})},
		[]*pb.ValueInfoProto{vi("x", tFloat, 1), vi("shape", tInt64, 2)},
		[]*pb.ValueInfoProto{viAny("y", tFloat)})
	m, err := onnx.Load(modelBytes(g, 13), onnx.WithMemoryLimit(1<<20))
	require.NoError(t, err)
	shape := func(a, b int64) ge.HostTensor {
		return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int64, Format: acl.FormatND, Dims: []int64{2}}, Data: i64Bytes(a, b)}
	}
	out, err := m.Run(context.Background(), []ge.HostTensor{f32Input([]int64{1}, []float32{2.5}), shape(3, 4)})
	require.NoError(t, err)
	require.Equal(t, []int64{3, 4}, out[0].Desc.Dims)
	require.Equal(t, []float32{2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5}, bytesF32(out[0].Data))
	_, err = m.Run(context.Background(), []ge.HostTensor{f32Input([]int64{1}, []float32{2.5}), shape(1<<20, 1<<10)})
	require.ErrorIs(t, err, onnx.ErrOutOfMemory)
	require.Equal(t, acl.CodeGEMemoryAllocation, acl.CodeOf(err))
	_, err = m.Run(context.Background(), []ge.HostTensor{f32Input([]int64{1}, []float32{2.5}), shape(1<<40, 1<<40)})
	require.Error(t, err, "an element count past int64")
	require.NotZero(t, acl.CodeOf(err))
}

// TestTrainingDropout: a training-mode Dropout keeps each element with
// probability 1-ratio, scales the kept ones by 1/(1-ratio), returns the
// mask, and draws the same mask on every run (seeded).
func TestTrainingDropout(t *testing.T) {
	const n, ratio = 20000, 0.3
	g := graph("drop",
		[]*pb.NodeProto{nd("Dropout", []string{"x", "r", "train"}, []string{"y", "mask"})},
		[]*pb.ValueInfoProto{vi("x", tFloat, n)},
		[]*pb.ValueInfoProto{vi("y", tFloat, n), vi("mask", tBool, n)},
		f32Tensor("r", nil, []float32{ratio}), boolTensor("train", true))
	m, err := onnx.Load(modelBytes(g, 13))
	require.NoError(t, err)
	x := randF32(rand.New(rand.NewPCG(rand.Uint64(), 3)), n)
	run := func() ([]float32, []byte) {
		out, err := m.Run(context.Background(), []ge.HostTensor{f32Input([]int64{n}, x)})
		require.NoError(t, err)
		return bytesF32(out[0].Data), out[1].Data
	}
	y, mask := run()
	kept := 0
	for i := range x {
		if mask[i] != 0 {
			kept++
			require.InDelta(t, x[i]/(1-ratio), y[i], 1e-5)
		} else {
			require.Zero(t, y[i])
		}
	}
	// Binomial(n, 0.7): sd ≈ 65; 5 sd either side.
	require.InDelta(t, (1-ratio)*n, kept, 325)
	y2, mask2 := run()
	require.Equal(t, mask, mask2, "a seeded mask repeats")
	require.Equal(t, y, y2)
}
