package ge_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

var floatTypes = []acl.DataType{acl.Float32, acl.Float16, acl.BFloat16}

// newRand returns a generator on a fresh seed, logged so a failure can be
// replayed: GE_TEST_SEED=<seed> go test -run <test> ./ge.
func newRand(t testing.TB) *rand.Rand {
	seed := rand.Uint64()
	if s := os.Getenv("GE_TEST_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "GE_TEST_SEED")
	}
	t.Logf("seed %d (replay with GE_TEST_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// runGraph compiles g, checks its plan, runs it in one arena and with
// zero-copy IO, requires both runs to agree byte for byte and to make no IO
// copy, and returns the outputs.
func runGraph(t testing.TB, g *ge.Graph, inputs [][]byte) [][]byte {
	t.Helper()
	m, err := ge.Compile(g)
	require.NoError(t, err)
	require.NoError(t, getest.CheckModel(m))
	out, err := getest.Run(m, inputs)
	require.NoError(t, err)
	zc := make([][]byte, len(m.Outputs))
	for i, d := range m.Outputs {
		zc[i] = bytes.Repeat([]byte{getest.Poison}, int(d.Size))
	}
	copies, err := getest.RunZeroCopy(m, inputs, zc)
	require.NoError(t, err)
	require.Zero(t, copies, "every IO of a plain graph is zero-copy")
	for i := range out {
		require.Equal(t, out[i], zc[i], "output %d differs between arena and zero-copy runs", i)
	}
	return out
}

// checkOp builds a graph with one Data per input, applies op, runs it and
// compares with the float64 reference.
func checkOp(t *testing.T, r *rand.Rand, dts []acl.DataType, dims [][]int64, build func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor, tolDT acl.DataType) {
	t.Helper()
	checkOpScaled(t, r, dts, dims, build, tolDT, 1)
}

// checkOpScaled is checkOp on inputs of the given scale.
func checkOpScaled(t *testing.T, r *rand.Rand, dts []acl.DataType, dims [][]int64, build func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor, tolDT acl.DataType, scale float64) {
	t.Helper()
	g := ge.NewGraph("op")
	var ins []*ge.Tensor
	var data [][]byte
	for i := range dims {
		ins = append(ins, g.Data(fmt.Sprintf("in%d", i), i, dts[i], dims[i]))
		data = append(data, randInput(r, dts[i], dims[i], scale))
	}
	g.Output(build(g, ins))
	require.NoError(t, g.Err())
	want := refEval(t, g, data)
	got := runGraph(t, g, data)
	requireClose(t, want[0], got[0], tolerance(tolDT), t.Name())
}

func TestBinaryOps(t *testing.T) {
	r := newRand(t)
	shapes := [][2][]int64{
		{{3, 5}, {3, 5}},
		{{2, 3, 4}, {4}},
		{{2, 3, 4}, {3, 1}},
		{{1, 3, 1}, {2, 1, 4}},
		{{6}, {1}},
		{{1}, {2, 3}},
		{{}, {2, 3}},
		{{4, 1, 5}, {4, 3, 1}},
	}
	ops := map[string]func(g *ge.Graph, a, b *ge.Tensor) *ge.Tensor{
		"Add": func(g *ge.Graph, a, b *ge.Tensor) *ge.Tensor { return g.Add(a, b) },
		"Sub": func(g *ge.Graph, a, b *ge.Tensor) *ge.Tensor { return g.Sub(a, b) },
		"Mul": func(g *ge.Graph, a, b *ge.Tensor) *ge.Tensor { return g.Mul(a, b) },
		"Div": func(g *ge.Graph, a, b *ge.Tensor) *ge.Tensor { return g.Div(a, b) },
	}
	for name, op := range ops {
		for _, dt := range floatTypes {
			for _, s := range shapes {
				t.Run(fmt.Sprintf("%s/%s/%v%v", name, dt, s[0], s[1]), func(t *testing.T) {
					checkOp(t, r, []acl.DataType{dt, dt}, [][]int64{s[0], s[1]}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
						return op(g, in[0], in[1])
					}, dt)
				})
			}
		}
	}
}

func TestUnaryOps(t *testing.T) {
	r := newRand(t)
	ops := map[string]func(g *ge.Graph, x *ge.Tensor) *ge.Tensor{
		"Relu": func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { return g.Relu(x) },
		"Gelu": func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { return g.Gelu(x) },
		"Silu": func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { return g.Silu(x) },
	}
	for name, op := range ops {
		for _, dt := range floatTypes {
			t.Run(name+"/"+dt.String(), func(t *testing.T) {
				checkOp(t, r, []acl.DataType{dt}, [][]int64{{7, 33}}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					return op(g, in[0])
				}, dt)
			})
		}
	}
}

func TestMatMul(t *testing.T) {
	r := newRand(t)
	cases := []struct {
		a, b   []int64
		ta, tb bool
	}{
		{[]int64{5, 64}, []int64{64, 7}, false, false},
		{[]int64{64, 5}, []int64{64, 7}, true, false},
		{[]int64{5, 64}, []int64{7, 64}, false, true},
		{[]int64{64, 5}, []int64{7, 64}, true, true},
		{[]int64{2, 3, 4, 16}, []int64{16, 6}, false, false},
		{[]int64{3, 4, 16}, []int64{3, 16, 6}, false, false},
		{[]int64{1, 4, 16}, []int64{2, 6, 16}, false, true},
		{[]int64{2, 1, 4, 8}, []int64{3, 8, 5}, false, false},
	}
	for _, dt := range floatTypes {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%v^%v x %v^%v", dt, c.a, c.ta, c.b, c.tb), func(t *testing.T) {
				checkOp(t, r, []acl.DataType{dt, dt}, [][]int64{c.a, c.b}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					var opts []ge.OpOption
					if c.ta {
						opts = append(opts, ge.TransposeA())
					}
					if c.tb {
						opts = append(opts, ge.TransposeB())
					}
					return g.MatMul(in[0], in[1], opts...)
				}, dt)
			})
		}
	}
}

func TestSoftmaxAndNorms(t *testing.T) {
	r := newRand(t)
	for _, dt := range floatTypes {
		for _, axis := range []int{-1, 0, 1} {
			t.Run(fmt.Sprintf("Softmax/%s/axis%d", dt, axis), func(t *testing.T) {
				checkOp(t, r, []acl.DataType{dt}, [][]int64{{3, 4, 5}}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					return g.Softmax(in[0], axis)
				}, dt)
			})
		}
		t.Run("LayerNorm/"+dt.String(), func(t *testing.T) {
			checkOp(t, r, []acl.DataType{dt, dt, dt}, [][]int64{{2, 5, 48}, {48}, {48}}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
				return g.LayerNorm(in[0], in[1], in[2], 1e-5)
			}, dt)
		})
		t.Run("RMSNorm/"+dt.String(), func(t *testing.T) {
			checkOp(t, r, []acl.DataType{dt, dt}, [][]int64{{6, 40}, {40}}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
				return g.RMSNorm(in[0], in[1], 1e-6)
			}, dt)
		})
	}
}

func TestGather(t *testing.T) {
	r := newRand(t)
	for _, dt := range []acl.DataType{acl.Float32, acl.Float16, acl.BFloat16, acl.Int32} {
		for _, it := range []acl.DataType{acl.Int32, acl.Int64} {
			for _, axis := range []int{0, 1, -1} {
				t.Run(fmt.Sprintf("%s/%s/axis%d", dt, it, axis), func(t *testing.T) {
					checkOp(t, r, []acl.DataType{dt, it}, [][]int64{{10, 10, 10}, {2, 4}}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
						return g.Gather(in[0], in[1], axis)
					}, acl.Float32)
				})
			}
		}
	}
}

func TestGatherIndexOutOfRange(t *testing.T) {
	for _, it := range []acl.DataType{acl.Int32, acl.Int64} {
		for _, bad := range []float64{10, -1, 1 << 30} {
			g := ge.NewGraph("gather")
			p := g.Data("p", 0, acl.Float32, []int64{10, 4})
			idx := g.Data("idx", 1, it, []int64{3})
			g.Output(g.Gather(p, idx, 0, ge.Name("emb")))
			m, err := ge.Compile(g)
			require.NoError(t, err)
			_, err = getest.Run(m, [][]byte{make([]byte, 160), encodeFloats(it, []float64{1, bad, 2})})
			require.Error(t, err)
			require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)
			require.ErrorIs(t, err, acl.ErrStreamTask)
			require.Contains(t, err.Error(), `"emb"`)
			require.Contains(t, err.Error(), "out of range")
		}
	}
}

func TestConcatAndSlice(t *testing.T) {
	r := newRand(t)
	for _, dt := range []acl.DataType{acl.Float32, acl.Float16, acl.BFloat16, acl.Int64} {
		for _, axis := range []int{0, 1, 2, -1} {
			dims := [][]int64{{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}
			dims[1][normAxisRef(int64(axis), 3)] = 5
			t.Run(fmt.Sprintf("Concat/%s/axis%d", dt, axis), func(t *testing.T) {
				checkOp(t, r, []acl.DataType{dt, dt, dt}, dims, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					return g.Concat(in, axis)
				}, acl.Float32)
			})
		}
		for _, c := range [][2][]int64{{{0, 1, 1}, {2, 2, 3}}, {{1, 0, 2}, {-1, -1, -1}}, {{0, 2, 0}, {1, 1, 4}}} {
			t.Run(fmt.Sprintf("Slice/%s/%v+%v", dt, c[0], c[1]), func(t *testing.T) {
				checkOp(t, r, []acl.DataType{dt}, [][]int64{{2, 3, 4}}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
					return g.Slice(in[0], c[0], c[1])
				}, acl.Float32)
			})
		}
	}
}

// TestRunTaskUnaligned runs every float kernel with arguments that start at
// odd addresses (callers' slices need not be aligned) and requires the same
// bytes as with aligned arguments.
func TestRunTaskUnaligned(t *testing.T) {
	r := newRand(t)
	build := map[string]func(g *ge.Graph, dt acl.DataType) *ge.Tensor{
		"MatMul":  func(g *ge.Graph, dt acl.DataType) *ge.Tensor { return g.MatMul(d(g, dt, 0, 3, 8), d(g, dt, 1, 8, 5)) },
		"Add":     func(g *ge.Graph, dt acl.DataType) *ge.Tensor { return g.Add(d(g, dt, 0, 3, 8), d(g, dt, 1, 8)) },
		"Gelu":    func(g *ge.Graph, dt acl.DataType) *ge.Tensor { return g.Gelu(d(g, dt, 0, 3, 8)) },
		"Softmax": func(g *ge.Graph, dt acl.DataType) *ge.Tensor { return g.Softmax(d(g, dt, 0, 3, 8), 0) },
		"LayerNorm": func(g *ge.Graph, dt acl.DataType) *ge.Tensor {
			return g.LayerNorm(d(g, dt, 0, 3, 8), d(g, dt, 1, 8), d(g, dt, 2, 8), 1e-5)
		},
	}
	for name, b := range build {
		for _, dt := range floatTypes {
			t.Run(name+"/"+dt.String(), func(t *testing.T) {
				g := ge.NewGraph("u")
				g.Output(b(g, dt))
				m, err := ge.Compile(g)
				require.NoError(t, err)
				task := &m.Tasks[0]
				aligned := make([][]byte, len(task.Args))
				odd := make([][]byte, len(task.Args))
				for i, a := range task.Args {
					aligned[i] = make([]byte, a.Size)
					if i < len(task.Inputs) {
						copy(aligned[i], randInput(r, dt, task.Inputs[i].Dims, 1))
					}
					odd[i] = make([]byte, a.Size+1)[1:]
					copy(odd[i], aligned[i])
				}
				require.NoError(t, ge.RunTask(task, aligned))
				require.NoError(t, ge.RunTask(task, odd))
				out := len(task.Inputs)
				require.Equal(t, aligned[out], odd[out])
			})
		}
	}
}

func d(g *ge.Graph, dt acl.DataType, idx int, dims ...int64) *ge.Tensor {
	return g.Data(fmt.Sprintf("in%d", idx), idx, dt, dims)
}

func TestRunTaskRejectsBadArguments(t *testing.T) {
	g := ge.NewGraph("bad")
	g.Output(g.MatMul(d(g, acl.Float32, 0, 2, 3), d(g, acl.Float32, 1, 3, 4), ge.Name("mm")))
	m, err := ge.Compile(g)
	require.NoError(t, err)
	task := m.Tasks[0]
	args := [][]byte{make([]byte, 24), make([]byte, 48), make([]byte, 32)}
	require.NoError(t, ge.RunTask(&task, args))

	err = ge.RunTask(&task, args[:2])
	require.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
	err = ge.RunTask(&task, [][]byte{args[0], args[1], make([]byte, 31)})
	require.Equal(t, acl.CodeRTParamInvalid, acl.CodeOf(err))
	require.Contains(t, err.Error(), `"mm"`)

	// A task whose descriptors disagree with inference is refused before
	// any kernel touches memory.
	bad := task
	bad.Outputs = []ge.TensorDesc{{DataType: acl.Float32, Format: acl.FormatND, Dims: []int64{2, 5}}}
	require.Equal(t, acl.CodeInvalidParam, acl.CodeOf(ge.RunTask(&bad, args)))
	bad = task
	bad.Args = append([]ge.ArgSlot{}, task.Args...)
	bad.Args[2].Size = 8
	require.Equal(t, acl.CodeInvalidParam, acl.CodeOf(ge.RunTask(&bad, args)))
	bad = task
	bad.Op = ge.OpType(999)
	require.Equal(t, acl.CodeFeatureUnsupported, acl.CodeOf(ge.RunTask(&bad, args)))
}
