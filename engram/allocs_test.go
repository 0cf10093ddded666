package engram_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
)

// TestFetchAllocations: a steady-state fetch (FetchInto reused device
// output, Wait) of 4096 rows on rank 0 of an in-process world of 4 ranks
// (own rows copied locally, remote rows in 256-descriptor batches to three
// peers) allocates at most 2 objects; the rows are still right.
func TestFetchAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	const w, rows = 4, 4096
	cfg := engram.Config{EntriesPerRank: 1 << 12, Hidden: 64, DType: engram.BF16}
	cfg.Capacity = (cfg.EntriesPerRank*cfg.RowBytes() + engram.CapacityAlign - 1) / engram.CapacityAlign * engram.CapacityAlign
	c := newCluster(t, w)
	bs := c.buffers(cfg)
	tab := slices(rand.Uint64(), w, cfg)
	ctx := ctxT(t)
	require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r]}) }))
	idx := uniform(rand.New(rand.NewPCG(rand.Uint64(), 5)), rows, w*cfg.EntriesPerRank)
	out, err := c.devs[0].Malloc(uintptr(rows*cfg.RowBytes()), acl.MemMallocHugeFirst)
	require.NoError(t, err)
	defer out.Close()
	var fetchErr error
	fetch := func() {
		p, err := bs[0].FetchInto(idx, engram.Output{Rows: out}, c.streams[0])
		if err == nil {
			_, err = p.Wait(context.Background())
		}
		if err != nil && fetchErr == nil {
			fetchErr = err
		}
	}
	fetch() // warm the reused memory
	allocs := testing.AllocsPerRun(20, fetch)
	require.NoError(t, fetchErr)
	require.LessOrEqual(t, allocs, 2.0, "allocations per steady-state fetch")
	t.Logf("%.1f allocations per fetch of %d rows", allocs, rows)
	require.Equal(t, gather(tab, cfg.EntriesPerRank, cfg.RowBytes(), idx), readBack(t, out, rows*cfg.RowBytes()))
}
