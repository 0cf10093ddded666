package hccl_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// backend is any hccl.Backend: native.Open() on an Ascend server, the
// fallback's HCCL model elsewhere. Device memory and streams come from the
// matching acl.Backend; these examples take them as given.
var (
	backend hccl.Backend
	streams []acl.StreamHandle
	bufs    []unsafe.Pointer // one device buffer of 1024 fp32 per rank
)

// Four ranks, one goroutine each (locked to its OS thread, where the
// device context lives), sum a vector.
func ExampleInitRootInfo() {
	const n = 4
	root, err := backend.GetRootInfo() // rank 0's job; sent to the others by any means
	if err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c, err := hccl.InitRootInfo(backend, &root, n, r, hccl.WithStream(streams[r]))
			if err != nil {
				fmt.Println("rank", r, err)
				return
			}
			defer c.Close()
			if err := c.AllReduce(context.Background(), bufs[r], bufs[r], 1024, hccl.Float32, hccl.Sum); err != nil {
				fmt.Println("rank", r, err)
			}
		}()
	}
	wg.Wait()
}

// Each rank exposes a table shard; any rank reads rows of any other shard
// one-sidedly, without the owner taking part.
func ExampleComm_OpenWindow() {
	var c *hccl.Comm               // this rank's communicator
	var shard, rows unsafe.Pointer // this rank's shard and a row buffer, device memory
	const rowBytes = 1024

	ctx := context.Background()
	w, err := c.OpenWindow(ctx, hccl.MemDevice, shard, 1<<20) // collective: every rank calls it
	if err != nil {
		panic(err)
	}
	defer w.Close()
	peer := (c.Rank() + 1) % c.Size()
	// Rows 3 and 17 of the peer's shard into rows[0] and rows[1].
	err = w.Get(ctx, peer, []hccl.Transfer{
		{Local: rows, Offset: 3 * rowBytes, Count: rowBytes / 2, DataType: hccl.BFloat16},
		{Local: unsafe.Add(rows, rowBytes), Offset: 17 * rowBytes, Count: rowBytes / 2, DataType: hccl.BFloat16},
	})
	if errors.Is(err, hccl.ErrNotSupported) {
		fmt.Println("this HCCL has no one-sided service")
	}
}

func ExampleNewCommConfig() {
	cfg := hccl.NewCommConfig()
	if err := cfg.SetCommName("tp_group_0"); err != nil {
		panic(err)
	}
	cfg.ExecTimeOut = 60 // seconds
	size, magic, version := cfg.Header()
	fmt.Println(size, fmt.Sprintf("%#x", magic), version, cfg.Name())
	// Output: 2232 0xf0f0f0f0 10 tp_group_0
}

func ExampleError() {
	err := fmt.Errorf("step 7: %w", hccl.Errorf("HcclAllReduce", hccl.ETimeout, "rank 3 did not arrive"))
	fmt.Println(err)
	fmt.Println(errors.Is(err, hccl.ErrTimeout), hccl.ResultOf(err) == hccl.ETimeout)
	// Output:
	// step 7: HcclAllReduce: HCCL_E_TIMEOUT (9): rank 3 did not arrive
	// true true
}

// Two ranks on the fallback NPU sum a vector with AllReduce. Each rank is
// a plain goroutine: a Comm on an acl.Stream binds its device itself. The
// device buffers stay open while the collective uses them.
func ExampleComm_AllReduceMem() {
	npu, err := fallback.New(fallback.WithDevices(2))
	if err != nil {
		panic(err)
	}
	rt, err := acl.Init(npu, "")
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	sim := hcclsim.New(npu, hcclsim.Options{}) // hccl.Backend of the fallback
	defer sim.Close()
	root, err := sim.GetRootInfo() // rank 0's job; sent to the others by any means
	if err != nil {
		panic(err)
	}

	const n, count = 2, 4
	results := make([][]float32, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			out, err := rank(rt, sim, &root, n, r, count)
			if err != nil {
				fmt.Println("rank", r, err)
			}
			results[r] = out
		})
	}
	wg.Wait()
	for r, v := range results {
		fmt.Println("rank", r, v)
	}
	// Output:
	// rank 0 [3 6 9 12]
	// rank 1 [3 6 9 12]
}

// rank runs one rank: its vector is (r+1)·[1 2 3 4].
func rank(rt *acl.Runtime, b hccl.Backend, root *hccl.RootInfo, n, r, count int) ([]float32, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dev, err := rt.OpenDevice(int32(r))
	if err != nil {
		return nil, err
	}
	defer dev.Close()
	s, err := dev.NewStream()
	if err != nil {
		return nil, err
	}
	c, err := hccl.InitRootInfoContext(ctx, b, root, n, r, hccl.OnStream(s))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	buf, err := dev.Malloc(uintptr(4*count), acl.MemMallocHugeFirst)
	if err != nil {
		return nil, err
	}
	host := make([]byte, 4*count)
	for i := range count {
		binary.LittleEndian.PutUint32(host[4*i:], math.Float32bits(float32((r+1)*(i+1))))
	}
	if err := buf.CopyFromHost(host); err != nil {
		return nil, err
	}
	if err := c.AllReduceMem(ctx, buf, buf, uint64(count), hccl.Float32, hccl.Sum); err != nil {
		return nil, err
	}
	if err := c.Wait(ctx); err != nil { // collective errors surface at the stream
		return nil, err
	}
	if err := buf.CopyToHost(host); err != nil {
		return nil, err
	}
	out := make([]float32, count)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(host[4*i:]))
	}
	return out, nil
}
