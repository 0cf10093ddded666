package hcclsim_test

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// TestMixedPlacement: rank 0 lives in the process that created the root
// info (it reaches the rendezvous through an in-memory pipe) while ranks 1
// and 2 are separate processes; the communicator is a shared-memory one
// for all three, rank 0 included.
func TestMixedPlacement(t *testing.T) {
	const n, count = 3, 300_001
	npu := newNPU(t, 1)
	sim := newSim(t, npu)
	cl := startCluster(t, n, procsOptionsSmall())
	pb := cl.Backend()
	root, err := sim.GetRootInfo()
	require.NoError(t, err)

	in := make([][]byte, n)
	for r := range in {
		in[r] = make([]byte, 4*count)
		for i := 0; i < count; i++ {
			binary.LittleEndian.PutUint32(in[r][4*i:], math.Float32bits(float32((r+1)*(i%999))))
		}
	}
	out := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	wg.Add(n)
	go func() { // rank 0, here
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		errs[0] = func() error {
			if err := npu.SetDevice(0); err != nil {
				return err
			}
			defer npu.ResetDevice(0)
			s, err := npu.CreateStream()
			if err != nil {
				return err
			}
			h, err := sim.CommInitRootInfo(n, &root, 0)
			if err != nil {
				return err
			}
			defer sim.CommDestroy(h)
			p, err := npu.Malloc(4*count, acl.MemMallocHugeFirst)
			if err != nil {
				return err
			}
			defer npu.Free(p)
			if err := npu.Memcpy(p, 4*count, unsafe.Pointer(&in[0][0]), 4*count, acl.MemcpyHostToDevice); err != nil {
				return err
			}
			if err := sim.AllReduce(p, p, count, hccl.Float32, hccl.Sum, h, s); err != nil {
				return err
			}
			if err := npu.SynchronizeStream(s); err != nil {
				return err
			}
			out[0] = make([]byte, 4*count)
			return npu.Memcpy(unsafe.Pointer(&out[0][0]), 4*count, p, 4*count, acl.MemcpyDeviceToHost)
		}()
	}()
	for r := 1; r < n; r++ { // ranks 1 and 2, in processes 1 and 2
		go func() {
			defer wg.Done()
			errs[r] = func() error {
				p := cl.Proc(r)
				s, err := p.OpenRank(int32(r))
				if err != nil {
					return err
				}
				h, err := pb.CommInitRootInfo(n, &root, uint32(r)) // unbound thread: process r
				if err != nil {
					return err
				}
				defer pb.CommDestroy(h)
				buf, err := p.Alloc(4 * count)
				if err != nil {
					return err
				}
				if err := p.Write(buf, in[r]); err != nil {
					return err
				}
				if err := pb.AllReduce(foreign(buf), foreign(buf), count, hccl.Float32, hccl.Sum, h, s); err != nil {
					return err
				}
				if err := p.Sync(s); err != nil {
					return err
				}
				out[r], err = p.Read(buf, 4*count)
				return err
			}()
		}()
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	for r := range out {
		for i := 0; i < count; i++ {
			want := float32(6 * (i % 999))
			got := math.Float32frombits(binary.LittleEndian.Uint32(out[r][4*i:]))
			require.Equal(t, want, got, "rank %d element %d", r, i)
		}
	}
	require.Zero(t, sim.Live())
	require.Empty(t, shmLeftovers(t, cl))
}
