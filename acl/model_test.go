package acl_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestModelLoadDescExecute(t *testing.T) {
	r := newRig(t, mlp(4, 8, 16, 6), unloaded())
	npu, d, rng, p, st, v := r.npu, r.d, r.rng, r.p, r.st, r.v

	work, weight, err := d.QueryModelSize(p.Blob)
	require.NoError(t, err)
	require.Equal(t, uintptr(p.Model.MemorySize), work)
	require.Equal(t, uintptr(p.Model.WeightSize), weight)
	wk := devMem(t, d, work)
	wt := devMem(t, d, weight)

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
	r := newRig(t, mlp(4, 8, 16, 6), unloaded())
	npu, d, rng, p, st, v := r.npu, r.d, r.rng, r.p, r.st, r.v
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
	r := newRig(t, twoDevices(), mlp(2, 4, 4, 2))
	d, d1, p, m, st, v := r.d, r.d1, r.p, r.m, r.st, r.v
	_, err := d.LoadModel(nil)
	assert.ErrorIs(t, err, acl.ErrInvalidParam)
	_, _, err = d.QueryModelSize(nil)
	assert.ErrorIs(t, err, acl.ErrInvalidParam)
	_, err = d.LoadModel([]byte("not a model at all"))
	assert.Error(t, err)

	other := devMem(t, d1, 1<<20)
	_, err = d.LoadModelWithMem(p.Blob, other, nil)
	assert.ErrorIs(t, err, acl.ErrInvalidParam)
	closed := devMem(t, d, 1<<20)
	require.NoError(t, closed.Close())
	_, err = d.LoadModelWithMem(p.Blob, closed, nil)
	assert.ErrorIs(t, err, acl.ErrInvalidHandle)

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
	_, d := openOn(t, noModels{npu})
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
	r := newRig(t)
	npu, d, rng, p, m, a, va := r.npu, r.d, r.rng, r.p, r.m, r.st, r.v
	b, err := d.NewStream()
	require.NoError(t, err)
	vb := newIO(t, d, p)
	va.fill(t, rng, p)
	vb.fill(t, rng, p)

	release := hold(t, npu, d, a) // a is stuck until release
	require.NoError(t, m.ExecuteAsync(a, va.inDS, va.outDS))
	launched := mustBlock(t, "the run on stream b, behind the run queued on a,",
		func() error { return m.ExecuteAsync(b, vb.inDS, vb.outDS) })
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
	r := newRig(t, mlp(8, 16, 16, 8))
	d, rng, p, m := r.d, r.rng, r.p, r.m
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
	r := newRig(t)
	npu, d, rng, p, m, st, v := r.npu, r.d, r.rng, r.p, r.m, r.st, r.v
	v.fill(t, rng, p)
	release := hold(t, npu, d, st)
	require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
	closed := mustBlock(t, "Close of an input and of the model, with a run queued,", v.in[0].Close, m.Close)
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
	r := newRig(t, mlp(2, 4, 4, 2))
	npu, d, p, m, st, v := r.npu, r.d, r.p, r.m, r.st, r.v
	require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
	// A staged run (pinned host IO): its device copies are the Model's,
	// freed with it rather than left to the device reset as leaks.
	var hosts []acl.Memory
	for _, n := range append(p.InSizes(), p.OutSizes()...) {
		h := hostMem(t, d, n)
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
	r := newRig(t, twoDevices())
	d1, rng, p, m, st, v := r.d1, r.rng, r.p, r.m, r.st, r.v
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
	r := newRig(t)
	npu, d, m, st, v := r.npu, r.d, r.m, r.st, r.v
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
	r := newRig(t)
	npu, d, rng, p, m, st, v := r.npu, r.d, r.rng, r.p, r.m, r.st, r.v
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
