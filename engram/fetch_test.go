package engram_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/engram"
)

// fetchCase writes random slices on w ranks and checks every rank's fetch
// of random indices against the reference gather.
func fetchCase(t *testing.T, c *cluster, cfg engram.Config, t0 int, zipfian bool, zeroCopy bool, seed uint64) {
	w := len(c.devs)
	bs := c.buffers(cfg)
	tab := slices(seed, w, cfg)
	ctx := ctxT(t)
	var rows [][]byte
	if zeroCopy {
		rows = make([][]byte, w)
		for r := range rows {
			rows[r] = pinned(t, c, r, tab[r])
		}
	}
	require.NoError(t, c.each(func(r int) error {
		st := engram.Storage{Rows: tab[r]}
		if zeroCopy {
			st = engram.Storage{Rows: rows[r], ZeroCopy: true}
		}
		return bs[r].Write(ctx, st)
	}))
	global := int64(w) * cfg.EntriesPerRank
	require.NoError(t, c.each(func(r int) error {
		rng := rand.New(rand.NewPCG(seed, uint64(r)))
		var idx []int32
		if zipfian {
			idx = zipf(rng, t0, global, 1.05)
		} else {
			idx = uniform(rng, t0, global)
		}
		// Own-rank rows and duplicates, always.
		if len(idx) >= 4 && cfg.EntriesPerRank > 0 {
			own := int32(int64(r)*cfg.EntriesPerRank + rng.Int64N(cfg.EntriesPerRank))
			idx[0], idx[1], idx[len(idx)-1] = own, own, idx[2]
		}
		p, err := bs[r].Fetch(idx, c.streams[r])
		if err != nil {
			return err
		}
		res, err := p.Wait(ctx)
		if err != nil {
			return err
		}
		if res.T != len(idx) {
			return fmt.Errorf("rank %d: T %d, want %d", r, res.T, len(idx))
		}
		want := gather(tab, cfg.EntriesPerRank, cfg.RowBytes(), idx)
		if len(idx) == 0 {
			return nil
		}
		got := readBack(t, res.Rows, int64(len(want)))
		defer res.Rows.Close()
		if !bytes.Equal(got, want) {
			return fmt.Errorf("rank %d: rows differ from the reference gather at byte %d", r, firstDiff(got, want))
		}
		return nil
	}))
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// pinned copies data into pinned host memory of rank r (memory outside
// the Go heap, as zero-copy storage should be).
func pinned(t testing.TB, c *cluster, r int, data []byte) []byte {
	t.Helper()
	if len(data) == 0 {
		return nil
	}
	hb, err := c.devs[r].MallocHost(uintptr(len(data)))
	require.NoError(t, err)
	b := hb.Bytes()[:len(data)]
	copy(b, data)
	return b
}

// pinAll is pinned for every rank's slice.
func pinAll(t testing.TB, c *cluster, tab [][]byte) [][]byte {
	t.Helper()
	out := make([][]byte, len(tab))
	for r := range tab {
		out[r] = pinned(t, c, r, tab[r])
	}
	return out
}

func TestFetchMatchesGather(t *testing.T) {
	type tc struct {
		w, hidden int
		dt        engram.DType
		e         int64
		t         int
		zipf      bool
		zeroCopy  bool
	}
	cases := []tc{
		{w: 1, hidden: 7, dt: engram.FP32, e: 100, t: 500},
		{w: 1, hidden: 1, dt: engram.BF16, e: 1, t: 3},
		{w: 2, hidden: 64, dt: engram.BF16, e: 1000, t: 2000},
		{w: 2, hidden: 1, dt: engram.FP16, e: 3, t: 0},
		{w: 3, hidden: 33, dt: engram.FP16, e: 257, t: 1000, zipf: true},
		{w: 4, hidden: 1280, dt: engram.BF16, e: 200, t: 600, zipf: true},
		{w: 4, hidden: 80, dt: engram.BF16, e: 5000, t: 20000, zeroCopy: true},
		{w: 5, hidden: 8192, dt: engram.FP32, e: 8, t: 50},
		{w: 6, hidden: 3, dt: engram.FP32, e: 99, t: 777, zipf: true, zeroCopy: true},
		{w: 7, hidden: 16, dt: engram.FP16, e: 1, t: 100},
		{w: 8, hidden: 40, dt: engram.BF16, e: 300, t: 3000},
		{w: 2, hidden: 5, dt: engram.BF16, e: 0, t: 0},
		{w: 2, hidden: 1, dt: engram.BF16, e: 40000, t: 100000, zipf: true},
	}
	for _, k := range cases {
		name := fmt.Sprintf("W%d/%v/h%d/E%d/T%d/zipf=%v/zc=%v", k.w, k.dt, k.hidden, k.e, k.t, k.zipf, k.zeroCopy)
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, k.w)
			cfg := engram.Config{EntriesPerRank: k.e, Hidden: k.hidden, DType: k.dt}
			if !k.zeroCopy {
				cfg.Capacity = alignCap(k.e * cfg.RowBytes())
			}
			fetchCase(t, c, cfg, k.t, k.zipf, k.zeroCopy, uint64(k.w*1000+k.hidden))
		})
	}
}

func alignCap(n int64) int64 {
	return (n + engram.CapacityAlign - 1) / engram.CapacityAlign * engram.CapacityAlign
}
