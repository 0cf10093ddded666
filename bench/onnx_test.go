package bench

import (
	"os"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/zerocopy"
)

// BenchmarkDeviceProfile runs the ONNX test CNN (ge/onnx/testdata) from
// its ONNX bytes on two fallback NPUs, one recording the device-time
// profile and one not, alternating one run of each per iteration so both
// see the same load; overhead_pct is the profiled median over the plain
// median, minus one, in percent.
func BenchmarkDeviceProfile(b *testing.B) {
	blob, err := os.ReadFile("../ge/onnx/testdata/cnn.onnx")
	must(b, err)
	setup := func(opts ...fallback.Option) *zerocopy.Binding {
		npu, err := fallback.New(append([]fallback.Option{fallback.WithDeviceMemory(1 << 30), fallback.WithHostMemory(64 << 20)}, opts...)...)
		must(b, err)
		e := openModelEnv(b, npu, blob)
		bd, err := zerocopy.Bind(e.m)
		must(b, err)
		b.Cleanup(func() { _ = bd.Close() })
		in := make([]byte, e.m.Desc().Inputs[0].Size)
		must(b, bd.Input(0).(*acl.DeviceBuffer).CopyFromHost(in))
		return bd
	}
	plain, prof := setup(), setup(fallback.WithDeviceProfile())
	var tp, tq []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		must(b, plain.Run())
		t1 := time.Now()
		must(b, prof.Run())
		tp, tq = append(tp, t1.Sub(t0)), append(tq, time.Since(t1))
	}
	b.ReportMetric(100*(float64(median(tq))/float64(median(tp))-1), "overhead_pct")
}
