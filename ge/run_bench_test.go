package ge_test

import (
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// BenchmarkRunTask measures RunTask (validation plus kernel) on small and
// large tasks against calling the registered kernel directly, measured in
// the same run: x_kernel is the ratio, i.e. what validation costs.
func BenchmarkRunTask(b *testing.B) {
	cases := []struct {
		name  string
		build func(g *ge.Graph) *ge.Tensor
	}{
		{"Add/16", func(g *ge.Graph) *ge.Tensor { return g.Add(d(g, acl.Float32, 0, 16), d(g, acl.Float32, 1, 16)) }},
		{"Add/64Ki", func(g *ge.Graph) *ge.Tensor { return g.Add(d(g, acl.Float32, 0, 256, 256), d(g, acl.Float32, 1, 256)) }},
		{"MatMul/f16/128", func(g *ge.Graph) *ge.Tensor {
			return g.MatMul(d(g, acl.Float16, 0, 128, 128), d(g, acl.Float16, 1, 128, 128))
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			g := ge.NewGraph("bench")
			g.Output(c.build(g))
			m, err := ge.Compile(g)
			if err != nil {
				b.Fatal(err)
			}
			t := &m.Tasks[0]
			args := make([][]byte, len(t.Args))
			var bytes int64
			for i, a := range t.Args {
				args[i] = make([]byte, a.Size)
				bytes += a.Size
			}
			k := ge.KernelFor(t.Op)
			const baseRuns = 2000
			start := time.Now()
			for range baseRuns {
				_ = k(t, args)
			}
			base := float64(time.Since(start).Nanoseconds()) / baseRuns
			b.SetBytes(bytes)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := ge.RunTask(t, args); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x_kernel")
		})
	}
}
