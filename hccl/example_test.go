package hccl_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ascend-go/cann/acl"
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
