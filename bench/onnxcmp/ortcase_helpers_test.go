package onnxcmp

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestNpyRoundTrip: what npyBytes writes for ONNX Runtime, readNpyFile
// reads back unchanged, and asFloat64 decodes float32 and float16.
func TestNpyRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dims := range [][]int64{{5}, {2, 3, 4}, {}} {
		n := 1
		for _, d := range dims {
			n *= int(d)
		}
		in := ortInput{dtype: "float32", dims: dims}
		want := make([]float64, n)
		for i := range want {
			v := float32(rng.NormFloat64())
			want[i] = float64(v)
			in.data = append(in.data, byte(math.Float32bits(v)), byte(math.Float32bits(v)>>8), byte(math.Float32bits(v)>>16), byte(math.Float32bits(v)>>24))
		}
		f := filepath.Join(t.TempDir(), "x.npy")
		if err := os.WriteFile(f, npyBytes(in), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readNpyFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got.dtype != "float32" || len(got.dims) != len(dims) {
			t.Fatalf("read %s%v, wrote float32%v", got.dtype, got.dims, dims)
		}
		for i, d := range dims {
			if got.dims[i] != d {
				t.Fatalf("dims %v, want %v", got.dims, dims)
			}
		}
		for i, v := range asFloat64(got.dtype, got.data) {
			if v != want[i] {
				t.Fatalf("element %d: %g, want %g", i, v, want[i])
			}
		}
	}
	if h := asFloat64("float16", []byte{0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00}); h[0] != 1 || h[1] != -2 || h[2] != math.Ldexp(1, -24) {
		t.Fatalf("float16 decodes to %v", h)
	}
}
