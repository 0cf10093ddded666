package sgemm

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// A row-split product sharing one packed B (runRowsShared) — implicit
// GEMM convolutions and plain B, with several K and N blocks — gives the
// bits of one thread at any thread count.
func TestRowsSharedMatchesOneThread(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	conv := func(cout, cin, hw, k, s int) *Call {
		out := (hw+2*(k/2)-k)/s + 1
		x := make([]float32, cin*hw*hw)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		w := make([]float32, cout*cin*k*k)
		for i := range w {
			w[i] = float32(r.NormFloat64())
		}
		im := &Im2col{X: x, C: cin, In: [3]int{1, hw, hw}, Out: [3]int{1, out, out}, K: [3]int{1, k, k},
			Stride: [3]int{1, s, s}, Dil: [3]int{1, 1, 1}, Pad: [3]int{0, k / 2, k / 2}}
		return &Call{M: cout, N: out * out, K: cin * k * k, Alpha: 1, A: Matrix{F32: w, Stride: cin * k * k},
			B: Matrix{Im2col: im}, C: make([]float32, cout*out*out), LDC: out * out}
	}
	calls := []*Call{conv(256, 64, 14, 3, 1), conv(160, 40, 9, 3, 2), &newProblem(r, F32, 300, 70, 700, false, true, 0, 1, 0.5).Call,
		&newProblem(r, BF16, 250, 40, 300, true, false, 3, 0.5, 0).Call}
	if !raceBuild {
		calls = append(calls, &newProblem(r, F32, 900, 2100, 300, false, false, 0, 1, 0).Call) // two N blocks
	}
	for i, c := range calls {
		require.True(t, shareRows(c, best), "call %d does not take the shared row split", i)
		c0 := append([]float32(nil), c.C...)
		require.NoError(t, GemmThreads(c, 1))
		want := bits(c.C)
		for _, th := range []int{2, 3} {
			copy(c.C, c0)
			old := runtime.GOMAXPROCS(th)
			err := GemmThreads(c, th)
			runtime.GOMAXPROCS(old)
			require.NoError(t, err)
			require.Equal(t, want, bits(c.C), "call %d threads %d", i, th)
		}
	}
}

// A panel another thread began packing and does not finish (a stalled
// packer) is packed privately after panelWait; a free one is packed in
// place and marked packed. Both hold what packing the panel gives.
func TestSharedPanelStates(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	p := newProblem(r, F32, 50, 70, 40, false, false, 0, 1, 0)
	kern := best
	nr := kern.nr
	pn := (p.N + nr - 1) / nr
	buf := make([]float32, p.K*pn*nr)
	s := newStep(&p.Call, kern, buf, 0, 0)
	want := make([]float32, p.K*nr)
	for jp := range pn {
		packBPanel(want, &p.Call.B, 0, p.K, jp*nr, min(nr, p.N-jp*nr), nr, make([]float32, nr*KC))
		for _, stalled := range []bool{false, true} {
			sh := panelShare{state: make([]atomic.Uint32, pn), priv: make([]float32, 2*nr*KC)}
			clear(buf)
			if stalled {
				sh.state[jp].Store(panelPacking)
			}
			s.share = &sh
			got := sh.panel(&s, jp)[:p.K*nr]
			require.Equal(t, want, got, "panel %d stalled=%v", jp, stalled)
			if stalled {
				require.Equal(t, panelPacking, sh.state[jp].Load())
				require.Equal(t, make([]float32, p.K*nr), buf[jp*nr*p.K:(jp+1)*nr*p.K], "a stalled panel is left to its packer")
			} else {
				require.Equal(t, panelPacked, sh.state[jp].Load())
				require.Equal(t, want, buf[jp*nr*p.K:(jp+1)*nr*p.K])
			}
		}
	}
}
