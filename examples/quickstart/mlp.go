package main

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// mlp is the model: y = relu(x·W1 + b1)·W2 + b2, float32, with
// x [B,I], W1 [I,H], b1 [H], W2 [H,O], b2 [O].
type mlp struct {
	B, I, H, O     int
	W1, B1, W2, B2 []float32
}

// newMLP draws the weights, scaled by 1/√fan-in so that activations stay
// near unit size.
func newMLP(rng *rand.Rand, b, i, h, o int) *mlp {
	return &mlp{
		B: b, I: i, H: h, O: o,
		W1: randF32(rng, i*h, 1/math.Sqrt(float64(i))), B1: randF32(rng, h, 0.1),
		W2: randF32(rng, h*o, 1/math.Sqrt(float64(h))), B2: randF32(rng, o, 0.1),
	}
}

// graph builds the model with the graph builder.
func (p *mlp) graph() *ge.Graph {
	g := ge.NewGraph("mlp")
	dims := func(d ...int) []int64 {
		out := make([]int64, len(d))
		for i, v := range d {
			out[i] = int64(v)
		}
		return out
	}
	x := g.Data("x", 0, acl.Float32, dims(p.B, p.I))
	w1 := g.ConstFloat32("w1", acl.Float32, dims(p.I, p.H), p.W1)
	b1 := g.ConstFloat32("b1", acl.Float32, dims(p.H), p.B1)
	w2 := g.ConstFloat32("w2", acl.Float32, dims(p.H, p.O), p.W2)
	b2 := g.ConstFloat32("b2", acl.Float32, dims(p.O), p.B2)
	h := g.Relu(g.Add(g.MatMul(x, w1, ge.Name("fc1")), b1, ge.Name("bias1")), ge.Name("relu"))
	y := g.Add(g.MatMul(h, w2, ge.Name("fc2")), b2, ge.Name("y"))
	g.Output(y)
	return g
}

// ref computes y in float64, independently of the model's kernels.
func (p *mlp) ref(x []float32) []float64 {
	h := make([]float64, p.H)
	y := make([]float64, p.B*p.O)
	for r := range p.B {
		for j := range p.H {
			s := float64(p.B1[j])
			for k := range p.I {
				s += float64(x[r*p.I+k]) * float64(p.W1[k*p.H+j])
			}
			h[j] = math.Max(s, 0)
		}
		for j := range p.O {
			s := float64(p.B2[j])
			for k := range p.H {
				s += h[k] * float64(p.W2[k*p.O+j])
			}
			y[r*p.O+j] = s
		}
	}
	return y
}

func randF32(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * scale)
	}
	return v
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
