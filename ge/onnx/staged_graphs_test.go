package onnx_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/onnx"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

func boolT(b bool) ge.HostTensor {
	x := byte(0)
	if b {
		x = 1
	}
	return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Bool, Format: acl.FormatND}, Data: []byte{x}}
}

// TestStagedControlFlowShapes: control flow the corpus does not show,
// staged and checked against the interpreter on random inputs: an If
// inside a Loop body (a stage with its own continuation, per iteration),
// branches whose outputs differ in shape (the continuation compiled per
// shape), a while loop (no trip count; the body's condition ends it), a
// data-dependent op that is neither If nor Loop (NonZero, folded alone
// with the continuation compiled per count), a constant Loop too long to
// unroll (its body compiled once) and a Loop of zero
// iterations (no scan output to stack: the interpreter answers).
func TestStagedControlFlowShapes(t *testing.T) {
	half := f32Tensor("half", nil, []float32{0.5})
	one := f32Tensor("one", nil, []float32{1})
	zero := f32Tensor("zerof", nil, []float32{0})
	// Loop body with an If on the carried value's sum.
	ifBody := graph("body",
		[]*pb.NodeProto{
			nd("ReduceSum", []string{"acc"}, []string{"s"}, attrI("keepdims", 0)),
			nd("Greater", []string{"s", "zerof"}, []string{"pos"}),
			nd("If", []string{"pos"}, []string{"acc2"},
				attrG("then_branch", graph("t", []*pb.NodeProto{nd("Mul", []string{"acc", "half"}, []string{"tm"}), nd("Sub", []string{"tm", "x"}, []string{"to"})}, nil, []*pb.ValueInfoProto{viAny("to", tFloat)})),
				attrG("else_branch", graph("e", []*pb.NodeProto{nd("Add", []string{"acc", "one"}, []string{"eo"})}, nil, []*pb.ValueInfoProto{viAny("eo", tFloat)}))),
			nd("Identity", []string{"c"}, []string{"c2"}),
			nd("Tanh", []string{"acc2"}, []string{"sc"}),
		},
		[]*pb.ValueInfoProto{vi("i", tInt64), vi("c", tBool), viAny("acc", tFloat)},
		[]*pb.ValueInfoProto{vi("c2", tBool), viAny("acc2", tFloat), viAny("sc", tFloat)})
	loopIf := graph("loopif",
		[]*pb.NodeProto{nd("Loop", []string{"n", "", "x"}, []string{"acc", "scan"}, attrG("body", ifBody)),
			nd("ReduceSum", []string{"scan"}, []string{"tot"}, attrI("keepdims", 0))},
		[]*pb.ValueInfoProto{vi("x", tFloat, "N"), vi("n", tInt64)},
		[]*pb.ValueInfoProto{viAny("acc", tFloat), viAny("scan", tFloat), viAny("tot", tFloat)},
		half, one, zero)
	// If whose branches differ in shape, then arithmetic on the result.
	shapes := graph("ifshape",
		[]*pb.NodeProto{
			nd("If", []string{"flag"}, []string{"y"},
				attrG("then_branch", graph("t", []*pb.NodeProto{nd("Relu", []string{"x"}, []string{"tr"})}, nil, []*pb.ValueInfoProto{viAny("tr", tFloat)})),
				attrG("else_branch", graph("e", []*pb.NodeProto{nd("Concat", []string{"x", "x"}, []string{"ec"}, attrI("axis", 0))}, nil, []*pb.ValueInfoProto{viAny("ec", tFloat)}))),
			nd("Mul", []string{"y", "y"}, []string{"sq"}),
			nd("ReduceSum", []string{"sq"}, []string{"rs"}, attrIs("axes", 0), attrI("keepdims", 1)),
		},
		[]*pb.ValueInfoProto{vi("x", tFloat, "N", 3), vi("flag", tBool)},
		[]*pb.ValueInfoProto{viAny("y", tFloat), viAny("rs", tFloat)})
	// While loop: runs while i < limit (an input), doubling the state.
	whileBody := graph("wb",
		[]*pb.NodeProto{
			nd("Less", []string{"i", "lim"}, []string{"go"}),
			nd("Add", []string{"st", "st"}, []string{"st2"}),
		},
		[]*pb.ValueInfoProto{vi("i", tInt64), vi("c", tBool), viAny("st", tFloat)},
		[]*pb.ValueInfoProto{vi("go", tBool), viAny("st2", tFloat)})
	while := graph("while",
		[]*pb.NodeProto{nd("Loop", []string{"", "go0", "x"}, []string{"y"}, attrG("body", whileBody))},
		[]*pb.ValueInfoProto{vi("x", tFloat, "N"), vi("lim", tInt64), vi("go0", tBool)},
		[]*pb.ValueInfoProto{viAny("y", tFloat)})
	// NonZero: its count decides the continuation's shapes.
	nonzero := graph("nz",
		[]*pb.NodeProto{
			nd("Relu", []string{"x"}, []string{"r"}),
			nd("NonZero", []string{"r"}, []string{"idx"}),
			nd("Cast", []string{"idx"}, []string{"f"}, attrI("to", tFloat)),
			nd("Add", []string{"f", "one"}, []string{"y"}),
		},
		[]*pb.ValueInfoProto{vi("x", tFloat, "N")},
		[]*pb.ValueInfoProto{viAny("y", tFloat)}, one)
	// A Loop of a constant 1500 trips: too long to unroll at import, so
	// staged with its body compiled once.
	addBody := graph("ab",
		[]*pb.NodeProto{nd("Identity", []string{"c"}, []string{"c2"}), nd("Add", []string{"acc", "x"}, []string{"acc2"}), nd("Mul", []string{"acc2", "half"}, []string{"s"})},
		[]*pb.ValueInfoProto{vi("i", tInt64), vi("c", tBool), viAny("acc", tFloat)},
		[]*pb.ValueInfoProto{vi("c2", tBool), viAny("acc2", tFloat), viAny("s", tFloat)})
	long := graph("long",
		[]*pb.NodeProto{nd("Loop", []string{"trips", "", "x"}, []string{"acc", "scan"}, attrG("body", addBody))},
		[]*pb.ValueInfoProto{vi("x", tFloat, "N")},
		[]*pb.ValueInfoProto{viAny("acc", tFloat), viAny("scan", tFloat)},
		half, i64Tensor("trips", nil, 1500))
	r := rand.New(rand.NewPCG(rand.Uint64(), 29))
	for _, c := range []struct {
		name   string
		g      *pb.GraphProto
		feeds  func(v int) []ge.HostTensor
		staged func(v int) bool // whether variant v runs staged
	}{
		{"if in loop", loopIf, func(v int) []ge.HostTensor {
			n := []int64{1, 4, 9}[v%3]
			x := []int64{5, 2}[v%2]
			return []ge.HostTensor{f32T([]int64{x}, randn32(r, x, []float32{0.5, -0.5, 0}[v%3])), i64T(n)}
		}, func(int) bool { return true }},
		{"branch shapes", shapes, func(v int) []ge.HostTensor {
			n := []int64{1, 3, 4}[v%3]
			return []ge.HostTensor{f32T([]int64{n, 3}, randn32(r, n*3, 0)), boolT(v%2 == 0)}
		}, func(int) bool { return true }},
		{"while", while, func(v int) []ge.HostTensor {
			n := []int64{2, 6}[v%2]
			return []ge.HostTensor{f32T([]int64{n}, randn32(r, n, 0)), i64T([]int64{0, 3, 7}[v%3]), boolT(true)}
		}, func(int) bool { return true }},
		{"nonzero", nonzero, func(v int) []ge.HostTensor {
			n := []int64{4, 9, 16}[v%3]
			return []ge.HostTensor{f32T([]int64{n}, randn32(r, n, 0.5))}
		}, func(int) bool { return true }},
		{"long constant loop", long, func(v int) []ge.HostTensor {
			n := []int64{3, 1}[v%2]
			return []ge.HostTensor{f32T([]int64{n}, randn32(r, n, 0))}
		}, func(int) bool { return true }},
		{"zero trips", loopIf, func(v int) []ge.HostTensor {
			return []ge.HostTensor{f32T([]int64{3}, randn32(r, 3, 0)), i64T(0)}
		}, func(int) bool { return false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := onnx.Load(modelBytes(c.g, 13))
			require.NoError(t, err)
			var staged int64
			for v := range 12 {
				in := c.feeds(v)
				want, werr := onnx.Interpret(context.Background(), m, in)
				got, err := m.Run(context.Background(), in)
				if werr != nil {
					require.Error(t, err)
					require.Equal(t, acl.CodeOf(werr), acl.CodeOf(err), "the interpreter's error: %v", werr)
					require.ErrorContains(t, err, werr.Error())
					continue
				}
				require.NoError(t, err)
				requireSameTensors(t, want, got, c.name)
				if c.staged(v) {
					staged++
				}
				require.Equal(t, staged, m.Stats().Staged, "variant %d", v)
			}
		})
	}
}
