package ge_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

// The kernels of a CNN's hot path that split large inputs over threads —
// max pooling (over planes), BatchNorm (over planes), Transpose (over
// rows, starting mid-tensor) — give the same bits at any GOMAXPROCS, and
// the right values: checked against a direct computation here.
func TestSplitKernelsMatchReference(t *testing.T) {
	const n, c, h, w = 2, 24, 41, 39
	r := rand.New(rand.NewPCG(31, 32))
	g := ge.NewGraph("split")
	x := g.Data("x", 0, acl.Float32, []int64{n, c, h, w})
	p := g.Pool(ge.OpMaxPool, x, []int64{3, 3}, ge.WithAttr(ge.AttrStrides, ge.IntsAttr([]int64{2, 2})),
		ge.WithAttr(ge.AttrPads, ge.IntsAttr([]int64{1, 1, 1, 1})))
	tr := g.Transpose(x, []int64{0, 2, 3, 1})
	scale, bias := getest.RandFloats(r, c, 1), getest.RandFloats(r, c, 1)
	mean, vr := getest.RandFloats(r, c, 1), getest.RandFloats(r, c, 1)
	for i := range vr {
		vr[i] = 0.5 + float32(math.Abs(float64(vr[i])))
	}
	cf := func(name string, v []float32) *ge.Tensor { return g.ConstFloat32(name, acl.Float32, []int64{c}, v) }
	bn := g.BatchNorm(x, cf("scale", scale), cf("bias", bias), cf("mean", mean), cf("var", vr), 1e-5)
	g.Output(p, tr, bn)
	m, err := ge.Compile(g)
	require.NoError(t, err)
	xv := getest.RandFloats(r, n*c*h*w, 2)
	in := [][]byte{unsafe.Slice((*byte)(unsafe.Pointer(&xv[0])), 4*len(xv))}
	var first [][]byte
	for _, procs := range []int{1, 2, 3} {
		old := runtime.GOMAXPROCS(procs)
		out, err := getest.Run(m, in)
		runtime.GOMAXPROCS(old)
		require.NoError(t, err)
		if first == nil {
			first = out
			continue
		}
		require.Equal(t, first, out, "GOMAXPROCS=%d differs from GOMAXPROCS=1", procs)
	}
	f32 := func(b []byte) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4) }
	at := func(i, j, y, z int) float32 { return xv[((i*c+j)*h+y)*w+z] }
	pool, trans, norm := f32(first[0]), f32(first[1]), f32(first[2])
	oh, ow := (h-1)/2+1, (w-1)/2+1
	for i := range n {
		for j := range c {
			for y := range oh {
				for z := range ow {
					want := float32(math.Inf(-1))
					for dy := -1; dy <= 1; dy++ {
						for dz := -1; dz <= 1; dz++ {
							if yy, zz := 2*y+dy, 2*z+dz; yy >= 0 && yy < h && zz >= 0 && zz < w {
								want = max(want, at(i, j, yy, zz))
							}
						}
					}
					require.Equal(t, want, pool[((i*c+j)*oh+y)*ow+z], "max pool at %d,%d,%d,%d", i, j, y, z)
				}
			}
			for y := range h {
				for z := range w {
					require.Equal(t, at(i, j, y, z), trans[((i*h+y)*w+z)*c+j], "transpose at %d,%d,%d,%d", i, j, y, z)
					want := (float64(at(i, j, y, z))-float64(mean[j]))/math.Sqrt(float64(vr[j])+1e-5)*float64(scale[j]) + float64(bias[j])
					require.InDelta(t, want, float64(norm[((i*c+j)*h+y)*w+z]), 1e-5*(1+math.Abs(want)), "batch norm at %d,%d,%d,%d", i, j, y, z)
				}
			}
		}
	}
}

// Large binary ops split over threads — same shapes (flat ranges), a
// scalar operand, a broadcast operand (rows starting mid-tensor) — give
// the same bits at any GOMAXPROCS, equal to the float32 operation itself.
func TestSplitBinaryMatchesReference(t *testing.T) {
	const n, c, h, w = 2, 24, 41, 39
	r := rand.New(rand.NewPCG(33, 34))
	g := ge.NewGraph("split_binary")
	x := g.Data("x", 0, acl.Float32, []int64{n, c, h, w})
	y := g.Data("y", 1, acl.Float32, []int64{n, c, h, w})
	bias := getest.RandFloats(r, c*w, 1)
	g.Output(g.Mul(x, y), g.Div(x, g.ConstFloat32("s", acl.Float32, []int64{1}, []float32{1.7})),
		g.Sub(x, g.ConstFloat32("b", acl.Float32, []int64{c, 1, w}, bias)))
	m, err := ge.Compile(g)
	require.NoError(t, err)
	xv, yv := getest.RandFloats(r, n*c*h*w, 2), getest.RandFloats(r, n*c*h*w, 2)
	bytesOf := func(f []float32) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f)) }
	in := [][]byte{bytesOf(xv), bytesOf(yv)}
	var first [][]byte
	for _, procs := range []int{1, 2, 3} {
		old := runtime.GOMAXPROCS(procs)
		out, err := getest.Run(m, in)
		runtime.GOMAXPROCS(old)
		require.NoError(t, err)
		if first == nil {
			first = out
			continue
		}
		require.Equal(t, first, out, "GOMAXPROCS=%d differs from GOMAXPROCS=1", procs)
	}
	f32 := func(b []byte) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4) }
	mul, div, sub := f32(first[0]), f32(first[1]), f32(first[2])
	for i := range xv {
		j, z := i/(h*w)%c, i%w
		require.Equal(t, xv[i]*yv[i], mul[i], "mul at %d", i)
		require.Equal(t, xv[i]/float32(1.7), div[i], "div at %d", i)
		require.Equal(t, xv[i]-bias[j*w+z], sub[i], "sub at %d", i)
	}
}
