package hcclsim_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/hccl"
)

// maxCollectiveAllocs bounds the heap allocations of one small in-process
// collective and its synchronize, per rank, in a steady-state loop. Every
// allocation is garbage-collector work, and collection stops the ranks
// that spin in their rendezvous.
const maxCollectiveAllocs = 2

// TestSmallCollectiveAllocations runs a steady-state loop of small
// collectives, each followed by a synchronize, on 2 in-process ranks and
// counts the heap allocations of all goroutines (runtime.MemStats.Mallocs:
// the stream tasks run on other goroutines than the callers). Two paths:
// hccl.Comm on an acl.Stream from plain goroutines, and raw backend calls
// from goroutines locked to their OS threads. The results of the last
// iteration are checked against a reference on random data.
func TestSmallCollectiveAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	const ranks, count = 2, 256 // 1 KiB of int32 per rank
	for _, path := range []string{"acl", "raw"} {
		for _, op := range []string{"AllReduce", "AlltoAllV"} {
			t.Run(path+"/"+op, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
				ins := make([][]int32, ranks)
				for r := range ins {
					ins[r] = make([]int32, count)
					for i := range ins[r] {
						ins[r][i] = rng.Int32N(1<<20) - 1<<19
					}
				}
				run := allocsACL
				if path == "raw" {
					run = allocsRaw
				}
				per, outs := run(t, op, ins)
				t.Logf("%.3f allocations per rank and %s", per, op)
				require.LessOrEqual(t, per, float64(maxCollectiveAllocs), "allocations per rank and steady-state %s", op)
				require.Equal(t, refSmall(op, ins), outs)
			})
		}
	}
}

// allocIters is the length of the counted loop; a warm-up before it fills
// the communicator's reusable records.
const allocIters, allocWarm = 400, 50

// countAllocs runs loop(n) on every rank concurrently (each rank's own
// goroutine runs its loop: all calls it blocks in included) and returns
// the allocations per rank and iteration of the counted run.
func countAllocs(t *testing.T, ranks int, all func(f func(r int) error) error, step func(r int) error) float64 {
	t.Helper()
	loop := func(n int) error {
		return all(func(r int) error {
			for range n {
				if err := step(r); err != nil {
					return err
				}
			}
			return nil
		})
	}
	require.NoError(t, loop(allocWarm))
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	err := loop(allocIters)
	runtime.ReadMemStats(&m1)
	require.NoError(t, err)
	return float64(m1.Mallocs-m0.Mallocs) / float64(ranks*allocIters)
}

// allocsACL is the path=acl loop of TestSmallCollectiveAllocations.
func allocsACL(t *testing.T, op string, ins [][]int32) (float64, [][]int32) {
	ranks, count := len(ins), len(ins[0])
	npu, err := fallback.New(fallback.WithDevices(ranks)) // acl.Init initialises it
	require.NoError(t, err)
	t.Cleanup(func() { _ = npu.Close() })
	sim := newSim(t, npu)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	type st struct {
		s    *acl.Stream
		c    *hccl.Comm
		x, y *acl.DeviceBuffer
	}
	sts := make([]st, ranks)
	for r := range sts {
		d, err := rt.OpenDevice(int32(r))
		require.NoError(t, err)
		sts[r].s, err = d.NewStream()
		require.NoError(t, err)
		sts[r].x, err = d.Malloc(uintptr(4*count), acl.MemMallocHugeFirst)
		require.NoError(t, err)
		sts[r].y, err = d.Malloc(uintptr(4*count), acl.MemMallocHugeFirst)
		require.NoError(t, err)
		require.NoError(t, sts[r].x.CopyFromHost(int32Bytes(ins[r])))
	}
	all := func(f func(r int) error) error {
		errs := make([]error, ranks)
		var wg sync.WaitGroup
		for r := range ranks {
			wg.Go(func() { errs[r] = f(r) })
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	root, err := sim.GetRootInfo()
	require.NoError(t, err)
	require.NoError(t, all(func(r int) error {
		var err error
		sts[r].c, err = hccl.InitRootInfo(sim, &root, ranks, r, hccl.OnStream(sts[r].s))
		return err
	}))
	t.Cleanup(func() {
		for _, s := range sts {
			_ = s.c.Close()
		}
	})
	counts, displs := alltoallLayout(ranks, count)
	ctx := context.Background()
	step := func(r int) error {
		s := &sts[r]
		var err error
		if op == "AllReduce" {
			err = s.c.AllReduce(ctx, s.x.Ptr(), s.y.Ptr(), uint64(count), hccl.Int32, hccl.Sum)
		} else {
			err = s.c.AlltoAllV(ctx, s.x.Ptr(), counts, displs, hccl.Int32, s.y.Ptr(), counts, displs, hccl.Int32)
		}
		if err != nil {
			return err
		}
		return s.s.Synchronize()
	}
	per := countAllocs(t, ranks, all, step)
	outs := make([][]int32, ranks)
	for r := range outs {
		b := make([]byte, 4*count)
		require.NoError(t, sts[r].y.CopyToHost(b))
		outs[r] = bytesInt32(b)
	}
	return per, outs
}

// allocsRaw is the path=raw loop: backend calls from locked goroutines.
func allocsRaw(t *testing.T, op string, ins [][]int32) (float64, [][]int32) {
	ranks, count := len(ins), len(ins[0])
	npu := newNPU(t, ranks)
	sim := newSim(t, npu)
	g := newGroup(t, &npuEnv{npu: npu, sim: sim}, ranks)
	xs, ys := make([]unsafe.Pointer, ranks), make([]unsafe.Pointer, ranks)
	g.must("buffers", g.each(func(w *rankW) error {
		var err error
		if xs[w.rank], err = w.buf(int32Bytes(ins[w.rank]), 4*count); err != nil {
			return err
		}
		ys[w.rank], err = w.buf(nil, 4*count)
		return err
	}))
	all := func(f func(r int) error) error {
		return errors.Join(g.each(func(w *rankW) error { return f(w.rank) })...)
	}
	counts, displs := alltoallLayout(ranks, count)
	step := func(r int) error {
		w := g.ws[r]
		var err error
		if op == "AllReduce" {
			err = sim.AllReduce(xs[r], ys[r], uint64(count), hccl.Int32, hccl.Sum, w.comm, w.r.Stream())
		} else {
			err = sim.AlltoAllV(xs[r], counts, displs, hccl.Int32, ys[r], counts, displs, hccl.Int32, w.comm, w.r.Stream())
		}
		if err != nil {
			return err
		}
		return w.r.Sync()
	}
	per := countAllocs(t, ranks, all, step)
	outs := make([][]int32, ranks)
	g.must("read", g.each(func(w *rankW) error {
		b, err := w.read(ys[w.rank], 4*count)
		outs[w.rank] = bytesInt32(b)
		return err
	}))
	return per, outs
}

// alltoallLayout sends block k of count/ranks elements to rank k and
// receives rank k's block at block k.
func alltoallLayout(ranks, count int) (counts, displs []uint64) {
	per := uint64(count / ranks)
	counts, displs = make([]uint64, ranks), make([]uint64, ranks)
	for k := range counts {
		counts[k], displs[k] = per, uint64(k)*per
	}
	return counts, displs
}

// refSmall is the reference result of op on every rank: the element-wise
// sum (wrapping) for AllReduce; for AlltoAllV, block k of rank r's output
// is block r of rank k's input.
func refSmall(op string, ins [][]int32) [][]int32 {
	ranks, count := len(ins), len(ins[0])
	outs := make([][]int32, ranks)
	for r := range outs {
		outs[r] = make([]int32, count)
		if op == "AllReduce" {
			for _, in := range ins {
				for i, v := range in {
					outs[r][i] += v
				}
			}
			continue
		}
		per := count / ranks
		for k := range ranks {
			copy(outs[r][k*per:(k+1)*per], ins[k][r*per:(r+1)*per])
		}
	}
	return outs
}

func int32Bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func bytesInt32(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
