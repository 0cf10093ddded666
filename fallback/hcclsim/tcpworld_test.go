package hcclsim

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/npuhook"
)

// A world of ranks that live in this process but join their rendezvous
// over loopback TCP, as ranks of other processes do: the world is a
// shared-memory world (segments, peer mappings through /proc) whose every
// piece this test process can reach and break, playing the hostile rank
// or the local user the threat model names.

// tcpRank is one rank: its own NPU (one device) and Sim, driven from its
// own goroutine locked to its OS thread (the NPU binds the device to it).
type tcpRank struct {
	rank int
	npu  *fallback.NPU
	sim  *Sim
	s    acl.StreamHandle
	comm hccl.CommHandle
	reqs chan func()
}

type tcpOpts struct {
	shareable bool          // device memory in sealed memfds: the direct path
	dir       string        // segment directory ("" for /dev/shm)
	exec      time.Duration // exec timeout (default 5 s)
	// env, when set, gives rank its env from the honest one (a rank
	// that lies about its device memory, say).
	env func(rank int, honest env) env
}

// newTCPRanks starts n ranks; the test's cleanup destroys their
// communicator and closes them.
func newTCPRanks(t *testing.T, n int, o tcpOpts) []*tcpRank {
	t.Helper()
	if o.exec == 0 {
		o.exec = 5 * time.Second
	}
	const connect = 30 * time.Second // a bound on a hang only
	ranks := make([]*tcpRank, n)
	for i := range ranks {
		opts := []fallback.Option{fallback.WithDevices(1), fallback.WithDeviceMemory(32 << 20), fallback.WithHostMemory(1 << 20)}
		if o.shareable {
			opts = append(opts, fallback.WithShareableDeviceMemory())
		}
		npu, err := fallback.New(opts...)
		require.NoError(t, err)
		require.NoError(t, npu.Init(""))
		var e env = npuEnv{npuhook.Of(npu)}
		if o.env != nil {
			e = o.env(i, e)
		}
		r := &tcpRank{rank: i, npu: npu, reqs: make(chan func()),
			sim: newSim(e, Options{ExecTimeout: o.exec, ConnectTimeout: connect, BufferBytes: 64 << 10, ShmDir: o.dir})}
		ranks[i] = r
		ready := make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread dies with the device bound to it
			err := npu.SetDevice(0)
			if err == nil {
				r.s, err = npu.CreateStream()
			}
			ready <- err
			for f := range r.reqs {
				f()
			}
		}()
		require.NoError(t, <-ready)
	}
	t.Cleanup(func() {
		for _, r := range ranks {
			_ = r.do(func() error {
				if r.comm != 0 {
					_ = r.sim.CommDestroy(r.comm)
				}
				_ = r.npu.DestroyStream(r.s)
				return nil
			})
			close(r.reqs)
			_ = r.sim.Close()
			_ = r.npu.Close()
		}
	})
	return ranks
}

// do runs f on the rank's goroutine.
func (r *tcpRank) do(f func() error) error {
	done := make(chan error, 1)
	r.reqs <- func() { done <- f() }
	return <-done
}

// each runs f on every rank at once and returns the errors by rank.
func eachRank(ranks []*tcpRank, f func(r *tcpRank) error) []error {
	errs := make([]error, len(ranks))
	var wg sync.WaitGroup
	for i, r := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.do(func() error { return f(r) })
		}()
	}
	wg.Wait()
	return errs
}

// tcpRoot is a root info of rank 0's Sim whose ranks all reach the
// rendezvous over TCP: it names another pid than this process's (a
// rendezvous of this process is otherwise reached through a pipe, and a
// world all of whose ranks came through pipes is an in-process world).
func tcpRoot(t *testing.T, ranks []*tcpRank) hccl.RootInfo {
	t.Helper()
	root, err := ranks[0].sim.GetRootInfo()
	require.NoError(t, err)
	binary.LittleEndian.PutUint32(root[rootOffPid:], uint32(os.Getpid()+1))
	return root
}

// initRanks forms the communicator on every rank.
func initRanks(ranks []*tcpRank, root hccl.RootInfo) []error {
	return eachRank(ranks, func(r *tcpRank) (err error) {
		r.comm, err = r.sim.CommInitRootInfo(uint32(len(ranks)), &root, uint32(r.rank))
		return err
	})
}

// world is rank r's multi-process transport.
func (r *tcpRank) world(t *testing.T) *shmWorld {
	t.Helper()
	c, err := r.sim.lookup(uintptr(r.comm))
	require.NoError(t, err)
	w, ok := c.tr.(*shmWorld)
	require.True(t, ok, "a shared-memory world")
	return w
}

// allReduce runs an fp32 SUM AllReduce of fresh random data (whole
// numbers, so that any summation order is exact) on every rank and
// returns each rank's error (the call's or the stream's) and, where it
// succeeded, checks the sums against a reference computed here.
func allReduce(t *testing.T, ranks []*tcpRank, count int) []error {
	t.Helper()
	in := make([][]float32, len(ranks))
	want := make([]float32, count)
	for r := range in {
		in[r] = make([]float32, count)
		for i := range in[r] {
			in[r][i] = float32(rand.IntN(1000))
			want[i] += in[r][i]
		}
	}
	bytes := uintptr(4 * count)
	outs := make([][]float32, len(ranks))
	errs := eachRank(ranks, func(r *tcpRank) error {
		send, err := r.npu.Malloc(bytes, acl.MemMallocHugeFirst)
		if err != nil {
			return err
		}
		defer r.npu.Free(send)
		recv, err := r.npu.Malloc(bytes, acl.MemMallocHugeFirst)
		if err != nil {
			return err
		}
		defer r.npu.Free(recv)
		if err := r.npu.Memcpy(send, bytes, unsafe.Pointer(&in[r.rank][0]), bytes, acl.MemcpyHostToDevice); err != nil {
			return err
		}
		if err := r.sim.AllReduce(send, recv, uint64(count), hccl.Float32, hccl.Sum, r.comm, r.s); err != nil {
			return err
		}
		if err := r.npu.SynchronizeStream(r.s); err != nil {
			return err
		}
		out := make([]float32, count)
		outs[r.rank] = out
		return r.npu.Memcpy(unsafe.Pointer(&out[0]), bytes, recv, bytes, acl.MemcpyDeviceToHost)
	})
	for r, err := range errs {
		if err == nil {
			require.Equal(t, want, outs[r], "rank %d", r)
		}
	}
	return errs
}

// isolatedEnv names the test a re-executed test binary runs alone.
const isolatedEnv = "HCCLSIM_ISOLATED_TEST"

// isolated runs body in a fresh process of this test binary running only
// this (top-level) test, so that a crash — the SIGBUS such a test is
// about, on code without the fix — fails the test instead of killing the
// whole test binary; in that process it runs body.
func isolated(t *testing.T, body func(t *testing.T)) {
	if os.Getenv(isolatedEnv) == t.Name() {
		body(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a bound on a hang only
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), isolatedEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the test's process failed:\n%s", out)
	if i := strings.Index(string(out), "--- SKIP: "+t.Name()); i >= 0 {
		t.Skipf("skipped in its process:\n%s", out[i:])
	}
}
