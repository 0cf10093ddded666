package ge_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

func compile(t *testing.T, g *ge.Graph, opts ...ge.CompileOption) *ge.CompiledModel {
	t.Helper()
	m, err := ge.Compile(g, opts...)
	require.NoError(t, err)
	require.NoError(t, getest.CheckModel(m))
	return m
}

func taskOps(m *ge.CompiledModel) []ge.OpType {
	var ops []ge.OpType
	for _, t := range m.Tasks {
		ops = append(ops, t.Op)
	}
	return ops
}

func TestIOLayout(t *testing.T) {
	g := ge.NewGraph("layout")
	big := g.Data("big", 0, acl.Float32, []int64{64, 64})   // 16 KiB
	small := g.Data("small", 1, acl.Float32, []int64{64})   // 256 B
	mid := g.Data("mid", 2, acl.Float32, []int64{16, 64})   // 4 KiB
	h := g.Add(g.MatMul(mid, big), small, ge.Name("h"))     // [16,64]
	h2 := g.Relu(h, ge.Name("h2"))                          // FM
	o1 := g.Softmax(h2, -1, ge.Name("o1"))                  // output 0
	o2 := g.Reshape(g.Gelu(h2, ge.Name("o2")), []int64{-1}) // output 1, an alias of an FM tensor
	g.Output(o1, o2)
	// The layout of these five tasks, unfused (fusion has its own tests).
	m := compile(t, g, ge.WithoutFusion())

	fm := m.FeatureMapSize()
	require.Equal(t, int64(0), fm%ge.MemAlignSize)
	// Outputs first, in order, from the end of the feature map.
	assert.Equal(t, fm, m.Outputs[0].BasicOffset)
	assert.Equal(t, fm+4096, m.Outputs[1].BasicOffset)
	assert.Equal(t, []int64{1024}, m.Outputs[1].Dims, "the IO keeps the aliased dims")
	assert.Equal(t, "o2:0", m.Plan[m.Outputs[1].Buffer].Name, "the alias's source lives in the IO block")
	// Then inputs ascending by size: small, mid, big.
	assert.Equal(t, fm+8192, m.Inputs[1].BasicOffset)
	assert.Equal(t, fm+8192+512, m.Inputs[2].BasicOffset)
	assert.Equal(t, fm+8192+512+4096, m.Inputs[0].BasicOffset)
	assert.Equal(t, m.MemorySize, fm+8192+512+4096+16384)
	assert.Equal(t, int64(8192+512+4096+16384), m.ZeroCopySize)
	for _, d := range append(m.Inputs, m.Outputs...) {
		assert.True(t, d.ZeroCopy, d.Name)
		assert.Equal(t, []int64{0}, d.RelativeOffsets, d.Name)
	}
	// No Memcpy needed, no task for the Reshape.
	assert.Equal(t, []ge.OpType{ge.OpMatMul, ge.OpAdd, ge.OpRelu, ge.OpSoftmax, ge.OpGelu}, taskOps(m))
	// Slots are tagged with their memory and IO.
	mm := m.Tasks[0]
	assert.Equal(t, ge.ArgSlot{Mem: ge.MemModelIO, IO: ge.IORef{Dir: ge.IOInput, Index: 2}, Offset: m.Inputs[2].BasicOffset, Size: 4096, Buffer: m.Inputs[2].Buffer}, mm.Args[0])
	assert.Equal(t, ge.MemFeatureMap, mm.Args[2].Mem)
	gelu := m.Tasks[4]
	assert.Equal(t, ge.IORef{Dir: ge.IOOutput, Index: 1}, gelu.Args[1].IO)
	assert.Equal(t, []ge.SlotRef{{Task: 0, Arg: 1}}, m.IOSlots(ge.IORef{Dir: ge.IOInput, Index: 0}))
	assert.Equal(t, []ge.SlotRef{{Task: 4, Arg: 1}}, m.IOSlots(ge.IORef{Dir: ge.IOOutput, Index: 1}))
	assert.Nil(t, m.IOSlots(ge.IORef{Dir: ge.IOOutput, Index: 2}))
	at := mm.ArgTable()
	require.Len(t, at, 24)
	assert.Equal(t, byte(m.Inputs[2].BasicOffset), at[0])
	assert.True(t, mm.ZeroCopyCapable())
}

// TestOutputCopies covers GE's rule that an output sharing memory with an
// input, a weight or another output gets a copy kernel of its own.
func TestOutputCopies(t *testing.T) {
	cases := []struct {
		name   string
		build  func(g *ge.Graph)
		copies int
	}{
		{"input passed through", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{4})
			g.Output(g.Relu(x), x)
		}, 1},
		{"reshaped input", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{2, 2})
			g.Output(g.Reshape(x, []int64{4}))
		}, 1},
		{"weight alias", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{4})
			w := g.ConstFloat32("w", acl.Float32, []int64{4}, []float32{1, 2, 3, 4})
			g.Output(g.Add(x, w), g.Identity(w))
		}, 1},
		{"same tensor twice", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{4})
			y := g.Relu(x)
			g.Output(y, y)
		}, 1},
		{"output and its alias", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{4})
			y := g.Relu(x)
			g.Output(y, g.Identity(g.Reshape(y, []int64{2, 2})))
		}, 1},
		{"output also consumed", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{4})
			y := g.Relu(x)
			g.Output(g.Add(y, x), y)
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := ge.NewGraph(c.name)
			c.build(g)
			m := compile(t, g)
			n := 0
			for _, op := range taskOps(m) {
				if op == ge.OpMemcpy {
					n++
				}
			}
			assert.Equal(t, c.copies, n)
			blocks := map[int]bool{}
			for _, d := range append(append([]ge.IODesc{}, m.Inputs...), m.Outputs...) {
				assert.True(t, d.ZeroCopy, d.Name)
				assert.False(t, blocks[d.Buffer], "IO %q shares a block", d.Name)
				blocks[d.Buffer] = true
			}
			r := newRand(t)
			in := graphInputs(r, g)
			want := refEval(t, g, in)
			got := runGraph(t, g, in)
			for i := range want {
				requireClose(t, want[i], got[i], 1e-6, c.name)
			}
		})
	}
}

// TestNoZeroCopy: an IO reached by an op that cannot take external
// addresses is laid out in the feature map and copied by the runtime.
func TestNoZeroCopy(t *testing.T) {
	build := func(opts ...ge.OpOption) *ge.Graph {
		g := ge.NewGraph("nzc")
		a := g.Data("a", 0, acl.Float32, []int64{8, 8})
		b := g.Data("b", 1, acl.Float32, []int64{8, 8})
		y := g.Add(a, b, append(opts, ge.Name("hccl_like"))...)
		g.Output(g.Relu(y), y)
		return g
	}
	t.Run("all addresses", func(t *testing.T) {
		m := compile(t, build(ge.NoZeroCopy()))
		for _, d := range append(append([]ge.IODesc{}, m.Inputs...), m.Outputs[1]) {
			assert.False(t, d.ZeroCopy, d.Name)
			assert.Less(t, d.BasicOffset, m.FeatureMapSize(), d.Name)
		}
		assert.True(t, m.Outputs[0].ZeroCopy)
		assert.Equal(t, int64(512), m.ZeroCopySize)
		add := m.Tasks[0]
		assert.False(t, add.ZeroCopyCapable())
		for _, a := range add.Args {
			assert.Equal(t, ge.MemFeatureMap, a.Mem)
			assert.True(t, a.NoZeroCopy)
		}
		r := newRand(t)
		in := [][]byte{randInput(r, acl.Float32, []int64{8, 8}, 1), randInput(r, acl.Float32, []int64{8, 8}, 1)}
		want, err := getest.Run(m, in)
		require.NoError(t, err)
		out := [][]byte{make([]byte, 256), make([]byte, 256)}
		copies, err := getest.RunZeroCopy(m, in, out)
		require.NoError(t, err)
		assert.Equal(t, 3, copies, "two inputs in, one output out")
		assert.Equal(t, want, out)
	})
	t.Run("per-address flags", func(t *testing.T) {
		m := compile(t, build(ge.ZeroCopyFlags([]bool{true, false}, []bool{true})))
		assert.True(t, m.Inputs[0].ZeroCopy)
		assert.False(t, m.Inputs[1].ZeroCopy)
		assert.True(t, m.Outputs[1].ZeroCopy)
		assert.True(t, m.Tasks[0].ZeroCopyCapable())
	})
	t.Run("compile option", func(t *testing.T) {
		m := compile(t, build(), ge.NoZeroCopyOps("hccl_like"))
		assert.False(t, m.Inputs[0].ZeroCopy)
		assert.False(t, m.Outputs[1].ZeroCopy)
	})
	t.Run("data node", func(t *testing.T) {
		g := ge.NewGraph("nzc")
		a := g.Data("a", 0, acl.Float32, []int64{8}, ge.NoZeroCopy())
		g.Output(g.Relu(a))
		m := compile(t, g)
		assert.False(t, m.Inputs[0].ZeroCopy)
		assert.Equal(t, ge.MemFeatureMap, m.Tasks[0].Args[0].Mem)
	})
	t.Run("flag count mismatch", func(t *testing.T) {
		g := build(ge.ZeroCopyFlags([]bool{true}, []bool{true}))
		require.Error(t, g.Err())
		assert.Contains(t, g.Err().Error(), `node "hccl_like" (Add)`)
	})
}

func TestWorkspaceAndPruning(t *testing.T) {
	g := ge.NewGraph("ws")
	x := g.Data("x", 0, acl.Float16, []int64{4, 16})
	w := g.ConstFloat32("w", acl.Float16, []int64{16, 8}, make([]float32, 128))
	y := g.MatMul(x, w, ge.Name("mm"))
	g.Relu(y, ge.Name("dead")) // reaches no output: pruned
	g.ConstFloat32("unused", acl.Float32, []int64{1000}, make([]float32, 1000))
	g.Output(y)
	m := compile(t, g)
	require.Len(t, m.Tasks, 1)
	mm := m.Tasks[0]
	require.Equal(t, []int64{4 * (4*16 + 16*8 + 4*8)}, mm.Workspace)
	require.Len(t, mm.Args, 4)
	ws := m.Plan[mm.Args[3].Buffer]
	assert.Equal(t, ge.BufWorkspace, ws.Kind)
	assert.Equal(t, "mm:ws0", ws.Name)
	assert.Equal(t, int64(512), m.WeightSize, "the unused constant is dropped")
}

func TestErrorsNameTheNode(t *testing.T) {
	cases := []struct {
		name  string
		build func(g *ge.Graph)
		code  acl.Code
		msg   string
	}{
		{"inner dims", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{8, 64})
			w := g.Data("w", 1, acl.Float32, []int64{32, 16})
			g.MatMul(x, w, ge.Name("fc1"))
		}, acl.CodeGEParamInvalid, `node "fc1" (MatMul): inner dims 64 and 32 differ`},
		{"broadcast", func(g *ge.Graph) {
			g.Add(g.Data("a", 0, acl.Float32, []int64{2, 3}), g.Data("b", 1, acl.Float32, []int64{4}), ge.Name("sum"))
		}, acl.CodeGEParamInvalid, `node "sum" (Add): shapes [2,3] and [4] do not broadcast`},
		{"dtype mix", func(g *ge.Graph) {
			g.Add(g.Data("a", 0, acl.Float32, []int64{2}), g.Data("b", 1, acl.Float16, []int64{2}), ge.Name("mix"))
		}, acl.CodeUnsupportedDataType, `node "mix" (Add): input 1 has data type ACL_FLOAT16`},
		{"bool relu", func(g *ge.Graph) {
			g.Relu(g.Data("a", 0, acl.Bool, []int64{2}), ge.Name("r"))
		}, acl.CodeUnsupportedDataType, `node "r" (Relu)`},
		{"softmax axis", func(g *ge.Graph) {
			g.Softmax(g.Data("a", 0, acl.Float32, []int64{2, 3}), 2, ge.Name("sm"))
		}, acl.CodeGEParamInvalid, `node "sm" (Softmax): axis 2 out of range for rank 2`},
		{"reshape count", func(g *ge.Graph) {
			g.Reshape(g.Data("a", 0, acl.Float32, []int64{2, 3}), []int64{4, -1}, ge.Name("rs"))
		}, acl.CodeGEParamInvalid, `node "rs" (Reshape): shape [4,-1] does not hold 6 elements`},
		{"reshape huge", func(g *ge.Graph) {
			g.Reshape(g.Data("a", 0, acl.Float32, []int64{2, 3}), []int64{1 << 40, 1 << 40}, ge.Name("rs"))
		}, acl.CodeGEParamInvalid, `node "rs" (Reshape)`},
		{"concat dims", func(g *ge.Graph) {
			a := g.Data("a", 0, acl.Float32, []int64{2, 3})
			b := g.Data("b", 1, acl.Float32, []int64{3, 3})
			g.Concat([]*ge.Tensor{a, b}, 1, ge.Name("cat"))
		}, acl.CodeGEParamInvalid, `node "cat" (Concat): input 1 dims [3,3] differ`},
		{"slice bounds", func(g *ge.Graph) {
			g.Slice(g.Data("a", 0, acl.Float32, []int64{2, 3}), []int64{0, 2}, []int64{1, 2}, ge.Name("sl"))
		}, acl.CodeGEParamInvalid, `node "sl" (Slice): size[1] = 2 out of range [1, 1]`},
		{"gather indices", func(g *ge.Graph) {
			g.Gather(g.Data("a", 0, acl.Float32, []int64{2, 3}), g.Data("i", 1, acl.Float32, []int64{2}), 0, ge.Name("ga"))
		}, acl.CodeUnsupportedDataType, `node "ga" (Gather): indices have data type ACL_FLOAT`},
		{"layernorm gamma", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{2, 8})
			gm := g.Data("g", 1, acl.Float32, []int64{4})
			g.LayerNorm(x, gm, gm, 1e-5, ge.Name("ln"))
		}, acl.CodeGEParamInvalid, `node "ln" (LayerNorm): input 1 has dims [4], want [8]`},
		{"duplicate name", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{2})
			g.Relu(x, ge.Name("r"))
			g.Relu(x, ge.Name("r"))
		}, acl.CodeGEParamInvalid, `node "r" (Relu): duplicate node name`},
		{"duplicate input index", func(g *ge.Graph) {
			g.Data("x", 0, acl.Float32, []int64{2})
			g.Data("y", 0, acl.Float32, []int64{2})
		}, acl.CodeGEParamInvalid, `node "y" (Data): input index 0 already used by node "x"`},
		{"bad dims", func(g *ge.Graph) {
			g.Data("x", 0, acl.Float32, []int64{2, 0})
		}, acl.CodeGEParamInvalid, `node "x" (Data): dims [2,0]`},
		{"rank", func(g *ge.Graph) {
			g.Data("x", 0, acl.Float32, []int64{1, 1, 1, 1, 1, 1, 1, 1, 1})
		}, acl.CodeGEParamInvalid, `node "x" (Data): rank 9 exceeds 8`},
		{"too big", func(g *ge.Graph) {
			g.Data("x", 0, acl.Float32, []int64{1 << 20, 1 << 20, 1 << 20})
		}, acl.CodeGEParamInvalid, `node "x" (Data)`},
		{"const size", func(g *ge.Graph) {
			g.Const("c", acl.Float32, []int64{4}, make([]byte, 15))
		}, acl.CodeGEParamInvalid, `node "c" (Const): value holds 15 bytes`},
		{"nil input", func(g *ge.Graph) {
			g.Relu(nil, ge.Name("r"))
		}, acl.CodeGEParamInvalid, `node "r" (Relu): input 0 is nil`},
		{"foreign tensor", func(g *ge.Graph) {
			other := ge.NewGraph("other")
			g.Relu(other.Data("x", 0, acl.Float32, []int64{2}), ge.Name("r"))
		}, acl.CodeGEParamInvalid, `node "r" (Relu): input 0 is nil or belongs to another graph`},
		{"input count", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{2})
			g.AddOp(ge.OpAdd, []*ge.Tensor{x}, nil, ge.Name("a"))
		}, acl.CodeGEParamInvalid, `node "a" (Add): takes 2 inputs, got 1`},
		{"attr kind", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{2})
			g.AddOp(ge.OpSoftmax, []*ge.Tensor{x}, ge.Attrs{ge.AttrAxis: ge.FloatAttr(1)}, ge.Name("s"))
		}, acl.CodeGEParamInvalid, `node "s" (Softmax): attribute "axis" has kind 2`},
		{"raw data node", func(g *ge.Graph) {
			g.AddOp(ge.OpData, nil, nil, ge.Name("d"))
		}, acl.CodeGEParamInvalid, `node "d" (Data): create Data nodes with Graph.Data`},
		{"two outputs", func(g *ge.Graph) {
			x := g.Data("x", 0, acl.Float32, []int64{2})
			g.Output(x)
			g.Output(x)
		}, acl.CodeGEParamInvalid, `graph already has NetOutput "NetOutput"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := ge.NewGraph("bad")
			c.build(g)
			err := g.Err()
			require.Error(t, err)
			var ae *acl.Error
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, c.code, ae.Code, err.Error())
			assert.Contains(t, err.Error(), c.msg)
			g.Output(g.Data("z", 99, acl.Float32, []int64{1}))
			_, cerr := ge.Compile(g)
			assert.Equal(t, err, cerr, "Compile reports the first builder error")
		})
	}
}

func TestCompileGraphErrors(t *testing.T) {
	t.Run("no output", func(t *testing.T) {
		g := ge.NewGraph("g")
		g.Relu(g.Data("x", 0, acl.Float32, []int64{2}))
		_, err := ge.Compile(g)
		assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
		assert.Contains(t, err.Error(), "no NetOutput")
	})
	t.Run("input index gap", func(t *testing.T) {
		g := ge.NewGraph("g")
		g.Output(g.Relu(g.Data("x", 1, acl.Float32, []int64{2})))
		_, err := ge.Compile(g)
		assert.Contains(t, err.Error(), `node "x" (Data): input index 1 out of range [0, 1)`)
	})
	t.Run("cycle", func(t *testing.T) {
		g := ge.NewGraph("g")
		x := g.Data("x", 0, acl.Float32, []int64{2})
		a := g.Relu(x, ge.Name("a"))
		b := g.Relu(a, ge.Name("b"))
		g.Output(b)
		require.NoError(t, a.Node().SetInput(0, b))
		_, err := ge.Compile(g)
		assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
		assert.Contains(t, err.Error(), "cycle")
		assert.Regexp(t, `node "[ab]" \(Relu\)`, err.Error())
	})
	t.Run("rewired shape error", func(t *testing.T) {
		g := ge.NewGraph("g")
		x := g.Data("x", 0, acl.Float32, []int64{2, 4})
		y := g.Data("y", 1, acl.Float32, []int64{4, 3})
		mm := g.MatMul(x, y, ge.Name("fc1"))
		g.Output(mm)
		require.NoError(t, mm.Node().SetInput(1, x))
		_, err := ge.Compile(g)
		assert.Contains(t, err.Error(), `node "fc1" (MatMul): inner dims 4 and 2 differ`)
	})
	t.Run("set input checks", func(t *testing.T) {
		g := ge.NewGraph("g")
		x := g.Data("x", 0, acl.Float32, []int64{2})
		r := g.Relu(x)
		assert.Error(t, r.Node().SetInput(1, x))
		assert.Error(t, r.Node().SetInput(0, nil))
	})
	t.Run("nil graph", func(t *testing.T) {
		_, err := ge.Compile(nil)
		assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
	})
}
