package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// convRef is the direct float64 convolution; transpose selects
// ConvTranspose (every input pixel scattered through the kernel).
func convRef(p Conv, x, w, bias []float32, transpose bool) ([]float64, []float64) {
	p.defaults()
	cg, kg := p.C/p.Groups, p.K/p.Groups
	oh, ow := p.ConvOut()
	if transpose {
		oh, ow = p.TransposeOut()
	}
	y, mag := make([]float64, p.N*p.K*oh*ow), make([]float64, p.N*p.K*oh*ow)
	for n := range p.N {
		for k := range p.K {
			g := k / kg
			for i := range oh * ow {
				if bias != nil {
					y[(n*p.K+k)*oh*ow+i] = float64(bias[k])
					mag[(n*p.K+k)*oh*ow+i] = math.Abs(float64(bias[k]))
				}
			}
			for c := g * cg; c < (g+1)*cg; c++ {
				for r := range p.R {
					for s := range p.S {
						term := func(oy, ox, iy, ix int, wv float64) {
							if oy < 0 || oy >= oh || ox < 0 || ox >= ow || iy < 0 || iy >= p.H || ix < 0 || ix >= p.W {
								return
							}
							v := wv * float64(x[((n*p.C+c)*p.H+iy)*p.W+ix])
							y[(n*p.K+k)*oh*ow+oy*ow+ox] += v
							mag[(n*p.K+k)*oh*ow+oy*ow+ox] += math.Abs(v)
						}
						if transpose { // scatter every input pixel
							wv := float64(w[((c*kg+k-g*kg)*p.R+r)*p.S+s])
							for iy := range p.H {
								for ix := range p.W {
									term(iy*p.StrideH+r*p.DilH-p.PadT, ix*p.StrideW+s*p.DilW-p.PadL, iy, ix, wv)
								}
							}
							continue
						}
						wv := float64(w[((k*cg+c-g*cg)*p.R+r)*p.S+s]) // gather for every output pixel
						for oy := range oh {
							for ox := range ow {
								term(oy, ox, oy*p.StrideH+r*p.DilH-p.PadT, ox*p.StrideW+s*p.DilW-p.PadL, wv)
							}
						}
					}
				}
			}
		}
	}
	return y, mag
}

func TestConvMatchesDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	cases := []Conv{
		{N: 1, C: 1, H: 5, W: 5, K: 1, R: 3, S: 3},
		{N: 2, C: 3, H: 7, W: 9, K: 4, R: 3, S: 2, PadT: 1, PadL: 2, PadB: 1, PadR: 0},
		{N: 1, C: 4, H: 11, W: 13, K: 6, R: 3, S: 3, StrideH: 2, StrideW: 3, Groups: 2, PadT: 1, PadL: 1, PadB: 1, PadR: 1},
		{N: 1, C: 2, H: 10, W: 10, K: 3, R: 3, S: 3, DilH: 2, DilW: 3},
		{N: 1, C: 6, H: 8, W: 8, K: 6, R: 3, S: 3, Groups: 6, PadT: 1, PadL: 1, PadB: 1, PadR: 1}, // depthwise
		{N: 1, C: 16, H: 20, W: 20, K: 32, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1},        // several tiles
	}
	for i, p := range cases {
		for _, transpose := range []bool{false, true} {
			name := fmt.Sprintf("case%d/transpose=%v", i, transpose)
			q := p
			if transpose {
				q.OutPadH, q.OutPadW = min(q.StrideH, q.DilH)-1, 0
				if q.OutPadH < 0 {
					q.OutPadH = 0
				}
			}
			q.defaults()
			x := randSlice(r, q.N*q.C*q.H*q.W)
			var w []float32
			var oh, ow int
			if transpose {
				w = randSlice(r, q.C*(q.K/q.Groups)*q.R*q.S)
				oh, ow = q.TransposeOut()
			} else {
				w = randSlice(r, q.K*(q.C/q.Groups)*q.R*q.S)
				oh, ow = q.ConvOut()
			}
			bias := randSlice(r, q.K)
			if i%2 == 1 {
				bias = nil
			}
			y := make([]float32, q.N*q.K*oh*ow)
			for j := range y {
				y[j] = float32(math.NaN()) // every element must be written
			}
			if transpose {
				require.NoError(t, ConvTranspose2D(q, x, w, bias, y), name)
			} else {
				require.NoError(t, Conv2D(q, x, w, bias, y), name)
			}
			want, mag := convRef(q, x, w, bias, transpose)
			for j := range y {
				tol := float64(q.C*q.R*q.S+2) * 0x1p-23 * mag[j]
				if !assert.InDelta(t, want[j], y[j], tol+1e-30, "%s y[%d]", name, j) {
					break
				}
			}
		}
	}
}

func TestConvRejectsBadParams(t *testing.T) {
	ok := Conv{N: 1, C: 2, H: 4, W: 4, K: 2, R: 3, S: 3}
	x, w, y := make([]float32, 32), make([]float32, 36), make([]float32, 8)
	require.NoError(t, Conv2D(ok, x, w, nil, y))
	for name, mut := range map[string]func(p *Conv){
		"groups":   func(p *Conv) { p.Groups = 3 },
		"negative": func(p *Conv) { p.PadT = -1 },
		"empty":    func(p *Conv) { p.R = 9 },
		"short x":  func(p *Conv) { p.H = 5 },
	} {
		p := ok
		mut(&p)
		assert.ErrorIs(t, Conv2D(p, x, w, nil, y), ErrConv, name)
	}
	assert.ErrorIs(t, Conv2D(ok, x, w, make([]float32, 1), y), ErrConv, "short bias")
	assert.ErrorIs(t, ConvTranspose2D(ok, x, w, nil, y), ErrConv, "short y for the transpose")
}

// TestConvImplicitIsExplicit: the implicit GEMM (Im2col packed from the
// image) gives, bit for bit, what explicit im2col then GEMM gives, on 1
// and on 4 threads.
func TestConvImplicitIsExplicit(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := range 40 {
		p := Conv{N: 1 + r.IntN(2), C: 1 + r.IntN(9), H: 1 + r.IntN(20), W: 1 + r.IntN(20), R: 1 + r.IntN(4), S: 1 + r.IntN(4),
			StrideH: 1 + r.IntN(3), StrideW: 1 + r.IntN(3), DilH: 1 + r.IntN(2), DilW: 1 + r.IntN(2),
			PadT: r.IntN(3), PadL: r.IntN(3), PadB: r.IntN(3), PadR: r.IntN(3)}
		p.Groups = []int{1, 1, p.C}[r.IntN(3)]
		p.K = p.Groups * (1 + r.IntN(40))
		if i == 0 { // a ResNet-like layer: several panels and KC blocks
			p = Conv{N: 1, C: 64, H: 14, W: 14, K: 64, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1}
		}
		p.defaults()
		oh, ow := p.ConvOut()
		if oh < 1 || ow < 1 {
			continue
		}
		x := randSlice(r, p.N*p.C*p.H*p.W)
		w := randSlice(r, p.K*(p.C/p.Groups)*p.R*p.S)
		bias := randSlice(r, p.K)
		want := make([]float32, p.N*p.K*oh*ow)
		require.NoError(t, conv2D(p, x, w, bias, want, true))
		for _, threads := range []int{1, 4} {
			prev := runtime.GOMAXPROCS(threads)
			got := make([]float32, len(want))
			err := Conv2D(p, x, w, bias, got)
			runtime.GOMAXPROCS(prev)
			require.NoError(t, err)
			for j := range want {
				if math.Float32bits(want[j]) != math.Float32bits(got[j]) {
					t.Fatalf("%+v threads=%d: y[%d] = %v, explicit im2col gives %v", p, threads, j, got[j], want[j])
				}
			}
		}
	}
}

// BenchmarkConv is a ResNet layer (x[1,64,56,56], 64 filters 3×3, pad 1)
// as an implicit GEMM. Each iteration runs it and the explicit im2col path
// (the former one) in turn, so both see the same machine load; ns/op is
// the pair. GFLOPS and pct_peak (of one core's FMA peak per thread,
// measured in the same run) are from the implicit path's median time,
// x_explicit is the explicit median over the implicit one.
func BenchmarkConv(b *testing.B) {
	p := Conv{N: 1, C: 64, H: 56, W: 56, K: 64, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1}
	r := rand.New(rand.NewPCG(1, 2))
	x, w := randSlice(r, p.C*p.H*p.W), randSlice(r, p.K*p.C*p.R*p.S)
	oh, ow := p.ConvOut()
	y := make([]float32, p.K*oh*ow)
	flops := 2 * float64(p.K*p.C*p.R*p.S*oh*ow)
	median := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2].Nanoseconds())
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("resnet3x3/threads=%d", threads), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
			var ti, te []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				_ = Conv2D(p, x, w, nil, y)
				t1 := time.Now()
				_ = conv2D(p, x, w, nil, y, true)
				ti, te = append(ti, t1.Sub(t0)), append(te, time.Since(t1))
			}
			ns := median(ti)
			b.ReportMetric(flops/ns, "GFLOPS")
			if pk := peakGFLOPS(); pk > 0 {
				b.ReportMetric(100*flops/ns/pk/float64(threads), "pct_peak")
			}
			b.ReportMetric(median(te)/ns, "x_explicit")
		})
	}
}
