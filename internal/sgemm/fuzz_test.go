package sgemm

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// FuzzGemm runs random shapes, strides, transposes, kinds and scalars
// through every kernel against the float64 reference (shapes this small
// run on one thread; TestGemmDeterministic covers the split). A short
// operand must give ErrShape, never a panic. Each product is also run
// with B packed ahead and an epilogue.
func FuzzGemm(f *testing.F) {
	f.Add(uint8(1), uint8(16), uint16(16), uint8(0), uint8(0), uint8(0), uint64(1))
	f.Add(uint8(13), uint8(33), uint16(270), uint8(3), uint8(0x15), uint8(2), uint64(2))
	f.Add(uint8(40), uint8(5), uint16(255), uint8(1), uint8(0x0a), uint8(1), uint64(3))
	f.Fuzz(func(t *testing.T, m, n uint8, k uint16, pad, flags, cut uint8, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 0))
		kind := Kind(flags % 3)
		ta, tb := flags&4 != 0, flags&8 != 0
		alpha := []float32{1, -2, 0.5, 0}[flags>>4&3]
		beta := []float32{0, 1, -0.25, 3}[flags>>6&3]
		p := newProblem(r, kind, int(m%16), int(n%36), int(k%300), ta, tb, int(pad%4), alpha, beta)
		if cut%8 == 7 { // a short operand must be refused
			p.Call.A.F32, p.Call.A.Half = p.a.F32[:len(p.a.F32)/2], p.a.Half[:len(p.a.Half)/2]
			if err := Gemm(&p.Call); err != nil && !errors.Is(err, ErrShape) {
				t.Fatalf("error %v is not ErrShape", err)
			}
			return
		}
		for _, kern := range kernels {
			p.reset()
			run(&p.Call, kern, 1)
			p.check(t, kern.name)
		}
		// The same product with B packed ahead (for some panel width) and
		// an epilogue is the plain product then the epilogue, bit for bit.
		nr := int(cut%32) + 1
		mm, nn, kk := p.M, p.N, p.K
		packed := make([]float32, PackedSize(kk, nn, nr))
		if err := PackB(packed, p.b.Matrix, kk, nn, nr); err != nil {
			t.Fatal(err)
		}
		epi := Epilogue{Bias: randSlice(r, max(mm, nn)), BiasPerRow: cut&1 != 0, Act: Act(int(cut>>1) % int(numActs)), Alpha: -0.5, Beta: 0.5}
		for _, kern := range kernels {
			p.reset()
			run(&p.Call, kern, 1)
			want := append([]float32(nil), p.C...)
			if mm > 0 && nn > 0 {
				epi.apply(want, p.LDC, 0, 0, mm, nn)
			}
			p.reset()
			c := p.Call
			c.B, c.Epi = Packed(packed, kk, nn, nr), epi
			if err := c.validate(); err != nil {
				t.Fatal(err)
			}
			run(&c, kern, 1)
			if !slices.Equal(bits(want), bits(c.C)) {
				t.Fatalf("%s: packed (width %d) with epilogue %+v differs from the product then the epilogue", kern.name, nr, epi.Act)
			}
		}
	})
}
