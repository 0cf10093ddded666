package floatx

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFloat64Conversions checks the float64 entry points against the
// reference rounding, including values just off a float32-exact tie, where
// rounding through float32 first would round twice.
func TestFloat64Conversions(t *testing.T) {
	conv := map[string]func(float64) uint32{
		"f16":        func(x float64) uint32 { return uint32(F64ToF16(x)) },
		"bf16":       func(x float64) uint32 { return uint32(F64ToBF16(x)) },
		"e4m3fn":     func(x float64) uint32 { return uint32(F64ToE4M3FN(x)) },
		"e4m3fn-sat": func(x float64) uint32 { return uint32(F64ToE4M3FNSat(x)) },
		"e5m2":       func(x float64) uint32 { return uint32(F64ToE5M2(x)) },
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for _, f := range formats {
		enc, ok := conv[f.name]
		if !ok {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			codes, vals := f.table()
			for i := 0; i+1 < len(vals); i++ {
				mid := (vals[i] + vals[i+1]) / 2
				for _, x := range []float64{mid, math.Nextafter(mid, 0), math.Nextafter(mid, math.Inf(1)), -mid, -math.Nextafter(mid, math.Inf(1))} {
					if got, want := enc(x), f.refEncode(x, codes, vals); got != want {
						t.Fatalf("x=%v: got %#x, want %#x", x, got, want)
					}
				}
			}
			for range 100000 {
				j := r.IntN(len(vals))
				x := vals[j] * (1 + (r.Float64()-0.5)*0.1)
				if r.IntN(2) == 0 {
					x = -x
				}
				if got, want := enc(x), f.refEncode(x, codes, vals); got != want {
					t.Fatalf("x=%v: got %#x, want %#x", x, got, want)
				}
			}
			require.Equal(t, f.refEncode(1e-300, codes, vals), enc(1e-300))
			require.Equal(t, f.overflow(false), enc(1e300))
		})
	}
}
