package ge

import (
	"math/rand/v2"
	"testing"
	"time"

	sg "github.com/ascend-go/cann/internal/sgemm"
)

// BenchmarkDepthwiseConv: a MobileNetV3 block's 3×3 depthwise layer
// ([2, 32, 12, 10], pad 1) through depthwise2D and through the
// implicit GEMM per group it replaced, in the same run; gflops is the
// direct kernel's rate and x_vs_gemm its speed-up.
func BenchmarkDepthwiseConv(b *testing.B) {
	const n, c, h, wd = 2, 32, 12, 10
	w, err := spatialWindow([]int64{n, c, h, wd}, []int64{3, 3}, Attrs{AttrPads: IntsAttr([]int64{1, 1, 1, 1})})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.outDims(false); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x, wt := make([]float32, n*c*h*wd), make([]float32, c*9)
	for i := range x {
		x[i] = rng.Float32()
	}
	for i := range wt {
		wt[i] = rng.Float32()
	}
	out := make([]float32, n*c*w.outSize())
	pin, pout := w.inSize(), w.outSize()
	hp, wp := dwPadDims(&w)
	pad, tmp := make([]float32, hp*wp), make([]float32, dwTmpSize(&w))
	var td, tg int64
	b.ReportAllocs()
	for b.Loop() {
		t0 := nanotime()
		for bi := range n {
			depthwise2D(&w, c, c, x[bi*c*pin:], wt, out[bi*c*pout:], pad, tmp)
		}
		t1 := nanotime()
		for bi := range n {
			for g := range c {
				im := imFor(&w, x[(bi*c+g)*pin:(bi*c+g+1)*pin])
				if err := sg.Gemm(&sg.Call{M: 1, N: pout, K: 9, Alpha: 1, A: sg.Matrix{F32: wt[g*9:], Stride: 9},
					B: sg.Matrix{Im2col: &im}, C: out[(bi*c+g)*pout:], LDC: pout}); err != nil {
					b.Fatal(err)
				}
			}
		}
		td, tg = td+t1-t0, tg+nanotime()-t1
	}
	b.ReportMetric(float64(2*n*c*pout*9)*float64(b.N)/float64(td), "gflops")
	b.ReportMetric(float64(tg)/float64(td), "x_vs_gemm")
}

func nanotime() int64 { return time.Now().UnixNano() }

func imFor(w *window, x []float32) sg.Im2col {
	return sg.Im2col{X: x, C: 1, In: w.in, Out: w.out, K: w.k, Stride: w.s, Dil: w.d, Pad: w.pb}
}
