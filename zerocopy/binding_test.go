package zerocopy_test

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/ascend-go/cann/zerocopy"
)

// net is the shared two-input, two-output test model (getest.TwoIO).
type net = getest.TwoIO

func newNet(t testing.TB, rng *rand.Rand, m, k, h, n int) *net {
	t.Helper()
	p, err := getest.NewTwoIO(rng, m, k, h, n)
	require.NoError(t, err)
	return p
}

func newRand(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func requireClose(t testing.TB, want []float64, got []float32, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-4*(1+math.Abs(want[i])) {
			require.Failf(t, "mismatch", "%s[%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

// write fills memory (device or pinned host) with b.
func write(t testing.TB, mm acl.Memory, b []byte) {
	t.Helper()
	switch v := mm.(type) {
	case *acl.DeviceBuffer:
		require.NoError(t, v.CopyFromHost(b))
	case *acl.HostBuffer:
		copy(v.Bytes(), b)
	}
}

// read returns the first n bytes of memory (device or pinned host).
func read(t testing.TB, mm acl.Memory, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	switch v := mm.(type) {
	case *acl.DeviceBuffer:
		require.NoError(t, v.CopyToHostAt(out, 0))
	case *acl.HostBuffer:
		copy(out, v.Bytes())
	}
	return out
}

// env is a fallback NPU with a Runtime, device 0 and the test model loaded.
type env struct {
	npu *fallback.NPU
	dev *acl.Device
	m   *acl.Model
	p   *net
	rng *rand.Rand
}

func newEnv(t testing.TB) *env {
	t.Helper()
	npu, err := fallback.New()
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, rt.Close()) })
	d, err := rt.OpenDevice(0)
	require.NoError(t, err)
	rng := newRand(t)
	p := newNet(t, rng, 4, 16, 32, 8)
	m, err := d.LoadModel(p.Blob)
	require.NoError(t, err)
	return &env{npu: npu, dev: d, m: m, p: p, rng: rng}
}

// feed writes fresh random inputs into the binding's input memory and
// returns the expected outputs.
func (e *env) feed(t testing.TB, b *zerocopy.Binding) (y, z []float64) {
	t.Helper()
	x, bias := getest.RandF32(e.rng, e.p.M*e.p.K), getest.RandF32(e.rng, e.p.M*e.p.N)
	write(t, b.Input(0), getest.F32Bytes(x))
	write(t, b.Input(1), getest.F32Bytes(bias))
	return e.p.Ref(x, bias)
}

// verify compares the binding's output memory with the expected outputs.
func (e *env) verify(t testing.TB, b *zerocopy.Binding, y, z []float64) {
	t.Helper()
	requireClose(t, y, getest.BytesF32(read(t, b.Output(0), 4*len(y))), "y")
	requireClose(t, z, getest.BytesF32(read(t, b.Output(1), 4*len(z))), "z")
}

func TestBindingZeroCopy(t *testing.T) {
	e := newEnv(t)
	st, err := e.dev.NewStream()
	require.NoError(t, err)
	b, err := zerocopy.Bind(e.m)
	require.NoError(t, err)
	require.Equal(t, 2, b.NumInputs())
	require.Equal(t, 2, b.NumOutputs())
	require.Same(t, e.m, b.Model())
	desc := e.m.Desc()
	for i := range 2 {
		in, ok := b.Input(i).(*acl.DeviceBuffer)
		require.True(t, ok, "the binding allocates device buffers")
		assert.Equal(t, desc.Inputs[i].Size, in.Size())
		out, ok := b.Output(i).(*acl.DeviceBuffer)
		require.True(t, ok)
		assert.Equal(t, desc.Outputs[i].Size, out.Size())
	}
	assert.Nil(t, b.Input(2))
	assert.Nil(t, b.Output(-1))

	for k := range 4 {
		y, z := e.feed(t, b)
		e.npu.ResetCounters()
		if k%2 == 0 {
			require.NoError(t, b.RunAsync(st))
			require.NoError(t, st.Synchronize())
		} else {
			require.NoError(t, b.Run())
		}
		assert.Zero(t, e.npu.Counters().Copies(), "zero copy: no IO copy")
		e.verify(t, b, y, z)
	}
	// The launches carry the bound buffers' addresses.
	launches, err := npuhook.Of(e.npu).ModelLaunches(e.m.ID())
	require.NoError(t, err)
	seen := map[uint64]bool{}
	for _, l := range launches {
		for _, a := range l.Args {
			seen[a] = true
		}
	}
	for i := range 2 {
		assert.True(t, seen[uint64(uintptr(b.Input(i).Ptr()))], "input %d address in a launch", i)
		assert.True(t, seen[uint64(uintptr(b.Output(i).Ptr()))], "output %d address in a launch", i)
	}
	require.NoError(t, b.Close())
}

// TestBindingHostBuffersCopy: host buffers work and are copied: one H2D
// copy per input and one D2H copy per output at every run (acl.Model's
// staging; the model itself sees device memory).
func TestBindingHostBuffersCopy(t *testing.T) {
	e := newEnv(t)
	st, err := e.dev.NewStream()
	require.NoError(t, err)
	b, err := zerocopy.Bind(e.m, zerocopy.WithHostBuffers())
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	_, ok := b.Input(0).(*acl.HostBuffer)
	require.True(t, ok)
	for range 3 {
		y, z := e.feed(t, b)
		e.npu.ResetCounters()
		require.NoError(t, b.RunAsync(st))
		require.NoError(t, st.Synchronize())
		c := e.npu.Counters()
		assert.Equal(t, uint64(2), c.H2D.Copies)
		assert.Equal(t, uint64(2), c.D2H.Copies)
		e.verify(t, b, y, z)
	}
}

// TestBindingSwap: swapping inputs and outputs between runs redirects the
// next run, with device and host buffers alike.
func TestBindingSwap(t *testing.T) {
	e := newEnv(t)
	st, err := e.dev.NewStream()
	require.NoError(t, err)
	b, err := zerocopy.Bind(e.m)
	require.NoError(t, err)
	desc := e.m.Desc()
	first := b.Input(0)

	newDev := func(n uintptr) *acl.DeviceBuffer {
		buf, err := e.dev.Malloc(n, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		return buf
	}
	x2, y2 := newDev(desc.Inputs[0].Size), newDev(desc.Outputs[0].Size+512)
	require.NoError(t, b.SwapInput(0, x2))
	require.NoError(t, b.SwapOutput(0, y2))
	assert.Same(t, x2, b.Input(0))
	assert.Same(t, y2, b.Output(0))
	y, z := e.feed(t, b) // writes into x2
	require.NoError(t, b.RunAsync(st))
	require.NoError(t, st.Synchronize())
	e.verify(t, b, y, z) // reads y2

	// Swap an output to pinned host memory: acl.Model stages that IO (one
	// D2H copy), also after runs took the pinned path.
	hy, err := e.dev.MallocHost(desc.Outputs[0].Size)
	require.NoError(t, err)
	require.NoError(t, b.SwapOutput(0, hy))
	y, z = e.feed(t, b)
	e.npu.ResetCounters()
	require.NoError(t, b.RunAsync(st))
	require.NoError(t, st.Synchronize())
	assert.Equal(t, uint64(1), e.npu.Counters().D2H.Copies)
	assert.Zero(t, e.npu.Counters().H2D.Copies)
	e.verify(t, b, y, z)

	// Swap back to the binding's own buffer.
	require.NoError(t, b.SwapInput(0, first))
	y, z = e.feed(t, b)
	require.NoError(t, b.Run())
	e.verify(t, b, y, z)

	assert.ErrorIs(t, b.SwapInput(2, x2), acl.ErrInvalidParam)
	assert.ErrorIs(t, b.SwapOutput(-1, x2), acl.ErrInvalidParam)
	assert.ErrorIs(t, b.SwapInput(0, nil), acl.ErrInvalidParam)
	var nilBuf *acl.DeviceBuffer
	assert.ErrorIs(t, b.SwapInput(0, nilBuf), acl.ErrInvalidParam)
	gone := newDev(64)
	require.NoError(t, gone.Close())
	err = b.SwapInput(1, gone)
	assert.ErrorIs(t, err, acl.ErrInvalidHandle)
	assert.Contains(t, err.Error(), `input 1 ("b")`)

	require.NoError(t, b.Close())
	assert.ErrorIs(t, b.SwapInput(0, x2), acl.ErrInvalidHandle)
	// Caller buffers survive the binding.
	assert.NotNil(t, x2.Ptr())
	assert.NotNil(t, hy.Ptr())
}

// TestBindingStrict: strict mode refuses host buffers and undersized
// buffers, at bind and swap time and before a launch, naming the IO.
func TestBindingStrict(t *testing.T) {
	e := newEnv(t)
	st, err := e.dev.NewStream()
	require.NoError(t, err)
	desc := e.m.Desc()
	host, err := e.dev.MallocHost(desc.Inputs[1].Size)
	require.NoError(t, err)
	small, err := e.dev.Malloc(desc.Outputs[0].Size-4, acl.MemMallocHugeFirst)
	require.NoError(t, err)

	_, err = zerocopy.Bind(e.m, zerocopy.WithDeviceOnly(), zerocopy.WithInputs(nil, host))
	require.ErrorIs(t, err, acl.ErrInvalidParam)
	assert.Contains(t, err.Error(), `input 1 ("b")`)
	assert.Contains(t, err.Error(), "host buffer")
	_, err = zerocopy.Bind(e.m, zerocopy.WithDeviceOnly(), zerocopy.WithOutputs(small, nil))
	require.ErrorIs(t, err, acl.ErrInvalidParam)
	assert.Contains(t, err.Error(), `output 0 (`)
	assert.Contains(t, err.Error(), "is smaller than the actual size")

	// Without strict mode both are accepted: the host input is copied and
	// the 4-byte shortfall is within GE's 64-byte slack.
	lax, err := zerocopy.Bind(e.m, zerocopy.WithInputs(nil, host), zerocopy.WithOutputs(small, nil))
	require.NoError(t, err)
	require.NoError(t, lax.RunAsync(st))
	require.NoError(t, st.Synchronize())
	require.NoError(t, lax.Close())

	b, err := zerocopy.Bind(e.m, zerocopy.WithDeviceOnly())
	require.NoError(t, err)
	err = b.SwapInput(1, host)
	require.ErrorIs(t, err, acl.ErrInvalidParam)
	assert.Contains(t, err.Error(), `input 1 ("b")`)
	err = b.SwapOutput(0, small)
	require.ErrorIs(t, err, acl.ErrInvalidParam)
	y, z := e.feed(t, b)
	require.NoError(t, b.RunAsync(st), "the refused swaps changed nothing")
	require.NoError(t, st.Synchronize())
	e.verify(t, b, y, z)

	// A caller buffer closed while bound is refused by the execution,
	// which names the IO.
	mine, err := e.dev.Malloc(desc.Outputs[1].Size, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	require.NoError(t, b.SwapOutput(1, mine))
	require.NoError(t, mine.Close())
	err = b.RunAsync(st)
	require.ErrorIs(t, err, acl.ErrInvalidHandle)
	assert.Contains(t, err.Error(), "output 1")
	require.NoError(t, b.Close())

	// Without strict mode the closed buffer is reported by the execution,
	// still naming the IO.
	lax, err = zerocopy.Bind(e.m)
	require.NoError(t, err)
	mine, err = e.dev.Malloc(desc.Inputs[0].Size, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	require.NoError(t, lax.SwapInput(0, mine))
	require.NoError(t, mine.Close())
	err = lax.Run()
	require.ErrorIs(t, err, acl.ErrInvalidHandle)
	assert.Contains(t, err.Error(), `input 0 ("x")`)
	require.NoError(t, lax.Close())
}

func TestBindingBadInput(t *testing.T) {
	e := newEnv(t)
	_, err := zerocopy.Bind(nil)
	assert.ErrorIs(t, err, acl.ErrInvalidHandle)
	_, err = zerocopy.Bind(e.m, zerocopy.WithInputs(nil))
	assert.ErrorIs(t, err, acl.ErrInvalidParam, "one buffer for two inputs")

	// A buffer much smaller than the model's is refused by the runtime
	// (GE's size rule), naming the IO.
	desc := e.m.Desc()
	tiny, err := e.dev.Malloc(desc.Inputs[0].Size/4, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	b, err := zerocopy.Bind(e.m, zerocopy.WithInputs(tiny, nil))
	require.NoError(t, err)
	err = b.Run()
	// GE logs E13025 and returns ACL_ERROR_GE_FAILURE (hicann/ge
	// davinci_model.cc:6673, api/acl/common/error_codes_inner.h:24-28).
	require.ErrorIs(t, err, &acl.Error{Code: acl.CodeGEFailure})
	assert.Contains(t, err.Error(), "E13025")
	assert.Contains(t, err.Error(), "input")
	require.NoError(t, b.Close())

	// Memory of another Device is refused at bind time, naming the IO.
	npu, err := fallback.New(fallback.WithDevices(2))
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	defer rt.Close()
	d0, err := rt.OpenDevice(0)
	require.NoError(t, err)
	d1, err := rt.OpenDevice(1)
	require.NoError(t, err)
	m, err := d0.LoadModel(e.p.Blob)
	require.NoError(t, err)
	other, err := d1.Malloc(desc.Outputs[1].Size, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	before := npu.Counters().LiveAllocs[0]
	_, err = zerocopy.Bind(m, zerocopy.WithOutputs(nil, other))
	require.ErrorIs(t, err, acl.ErrInvalidParam)
	assert.Contains(t, err.Error(), "output 1")
	assert.Equal(t, before, npu.Counters().LiveAllocs[0], "a failed Bind frees what it allocated")
}

// TestBindingClose: Close waits for a queued run, frees only what the
// binding allocated, is idempotent, and the binding is unusable after it.
func TestBindingClose(t *testing.T) {
	e := newEnv(t)
	st, err := e.dev.NewStream()
	require.NoError(t, err)
	before := e.npu.Counters().LiveAllocs[0]
	desc := e.m.Desc()
	mine, err := e.dev.Malloc(desc.Inputs[0].Size, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	b, err := zerocopy.Bind(e.m, zerocopy.WithInputs(mine, nil))
	require.NoError(t, err)
	assert.Equal(t, before+4, e.npu.Counters().LiveAllocs[0], "three buffers allocated plus the caller's")

	gate := make(chan struct{})
	require.NoError(t, e.dev.Do(func() error {
		_, err := npuhook.Of(e.npu).Enqueue(st.Handle(), "hold", func() error { <-gate; return nil })
		return err
	}))
	out1 := b.Output(1)
	require.NoError(t, b.RunAsync(st))
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned before the queued run: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	require.NoError(t, <-closed)
	assert.Nil(t, out1.Ptr(), "the binding's own buffers are freed")
	assert.NotNil(t, mine.Ptr(), "the caller's buffer is not")
	assert.Equal(t, before+1, e.npu.Counters().LiveAllocs[0])
	require.NoError(t, b.Close())
	assert.ErrorIs(t, b.RunAsync(st), acl.ErrInvalidHandle)
	assert.ErrorIs(t, b.Run(), acl.ErrInvalidHandle)
}

// TestBindingSteadyStateCloseBuffer: closing a caller's buffer bound to a
// binding that runs in the steady state (the model's pinned path) waits for
// the run queued on it, which reads live memory; the next RunAsync is
// refused with an error naming the IO, and a swap to a fresh buffer makes
// the binding run again.
func TestBindingSteadyStateCloseBuffer(t *testing.T) {
	e := newEnv(t)
	st, err := e.dev.NewStream()
	require.NoError(t, err)
	desc := e.m.Desc()
	mine, err := e.dev.Malloc(desc.Inputs[1].Size, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	b, err := zerocopy.Bind(e.m, zerocopy.WithInputs(nil, mine))
	require.NoError(t, err)
	defer b.Close()
	for range 3 {
		y, z := e.feed(t, b)
		require.NoError(t, b.RunAsync(st))
		require.NoError(t, st.Synchronize())
		e.verify(t, b, y, z)
	}
	gate := make(chan struct{})
	require.NoError(t, e.dev.Do(func() error {
		_, err := npuhook.Of(e.npu).Enqueue(st.Handle(), "hold", func() error { <-gate; return nil })
		return err
	}))
	y, z := e.feed(t, b)
	require.NoError(t, b.RunAsync(st))
	closed := make(chan error, 1)
	go func() { closed <- mine.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close of a bound buffer returned before the queued run: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	require.NoError(t, <-closed)
	require.NoError(t, st.Synchronize())
	e.verify(t, b, y, z)

	err = b.RunAsync(st)
	require.ErrorIs(t, err, acl.ErrInvalidHandle)
	assert.Contains(t, err.Error(), "input 1")
	fresh, err := e.dev.Malloc(desc.Inputs[1].Size, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	defer fresh.Close()
	require.NoError(t, b.SwapInput(1, fresh))
	y, z = e.feed(t, b)
	require.NoError(t, b.RunAsync(st))
	require.NoError(t, st.Synchronize())
	e.verify(t, b, y, z)
}

// TestBindingConcurrentRunAsync: several goroutines run one model through
// their own bindings and streams, and through one shared binding; the
// Model serializes the executions (none refused) and every result is
// right.
func TestBindingConcurrentRunAsync(t *testing.T) {
	e := newEnv(t)
	const workers, runs = 4, 12
	type worker struct {
		b  *zerocopy.Binding
		st *acl.Stream
	}
	ws := make([]worker, workers)
	for i := range ws {
		b, err := zerocopy.Bind(e.m)
		require.NoError(t, err)
		st, err := e.dev.NewStream()
		require.NoError(t, err)
		ws[i] = worker{b, st}
	}
	var mu sync.Mutex // guards e.rng
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			for range runs {
				mu.Lock()
				y, z := e.feed(t, w.b)
				mu.Unlock()
				if !assert.NoError(t, w.b.RunAsync(w.st)) || !assert.NoError(t, w.st.Synchronize()) {
					return
				}
				e.verify(t, w.b, y, z)
			}
		})
	}
	wg.Wait()

	// One binding shared by goroutines with their own streams: the inputs
	// stay fixed, so every run must produce the same outputs.
	shared := ws[0].b
	y, z := e.feed(t, shared)
	for _, w := range ws {
		wg.Go(func() {
			for range runs {
				if !assert.NoError(t, shared.RunAsync(w.st)) {
					return
				}
			}
			assert.NoError(t, w.st.Synchronize())
		})
	}
	wg.Wait()
	require.NoError(t, shared.Wait(context.Background()))
	e.verify(t, shared, y, z)
	for _, w := range ws {
		require.NoError(t, w.b.Close())
	}
}

// TestBindingRunAsyncAllocs: a steady-state RunAsync is one backend call
// and allocates at most 2 objects on the fallback, none of them in the
// binding or the idiomatic layer.
func TestBindingRunAsyncAllocs(t *testing.T) {
	e := newEnv(t)
	st, err := e.dev.NewStream()
	require.NoError(t, err)
	b, err := zerocopy.Bind(e.m, zerocopy.WithDeviceOnly())
	require.NoError(t, err)
	defer b.Close()
	runtime.LockOSThread() // one thread: its context stays bound
	defer runtime.UnlockOSThread()
	require.NoError(t, b.RunAsync(st))
	require.NoError(t, st.Synchronize())
	in, out := datasetHandles(t, b)
	measure := func(run func() error) float64 {
		return testing.AllocsPerRun(100, func() {
			if err := run(); err != nil {
				t.Fatal(err)
			}
			if err := st.Synchronize(); err != nil {
				t.Fatal(err)
			}
		})
	}
	raw := measure(func() error { return e.npu.ExecuteAsync(e.m.ID(), in, out, st.Handle()) })
	bound := measure(func() error { return b.RunAsync(st) })
	t.Logf("allocs per run (with a synchronize): backend %.2f, through the binding %.2f", raw, bound)
	assert.LessOrEqual(t, bound, raw, "the binding and the idiomatic layer allocate nothing")
	assert.LessOrEqual(t, bound, 2.0)
}

// datasetHandles builds raw datasets over the binding's current buffers,
// for calling the backend directly.
func datasetHandles(t testing.TB, b *zerocopy.Binding) (in, out acl.DatasetHandle) {
	t.Helper()
	d := b.Model().Device()
	var ins, outs []acl.Memory
	for i := range b.NumInputs() {
		ins = append(ins, b.Input(i))
	}
	for i := range b.NumOutputs() {
		outs = append(outs, b.Output(i))
	}
	ids, err := d.NewDatasetOf(ins...)
	require.NoError(t, err)
	ods, err := d.NewDatasetOf(outs...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ids.Close(); _ = ods.Close() })
	return ids.Handle(), ods.Handle()
}
