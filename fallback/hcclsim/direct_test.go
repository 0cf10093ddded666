package hcclsim_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/fallback/hcclsim/procs"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/hccltest"
)

// The data path of a multi-process communicator is observed, not assumed:
// every rank process counts the bytes it staged and the bytes it moved
// directly (hcclsim.ReadTraffic).

// traffic reads every rank process's counters.
func traffic(t *testing.T, cl *procs.Cluster) []hcclsim.Traffic {
	t.Helper()
	out := make([]hcclsim.Traffic, cl.Procs())
	for i := range out {
		var err error
		out[i], err = cl.Proc(i).Traffic()
		require.NoError(t, err)
	}
	return out
}

// TestDirectPathTaken: rank processes with shareable device memory (the
// procs default) run a large AllReduce, the other collectives, a ring of
// sends and receives and one-sided reads and writes with exact results,
// and not one byte goes through a staging area.
func TestDirectPathTaken(t *testing.T) {
	t.Parallel() // worlds of its own, no process-wide counts (see TestMain)
	const n = 3
	cl := startCluster(t, n, procs.Options{})
	g := newGroup(t, &procEnv{cl: cl}, n)
	b := g.b
	rng := rand.New(rand.NewPCG(rand.Uint64(), 11))
	before := traffic(t, cl)

	// AllReduce, 16 MiB per rank.
	const count = 4 << 20
	ins := make([][]byte, n)
	for r := range ins {
		ins[r] = genData(rng, hccl.Float32, count)
	}
	want := refReduce(hccl.Float32, hccl.Sum, ins)
	outs := make([][]byte, n)
	g.must("AllReduce", g.each(func(w *rankW) error {
		send, err := w.buf(ins[w.rank], 0)
		if err != nil {
			return err
		}
		recv, err := w.buf(nil, len(want))
		if err != nil {
			return err
		}
		if err := b.AllReduce(send, recv, count, hccl.Float32, hccl.Sum, w.comm, w.r.Stream()); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		outs[w.rank], err = w.read(recv, len(want))
		return err
	}))
	for r := range outs {
		require.Empty(t, diffAt(want, outs[r]), "AllReduce rank %d", r)
	}

	// AllGather and AlltoAllV (uneven counts, some zero).
	const gc = 100_003
	g.must("AllGather", g.each(func(w *rankW) error {
		send, err := w.buf(ins[w.rank][:4*gc], 0)
		if err != nil {
			return err
		}
		recv, err := w.buf(nil, n*4*gc)
		if err != nil {
			return err
		}
		if err := b.AllGather(send, recv, gc, hccl.Float32, w.comm, w.r.Stream()); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		outs[w.rank], err = w.read(recv, n*4*gc)
		return err
	}))
	for r := range outs {
		for k := 0; k < n; k++ {
			require.Empty(t, diffAt(ins[k][:4*gc], outs[r][k*4*gc:(k+1)*4*gc]), "AllGather rank %d block %d", r, k)
		}
	}
	cnt := func(s, d int) uint64 { return uint64((s*7 + d*3) % 5 * 10_001) } // elements rank s sends rank d
	g.must("AlltoAllV", g.each(func(w *rankW) error {
		sc, sd, rc, rd := make([]uint64, n), make([]uint64, n), make([]uint64, n), make([]uint64, n)
		var so, ro uint64
		for p := 0; p < n; p++ {
			sc[p], sd[p], rc[p], rd[p] = cnt(w.rank, p), so, cnt(p, w.rank), ro
			so, ro = so+sc[p], ro+rc[p]
		}
		send, err := w.buf(ins[w.rank][:4*so], 0)
		if err != nil {
			return err
		}
		recv, err := w.buf(nil, int(4*ro))
		if err != nil {
			return err
		}
		if err := b.AlltoAllV(send, sc, sd, hccl.Float32, recv, rc, rd, hccl.Float32, w.comm, w.r.Stream()); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		got, err := w.read(recv, int(4*ro))
		if err != nil {
			return err
		}
		for p := 0; p < n; p++ {
			var off uint64 // where rank p's block for this rank starts in p's send buffer
			for q := 0; q < w.rank; q++ {
				off += cnt(p, q)
			}
			if d := diffAt(ins[p][4*off:4*(off+rc[p])], got[4*rd[p]:4*(rd[p]+rc[p])]); d != "" {
				return fmt.Errorf("AlltoAllV from rank %d: %s", p, d)
			}
		}
		return nil
	}))

	// A ring of sends and receives, 4 MiB each.
	const ring = 4 << 20
	g.must("BatchSendRecv", g.each(func(w *rankW) error {
		send, err := w.buf(ins[w.rank][:ring], 0)
		if err != nil {
			return err
		}
		recv, err := w.buf(nil, ring)
		if err != nil {
			return err
		}
		next, prev := uint32((w.rank+1)%n), uint32((w.rank+n-1)%n)
		items := []hccl.SendRecvItem{{Type: hccl.SendType, Buf: send, Count: ring, DataType: hccl.Uint8, RemoteRank: next},
			{Type: hccl.RecvType, Buf: recv, Count: ring, DataType: hccl.Uint8, RemoteRank: prev}}
		if err := b.BatchSendRecv(items, w.comm, w.r.Stream()); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		outs[w.rank], err = w.read(recv, ring)
		return err
	}))
	for r := range outs {
		require.Empty(t, diffAt(ins[(r+n-1)%n][:ring], outs[r]), "ring rank %d", r)
	}

	// One-sided: every rank reads 1 MiB of the next rank's memory and
	// writes 1 MiB into the previous rank's.
	const region = 2 << 20
	mem := make([]unsafe.Pointer, n)
	g.must("alloc", g.each(func(w *rankW) error {
		var err error
		mem[w.rank], err = w.buf(ins[w.rank][:region], 0)
		return err
	}))
	enabled := exchangeAll(t, g, mem, region)
	g.must("BatchGet/BatchPut", g.each(func(w *rankW) error {
		next, prev := (w.rank+1)%n, (w.rank+n-1)%n
		local, err := w.buf(nil, 1<<20)
		if err != nil {
			return err
		}
		get := []hccl.OneSideOpDesc{{LocalAddr: local, RemoteAddr: enabled[w.rank][next].Addr, Count: 1 << 20, DataType: hccl.Uint8}}
		if err := b.BatchGet(w.comm, uint32(next), get, w.r.Stream()); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		if outs[w.rank], err = w.read(local, 1<<20); err != nil {
			return err
		}
		// Write this rank's number into the second MiB of prev's region.
		mine, err := w.buf(make([]byte, 1<<20), 0)
		if err != nil {
			return err
		}
		if err := w.r.Write(mine, []byte{byte(w.rank + 1)}); err != nil {
			return err
		}
		put := []hccl.OneSideOpDesc{{LocalAddr: mine, RemoteAddr: enabled[w.rank][prev].Addr + 1<<20, Count: 1 << 20, DataType: hccl.Uint8}}
		if err := b.BatchPut(w.comm, uint32(prev), put, w.r.Stream()); err != nil {
			return err
		}
		return w.r.Sync()
	}))
	g.must("barrier", g.each(func(w *rankW) error {
		if err := b.Barrier(w.comm, w.r.Stream()); err != nil {
			return err
		}
		return w.r.Sync()
	}))
	for r := range outs {
		require.Empty(t, diffAt(ins[(r+1)%n][:1<<20], outs[r]), "BatchGet rank %d", r)
		got, err := cl.Proc(r).Read(uintptr(mem[r])+1<<20, 1<<20)
		require.NoError(t, err)
		wantPut := make([]byte, 1<<20)
		wantPut[0] = byte((r+1)%n + 1)
		require.Empty(t, diffAt(wantPut, got), "BatchPut into rank %d", r)
	}

	after := traffic(t, cl)
	for r := range after {
		require.Equal(t, before[r].StagedBytes, after[r].StagedBytes, "rank %d staged data", r)
		require.GreaterOrEqual(t, after[r].DirectBytes-before[r].DirectBytes, uint64(4*count+ring+2<<20),
			"rank %d moved its data directly", r)
	}
}

// TestStagedPathConformance forces the staged path (rank processes whose
// device memory cannot be mapped) and runs the shared suite on 1–3 ranks:
// the fallback path stays correct, and no byte moves directly. The
// cluster has 8 processes so that the timeout subtests' groups (3 + 3 + 2
// ranks) hold processes of their own and wait together (procEnv
// concurrent); groups of the other subtests take the lowest free ones.
func TestStagedPathConformance(t *testing.T) {
	t.Parallel() // its own NPU or rank processes; mostly waits (see TestMain)
	cl := startCluster(t, 8, procs.Options{ConnectTimeout: testTimeout, Staged: true})
	waited := waitedOut.Load()
	hccltest.Run(t, &procEnv{cl: cl, concurrent: true, maxRanks: 3}, hccltest.Options{Timeout: testTimeout, Lacks: procsLack})
	require.Equal(t, waited, waitedOut.Load(), "groups waited for processes that did not free")
	for r, tr := range traffic(t, cl) {
		require.Zero(t, tr.DirectBytes, "rank %d", r)
		if r < 3 { // the data subtests' ranks; the others may only have waited
			require.NotZero(t, tr.StagedBytes, "rank %d", r)
		}
	}
}

// mixedAllReduce runs one AllReduce of count fp32 elements on a
// communicator of cl.Procs() ranks: ranks below local are devices of npu,
// driven from this process; rank r above is process r of cl (the
// backend's routing; processes below local stay idle). It checks the
// result on every rank.
func mixedAllReduce(t *testing.T, npu *fallback.NPU, sim *hcclsim.Sim, local int, cl *procs.Cluster, count int) {
	n := cl.Procs()
	rng := rand.New(rand.NewPCG(rand.Uint64(), 5))
	ins := make([][]byte, n)
	for r := range ins {
		ins[r] = genData(rng, hccl.Float32, count)
	}
	want := refReduce(hccl.Float32, hccl.Sum, ins)
	// The connect timeout runs from here.
	root, err := sim.GetRootInfo()
	require.NoError(t, err)
	outs := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	wg.Add(n)
	for r := 0; r < local; r++ {
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			errs[r] = func() error {
				if err := npu.SetDevice(int32(r)); err != nil {
					return err
				}
				defer npu.ResetDevice(int32(r))
				s, err := npu.CreateStream()
				if err != nil {
					return err
				}
				defer npu.DestroyStream(s)
				h, err := sim.CommInitRootInfo(uint32(n), &root, uint32(r))
				if err != nil {
					return err
				}
				defer sim.CommDestroy(h)
				p, err := npu.Malloc(uintptr(4*count), acl.MemMallocHugeFirst)
				if err != nil {
					return err
				}
				defer npu.Free(p)
				if err := npu.Memcpy(p, uintptr(4*count), unsafe.Pointer(&ins[r][0]), uintptr(4*count), acl.MemcpyHostToDevice); err != nil {
					return err
				}
				if err := sim.AllReduce(p, p, uint64(count), hccl.Float32, hccl.Sum, h, s); err != nil {
					return err
				}
				if err := npu.SynchronizeStream(s); err != nil {
					return err
				}
				outs[r] = make([]byte, 4*count)
				return npu.Memcpy(unsafe.Pointer(&outs[r][0]), uintptr(4*count), p, uintptr(4*count), acl.MemcpyDeviceToHost)
			}()
		}()
	}
	pb := cl.Backend()
	for r := local; r < n; r++ {
		go func() {
			defer wg.Done()
			errs[r] = func() error {
				p := cl.Proc(r)
				s, err := p.OpenRank(0)
				if err != nil {
					return err
				}
				defer p.CloseRank(0, s)
				h, err := pb.CommInitRootInfo(uint32(n), &root, uint32(r)) // unbound thread: process r
				if err != nil {
					return err
				}
				defer pb.CommDestroy(h)
				buf, err := p.Alloc(uint64(4 * count))
				if err != nil {
					return err
				}
				defer p.Free(buf)
				if err := p.Write(buf, ins[r]); err != nil {
					return err
				}
				if err := pb.AllReduce(foreign(buf), foreign(buf), uint64(count), hccl.Float32, hccl.Sum, h, s); err != nil {
					return err
				}
				if err := p.Sync(s); err != nil {
					return err
				}
				outs[r], err = p.Read(buf, 4*count)
				return err
			}()
		}()
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	for r := range outs {
		require.Empty(t, diffAt(want, outs[r]), "rank %d", r)
	}
	require.Zero(t, sim.Live())
	require.Empty(t, shmLeftovers(t, cl))
}

// TestMixedPlacementPaths: two ranks in this process (one NPU, two
// devices) and two rank processes form one communicator. With this
// process's device memory shareable the data moves directly (this
// process's ranks read each other's memory in place and the children's
// through mappings); with one rank whose memory cannot be mapped, the
// whole communicator stages its data.
func TestMixedPlacementPaths(t *testing.T) {
	const count = 1<<20 + 3
	for _, shareable := range []bool{true, false} {
		name := map[bool]string{true: "direct", false: "staged"}[shareable]
		t.Run(name, func(t *testing.T) {
			opts := []fallback.Option{fallback.WithDevices(2), fallback.WithDeviceMemory(256 << 20), fallback.WithHostMemory(1 << 20)}
			if shareable {
				opts = append(opts, fallback.WithShareableDeviceMemory())
			}
			npu, err := fallback.New(opts...)
			require.NoError(t, err)
			require.NoError(t, npu.Init(""))
			t.Cleanup(func() { _ = npu.Close() })
			sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: 10 * testTimeout, ConnectTimeout: 10 * testTimeout})
			t.Cleanup(func() { _ = sim.Close() })
			cl := startCluster(t, 4, procs.Options{ExecTimeout: 10 * testTimeout})
			here := hcclsim.ReadTraffic()
			before := traffic(t, cl)
			mixedAllReduce(t, npu, sim, 2, cl, count)
			sub := func(a, b hcclsim.Traffic) hcclsim.Traffic {
				return hcclsim.Traffic{StagedBytes: a.StagedBytes - b.StagedBytes, DirectBytes: a.DirectBytes - b.DirectBytes}
			}
			all := []hcclsim.Traffic{sub(hcclsim.ReadTraffic(), here)} // this process, then the children
			for r, tr := range traffic(t, cl)[2:] {
				all = append(all, sub(tr, before[2+r]))
			}
			for i, tr := range all {
				if shareable {
					require.Zero(t, tr.StagedBytes, "process %d", i)
					require.NotZero(t, tr.DirectBytes, "process %d", i)
				} else {
					require.Zero(t, tr.DirectBytes, "process %d", i)
					require.NotZero(t, tr.StagedBytes, "process %d", i)
				}
			}
		})
	}
}
