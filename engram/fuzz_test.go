package engram_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"

	"github.com/ascend-go/cann/engram"
)

// FuzzBuffer drives random configs, index arrays and write/fetch/destroy
// sequences on a local-mode buffer (no rendezvous, so an exec is fast),
// and random plans of a sliced world through the send-queue replay. It
// must never panic or hang; a successful fetch must equal the reference
// gather, and the fixed engine must never overflow a queue.
func FuzzBuffer(f *testing.F) {
	f.Add([]byte{3, 1, 10, 0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(0))
	f.Add([]byte{0, 0, 0, 0, 0}, uint8(0x55))
	f.Add([]byte{5, 200, 1, 1, 2, 255, 255, 255, 255, 0, 0, 0, 0}, uint8(0xa3))
	c := newCluster(f, 1)
	f.Fuzz(func(t *testing.T, data []byte, ops uint8) {
		if len(data) < 4 {
			return
		}

		cfg := engram.Config{
			EntriesPerRank: int64(data[0]) - 2, // may be negative
			Hidden:         int(data[1]) - 1,   // may be 0
			DType:          engram.DType(data[2] % 7),
			Policy:         engram.IndexPolicy(data[3] % 3),
		}
		idx := make([]int32, 0, len(data)/4)
		for i := 4; i+4 <= len(data); i += 4 {
			v := int32(binary.LittleEndian.Uint32(data[i:]))
			if ops&0x80 != 0 {
				v = v % 300 // mostly in range
			}
			idx = append(idx, v)
		}
		// A sliced world's plan, replayed against its send queues.
		w := 2 + int(data[0]%7)
		eng := engram.Engine{Cores: 1 + int(data[1]%9), UBBytes: 80000 + int(data[2])*64, BatchCapacity: 1 + int(ops%7), SQDepth: 1 + int(data[3]%40)}
		e := max(cfg.EntriesPerRank, 1)
		if _, err := engram.CheckSendQueues(eng.Plan(idx, w, int(ops)%w, e, cfg.RowBytes()), eng.SQDepth); err != nil {
			t.Fatalf("plan overflows: %v", err)
		}

		b, err := engram.New(nil, c.devs[0], cfg)
		if err != nil {
			return
		}
		defer b.Destroy()
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		tab := slices(uint64(ops), 1, cfg)
		for step := 0; step < 3; step++ {
			switch (ops >> (2 * step)) & 3 {
			case 0, 1:
				if err := b.Write(ctx, engram.Storage{Rows: tab[0]}); err != nil {
					return
				}
			case 2:
				p, err := b.Fetch(idx, c.streams[0])
				if err != nil {
					continue
				}
				res, err := p.Wait(ctx)
				if err != nil {
					continue
				}
				if res.T > 0 {
					want := gather(tab, cfg.EntriesPerRank, cfg.RowBytes(), idx)
					got := readBack(t, res.Rows, int64(len(want)))
					_ = res.Rows.Close()
					if !bytes.Equal(got, want) {
						t.Fatalf("fetch differs from the gather at byte %d", firstDiff(got, want))
					}
				}
			case 3:
				_ = b.Destroy()
			}
		}
	})
}
