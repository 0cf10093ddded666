package fallback

import (
	"encoding/binary"
	"github.com/ascend-go/cann/ge/getest"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/stretchr/testify/require"
)

// mlp is the test model: two inputs, a weight, two outputs.
//
//	y0 = relu(x · W) + r     x [M,K], W [K,N], r [M,N]
//	y1 = x ⊙ x
type mlp struct {
	M, K, N int
	W       []float32
	blob    []byte
	model   *ge.CompiledModel
}

func newMLP(t *testing.T, rng *rand.Rand, opts ...ge.CompileOption) *mlp {
	t.Helper()
	p := &mlp{M: 4, K: 8, N: 16}
	p.W = getest.RandF32(rng, p.K*p.N)
	g := ge.NewGraph("mlp")
	x := g.Data("x", 0, acl.Float32, []int64{int64(p.M), int64(p.K)})
	r := g.Data("r", 1, acl.Float32, []int64{int64(p.M), int64(p.N)})
	w := g.ConstFloat32("w", acl.Float32, []int64{int64(p.K), int64(p.N)}, p.W)
	h := g.MatMul(x, w, ge.Name("fc"))
	y0 := g.Add(g.Relu(h, ge.Name("relu")), r, ge.Name("add"))
	y1 := g.Mul(x, x, ge.Name("square"))
	g.Output(y0, y1)
	m, err := ge.Compile(g, opts...)
	require.NoError(t, err)
	p.blob, err = m.MarshalBinary()
	require.NoError(t, err)
	p.model, err = ge.ParseModel(p.blob)
	require.NoError(t, err)
	return p
}

// ref computes both outputs in float64, independently of the kernels.
func (p *mlp) ref(x, r []float32) (y0, y1 []float64) {
	y0 = make([]float64, p.M*p.N)
	for i := range p.M {
		for j := range p.N {
			var s float64
			for k := range p.K {
				s += float64(x[i*p.K+k]) * float64(p.W[k*p.N+j])
			}
			y0[i*p.N+j] = math.Max(s, 0) + float64(r[i*p.N+j])
		}
	}
	y1 = make([]float64, len(x))
	for i, v := range x {
		y1[i] = float64(v) * float64(v)
	}
	return y0, y1
}

func (p *mlp) inSizes() []int  { return []int{4 * p.M * p.K, 4 * p.M * p.N} }
func (p *mlp) outSizes() []int { return []int{4 * p.M * p.N, 4 * p.M * p.K} }

func putF32s(b []byte, v []float32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
}

func getF32s(b []byte, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// requireClose compares float32 results with a float64 reference.
func requireClose(t *testing.T, want []float64, got []float32, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		tol := 1e-5 * math.Max(1, math.Abs(want[i]))
		require.InDelta(t, want[i], float64(got[i]), tol, "%s[%d]", what, i)
	}
}

// devBytes allocates size bytes of device memory and returns them as a
// slice.
func devBytes(t *testing.T, n *NPU, size int) []byte {
	t.Helper()
	return unsafe.Slice((*byte)(mustMalloc(t, n, uintptr(size))), size)
}

// addrOf is the address of a buffer's first byte.
func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// newDataset builds a dataset with one data buffer per slice and returns
// it with the buffers' handles.
func newDataset(t *testing.T, n *NPU, bufs ...[]byte) (acl.DatasetHandle, []acl.DataBufferHandle) {
	t.Helper()
	ds, err := n.CreateDataset()
	require.NoError(t, err)
	hs := make([]acl.DataBufferHandle, len(bufs))
	for i, b := range bufs {
		var p unsafe.Pointer
		if len(b) > 0 {
			p = unsafe.Pointer(unsafe.SliceData(b))
		}
		hs[i], err = n.CreateDataBuffer(p, uintptr(len(b)))
		require.NoError(t, err)
		require.NoError(t, n.AddDatasetBuffer(ds, hs[i]))
	}
	return ds, hs
}

func loadBlob(t *testing.T, n *NPU, blob []byte) acl.ModelID {
	t.Helper()
	id, err := n.LoadFromMem(unsafe.Pointer(unsafe.SliceData(blob)), uintptr(len(blob)))
	require.NoError(t, err)
	return id
}

// feed writes fresh random inputs into the two input buffers and returns
// them.
func (p *mlp) feed(rng *rand.Rand, xb, rb []byte) (x, r []float32) {
	x, r = getest.RandF32(rng, p.M*p.K), getest.RandF32(rng, p.M*p.N)
	putF32s(xb, x)
	putF32s(rb, r)
	return x, r
}

// check compares the two output buffers with the reference.
func (p *mlp) check(t *testing.T, x, r []float32, y0b, y1b []byte) {
	t.Helper()
	w0, w1 := p.ref(x, r)
	requireClose(t, w0, getF32s(y0b, p.M*p.N), "y0")
	requireClose(t, w1, getF32s(y1b, p.M*p.K), "y1")
}

// slotCount is the number of argument slots referring to an IO.
func slotCount(t *testing.T, n *NPU, id acl.ModelID, out bool, i int) int {
	t.Helper()
	rt, err := n.modelRuntime(id)
	require.NoError(t, err)
	if out {
		return len(rt.Outputs()[i].Slots)
	}
	return len(rt.Inputs()[i].Slots)
}

func mkStream(t *testing.T, n *NPU) acl.StreamHandle {
	t.Helper()
	s, err := n.CreateStream()
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.DestroyStream(s) })
	return s
}

func runAsync(t *testing.T, n *NPU, id acl.ModelID, in, out acl.DatasetHandle, s acl.StreamHandle) {
	t.Helper()
	require.NoError(t, n.ExecuteAsync(id, in, out, s))
	require.NoError(t, n.SynchronizeStream(s))
}
