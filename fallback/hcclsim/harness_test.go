package hcclsim_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/hccltest"
)

// group drives n ranks of an env, each from its own goroutine locked to
// its OS thread, with a communicator formed by root info. Tests here use
// it on both envs: ranks in one process (npuEnv) and ranks as processes
// (procEnv).
type group struct {
	t   testing.TB
	env hccltest.Env
	b   hccl.Backend
	ws  []*rankW
}

type rankW struct {
	rank  int
	dev   int32
	r     hccltest.Rank
	comm  hccl.CommHandle
	reqs  chan func()
	bufs  []unsafe.Pointer
	group *group
}

func newGroup(t testing.TB, env hccltest.Env, n int) *group {
	t.Helper()
	g := &group{t: t, env: env, b: env.Backend()}
	devs := env.Devices(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		w := &rankW{rank: i, dev: devs[i], reqs: make(chan func()), group: g}
		g.ws = append(g.ws, w)
		wg.Add(1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread dies with the state set on it
			w.r, errs[w.rank] = env.OpenRank(w.rank, w.dev)
			wg.Done()
			for f := range w.reqs {
				f()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	t.Cleanup(g.close)
	var root hccl.RootInfo
	g.on(0, func(w *rankW) error {
		var err error
		root, err = g.b.GetRootInfo()
		return err
	})
	g.must("CommInitRootInfo", g.each(func(w *rankW) error {
		var err error
		w.comm, err = g.b.CommInitRootInfo(uint32(n), &root, uint32(w.rank))
		return err
	}))
	return g
}

// each runs f on every rank concurrently and returns the per-rank errors.
func (g *group) each(f func(w *rankW) error) []error {
	errs := make([]error, len(g.ws))
	var wg sync.WaitGroup
	for _, w := range g.ws {
		wg.Add(1)
		w.reqs <- func() {
			defer wg.Done()
			errs[w.rank] = f(w)
		}
	}
	wg.Wait()
	return errs
}

// on runs f on one rank and fails the test on error.
func (g *group) on(r int, f func(w *rankW) error) {
	g.t.Helper()
	done := make(chan error)
	g.ws[r].reqs <- func() { done <- f(g.ws[r]) }
	require.NoError(g.t, <-done)
}

func (g *group) must(what string, errs []error) {
	g.t.Helper()
	for r, err := range errs {
		require.NoError(g.t, err, "%s: rank %d", what, r)
	}
}

// close destroys the communicator, frees buffers and closes the ranks.
func (g *group) close() {
	for _, w := range g.ws {
		if w.reqs == nil {
			continue
		}
		done := make(chan struct{})
		w.reqs <- func() {
			defer close(done)
			if w.comm != 0 {
				_ = g.b.CommDestroy(w.comm)
				w.comm = 0
			}
			for _, p := range w.bufs {
				_ = w.r.Free(p)
			}
			w.bufs = nil
			_ = w.r.Close()
		}
		<-done
		close(w.reqs)
		w.reqs = nil
	}
}

// buf allocates n bytes holding data (zero-padded) on the rank.
func (w *rankW) buf(data []byte, n int) (unsafe.Pointer, error) {
	p, err := w.r.Alloc(uintptr(max(n, len(data), 1)))
	if err != nil {
		return nil, err
	}
	w.bufs = append(w.bufs, p)
	if len(data) > 0 {
		return p, w.r.Write(p, data)
	}
	return p, nil
}

func (w *rankW) read(p unsafe.Pointer, n int) ([]byte, error) {
	out := make([]byte, n)
	if n == 0 {
		return out, nil
	}
	return out, w.r.Read(out, p)
}

// envs returns the envs the transport tests run on: ranks as devices of
// one NPU; ranks as processes that map each other's device memory (the
// direct path); and ranks as processes that cannot, with a small staging
// buffer (64 KiB), so that large transfers move in many pieces.
func envs(t *testing.T, n int) map[string]hccltest.Env {
	t.Helper()
	npu := newNPU(t, n)
	sim := newSim(t, npu)
	direct := startCluster(t, n, procsOptions(64<<10))
	staged := procsOptions(64 << 10)
	staged.Staged = true
	return map[string]hccltest.Env{"inproc": &npuEnv{npu: npu, sim: sim}, "procs": &procEnv{cl: direct},
		"staged": &procEnv{cl: startCluster(t, n, staged)}}
}

func diffAt(want, got []byte) string {
	if len(want) != len(got) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Sprintf("byte %d of %d: got %#02x want %#02x", i, len(want), got[i], want[i])
		}
	}
	return ""
}
