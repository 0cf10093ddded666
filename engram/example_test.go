package engram_test

import (
	"context"
	"fmt"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback"
)

// A table of 1000 rows of 4 fp32 values in local mode (one rank, no
// communicator), on the fallback: write it, fetch three rows, read them.
// In sliced mode New takes the rank's *hccl.Comm and Write is collective.
func Example() {
	npu, _ := fallback.New(fallback.WithDevices(1))
	rt, _ := acl.Init(npu, "")
	defer rt.Close()
	dev, _ := rt.OpenDevice(0)
	s, _ := dev.NewStream()
	ctx := context.Background()

	cfg := engram.Config{EntriesPerRank: 1000, Hidden: 4, DType: engram.FP32}
	buf, err := engram.New(nil, dev, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer buf.Destroy()
	rows := make([]byte, 1000*cfg.RowBytes())
	for i := range rows {
		rows[i] = byte(i / int(cfg.RowBytes())) // row k is all k (mod 256)
	}
	if err := buf.Write(ctx, engram.Storage{Rows: rows}); err != nil {
		fmt.Println(err)
		return
	}
	p, err := buf.Fetch([]int32{7, 300, 7}, s)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := p.Wait(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Rows.Close()
	got := make([]byte, 3*cfg.RowBytes())
	_ = res.Rows.CopyToHostAt(got, 0)
	fmt.Println(res.T, got[0], got[16], got[32])

	// An out-of-range index fails the fetch at Wait (IndexError).
	p, _ = buf.Fetch([]int32{5, 1000}, s)
	_, err = p.Wait(ctx)
	fmt.Println(err)
	// Output:
	// 3 7 44 7
	// engram: index out of range: index 1000 at position 1 is outside [0, 1000) (1 of 2 indices out of range)
}
