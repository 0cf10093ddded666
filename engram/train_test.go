package engram_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
)

func readI32(t testing.TB, d *acl.DeviceBuffer, n int) []int32 {
	raw := readBack(t, d, int64(4*n))
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
	}
	return out
}

// The training fetch: fetched equals the gather, and the context tensors
// equal a plain Go computation of the seed's layouts.
func TestFetchTrain(t *testing.T) {
	for _, k := range []struct {
		w, t   int
		policy engram.IndexPolicy
	}{{2, 3000, engram.IndexError}, {3, 1000, engram.IndexZeroFill}, {4, 5000, engram.IndexError}} {
		t.Run(fmt.Sprintf("W%d/T%d/%v", k.w, k.t, k.policy), func(t *testing.T) {
			const e, nmax = 700, 6000
			c := newCluster(t, k.w)
			cfg := engram.Config{EntriesPerRank: e, Hidden: 20, DType: engram.BF16, Capacity: engram.CapacityAlign, MaxTokensPerRank: nmax, Policy: k.policy}
			bs := c.buffers(cfg)
			tab := slices2(t, k.w, cfg)
			ctx := ctxT(t)
			require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r]}) }))
			idx := make([][]int32, k.w)
			for r := range idx {
				idx[r] = zipf(rand.New(rand.NewPCG(8, uint64(r))), k.t, int64(k.w)*e, 1.05)
				if k.policy == engram.IndexZeroFill {
					idx[r][5], idx[r][7] = -1, int32(k.w*e)
				}
			}
			res := make([]engram.Result, k.w)
			tcs := make([]*engram.TrainCtx, k.w)
			require.NoError(t, c.each(func(r int) error {
				var err error
				res[r], tcs[r], err = bs[r].FetchTrain(ctx, idx[r])
				return err
			}))
			for r := 0; r < k.w; r++ {
				rb := cfg.RowBytes()
				assert.True(t, bytes.Equal(gather(tab, e, rb, idx[r]), readBack(t, res[r].Rows, int64(k.t)*rb)), "rank %d rows", r)
				// Reference layouts.
				var perm []int32
				send := make([]int32, 8*k.w)
				for o := 0; o < k.w; o++ {
					for i, g := range idx[r] {
						if g >= 0 && int64(g) < int64(k.w)*e && int(int64(g)/e) == o {
							perm = append(perm, int32(i))
							send[8*o]++
						}
					}
				}
				perm = append(perm, make([]int32, k.t-len(perm))...)
				var entries []int32
				recv := make([]int32, k.w)
				for s := 0; s < k.w; s++ {
					for _, g := range idx[s] {
						if g >= 0 && int64(g) < int64(k.w)*e && int(int64(g)/e) == r {
							entries = append(entries, g)
							recv[s]++
						}
					}
				}
				n := len(entries)
				entries = append(entries, make([]int32, nmax*k.w-n)...)
				tc := tcs[r]
				assert.Equal(t, perm, readI32(t, tc.Perm, k.t), "rank %d perm", r)
				assert.Equal(t, send, readI32(t, tc.SendCounts, 8*k.w), "rank %d send_counts", r)
				assert.Equal(t, recv, readI32(t, tc.RecvCounts, k.w), "rank %d recv_counts", r)
				assert.Equal(t, entries, readI32(t, tc.RecvLocalEntry, nmax*k.w), "rank %d recv_local_entry", r)
				assert.Equal(t, []int32{int32(n)}, readI32(t, tc.NumRecv, 1), "rank %d num_recv", r)
				require.NoError(t, tc.Close())
				require.NoError(t, res[r].Rows.Close())
			}
		})
	}
}

// Mismatched T and an out-of-range index under IndexError: a clear error
// on every rank, no hang; the buffers stay usable.
func TestFetchTrainErrors(t *testing.T) {
	c := newCluster(t, 3)
	cfg := engram.Config{EntriesPerRank: 10, Hidden: 2, DType: engram.FP32, Capacity: engram.CapacityAlign, MaxTokensPerRank: 8}
	bs := c.buffers(cfg)
	tab := slices2(t, 3, cfg)
	ctx := ctxT(t)
	require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r]}) }))
	errs := make([]error, 3)
	_ = c.each(func(r int) error {
		_, _, errs[r] = bs[r].FetchTrain(ctx, make([]int32, 2+r%2))
		return nil
	})
	for r, err := range errs {
		require.ErrorIs(t, err, engram.ErrConfig, "rank %d", r)
		assert.ErrorContains(t, err, "same number of indices")
	}
	_ = c.each(func(r int) error {
		idx := []int32{1, 2, 3}
		if r == 2 {
			idx[1] = 30
		}
		_, _, errs[r] = bs[r].FetchTrain(ctx, idx)
		return nil
	})
	for r, err := range errs {
		require.ErrorIs(t, err, engram.ErrIndex, "rank %d", r)
		assert.ErrorContains(t, err, "rank 2: index 30 at position 1 is outside [0, 30)")
	}
	_ = c.each(func(r int) error {
		_, _, errs[r] = bs[r].FetchTrain(ctx, make([]int32, 9))
		return nil
	})
	for _, err := range errs {
		assert.ErrorContains(t, err, "9 indices exceed MaxTokensPerRank 8")
	}
	require.NoError(t, c.each(func(r int) error {
		res, tc, err := bs[r].FetchTrain(ctx, []int32{int32(r), 29})
		if err != nil {
			return err
		}
		defer tc.Close()
		defer res.Rows.Close()
		if !bytes.Equal(gather(tab, 10, 8, []int32{int32(r), 29}), readBack(t, res.Rows, 16)) {
			return fmt.Errorf("rank %d rows differ", r)
		}
		return nil
	}))
	b, err := engram.New(nil, c.devs[0], engram.Config{EntriesPerRank: 1, Hidden: 1, DType: engram.BF16, MaxTokensPerRank: 4})
	require.NoError(t, err)
	_, _, err = b.FetchTrain(ctx, nil)
	require.ErrorContains(t, err, "needs a communicator")
	require.NoError(t, b.Destroy())
}

func slices2(t testing.TB, w int, cfg engram.Config) [][]byte {
	return slices(uint64(w*31+cfg.Hidden), w, cfg)
}
