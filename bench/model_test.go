package bench

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/gert"
	"github.com/ascend-go/cann/internal/stubbuild"
	"github.com/ascend-go/cann/zerocopy"
)

// modelEnv is a Runtime with device 0 open, one loaded model, a stream and
// the backend.
type modelEnv struct {
	be  acl.Backend
	dev *acl.Device
	m   *acl.Model
	st  *acl.Stream
}

func openModelEnv(b *testing.B, be acl.Backend, blob []byte) *modelEnv {
	b.Helper()
	rt, err := acl.Init(be, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := rt.Close(); err != nil {
			b.Error(err)
		}
	})
	dev, err := rt.OpenDevice(0)
	if err != nil {
		b.Fatal(err)
	}
	m, err := dev.LoadModel(blob)
	if err != nil {
		b.Fatal(err)
	}
	st, err := dev.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	return &modelEnv{be: be, dev: dev, m: m, st: st}
}

func (e *modelEnv) bind(b *testing.B, opts ...zerocopy.BindOption) *zerocopy.Binding {
	b.Helper()
	bd, err := zerocopy.Bind(e.m, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bd.Close() })
	return bd
}

// ioModel is a model over n float32 values with light compute, so that
// the cost of moving its IO shows: y = relu(x), or with identity y = x,
// which compiles to a single device-side copy task (the lightest compute a
// model can have).
func ioModel(b *testing.B, n int, identity bool) []byte {
	b.Helper()
	g := ge.NewGraph("io")
	x := g.Data("x", 0, acl.Float32, []int64{int64(n)})
	if identity {
		g.Output(g.Identity(x, ge.Name("y")))
	} else {
		g.Output(g.Relu(x, ge.Name("y")))
	}
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

// fill writes random floats into the binding's input, runs it once and
// checks the output against f computed here.
func fill(b *testing.B, e *modelEnv, bd *zerocopy.Binding, n int, f func(float32) float32) {
	b.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	in := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(rng.NormFloat64())))
	}
	switch v := bd.Input(0).(type) {
	case *acl.DeviceBuffer:
		must(b, v.CopyFromHost(in))
	case *acl.HostBuffer:
		copy(v.Bytes(), in)
	}
	must(b, bd.RunAsync(e.st))
	must(b, e.st.Synchronize())
	out := make([]byte, 4*n)
	switch v := bd.Output(0).(type) {
	case *acl.DeviceBuffer:
		must(b, v.CopyToHostAt(out, 0))
	case *acl.HostBuffer:
		copy(out, v.Bytes())
	}
	for i := range n {
		x := math.Float32frombits(binary.LittleEndian.Uint32(in[4*i:]))
		if got, want := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])), f(x); got != want {
			b.Fatalf("output %d = %g, want %g", i, got, want)
		}
	}
}

func relu(x float32) float32     { return max(x, 0) }
func identity(x float32) float32 { return x }

func copies(be acl.Backend) uint64 { return be.(*fallback.NPU).Counters().Copies() }

// BenchmarkModelExecute runs a model with a 16 MiB input, a 16 MiB output
// and light compute on the fallback through a zerocopy.Binding, each run
// queued with RunAsync and waited for:
//
//   - zero-copy: device buffers bound in strict mode; copies/op must be 0;
//   - copy: pinned host buffers, so the runtime copies the input in and the
//     output out; copies/op must be 2.
//
// zero-copy also reports x_copyonly, its time over copy mode's from
// alternating runs of the two in the same benchmark. With identity (one
// device-side copy task) the IO dominates and the target is ≤ 0.5; relu
// shows a model whose kernel costs more than its copies.
func BenchmarkModelExecute(b *testing.B) {
	const n = 4 << 20 // float32 values: 16 MiB each way
	for _, model := range []struct {
		name string
		f    func(float32) float32
	}{{"identity", identity}, {"relu", relu}} {
		b.Run(model.name, func(b *testing.B) {
			npu, err := fallback.New(fallback.WithDeviceMemory(1<<30), fallback.WithHostMemory(256<<20))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = npu.Close() })
			e := openModelEnv(b, npu, ioModel(b, n, model.name == "identity"))
			zc := e.bind(b, zerocopy.WithDeviceOnly())
			cp := e.bind(b, zerocopy.WithHostBuffers())
			fill(b, e, zc, n, model.f)
			fill(b, e, cp, n, model.f)
			run := func(bd *zerocopy.Binding) {
				if err := bd.RunAsync(e.st); err != nil {
					b.Fatal(err)
				}
				if err := e.st.Synchronize(); err != nil {
					b.Fatal(err)
				}
			}
			for _, c := range []struct {
				name string
				bd   *zerocopy.Binding
			}{{"zero-copy", zc}, {"copy", cp}} {
				b.Run(c.name, func(b *testing.B) {
					c0 := copies(npu)
					b.SetBytes(2 * 4 * n)
					b.ReportAllocs()
					for b.Loop() {
						run(c.bd)
					}
					b.ReportMetric(float64(copies(npu)-c0)/float64(b.N), "copies/op")
					if c.bd == zc {
						b.ReportMetric(alternateRuns(9, func() { run(zc) }, func() { run(cp) }), "x_copyonly")
					}
				})
			}
		})
	}
}

// alternateRuns times f and base in turn, rounds times each, and returns
// median(f)/median(base).
func alternateRuns(rounds int, f, base func()) float64 {
	tf, tb := make([]time.Duration, rounds), make([]time.Duration, rounds)
	for i := range rounds {
		t0 := time.Now()
		f()
		t1 := time.Now()
		base()
		tf[i], tb[i] = t1.Sub(t0), time.Since(t1)
	}
	return float64(median(tf)) / float64(median(tb))
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

// steadyBatch is how many runs BenchmarkModelRunAsync queues between
// synchronizations: enough that the synchronize is a small share, few
// enough that the backend's pool of in-flight runs stays warm.
const steadyBatch = 16

// BenchmarkModelRunAsync measures the steady state of
// zerocopy.Binding.RunAsync: one aclmdlExecuteAsync per run, no allocation
// in the binding or the idiomatic layer.
//
//   - fallback: a small model (relu over 1 KiB); the stream is synchronized
//     every 16 runs. allocs/op counts the backend too (target ≤ 2). x_raw is
//     the binding's time over the backend's bare ExecuteAsync on the same
//     buffers, in alternating blocks of the same run.
//   - native-stub: the purego backend over the C stub (an add-constant
//     model, executed when queued); ffi_calls/op counts the C calls per run
//     from the stub's counter (target = 1). Without a C compiler it is
//     skipped, unless CANN_REQUIRE_STUB=1.
func BenchmarkModelRunAsync(b *testing.B) {
	b.Run("fallback", func(b *testing.B) {
		npu, err := fallback.New()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = npu.Close() })
		e := openModelEnv(b, npu, ioModel(b, 256, false))
		bd := e.bind(b, zerocopy.WithDeviceOnly())
		fill(b, e, bd, 256, relu)
		in, out := rawDatasets(b, e, bd)
		raw := func() error {
			return e.dev.Do(func() error { return npu.ExecuteAsync(e.m.ID(), in.Handle(), out.Handle(), e.st.Handle()) })
		}
		bound := func() error { return bd.RunAsync(e.st) }
		batch := func(f func() error) {
			for range steadyBatch {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
			must(b, e.st.Synchronize())
		}
		batch(bound) // warm the backend's pool of in-flight runs
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := bd.RunAsync(e.st); err != nil {
				b.Fatal(err)
			}
			if i++; i%steadyBatch == 0 {
				must(b, e.st.Synchronize())
			}
		}
		must(b, e.st.Synchronize())
		b.ReportMetric(alternateRuns(15, func() { batch(bound) }, func() { batch(raw) }), "x_raw")
	})
	b.Run("native-stub", func(b *testing.B) {
		be, ffi := openStub(b, "STUB_INSTANCE_BENCH_MODEL")
		const n = 256
		e := openModelEnv(b, be, stubAddModel(n, 1.5))
		bd := e.bind(b, zerocopy.WithDeviceOnly())
		in, out := rawDatasets(b, e, bd)
		must(b, bd.RunAsync(e.st)) // binds this thread's context if needed
		c0 := ffi()
		b.ReportAllocs()
		for b.Loop() {
			if err := bd.RunAsync(e.st); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(ffi()-c0)/float64(b.N), "ffi_calls/op")
		must(b, e.st.Synchronize())
		rawRun := func() {
			runtime.LockOSThread()
			_ = be.ExecuteAsync(e.m.ID(), in.Handle(), out.Handle(), e.st.Handle())
			runtime.UnlockOSThread()
		}
		must(b, e.dev.Do(func() error { return nil })) // leaves the context bound here
		b.ReportMetric(alternateRuns(15,
			func() { repeat(1000, func() { _ = bd.RunAsync(e.st) }) },
			func() { repeat(1000, rawRun) }), "x_raw")
		must(b, e.st.Synchronize())
	})
}

func repeat(n int, f func()) {
	for range n {
		f()
	}
}

// rawDatasets builds a second pair of datasets over the binding's buffers,
// for the bare backend calls of the baselines.
func rawDatasets(b *testing.B, e *modelEnv, bd *zerocopy.Binding) (in, out *acl.Dataset) {
	b.Helper()
	in, err := e.dev.NewDatasetOf(bd.Input(0))
	if err != nil {
		b.Fatal(err)
	}
	out, err = e.dev.NewDatasetOf(bd.Output(0))
	if err != nil {
		b.Fatal(err)
	}
	return in, out
}

// stubAddModel serializes a model in the C stub's own format (see
// acl/native/testdata/stub/model.c): one float32 input "x" of n values and
// one output "y" = x + addend.
func stubAddModel(n int, addend float32) []byte {
	le := binary.LittleEndian
	blob := make([]byte, 32)
	copy(blob, "STUBOM01")
	le.PutUint32(blob[8:], 1)  // one input, one output
	le.PutUint64(blob[16:], 8) // work memory: the execution counter
	le.PutUint64(blob[24:], 8) // weights: one addend slot
	for _, name := range []string{"x", "y"} {
		d := make([]byte, 144)
		copy(d, name)
		le.PutUint32(d[64:], uint32(acl.Float32))
		le.PutUint32(d[68:], uint32(acl.FormatND))
		le.PutUint64(d[72:], 1)
		le.PutUint64(d[80:], uint64(n))
		blob = append(blob, d...)
	}
	w := make([]byte, 8)
	le.PutUint32(w, math.Float32bits(addend))
	return append(blob, w...)
}

// BenchmarkV2Execute measures the steady state of the V2 executor
// (gert.Executor.Execute) with device tensors used in place: one
// aclmdlExecuteAsync per run and no copy.
//
//   - fallback: the relu model of BenchmarkModelRunAsync; the stream is
//     synchronized every 16 runs. allocs/op counts the backend too (target
//     ≤ 2). x_raw is Execute's time over the backend's bare ExecuteAsync on
//     the same buffers, in alternating blocks of the same run.
//   - native-stub: the purego backend over the C stub; ffi_calls/op counts
//     the C calls per run (target = 1), x_raw as above (target ≤ 1.2).
func BenchmarkV2Execute(b *testing.B) {
	b.Run("fallback", func(b *testing.B) {
		npu, err := fallback.New()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = npu.Close() })
		v := openV2(b, npu, ioModel(b, 256, false), 256)
		batch := func(f func() error) {
			for range steadyBatch {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
			must(b, v.st.Synchronize())
		}
		raw := func() error {
			return v.dev.Do(func() error {
				return npu.ExecuteAsync(v.ex.Model().ID(), v.rawIn.Handle(), v.rawOut.Handle(), v.st.Handle())
			})
		}
		batch(v.run) // warm the backend's pool of in-flight runs
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := v.run(); err != nil {
				b.Fatal(err)
			}
			if i++; i%steadyBatch == 0 {
				must(b, v.st.Synchronize())
			}
		}
		must(b, v.st.Synchronize())
		b.ReportMetric(alternateRuns(15, func() { batch(v.run) }, func() { batch(raw) }), "x_raw")
		v.check(b, relu)
	})
	b.Run("native-stub", func(b *testing.B) {
		be, ffi := openStub(b, "STUB_INSTANCE_BENCH_V2")
		const n, addend = 256, 1.5
		v := openV2(b, be, stubAddModel(n, addend), n)
		must(b, v.run()) // binds this thread's context if needed
		c0 := ffi()
		b.ReportAllocs()
		for b.Loop() {
			if err := v.run(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(ffi()-c0)/float64(b.N), "ffi_calls/op")
		must(b, v.st.Synchronize())
		rawRun := func() {
			runtime.LockOSThread()
			_ = be.ExecuteAsync(v.ex.Model().ID(), v.rawIn.Handle(), v.rawOut.Handle(), v.st.Handle())
			runtime.UnlockOSThread()
		}
		must(b, v.dev.Do(func() error { return nil })) // leaves the context bound here
		b.ReportMetric(alternateRuns(15,
			func() { repeat(1000, func() { _ = v.run() }) },
			func() { repeat(1000, rawRun) }), "x_raw")
		must(b, v.st.Synchronize())
		v.check(b, func(x float32) float32 { return x + addend })
	})
}

// BenchmarkV2ExecutePlacement runs the V2 executor on the fallback with a
// 4 MiB input and output and the lightest compute (identity: one
// device-side copy task, so that the IO shows), the output either a
// device tensor written in place (zero-copy) or a host tensor, which the
// executor serves with a device buffer and one D2H copy after the run
// (host-output). copies/op is the executor's count (0 and 1); zero-copy
// also reports x_hostout, its time over host-output's from alternating
// runs of the two in the same benchmark.
func BenchmarkV2ExecutePlacement(b *testing.B) {
	const n = 1 << 20
	npu, err := fallback.New(fallback.WithDeviceMemory(256<<20), fallback.WithHostMemory(64<<20))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = npu.Close() })
	v := openV2(b, npu, ioModel(b, n, true), n)
	host := make([]float32, n)
	hout := gert.NewTensor(gert.Shape{n}, acl.Float32, gert.OnHost)
	must(b, hout.SetData(gert.NewTensorData(unsafe.Pointer(&host[0]), 4*n, gert.OnHost, nil)))
	run := func(out []*gert.Tensor) func() {
		return func() {
			if err := v.ex.Execute(v.st, v.in, out, nil); err != nil {
				b.Fatal(err)
			}
			if err := v.st.Synchronize(); err != nil {
				b.Fatal(err)
			}
		}
	}
	zc, hc := run(v.out), run([]*gert.Tensor{hout})
	hc()
	for i, x := range v.x {
		if host[i] != x {
			b.Fatalf("host output %d = %g, want %g", i, host[i], x)
		}
	}
	for _, c := range []struct {
		name string
		f    func()
	}{{"zero-copy", zc}, {"host-output", hc}} {
		b.Run(c.name, func(b *testing.B) {
			c0 := v.ex.Stats().Copies
			b.SetBytes(2 * 4 * n)
			b.ReportAllocs()
			for b.Loop() {
				c.f()
			}
			b.ReportMetric(float64(v.ex.Stats().Copies-c0)/float64(b.N), "copies/op")
			if c.name == "zero-copy" {
				b.ReportMetric(alternateRuns(9, zc, hc), "x_hostout")
			}
		})
	}
	v.check(b, identity)
}

// v2Env is a V2 executor over a one-input, one-output model of n float32
// values, with device tensors for its IO and raw datasets over the same
// memory for the baseline.
type v2Env struct {
	dev           *acl.Device
	st            *acl.Stream
	ex            *gert.Executor
	in, out       []*gert.Tensor
	x             []float32
	rawIn, rawOut *acl.Dataset
}

func openV2(b *testing.B, be acl.Backend, blob []byte, n int) *v2Env {
	b.Helper()
	e := openModelEnv(b, be, blob) // the runtime, device and stream
	ex, err := gert.Load(e.dev, blob, gert.LoweringOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ex.Close() })
	v := &v2Env{dev: e.dev, st: e.st, ex: ex}
	alloc := &gert.DeviceAllocator{Dev: e.dev}
	tensor := func() *gert.Tensor {
		td, err := alloc.Malloc(uint64(4 * n))
		must(b, err)
		t := gert.NewTensor(gert.Shape{int64(n)}, acl.Float32, gert.OnDeviceHbm)
		must(b, t.SetData(td))
		b.Cleanup(func() { _ = t.Free() })
		return t
	}
	v.in, v.out = []*gert.Tensor{tensor()}, []*gert.Tensor{tensor()}
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	v.x = make([]float32, n)
	for i := range v.x {
		v.x[i] = float32(rng.NormFloat64())
	}
	p, _ := v.in[0].Addr()
	must(b, e.dev.Do(func() error {
		return be.Memcpy(p, uintptr(4*n), unsafe.Pointer(&v.x[0]), uintptr(4*n), acl.MemcpyHostToDevice)
	}))
	ds := func(t *gert.Tensor) *acl.Dataset {
		p, _ := t.Addr()
		db, err := e.dev.NewDataBufferPtr(p, uintptr(t.Size()))
		must(b, err)
		d, err := e.dev.NewDataset()
		must(b, err)
		must(b, d.Add(db))
		return d
	}
	v.rawIn, v.rawOut = ds(v.in[0]), ds(v.out[0])
	return v
}

func (v *v2Env) run() error { return v.ex.Execute(v.st, v.in, v.out, nil) }

// check runs once more and compares the output with f of the input.
func (v *v2Env) check(b *testing.B, f func(float32) float32) {
	b.Helper()
	must(b, v.run())
	must(b, v.st.Synchronize())
	got := make([]float32, len(v.x))
	p, _ := v.out[0].Addr()
	must(b, v.dev.Do(func() error {
		return v.dev.Runtime().Backend().Memcpy(unsafe.Pointer(&got[0]), uintptr(4*len(got)), p, uintptr(4*len(got)), acl.MemcpyDeviceToHost)
	}))
	for i, x := range v.x {
		if got[i] != f(x) {
			b.Fatalf("output %d = %g, want %g", i, got[i], f(x))
		}
	}
}

// openStub builds the C stub as a library of its own (instance names the
// build) and opens the native backend over it; ffi reads the stub's count
// of C calls.
func openStub(b *testing.B, instance string) (be *native.Backend, ffi func() uint64) {
	b.Helper()
	lib := stubbuild.BuildWith(b, "../acl/native/testdata/stub", native.LibACL,
		stubbuild.Options{Defines: []string{instance}})
	be, err := native.Open(native.WithLibraryPath(lib))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = be.Close() })
	calls := be.Symbol("stub_call_count")
	return be, func() uint64 { r, _, _ := purego.SyscallN(calls); return uint64(r) }
}
