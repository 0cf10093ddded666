package getest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// TwoIO is a small fp32 model with two inputs and two outputs, for tests of
// model loading, binding and execution:
//
//	y = relu(x · W1) · W2 + b     x [M,K], W1 [K,H], W2 [H,N], b [M,N]
//	z = x ⊙ x
//
// Ref computes both outputs in float64, independently of the kernels.
type TwoIO struct {
	M, K, H, N int
	W1, W2     []float32
	Model      *ge.CompiledModel
	Blob       []byte // Model in the model format
}

// NewTwoIO builds and compiles a TwoIO with random weights drawn from rng.
func NewTwoIO(rng *rand.Rand, m, k, h, n int) (*TwoIO, error) {
	p := &TwoIO{M: m, K: k, H: h, N: n, W1: RandF32(rng, k*h), W2: RandF32(rng, h*n)}
	g := ge.NewGraph("twoio")
	x := g.Data("x", 0, acl.Float32, []int64{int64(m), int64(k)})
	b := g.Data("b", 1, acl.Float32, []int64{int64(m), int64(n)})
	w1 := g.ConstFloat32("w1", acl.Float32, []int64{int64(k), int64(h)}, p.W1)
	w2 := g.ConstFloat32("w2", acl.Float32, []int64{int64(h), int64(n)}, p.W2)
	hid := g.Relu(g.MatMul(x, w1, ge.Name("fc1")), ge.Name("relu"))
	y := g.Add(g.MatMul(hid, w2, ge.Name("fc2")), b, ge.Name("bias"))
	g.Output(y, g.Mul(x, x, ge.Name("square")))
	cm, err := ge.Compile(g)
	if err != nil {
		return nil, err
	}
	p.Model = cm
	if p.Blob, err = cm.MarshalBinary(); err != nil {
		return nil, err
	}
	return p, nil
}

// InSizes are the byte sizes of x and b.
func (p *TwoIO) InSizes() []uintptr {
	if p == nil {
		return nil
	}
	return []uintptr{uintptr(4 * p.M * p.K), uintptr(4 * p.M * p.N)}
}

// OutSizes are the byte sizes of y and z.
func (p *TwoIO) OutSizes() []uintptr {
	if p == nil {
		return nil
	}
	return []uintptr{uintptr(4 * p.M * p.N), uintptr(4 * p.M * p.K)}
}

// Ref computes y and z in float64.
func (p *TwoIO) Ref(x, b []float32) (y, z []float64) {
	if p == nil {
		return nil, nil
	}
	hid := make([]float64, p.M*p.H)
	for i := range p.M {
		for j := range p.H {
			var s float64
			for k := range p.K {
				s += float64(x[i*p.K+k]) * float64(p.W1[k*p.H+j])
			}
			hid[i*p.H+j] = math.Max(s, 0)
		}
	}
	y = make([]float64, p.M*p.N)
	for i := range p.M {
		for j := range p.N {
			s := float64(b[i*p.N+j])
			for k := range p.H {
				s += hid[i*p.H+k] * float64(p.W2[k*p.N+j])
			}
			y[i*p.N+j] = s
		}
	}
	z = make([]float64, len(x))
	for i, v := range x {
		z[i] = float64(v) * float64(v)
	}
	return y, z
}

// RandF32 returns n standard-normal float32 values.
func RandF32(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// F32Bytes encodes v as little-endian float32 bytes, the layout of an
// ACL_FLOAT tensor.
func F32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// BytesF32 decodes little-endian float32 bytes (a trailing partial element
// is ignored).
func BytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
