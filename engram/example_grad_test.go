package engram_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// A training step on two ranks of the fallback (one goroutine each):
// every rank fetches global rows 0, 3 and 3 (rank 0 owns rows 0–1, rank
// 1 rows 2–3), passes a gradient of ones back, and gets the summed
// gradient of its own rows: row 0 was fetched twice in all, row 3 four
// times.
func ExampleBuffer_FetchGrad() {
	const w = 2
	npu, _ := fallback.New(fallback.WithDevices(w))
	rt, _ := acl.Init(npu, "")
	defer rt.Close()
	sim := hcclsim.New(npu, hcclsim.Options{})
	defer sim.Close()
	root, _ := sim.GetRootInfo()
	ctx := context.Background()
	cfg := engram.Config{EntriesPerRank: 2, Hidden: 2, DType: engram.FP32, MaxTokensPerRank: 3}

	out := make([]string, w)
	var wg sync.WaitGroup
	for r := 0; r < w; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[r] = trainStep(ctx, rt, sim, &root, r, cfg)
		}()
	}
	wg.Wait()
	for _, line := range out {
		fmt.Println(line)
	}
	// Output:
	// rank 0: K=1 local rows [0] sums [2 2]
	// rank 1: K=1 local rows [1] sums [4 4]
}

func trainStep(ctx context.Context, rt *acl.Runtime, sim *hcclsim.Sim, root *hccl.RootInfo, r int, cfg engram.Config) string {
	dev, err := rt.OpenDevice(int32(r))
	if err != nil {
		return err.Error()
	}
	s, _ := dev.NewStream()
	var comm *hccl.Comm
	if err := dev.Do(func() error {
		comm, err = hccl.InitRootInfo(sim, root, 2, r, hccl.WithStream(s.Handle()), hccl.WithDevice(int32(r)))
		return err
	}); err != nil {
		return err.Error()
	}
	defer dev.Do(comm.Close)
	// Training storage is registered in place (zero copy): pinned host
	// memory that outlives the buffer.
	hb, err := dev.MallocHost(uintptr(2 * cfg.RowBytes()))
	if err != nil {
		return err.Error()
	}
	defer hb.Close()
	slice := hb.Bytes()[:2*cfg.RowBytes()]
	clear(slice)
	buf, err := engram.New(comm, dev, cfg)
	if err != nil {
		return err.Error()
	}
	defer buf.Destroy()
	if err := buf.Write(ctx, engram.Storage{Rows: slice, ZeroCopy: true}); err != nil {
		return err.Error()
	}
	res, tc, err := buf.FetchTrain(ctx, []int32{0, 3, 3})
	if err != nil {
		return err.Error()
	}
	defer res.Rows.Close()
	defer tc.Close()
	ones := make([]byte, 3*cfg.RowBytes())
	for i := 0; i < len(ones); i += 4 {
		binary.LittleEndian.PutUint32(ones[i:], math.Float32bits(1))
	}
	g, _ := dev.Malloc(uintptr(len(ones)), acl.MemMallocHugeFirst)
	defer g.Close()
	_ = g.CopyFromHost(ones)
	gr, err := buf.FetchGrad(ctx, engram.Grad{Data: g, Rows: 3, Hidden: 2, DType: engram.FP32}, tc)
	if err != nil {
		return err.Error()
	}
	defer gr.Close()
	ent := make([]byte, 4*gr.K)
	_ = gr.Entries.CopyToHostAt(ent, 0)
	sums := make([]byte, int64(gr.K)*cfg.RowBytes())
	_ = gr.Rows.CopyToHostAt(sums, 0)
	var rows []int32
	var vals []float32
	for i := 0; i < gr.K; i++ {
		rows = append(rows, int32(binary.LittleEndian.Uint32(ent[4*i:])))
	}
	for i := 0; i < len(sums); i += 4 {
		vals = append(vals, math.Float32frombits(binary.LittleEndian.Uint32(sums[i:])))
	}
	return fmt.Sprintf("rank %d: K=%d local rows %v sums %v", r, gr.K, rows, vals)
}
