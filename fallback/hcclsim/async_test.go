package hcclsim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/fallback/hcclsim/procs"
	"github.com/ascend-go/cann/hccl"
)

// asyncGroup is three in-process ranks over a Sim with the given options
// (exec and connect timeouts short), whose first operation already ran.
func asyncGroup(t *testing.T, opts hcclsim.Options) *group {
	t.Helper()
	npu := newNPU(t, 3)
	if opts.ExecTimeout == 0 {
		opts.ExecTimeout = 500 * time.Millisecond
	}
	opts.ConnectTimeout = 10 * time.Second
	sim := hcclsim.New(npu, opts)
	t.Cleanup(func() { _ = sim.Close() })
	return newGroup(t, &npuEnv{npu: npu, sim: sim}, 3)
}

// mismatchedAllReduce issues an AllReduce whose count differs on rank 2.
func mismatchedAllReduce(g *group) []error {
	return g.each(func(w *rankW) error {
		p, err := w.buf(nil, 4096)
		if err != nil {
			return err
		}
		n := uint64(64)
		if w.rank == 2 {
			n = 63
		}
		return g.b.AllReduce(p, p, n, hccl.Float32, hccl.Sum, w.comm, w.r.Stream())
	})
}

func goodAllReduce(g *group) []error {
	return g.each(func(w *rankW) error {
		p, err := w.buf(nil, 256)
		if err != nil {
			return err
		}
		if err := g.b.AllReduce(p, p, 64, hccl.Float32, hccl.Sum, w.comm, w.r.Stream()); err != nil {
			return err
		}
		return w.r.Sync()
	})
}

// TestLaterMismatchSurfacesAtSync: after the first operation, a mismatch
// returns success on every rank; every rank's synchronize fails with
// 507048 no earlier than the exec timeout, and the message names what
// differed. With inconsistent_check on, HcclGetCommAsyncError reports
// HCCL_E_PARA (heartbeat.cc:2082-2106); with first, HCCL_SUCCESS.
func TestLaterMismatchSurfacesAtSync(t *testing.T) {
	for _, mode := range []string{"first", "on"} {
		t.Run(mode, func(t *testing.T) {
			const exec = 500 * time.Millisecond
			g := asyncGroup(t, hcclsim.Options{ExecTimeout: exec, InconsistentCheck: mode})
			g.must("first AllReduce", goodAllReduce(g))
			start := time.Now()
			g.must("mismatched AllReduce (only enqueues)", mismatchedAllReduce(g))
			errs := g.each(func(w *rankW) error { return w.r.Sync() })
			el := time.Since(start)
			for r, err := range errs {
				assert.Equal(t, acl.CodeRTFftsPlusTimeout, acl.CodeOf(err), "rank %d: %v", r, err)
				if err != nil {
					assert.Contains(t, err.Error(), "rank 2 count 63, rank 0 count 64", "rank %d", r)
				}
			}
			assert.GreaterOrEqual(t, el, exec, "synchronize failed before the exec timeout")
			want := hccl.Success
			if mode == "on" {
				want = hccl.EPara
			}
			g.must("GetCommAsyncError", g.each(func(w *rankW) error {
				a, err := g.b.GetCommAsyncError(w.comm)
				if err == nil {
					assert.Equal(t, want, a, "rank %d", w.rank)
				}
				return err
			}))
		})
	}
}

// TestFirstMismatchModes: the first operation's mismatch fails the call
// with HCCL_E_INTERNAL under inconsistent_check first (the default, also
// from HCCL_DFS_CONFIG) and on; with off it goes to the stream like a
// later one.
func TestFirstMismatchModes(t *testing.T) {
	t.Run("env-first", func(t *testing.T) {
		t.Setenv("HCCL_DFS_CONFIG", "cluster_heartbeat:on, Inconsistent_Check:FIRST")
		g := asyncGroup(t, hcclsim.Options{})
		for r, err := range mismatchedAllReduce(g) {
			assert.Equal(t, hccl.EInternal, hccl.ResultOf(err), "rank %d: %v", r, err)
		}
		g.must("AllReduce after the mismatch", goodAllReduce(g))
	})
	t.Run("env-off", func(t *testing.T) {
		t.Setenv("HCCL_DFS_CONFIG", "inconsistent_check:off")
		g := asyncGroup(t, hcclsim.Options{})
		g.must("mismatched first AllReduce (check off)", mismatchedAllReduce(g))
		for r, err := range g.each(func(w *rankW) error { return w.r.Sync() }) {
			assert.Equal(t, acl.CodeRTFftsPlusTimeout, acl.CodeOf(err), "rank %d: %v", r, err)
		}
	})
}

// TestExecTimeoutFromConfig: HcclCommConfig.hcclExecTimeOut overrides the
// Sim's exec timeout for its communicator (HCCL_EXEC_TIMEOUT.md).
func TestExecTimeoutFromConfig(t *testing.T) {
	npu := newNPU(t, 2)
	sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: time.Hour, ConnectTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = sim.Close() })
	env := &npuEnv{npu: npu, sim: sim}
	g := newGroup(t, env, 2)
	// Re-form with a config of 1 s on a fresh root info.
	g.must("destroy", g.each(func(w *rankW) error { err := g.b.CommDestroy(w.comm); w.comm = 0; return err }))
	var root hccl.RootInfo
	g.on(0, func(w *rankW) error { var err error; root, err = g.b.GetRootInfo(); return err })
	g.must("CommInitRootInfoConfig", g.each(func(w *rankW) error {
		cfg := hccl.NewCommConfig()
		cfg.ExecTimeOut = 1
		var err error
		w.comm, err = g.b.CommInitRootInfoConfig(2, &root, uint32(w.rank), cfg)
		return err
	}))
	g.must("first Barrier", g.each(func(w *rankW) error {
		if err := g.b.Barrier(w.comm, w.r.Stream()); err != nil {
			return err
		}
		return w.r.Sync()
	}))
	start := time.Now()
	errs := make([]error, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		errs = g.each(func(w *rankW) error {
			if w.rank == 1 {
				return nil // never comes
			}
			if err := g.b.Barrier(w.comm, w.r.Stream()); err != nil {
				return err
			}
			return w.r.Sync()
		})
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the 1 s exec timeout of the config did not apply")
	}
	assert.Equal(t, acl.CodeRTFftsPlusTimeout, acl.CodeOf(errs[0]), "%v", errs[0])
	assert.GreaterOrEqual(t, time.Since(start), time.Second)
}

// TestHCCLEnvironment: the HCCL variables are read as the device reads
// them; a malformed one fails every initialisation with HCCL_E_PARA
// (externalinput.cc:530-563 for HCCL_CONNECT_TIMEOUT).
func TestHCCLEnvironment(t *testing.T) {
	for _, c := range []struct{ name, val string }{
		{"HCCL_CONNECT_TIMEOUT", "119"}, {"HCCL_CONNECT_TIMEOUT", "7201"}, {"HCCL_CONNECT_TIMEOUT", "12x"},
		{"HCCL_EXEC_TIMEOUT", "-1"}, {"HCCL_EXEC_TIMEOUT", "abc"}, {"HCCL_BUFFSIZE", "0"},
	} {
		t.Run(c.name+"="+c.val, func(t *testing.T) {
			t.Setenv(c.name, c.val)
			npu := newNPU(t, 2)
			sim := hcclsim.New(npu, hcclsim.Options{})
			t.Cleanup(func() { _ = sim.Close() })
			_, err := sim.CommInitAll([]int32{0, 1})
			assert.Equal(t, hccl.EPara, hccl.ResultOf(err), "%v", err)
			assert.Contains(t, err.Error(), c.name)
		})
	}
	for _, c := range []struct{ name, val string }{
		{"HCCL_CONNECT_TIMEOUT", "120"}, {"HCCL_CONNECT_TIMEOUT", "7200"}, {"HCCL_EXEC_TIMEOUT", "0"},
		{"HCCL_EXEC_TIMEOUT", "0.5"}, {"HCCL_BUFFSIZE", "200"}, {"HCCL_DFS_CONFIG", "inconsistent_check:bogus"},
	} {
		t.Run(c.name+"="+c.val, func(t *testing.T) {
			t.Setenv(c.name, c.val)
			npu := newNPU(t, 2)
			sim := hcclsim.New(npu, hcclsim.Options{})
			t.Cleanup(func() { _ = sim.Close() })
			hs, err := sim.CommInitAll([]int32{0, 1})
			require.NoError(t, err)
			for _, h := range hs {
				require.NoError(t, sim.CommDestroy(h))
			}
		})
	}
}

// TestCommNameUniquePerDevice: a second communicator with the name of a
// live one on the same device is HCCL_E_PARA (op_base.cc:1747-1753);
// after the first is destroyed the name is free again.
func TestCommNameUniquePerDevice(t *testing.T) {
	npu := newNPU(t, 1)
	sim := newSim(t, npu)
	g := newGroup(t, &npuEnv{npu: npu, sim: sim}, 1)
	g.on(0, func(w *rankW) error {
		cfg := hccl.NewCommConfig()
		require.NoError(t, cfg.SetCommName("named"))
		init := func() (hccl.CommHandle, error) {
			root, err := sim.GetRootInfo()
			if err != nil {
				return 0, err
			}
			return sim.CommInitRootInfoConfig(1, &root, 0, cfg)
		}
		h, err := init()
		require.NoError(t, err)
		_, err = init()
		assert.Equal(t, hccl.EPara, hccl.ResultOf(err), "second communicator named %q: %v", "named", err)
		require.NoError(t, sim.CommDestroy(h))
		h, err = init()
		require.NoError(t, err)
		return sim.CommDestroy(h)
	})
}

// TestLaterMismatchCheckOnAcrossProcesses: TestLaterMismatchSurfacesAtSync
// with ranks in processes and inconsistent_check on (HCCL_DFS_CONFIG, which
// the rank processes inherit): the call succeeds, every synchronize fails
// with 507048 no earlier than the exec timeout naming what differed, and
// HcclGetCommAsyncError reports HCCL_E_PARA (heartbeat.cc:2082-2106).
func TestLaterMismatchCheckOnAcrossProcesses(t *testing.T) {
	t.Setenv("HCCL_DFS_CONFIG", "inconsistent_check:on")
	const exec = 500 * time.Millisecond
	cl := startCluster(t, 3, procs.Options{ExecTimeout: exec})
	g := newGroup(t, &procEnv{cl: cl}, 3)
	g.must("first AllReduce", goodAllReduce(g))
	start := time.Now()
	g.must("mismatched AllReduce (only enqueues)", mismatchedAllReduce(g))
	errs := g.each(func(w *rankW) error { return w.r.Sync() })
	el := time.Since(start)
	for r, err := range errs {
		assert.Equal(t, acl.CodeRTFftsPlusTimeout, acl.CodeOf(err), "rank %d: %v", r, err)
		if err != nil {
			assert.Contains(t, err.Error(), "rank 2 count 63, rank 0 count 64", "rank %d", r)
		}
	}
	assert.GreaterOrEqual(t, el, exec, "synchronize failed before the exec timeout")
	g.must("GetCommAsyncError", g.each(func(w *rankW) error {
		a, err := g.b.GetCommAsyncError(w.comm)
		if err == nil {
			assert.Equal(t, hccl.EPara, a, "rank %d", w.rank)
		}
		return err
	}))
}
