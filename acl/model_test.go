package acl_test

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mlpModel is the shared two-input, two-output test model (getest.TwoIO).
type mlpModel = getest.TwoIO

func newMLPModel(t testing.TB, rng *rand.Rand, m, k, h, n int) *mlpModel {
	t.Helper()
	p, err := getest.NewTwoIO(rng, m, k, h, n)
	require.NoError(t, err)
	return p
}

// requireClose compares float32 results with a float64 reference.
func requireClose(t testing.TB, want []float64, got []float32, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		tol := 1e-4 * (1 + math.Abs(want[i]))
		if math.Abs(float64(got[i])-want[i]) > tol {
			require.Failf(t, "mismatch", "%s[%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

func newRand(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// io is one set of device buffers and datasets for the test model.
type io struct {
	in, out         []*acl.DeviceBuffer
	inDS, outDS     *acl.Dataset
	x, b            []float32
	wantY, wantZ    []float64
	outMems, inMems []acl.Memory
}

func newIO(t testing.TB, d *acl.Device, p *mlpModel) *io {
	t.Helper()
	v := &io{}
	for _, n := range p.InSizes() {
		buf, err := d.Malloc(n, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		v.in = append(v.in, buf)
		v.inMems = append(v.inMems, buf)
	}
	for _, n := range p.OutSizes() {
		buf, err := d.Malloc(n, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		v.out = append(v.out, buf)
		v.outMems = append(v.outMems, buf)
	}
	var err error
	v.inDS, err = d.NewDatasetOf(v.inMems...)
	require.NoError(t, err)
	v.outDS, err = d.NewDatasetOf(v.outMems...)
	require.NoError(t, err)
	return v
}

// fill writes fresh random inputs and computes the expected outputs.
func (v *io) fill(t testing.TB, rng *rand.Rand, p *mlpModel) {
	t.Helper()
	v.x, v.b = getest.RandF32(rng, p.M*p.K), getest.RandF32(rng, p.M*p.N)
	require.NoError(t, v.in[0].CopyFromHost(getest.F32Bytes(v.x)))
	require.NoError(t, v.in[1].CopyFromHost(getest.F32Bytes(v.b)))
	v.wantY, v.wantZ = p.Ref(v.x, v.b)
}

// check reads both outputs back and compares them with the reference.
func (v *io) check(t testing.TB) {
	t.Helper()
	y := make([]byte, v.out[0].Size())
	z := make([]byte, v.out[1].Size())
	require.NoError(t, v.out[0].CopyToHost(y))
	require.NoError(t, v.out[1].CopyToHost(z))
	requireClose(t, v.wantY, getest.BytesF32(y), "y")
	requireClose(t, v.wantZ, getest.BytesF32(z), "z")
}

func TestModelLoadDescExecute(t *testing.T) {
	npu, _, d := open(t)
	rng := newRand(t)
	p := newMLPModel(t, rng, 4, 8, 16, 6)

	work, weight, err := d.QueryModelSize(p.Blob)
	require.NoError(t, err)
	require.Equal(t, uintptr(p.Model.MemorySize), work)
	require.Equal(t, uintptr(p.Model.WeightSize), weight)
	wk, err := d.Malloc(work, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	wt, err := d.Malloc(weight, acl.MemMallocHugeFirst)
	require.NoError(t, err)

	loads := map[string]func() (*acl.Model, error){
		"LoadModel":        func() (*acl.Model, error) { return d.LoadModel(p.Blob) },
		"LoadModelWithMem": func() (*acl.Model, error) { return d.LoadModelWithMem(p.Blob, wk, wt) },
		"Config":           func() (*acl.Model, error) { return d.LoadModelWithConfig(p.Blob, acl.ModelConfig{}) },
		"ConfigWithMem": func() (*acl.Model, error) {
			return d.LoadModelWithConfig(p.Blob, acl.ModelConfig{Work: wk, Weight: wt})
		},
		"ConfigMemOptimize": func() (*acl.Model, error) {
			return d.LoadModelWithConfig(p.Blob, acl.ModelConfig{WorkspaceMemOptimize: true})
		},
	}
	v := newIO(t, d, p)
	st, err := d.NewStream()
	require.NoError(t, err)
	for name, load := range loads {
		t.Run(name, func(t *testing.T) {
			m, err := load()
			require.NoError(t, err)
			defer func() { require.NoError(t, m.Close()); require.NoError(t, m.Close()) }()

			desc := m.Desc()
			require.Len(t, desc.Inputs, 2)
			require.Len(t, desc.Outputs, 2)
			for i, io := range p.Model.Inputs {
				assert.Equal(t, io.Name, desc.Inputs[i].Name)
				assert.Equal(t, uintptr(io.Size), desc.Inputs[i].Size)
				assert.Equal(t, io.Dims, desc.Inputs[i].Dims)
				assert.Equal(t, io.DataType, desc.Inputs[i].DataType)
				assert.Equal(t, io.Format, desc.Inputs[i].Format)
			}
			for i, io := range p.Model.Outputs {
				assert.Equal(t, io.Name, desc.Outputs[i].Name)
				assert.Equal(t, uintptr(io.Size), desc.Outputs[i].Size)
				assert.Equal(t, io.Dims, desc.Outputs[i].Dims)
			}
			desc.Inputs[0].Dims[0] = 99 // a copy: the model's description is unchanged
			assert.Equal(t, int64(p.M), m.Desc().Inputs[0].Dims[0])
			i, err := m.InputIndex("b")
			require.NoError(t, err)
			assert.Equal(t, 1, i)
			_, err = m.InputIndex("nope")
			assert.ErrorIs(t, err, acl.ErrInvalidParam)
			o, err := m.OutputIndex(desc.Outputs[1].Name)
			require.NoError(t, err)
			assert.Equal(t, 1, o)

			v.fill(t, rng, p)
			require.NoError(t, m.Execute(v.inDS, v.outDS))
			v.check(t)

			for range 3 {
				v.fill(t, rng, p)
				require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
				require.NoError(t, m.Wait(context.Background()))
				v.check(t)
			}
		})
	}
	require.Empty(t, npuhook.Of(npu).LoadedModels())
}

// TestModelMixedExecution: GE fixes a model id to the kind of its first
// execution (hicann/ge runtime/v1/graph/load/model_manager/
// davinci_model.cc:7636-7638: the other kind is ACL_ERROR_GE_FAILURE); a
// Model keeps to the first kind, so Execute after ExecuteAsync, and the
// reverse, still work for its users and compute the right results.
func TestModelMixedExecution(t *testing.T) {
	npu, _, d := open(t)
	rng := newRand(t)
	p := newMLPModel(t, rng, 4, 8, 16, 6)
	v := newIO(t, d, p)
	st, err := d.NewStream()
	require.NoError(t, err)
	for _, asyncFirst := range []bool{true, false} {
		m, err := d.LoadModel(p.Blob)
		require.NoError(t, err)
		runs := []func() error{
			func() error { return m.Execute(v.inDS, v.outDS) },
			func() error {
				if err := m.ExecuteAsync(st, v.inDS, v.outDS); err != nil {
					return err
				}
				return st.Synchronize()
			},
		}
		if asyncFirst {
			runs[0], runs[1] = runs[1], runs[0]
		}
		for _, run := range append(runs, runs...) {
			v.fill(t, rng, p)
			require.NoError(t, run())
			v.check(t)
		}
		// The backend itself refuses the other kind.
		if asyncFirst {
			err = d.Do(func() error { return npu.Execute(m.ID(), v.inDS.Handle(), v.outDS.Handle()) })
		} else {
			err = d.Do(func() error { return npu.ExecuteAsync(m.ID(), v.inDS.Handle(), v.outDS.Handle(), st.Handle()) })
		}
		assert.Equal(t, acl.CodeGEFailure, acl.CodeOf(err), "%v", err)
		require.NoError(t, m.Close())
	}
}

func TestModelBadInput(t *testing.T) {
	_, rt, d := open(t, fallback.WithDevices(2))
	rng := newRand(t)
	p := newMLPModel(t, rng, 2, 4, 4, 2)
	_, err := d.LoadModel(nil)
	assert.ErrorIs(t, err, acl.ErrInvalidParam)
	_, _, err = d.QueryModelSize(nil)
	assert.ErrorIs(t, err, acl.ErrInvalidParam)
	_, err = d.LoadModel([]byte("not a model at all"))
	assert.Error(t, err)

	d1, err := rt.OpenDevice(1)
	require.NoError(t, err)
	other, err := d1.Malloc(1<<20, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	_, err = d.LoadModelWithMem(p.Blob, other, nil)
	assert.ErrorIs(t, err, acl.ErrInvalidParam)
	closed, err := d.Malloc(1<<20, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	_, err = d.LoadModelWithMem(p.Blob, closed, nil)
	assert.ErrorIs(t, err, acl.ErrInvalidHandle)

	m, err := d.LoadModel(p.Blob)
	require.NoError(t, err)
	v := newIO(t, d, p)
	st, err := d.NewStream()
	require.NoError(t, err)
	st1, err := d1.NewStream()
	require.NoError(t, err)
	assert.ErrorIs(t, m.ExecuteAsync(st1, v.inDS, v.outDS), acl.ErrContext, "stream of another Device")
	v1 := newIO(t, d1, p)
	assert.ErrorIs(t, m.ExecuteAsync(st, v1.inDS, v.outDS), acl.ErrInvalidParam, "dataset of another Device")
	assert.ErrorIs(t, m.ExecuteAsync(nil, v.inDS, v.outDS), acl.ErrInvalidHandle)
	assert.ErrorIs(t, m.Execute(nil, v.outDS), acl.ErrInvalidHandle)

	// A closed memory in a dataset is refused before the backend sees it.
	require.NoError(t, v.in[0].Close())
	assert.ErrorIs(t, m.ExecuteAsync(st, v.inDS, v.outDS), acl.ErrInvalidHandle)
	assert.ErrorIs(t, m.Execute(v.inDS, v.outDS), acl.ErrInvalidHandle)

	require.NoError(t, m.Close())
	v2 := newIO(t, d, p)
	assert.ErrorIs(t, m.ExecuteAsync(st, v2.inDS, v2.outDS), acl.ErrInvalidHandle, "closed model")
	assert.ErrorIs(t, m.Execute(v2.inDS, v2.outDS), acl.ErrInvalidHandle)
	assert.NoError(t, m.Wait(context.Background()), "a closed model has nothing queued")

	var nilModel *acl.Model
	assert.ErrorIs(t, nilModel.ExecuteAsync(st, v2.inDS, v2.outDS), acl.ErrInvalidHandle)
	assert.ErrorIs(t, nilModel.Wait(context.Background()), acl.ErrInvalidHandle)
	assert.NoError(t, nilModel.Close())
	assert.Zero(t, nilModel.NumInputs())
	_, err = nilModel.InputIndex("x")
	assert.ErrorIs(t, err, acl.ErrInvalidHandle)
}

// noModels hides the model half of a backend.
type noModels struct{ acl.Backend }

func TestModelNotSupported(t *testing.T) {
	npu, err := fallback.New()
	require.NoError(t, err)
	rt, err := acl.Init(noModels{npu}, "")
	require.NoError(t, err)
	defer rt.Close()
	d, err := rt.OpenDevice(0)
	require.NoError(t, err)
	_, err = d.LoadModel([]byte{1})
	assert.ErrorIs(t, err, acl.ErrNotSupported)
	_, err = d.NewDataset()
	assert.ErrorIs(t, err, acl.ErrNotSupported)
	_, _, err = d.QueryModelSize([]byte{1})
	assert.ErrorIs(t, err, acl.ErrNotSupported)
}

// TestModelExecuteOnAnotherStreamWaits: an execution queued on stream B
// while the previous one is still queued on stream A waits for it instead
// of being refused by the backend, and both produce correct results.
func TestModelExecuteOnAnotherStreamWaits(t *testing.T) {
	npu, _, d := open(t)
	rng := newRand(t)
	p := newMLPModel(t, rng, 4, 8, 8, 4)
	m, err := d.LoadModel(p.Blob)
	require.NoError(t, err)
	a, err := d.NewStream()
	require.NoError(t, err)
	b, err := d.NewStream()
	require.NoError(t, err)
	va, vb := newIO(t, d, p), newIO(t, d, p)
	va.fill(t, rng, p)
	vb.fill(t, rng, p)

	release := hold(t, npu, d, a) // a is stuck until release
	require.NoError(t, m.ExecuteAsync(a, va.inDS, va.outDS))
	launched := make(chan error, 1)
	go func() { launched <- m.ExecuteAsync(b, vb.inDS, vb.outDS) }()
	select {
	case err := <-launched:
		t.Fatalf("the run on stream b did not wait for the run queued on a: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	within(t, 5*time.Second, "ExecuteAsync on b", func() { assert.NoError(t, <-launched) })
	require.NoError(t, b.Synchronize())
	va.check(t)
	vb.check(t)

	// A synchronous Execute also waits for a queued run.
	va.fill(t, rng, p)
	release = hold(t, npu, d, a)
	require.NoError(t, m.ExecuteAsync(a, va.inDS, va.outDS))
	done := make(chan error, 1)
	go func() { done <- m.Execute(vb.inDS, vb.outDS) }()
	time.Sleep(20 * time.Millisecond)
	release()
	within(t, 5*time.Second, "Execute", func() { assert.NoError(t, <-done) })
	va.check(t)
	vb.check(t)
	require.NoError(t, m.Close())
}

// TestModelConcurrentExecuteAsync: goroutines with their own streams and
// buffers execute one model at once; every run is serialized correctly
// (none refused, every result right).
func TestModelConcurrentExecuteAsync(t *testing.T) {
	_, _, d := open(t)
	rng := newRand(t)
	p := newMLPModel(t, rng, 8, 16, 16, 8)
	m, err := d.LoadModel(p.Blob)
	require.NoError(t, err)
	const workers, runs = 4, 15
	var wg sync.WaitGroup
	for g := range workers {
		st, err := d.NewStream()
		require.NoError(t, err)
		v := newIO(t, d, p)
		r := rand.New(rand.NewPCG(uint64(g), rng.Uint64()))
		wg.Go(func() {
			for range runs {
				v.fill(t, r, p)
				if !assert.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS)) {
					return
				}
				if !assert.NoError(t, st.Synchronize()) {
					return
				}
				v.check(t)
			}
		})
	}
	wg.Wait()
	require.NoError(t, m.Close())
}

// TestModelCloseWaitsForQueuedRun: closing the model, and a buffer it
// reads, waits for the queued execution instead of pulling memory from
// under it.
func TestModelCloseWaitsForQueuedRun(t *testing.T) {
	npu, _, d := open(t)
	rng := newRand(t)
	p := newMLPModel(t, rng, 4, 8, 8, 4)
	m, err := d.LoadModel(p.Blob)
	require.NoError(t, err)
	st, err := d.NewStream()
	require.NoError(t, err)
	v := newIO(t, d, p)
	v.fill(t, rng, p)
	release := hold(t, npu, d, st)
	require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
	closed := make(chan error, 2)
	go func() { closed <- v.in[0].Close() }()
	go func() { closed <- m.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned before the queued run completed: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	within(t, 5*time.Second, "Close", func() {
		assert.NoError(t, <-closed)
		assert.NoError(t, <-closed)
	})
	require.NoError(t, st.Synchronize())
	assert.Empty(t, npuhook.Of(npu).LoadedModels())
}

// TestModelDeviceCloseUnloads: closing the Device unloads its models and
// releases datasets and data buffers; the Model's Close is then a no-op.
func TestModelDeviceCloseUnloads(t *testing.T) {
	npu, err := fallback.New()
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	defer rt.Close()
	d, err := rt.OpenDevice(0)
	require.NoError(t, err)
	p := newMLPModel(t, newRand(t), 2, 4, 4, 2)
	m, err := d.LoadModel(p.Blob)
	require.NoError(t, err)
	v := newIO(t, d, p)
	st, err := d.NewStream()
	require.NoError(t, err)
	require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
	// A staged run (pinned host IO): its device copies are the Model's,
	// freed with it rather than left to the device reset as leaks.
	var hosts []acl.Memory
	for _, n := range append(p.InSizes(), p.OutSizes()...) {
		h, err := d.MallocHost(n)
		require.NoError(t, err)
		hosts = append(hosts, h)
	}
	nin := len(p.InSizes())
	hin, err := d.NewDatasetOf(hosts[:nin]...)
	require.NoError(t, err)
	hout, err := d.NewDatasetOf(hosts[nin:]...)
	require.NoError(t, err)
	require.NoError(t, m.ExecuteAsync(st, hin, hout))
	npu.ClearLeaks()
	require.NoError(t, d.Close())
	for _, l := range npu.Leaks() {
		assert.NotEqual(t, fallback.LeakDeviceMemory, l.Kind, "leak: %v", l)
	}
	assert.Empty(t, npuhook.Of(npu).LoadedModels())
	assert.NoError(t, m.Close())
	assert.NoError(t, v.inDS.Close())
	assert.ErrorIs(t, m.ExecuteAsync(st, v.inDS, v.outDS), acl.ErrInvalidHandle)
}

// TestModelRebindsContext: a thread whose current context is another
// Device's still launches with one call once bound; the Model binds its
// own context when the backend refuses the first attempt.
func TestModelRebindsContext(t *testing.T) {
	_, rt, d := open(t, fallback.WithDevices(2))
	d1, err := rt.OpenDevice(1)
	require.NoError(t, err)
	rng := newRand(t)
	p := newMLPModel(t, rng, 4, 8, 8, 4)
	m, err := d.LoadModel(p.Blob)
	require.NoError(t, err)
	st, err := d.NewStream()
	require.NoError(t, err)
	v := newIO(t, d, p)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range 3 {
		v.fill(t, rng, p)
		// Leaves device 1's context current on this thread.
		require.NoError(t, d1.Do(func() error { return nil }))
		require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
		require.NoError(t, st.Synchronize())
		v.check(t)
	}
}

// TestModelExecuteAsyncAllocs: the steady state of ExecuteAsync allocates
// nothing beyond what the backend's own aclmdlExecuteAsync allocates.
func TestModelExecuteAsyncAllocs(t *testing.T) {
	npu, _, d := open(t)
	p := newMLPModel(t, newRand(t), 4, 8, 8, 4)
	m, err := d.LoadModel(p.Blob)
	require.NoError(t, err)
	st, err := d.NewStream()
	require.NoError(t, err)
	v := newIO(t, d, p)
	runtime.LockOSThread() // one thread: its context stays bound
	defer runtime.UnlockOSThread()
	require.NoError(t, d.Do(func() error { return nil }))
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
	raw := measure(func() error { return npu.ExecuteAsync(m.ID(), v.inDS.Handle(), v.outDS.Handle(), st.Handle()) })
	idiomatic := measure(func() error { return m.ExecuteAsync(st, v.inDS, v.outDS) })
	t.Logf("allocs per run: backend %.2f, through Model %.2f", raw, idiomatic)
	assert.LessOrEqual(t, idiomatic, raw)
}

// TestModelWaitContext: Wait gives up when its context ends while a run is
// still queued, and returns once the run has completed.
func TestModelWaitContext(t *testing.T) {
	npu, _, d := open(t)
	rng := newRand(t)
	p := newMLPModel(t, rng, 4, 8, 8, 4)
	m, err := d.LoadModel(p.Blob)
	require.NoError(t, err)
	st, err := d.NewStream()
	require.NoError(t, err)
	v := newIO(t, d, p)
	v.fill(t, rng, p)
	require.NoError(t, m.Wait(context.Background()), "nothing queued yet")
	release := hold(t, npu, d, st)
	require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, m.Wait(ctx), context.DeadlineExceeded)
	release()
	within(t, 5*time.Second, "Wait", func() { assert.NoError(t, m.Wait(context.Background())) })
	v.check(t)
	require.NoError(t, m.Close())
}
