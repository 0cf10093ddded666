package engram_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
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
// equal a plain Go computation of the seed's layouts; W = 2..8, the
// gradient path's dtypes, T up to 50k with Zipf duplicates.
func TestFetchTrain(t *testing.T) {
	for _, k := range []struct {
		w, t   int
		dt     engram.DType
		policy engram.IndexPolicy
	}{
		{2, 50000, engram.BF16, engram.IndexError},
		{3, 1000, engram.FP16, engram.IndexZeroFill},
		{4, 5000, engram.FP32, engram.IndexError},
		{5, 3000, engram.FP32, engram.IndexZeroFill},
		{6, 2000, engram.BF16, engram.IndexError},
		{7, 2000, engram.FP16, engram.IndexError},
		{8, 4000, engram.BF16, engram.IndexZeroFill},
		// fp8 rows with their scale factors (FetchGrad refuses fp8).
		{3, 3000, engram.FP8E4M3, engram.IndexError},
		{4, 2000, engram.FP8E5M2, engram.IndexZeroFill},
	} {
		t.Run(fmt.Sprintf("W%d/T%d/%v/%v", k.w, k.t, k.dt, k.policy), func(t *testing.T) {
			const e = 700
			nmax := k.t + 100
			c := newCluster(t, k.w)
			cfg := engram.Config{EntriesPerRank: e, Hidden: 20, DType: k.dt, MaxTokensPerRank: nmax, Policy: k.policy}
			fp8 := k.dt == engram.FP8E4M3 || k.dt == engram.FP8E5M2
			if fp8 {
				cfg.SFPacks, cfg.SFType = 3, engram.SFE8M0
				if k.dt == engram.FP8E4M3 {
					cfg.SFType = engram.SFFP32
				}
			}
			bs := c.buffers(cfg)
			tab := slices2(t, k.w, cfg)
			ctx := ctxT(t)
			sfb := cfg.SFRowBytes()
			var sfHost []byte
			sfs := make([]*acl.DeviceBuffer, k.w)
			if fp8 {
				sfHost = slices(uint64(k.t), 1, engram.Config{EntriesPerRank: int64(k.w) * e, Hidden: int(sfb), DType: engram.FP8E4M3})[0]
				for r := range sfs {
					sfs[r] = devBuf(t, c.devs[r], sfHost)
				}
			}
			tab = pinAll(t, c, tab)
			require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r], SF: sfs[r], ZeroCopy: true}) }))
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
				if fp8 {
					wantSF := gather([][]byte{sfHost}, int64(k.w)*e, sfb, idx[r])
					assert.True(t, bytes.Equal(wantSF, readBack(t, res[r].SF, int64(k.t)*sfb)), "rank %d scale factors", r)
					require.NoError(t, res[r].SF.Close())
				} else {
					assert.Nil(t, res[r].SF)
				}
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
	cfg := engram.Config{EntriesPerRank: 10, Hidden: 2, DType: engram.FP32, MaxTokensPerRank: 8}
	bs := c.buffers(cfg)
	tab := slices2(t, 3, cfg)
	ctx := ctxT(t)
	tab = pinAll(t, c, tab)
	require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r], ZeroCopy: true}) }))
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
	// An inference buffer in local mode has no training path.
	b, err := engram.New(nil, c.devs[0], engram.Config{EntriesPerRank: 1, Hidden: 1, DType: engram.BF16})
	require.NoError(t, err)
	_, _, err = b.FetchTrain(ctx, nil)
	require.ErrorContains(t, err, "needs a communicator")
	require.NoError(t, b.Destroy())
}

// The seed's construction-time refusals (issue 26 item 3): training over
// a local-mode table, training storage other than zero copy (a copy
// window at New, a copy-mode Write), and a communicator of one rank. On
// c5af455 all three were accepted (the first two failed only later, or
// not at all; the third silently became local mode).
func TestConstructionRefusals(t *testing.T) {
	c := newCluster(t, 2)
	train := engram.Config{EntriesPerRank: 4, Hidden: 2, DType: engram.FP32, MaxTokensPerRank: 8}
	// with_grad over group=None.
	_, err := engram.New(nil, c.devs[0], train)
	require.ErrorIs(t, err, engram.ErrConfig)
	assert.ErrorContains(t, err, "local mode (group=None) does not support training")
	// with_grad with a copy window.
	win := train
	win.Capacity = engram.CapacityAlign
	_, err = engram.New(c.comms[0], c.devs[0], win)
	require.ErrorIs(t, err, engram.ErrConfig)
	assert.ErrorContains(t, err, "zero copy")
	// with_grad and a copy-mode write: refused on every rank before the
	// barrier, so no rank waits for the others.
	bs := c.buffers(train)
	tab := slices(5, 2, train)
	ctx := ctxT(t)
	for r := range bs {
		err := bs[r].Write(ctx, engram.Storage{Rows: tab[r]})
		require.ErrorIs(t, err, engram.ErrConfig)
		assert.ErrorContains(t, err, "zero_copy=False")
	}
	tab = pinAll(t, c, tab)
	require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r], ZeroCopy: true}) }))
	res, tc, err := fetchTrainAll(c, bs, [][]int32{{0, 7}, {5, 1}})
	require.NoError(t, err)
	for r := range bs {
		assert.Equal(t, gather(tab, 4, 8, [][]int32{{0, 7}, {5, 1}}[r]), readBack(t, res[r].Rows, 16))
		require.NoError(t, res[r].Rows.Close())
		require.NoError(t, tc[r].Close())
	}
	// A one-rank communicator given as the group.
	one := newCluster(t, 1)
	root, err := one.sim.GetRootInfo()
	require.NoError(t, err)
	var comm *hccl.Comm
	require.NoError(t, one.devs[0].Do(func() error {
		comm, err = hccl.InitRootInfo(one.sim, &root, 1, 0, hccl.WithStream(one.streams[0].Handle()), hccl.WithDevice(0))
		return err
	}))
	defer one.devs[0].Do(comm.Close)
	_, err = engram.New(comm, one.devs[0], engram.Config{EntriesPerRank: 4, Hidden: 2, DType: engram.FP32})
	require.ErrorIs(t, err, engram.ErrConfig)
	assert.ErrorContains(t, err, "a communicator of 1 rank")
	// Inference in local mode, no communicator: still fine.
	b, err := engram.New(nil, one.devs[0], engram.Config{EntriesPerRank: 4, Hidden: 2, DType: engram.FP32})
	require.NoError(t, err)
	require.NoError(t, b.Destroy())
}

// fetchTrainAll runs FetchTrain on every rank.
func fetchTrainAll(c *cluster, bs []*engram.Buffer, idx [][]int32) ([]engram.Result, []*engram.TrainCtx, error) {
	res := make([]engram.Result, len(bs))
	tcs := make([]*engram.TrainCtx, len(bs))
	err := c.each(func(r int) error {
		var err error
		res[r], tcs[r], err = bs[r].FetchTrain(context.Background(), idx[r])
		return err
	})
	return res, tcs, err
}

func slices2(t testing.TB, w int, cfg engram.Config) [][]byte {
	return slices(uint64(w*31+cfg.Hidden), w, cfg)
}

// A rank with an inference fetch pending refuses FetchTrain and FetchGrad
// in the first exchange: every rank gets ErrPending at once (the others
// name the rank) instead of waiting out the HCCL timeout, and all go on
// once the fetch is waited for.
func TestTrainWhileFetchPending(t *testing.T) {
	const w = 3
	c := newCluster(t, w)
	cfg := engram.Config{EntriesPerRank: 10, Hidden: 2, DType: engram.FP32, MaxTokensPerRank: 8}
	bs := c.buffers(cfg)
	tab := slices2(t, w, cfg)
	ctx := ctxT(t)
	tab = pinAll(t, c, tab)
	require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r], ZeroCopy: true}) }))
	idx := []int32{3, 29, 0, 14}
	train := func() ([]*engram.TrainCtx, []error) {
		tcs, errs := make([]*engram.TrainCtx, w), make([]error, w)
		_ = c.each(func(r int) error {
			var res engram.Result
			res, tcs[r], errs[r] = bs[r].FetchTrain(ctx, idx)
			if errs[r] == nil {
				_ = res.Rows.Close()
			}
			return nil
		})
		return tcs, errs
	}
	grad := func(tcs []*engram.TrainCtx) []error {
		errs := make([]error, w)
		_ = c.each(func(r int) error {
			g := engram.Grad{Data: devBuf(t, c.devs[r], make([]byte, 4*2*4)), Rows: 4, Hidden: 2, DType: engram.FP32}
			var out engram.GradResult
			out, errs[r] = bs[r].FetchGrad(ctx, g, tcs[r])
			_ = out.Close()
			return nil
		})
		return errs
	}
	check := func(errs []error, what string) {
		t.Helper()
		for r, err := range errs {
			require.ErrorIs(t, err, engram.ErrPending, "%s, rank %d", what, r)
			if r != 1 {
				assert.ErrorContains(t, err, "rank 1 has an inference fetch pending", "%s, rank %d", what, r)
			}
		}
	}
	tcs, errs := train()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	p, err := bs[1].Fetch([]int32{1, 25}, c.streams[1])
	require.NoError(t, err)
	_, errs = train()
	check(errs, "FetchTrain")
	check(grad(tcs), "FetchGrad")
	res, err := p.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, gather(tab, 10, 8, []int32{1, 25}), readBack(t, res.Rows, 16))
	require.NoError(t, res.Rows.Close())
	for r, err := range grad(tcs) {
		require.NoError(t, err, "rank %d", r)
	}
	for _, tc := range tcs {
		require.NoError(t, tc.Close())
	}
}

// A rank that never joins a training step: the others' step fails with
// the HCCL timeout's error (ACL_ERROR_RT_FFTS_PLUS_TIMEOUT at the
// synchronisation, after HCCL_EXEC_TIMEOUT), not a hang.
func TestTrainRankMissing(t *testing.T) {
	const w = 2
	c := newClusterOpts(t, w, hcclsim.Options{ExecTimeout: 2 * time.Second, ConnectTimeout: testTimeout})
	cfg := engram.Config{EntriesPerRank: 10, Hidden: 2, DType: engram.FP32, MaxTokensPerRank: 8}
	bs := c.buffers(cfg)
	tab := slices2(t, w, cfg)
	ctx := ctxT(t)
	tab = pinAll(t, c, tab)
	require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r], ZeroCopy: true}) }))
	require.NoError(t, c.each(func(r int) error { // links built: the next step's calls only enqueue
		res, tc, err := bs[r].FetchTrain(ctx, []int32{1, 12})
		if err == nil {
			_ = res.Rows.Close()
			err = tc.Close()
		}
		return err
	}))
	_, _, err := bs[0].FetchTrain(ctx, []int32{3, 15})
	require.Error(t, err)
	assert.Equal(t, acl.CodeRTFftsPlusTimeout, acl.CodeOf(err), "error: %v", err)
}
