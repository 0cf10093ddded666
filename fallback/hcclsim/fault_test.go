package hcclsim_test

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback/hcclsim/procs"
	"github.com/ascend-go/cann/hccl"
)

// shmLeftovers lists the simulator's segment names in /dev/shm made by
// this process or a rank process of cl. A name ends in its maker's pid
// (segName); segments of other processes (go test runs packages at once,
// and examples, engram and bench make worlds of their own) are theirs
// to clean up and would make this check flaky.
func shmLeftovers(t testing.TB, cl *procs.Cluster) []string {
	t.Helper()
	ours := []string{strconv.Itoa(os.Getpid())}
	for i := 0; cl != nil && i < cl.Procs(); i++ {
		ours = append(ours, strconv.Itoa(cl.Proc(i).Pid()))
	}
	ents, err := os.ReadDir("/dev/shm")
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		name := e.Name()
		at := strings.LastIndex(name, "-p")
		if strings.HasPrefix(name, "hcclsim-") && at >= 0 && slices.Contains(ours, name[at+2:]) {
			out = append(out, name)
		}
	}
	return out
}

// settle polls f until it returns true or settleLong's 20 s pass: a
// bound on a leak, not a speed check (goroutines of closed connections end
// promptly, but a loaded machine may take a while to schedule them).
func settle(f func() bool) bool { return settleLong(f) }

// TestKilledRankMidCollective kills one rank process while all ranks loop
// on a large AllReduce, on the direct and the staged path. As on the
// device, the survivors' calls keep returning (they only enqueue) and
// their stream fails with 507048 (ACL_ERROR_RT_FFTS_PLUS_TIMEOUT) once the
// exec timeout has passed; GetCommAsyncError stays HCCL_SUCCESS (a lost
// peer is only logged: hccl-vs-source.md); the communicator stays failed
// (a later AllReduce is accepted and fails its stream); destroying it
// releases everything (no segment, no goroutine left).
func TestKilledRankMidCollective(t *testing.T) {
	for _, staged := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "staged"}[staged], func(t *testing.T) {
			killedRankMidCollective(t, staged)
		})
	}
}

func killedRankMidCollective(t *testing.T, staged bool) {
	const n, victim = 3, 2
	timeout := 3 * time.Second
	cl := startCluster(t, n, procs.Options{ExecTimeout: timeout, BufferBytes: 1 << 20, Staged: staged})
	env := &procEnv{cl: cl}
	g := newGroup(t, env, n)
	b := cl.Backend()

	base := make([]int, n)
	for r := 0; r < n; r++ {
		var err error
		base[r], err = cl.Proc(r).Goroutines()
		require.NoError(t, err)
	}
	const size = 8 << 20
	type rankRes struct {
		err error
		at  time.Time
	}
	res := make([]rankRes, n)
	send := make([]uintptr, n)
	for r := 0; r < n; r++ {
		var err error
		send[r], err = cl.Proc(r).Alloc(size)
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := g.ws[r].r.(*procRank)
			_, lh, _ := b.Local(g.ws[r].comm)
			_, err := cl.Proc(r).LoopAllReduce(lh, w.s, send[r], send[r], size/4, hccl.Float32, hccl.Sum, 3000)
			res[r] = rankRes{err, time.Now()}
		}()
	}
	// 3000 collectives of 8 MiB outlast the sleep by far; the calls run at
	// most 256 ahead of the streams, so the loop is still going when the
	// victim dies, and after the failure its remaining calls only enqueue
	// onto the failed stream.
	time.Sleep(300 * time.Millisecond)
	killed := time.Now()
	require.NoError(t, cl.Kill(victim))
	wg.Wait()
	for r := 0; r < n; r++ {
		if r == victim {
			continue
		}
		require.Error(t, res[r].err, "rank %d", r)
		assert.Equal(t, acl.CodeRTFftsPlusTimeout, acl.CodeOf(res[r].err), "rank %d: %v", r, res[r].err)
		el := res[r].at.Sub(killed)
		assert.Less(t, el, timeout+20*time.Second, "rank %d noticed the loss after %v", r, el)
		t.Logf("rank %d: failed %v after the kill: %v", r, el, res[r].err)
	}
	g.ws = g.ws[:victim] // the victim's worker has nothing left to close
	for r := 0; r < victim; r++ {
		w := g.ws[r]
		done := make(chan struct{})
		w.reqs <- func() {
			defer close(done)
			// A lost peer is only logged: no async error
			// (op_base.cc:4828-4844 reports error CQEs and, with
			// inconsistent_check on, mismatches).
			a, err := b.GetCommAsyncError(w.comm)
			require.NoError(t, err)
			assert.Equal(t, hccl.Success, a, "rank %d async error", r)
			// The communicator stays failed: a later AllReduce is
			// accepted and fails the stream.
			err = b.AllReduce(foreign(send[r]), foreign(send[r]), 16, hccl.Float32, hccl.Sum, w.comm, w.r.Stream())
			assert.NoError(t, err, "rank %d: AllReduce after the loss only enqueues", r)
			require.NoError(t, b.CommDestroy(w.comm))
			w.comm = 0
		}
		<-done
		p := cl.Proc(r)
		live, err := p.Live()
		require.NoError(t, err)
		assert.Zero(t, live, "rank %d still holds resources", r)
		assert.True(t, settle(func() bool { k, _ := p.Goroutines(); return k <= base[r] }),
			"rank %d: goroutines %v, before init %d", r, func() int { k, _ := p.Goroutines(); return k }(), base[r])
		require.NoError(t, p.Free(send[r]))
	}
	assert.Empty(t, shmLeftovers(t, cl))
}

// TestKilledRankDuringInit: a rank process dies before the communicator
// forms; the others fail with HCCL_E_TIMEOUT and no segment is left.
func TestKilledRankDuringInit(t *testing.T) {
	const n = 3
	cl := startCluster(t, n, procs.Options{ConnectTimeout: 2 * time.Second})
	b := cl.Backend()
	for r := 0; r < n; r++ {
		_, err := cl.Proc(r).OpenRank(int32(r))
		require.NoError(t, err)
	}
	root, err := b.GetRootInfo()
	require.NoError(t, err)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n-1; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[r] = b.CommInitRootInfo(n, &root, uint32(r))
		}()
	}
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, cl.Kill(n-1))
	wg.Wait()
	for r := 0; r < n-1; r++ {
		assert.Equal(t, hccl.ETimeout, hccl.ResultOf(errs[r]), "rank %d: %v", r, errs[r])
	}
	assert.Empty(t, shmLeftovers(t, cl))
}

// TestMismatchedCountsAcrossProcesses: ranks in processes disagreeing on
// the count of their first operation get HCCL_E_INTERNAL on every rank
// (inconsistent_check first), and the communicator stays usable.
func TestMismatchedCountsAcrossProcesses(t *testing.T) {
	const n = 3
	cl := startCluster(t, n, procs.Options{})
	g := newGroup(t, &procEnv{cl: cl}, n)
	errs := g.each(func(w *rankW) error {
		p, err := w.buf(nil, 4096)
		if err != nil {
			return err
		}
		return g.b.AllReduce(p, p, uint64(100+w.rank), hccl.Int32, hccl.Sum, w.comm, w.r.Stream())
	})
	for r, err := range errs {
		assert.Equal(t, hccl.EInternal, hccl.ResultOf(err), "rank %d: %v", r, err)
	}
	g.must("AllReduce after the mismatch", g.each(func(w *rankW) error {
		p, err := w.buf(nil, 4096)
		if err != nil {
			return err
		}
		if err := g.b.AllReduce(p, p, 100, hccl.Int32, hccl.Sum, w.comm, w.r.Stream()); err != nil {
			return err
		}
		return w.r.Sync()
	}))
}

// TestNoLeftoversInProcess: after every communicator is destroyed and the
// Sim closed, no goroutine of the simulator is left and nothing is held.
func TestNoLeftoversInProcess(t *testing.T) {
	const n = 4
	npu := newNPU(t, n)
	before := runtime.NumGoroutine()
	sim := newSim(t, npu)
	g := newGroup(t, &npuEnv{npu: npu, sim: sim}, n)
	mem := make([]unsafe.Pointer, n)
	g.must("alloc", g.each(func(w *rankW) error {
		var err error
		mem[w.rank], err = w.buf(nil, 1<<16)
		return err
	}))
	enabled := exchangeAll(t, g, mem, 1<<16)
	g.must("traffic", g.each(func(w *rankW) error {
		p, err := w.buf(nil, 1<<16)
		if err != nil {
			return err
		}
		if err := g.b.AllReduce(p, p, 1<<14, hccl.Float32, hccl.Sum, w.comm, w.r.Stream()); err != nil {
			return err
		}
		next, prev := uint32((w.rank+1)%n), uint32((w.rank+n-1)%n)
		items := []hccl.SendRecvItem{{Type: hccl.SendType, Buf: p, Count: 64, DataType: hccl.Uint8, RemoteRank: next},
			{Type: hccl.RecvType, Buf: unsafe.Add(p, 64), Count: 64, DataType: hccl.Uint8, RemoteRank: prev}}
		if err := g.b.BatchSendRecv(items, w.comm, w.r.Stream()); err != nil {
			return err
		}
		d := hccl.OneSideOpDesc{LocalAddr: p, RemoteAddr: enabled[w.rank][next].Addr, Count: 128, DataType: hccl.Uint8}
		if err := g.b.BatchGet(w.comm, next, []hccl.OneSideOpDesc{d}, w.r.Stream()); err != nil {
			return err
		}
		return w.r.Sync()
	}))
	require.Positive(t, sim.Live())
	g.close()
	assert.Zero(t, sim.Live(), "destroyed communicators still hold resources")
	// A root info never used keeps its rendezvous until Close.
	_, err := sim.GetRootInfo()
	require.NoError(t, err)
	require.NoError(t, sim.Close())
	assert.True(t, settle(func() bool { return runtime.NumGoroutine() <= before }),
		"goroutines: %d, before %d", runtime.NumGoroutine(), before)
}

// TestNoLeftoversMultiProcess: ranks as processes leave nothing behind —
// no segment name in /dev/shm once the communicator formed (names are
// unlinked as soon as every rank mapped every segment), no goroutine and
// no held resource in any rank process after CommDestroy.
func TestNoLeftoversMultiProcess(t *testing.T) {
	const n = 3
	cl := startCluster(t, n, procs.Options{BufferBytes: 256 << 10})
	base := make([]int, n)
	for r := 0; r < n; r++ {
		_, err := cl.Proc(r).OpenRank(int32(r))
		require.NoError(t, err)
		base[r], err = cl.Proc(r).Goroutines()
		require.NoError(t, err)
	}
	env := &procEnv{cl: cl}
	g := newGroup(t, env, n) // opens its own streams on the same devices
	assert.Empty(t, shmLeftovers(t, cl), "segment names after the communicator formed")
	mem := make([]unsafe.Pointer, n)
	g.must("alloc", g.each(func(w *rankW) error {
		var err error
		mem[w.rank], err = w.buf(nil, 1<<20)
		return err
	}))
	enabled := exchangeAll(t, g, mem, 1<<20)
	g.must("traffic", g.each(func(w *rankW) error {
		p, err := w.buf(nil, 4<<20)
		if err != nil {
			return err
		}
		if err := g.b.AllReduce(p, p, 1<<20, hccl.Float32, hccl.Sum, w.comm, w.r.Stream()); err != nil {
			return err
		}
		next, prev := uint32((w.rank+1)%n), uint32((w.rank+n-1)%n)
		items := []hccl.SendRecvItem{{Type: hccl.SendType, Buf: p, Count: 1 << 20, DataType: hccl.Uint8, RemoteRank: next},
			{Type: hccl.RecvType, Buf: unsafe.Add(p, 2<<20), Count: 1 << 20, DataType: hccl.Uint8, RemoteRank: prev}}
		if err := g.b.BatchSendRecv(items, w.comm, w.r.Stream()); err != nil {
			return err
		}
		d := hccl.OneSideOpDesc{LocalAddr: p, RemoteAddr: enabled[w.rank][next].Addr, Count: 1 << 20, DataType: hccl.Uint8}
		if err := g.b.BatchGet(w.comm, next, []hccl.OneSideOpDesc{d}, w.r.Stream()); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		return g.b.Barrier(w.comm, w.r.Stream())
	}))
	g.close()
	for r := 0; r < n; r++ {
		p := cl.Proc(r)
		live, err := p.Live()
		require.NoError(t, err)
		assert.Zero(t, live, "rank %d holds resources after CommDestroy", r)
		assert.True(t, settle(func() bool { k, _ := p.Goroutines(); return k <= base[r] }),
			"rank %d: goroutines %v after CommDestroy, %d before init", r, func() int { k, _ := p.Goroutines(); return k }(), base[r])
	}
	assert.Empty(t, shmLeftovers(t, cl))
}
