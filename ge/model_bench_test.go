package ge_test

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

// BenchmarkModel runs whole models task by task on memory resolved once,
// as the fallback's executor does, and reports x_before: how many times
// faster than the pre-issue-16 kernels (gonum SGEMM, float64 activations)
// measured in the same run.
func BenchmarkModel(b *testing.B) {
	r := rand.New(rand.NewPCG(16, 16))
	for _, c := range []struct {
		name string
		g    *ge.Graph
	}{
		// The quickstart-sized MLP of issue 16: x[64,1024], 270 MFLOP.
		{"MLP/64x1024x1024x1024x16", getest.MLP(r, acl.Float32, 64, 1024, 1024, 1024, 16)},
		// A transformer block on x[1,128,256], 218 MFLOP.
		{"Transformer/1x128x256", getest.TransformerBlock(r, acl.Float32, 1, 128, 256, 4)},
	} {
		b.Run(c.name, func(b *testing.B) {
			m, err := ge.Compile(c.g)
			if err != nil {
				b.Fatal(err)
			}
			run := resolve(m)
			if err := run(); err != nil {
				b.Fatal(err)
			}
			restore := ge.UseLegacyKernels()
			start := time.Now()
			const beforeRuns = 3
			for range beforeRuns {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
			before := float64(time.Since(start).Nanoseconds()) / beforeRuns
			restore()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(before/(float64(b.Elapsed().Nanoseconds())/float64(b.N)), "x_before")
		})
	}
}

// resolve lays m out in one aligned arena with its weights and returns a
// function that runs every task once.
func resolve(m *ge.CompiledModel) func() error {
	arena := func(n int64) []byte {
		raw := make([]byte, n+ge.MemAlignSize)
		off := (ge.MemAlignSize - int(uintptr(unsafe.Pointer(&raw[0]))%ge.MemAlignSize)) % ge.MemAlignSize
		return raw[off : int64(off)+n]
	}
	mem, w := arena(m.MemorySize), arena(m.WeightSize)
	copy(w, m.Weights)
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range m.Inputs {
		in := getest.RandFloats(r, int(d.Size/4), 1)
		copy(mem[d.BasicOffset:], unsafe.Slice((*byte)(unsafe.Pointer(&in[0])), d.Size))
	}
	args := make([][][]byte, len(m.Tasks))
	for ti, t := range m.Tasks {
		for _, a := range t.Args {
			src := mem
			if a.Mem == ge.MemFixed {
				src = w
			}
			args[ti] = append(args[ti], src[a.Offset:a.Offset+a.Size])
		}
	}
	return func() error {
		for ti := range m.Tasks {
			if err := ge.RunTask(&m.Tasks[ti], args[ti]); err != nil {
				return err
			}
		}
		return nil
	}
}
