package bench

import (
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/zerocopy"
)

// tinyModel is relu(x[1,16]·w[16,16]): a model whose run time is all
// per-execution overhead.
func tinyModel(b *testing.B) []byte {
	b.Helper()
	g := ge.NewGraph("tiny")
	w := make([]float32, 16*16)
	for i := range w {
		w[i] = float32(i%7) - 3
	}
	x := g.Data("x", 0, acl.Float32, []int64{1, 16})
	g.Output(g.Relu(g.MatMul(x, g.ConstFloat32("w", acl.Float32, []int64{16, 16}, w)), ge.Name("y")))
	m, err := ge.Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	blob, err := m.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	return blob
}

// BenchmarkTinyModelOverhead measures the per-execution cost of the tiny
// model on the fallback with zero-copy device buffers: Run (aclmdlExecute,
// synchronous) and RunAsync + Synchronize (a stream hand-off and back).
// Each iteration is timed on its own; p50_ns, p99_ns and max_ns are
// reported beside the mean ns/op (which a loaded machine's outliers
// dominate), and x_gettid: p50 over the median cost of one gettid system
// call measured in the same run — the fallback used to make two per Run to
// find the OS thread's current context (ACL's per-OS-thread rule) and now
// makes none (internal/osthread), so the ratio shows what that saved.
func BenchmarkTinyModelOverhead(b *testing.B) {
	npu, err := fallback.New()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = npu.Close() })
	e := openModelEnv(b, npu, tinyModel(b))
	bd := e.bind(b, zerocopy.WithDeviceOnly())
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"Run", bd.Run},
		{"RunAsync+Synchronize", func() error {
			if err := bd.RunAsync(e.st); err != nil {
				return err
			}
			return e.st.Synchronize()
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			must(b, c.run())
			sys := make([]time.Duration, 1001)
			for i := range sys {
				t0 := time.Now()
				_ = unix.Gettid()
				sys[i] = time.Since(t0)
			}
			slices.Sort(sys)
			var lat []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Nanoseconds()) }
			b.ReportMetric(pct(0.5), "p50_ns")
			b.ReportMetric(pct(0.99), "p99_ns")
			b.ReportMetric(float64(lat[len(lat)-1].Nanoseconds()), "max_ns")
			b.ReportMetric(pct(0.5)/float64(max(1, sys[len(sys)/2].Nanoseconds())), "x_gettid")
		})
	}
}
