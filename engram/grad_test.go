package engram_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/floatx"
)

// encodeVals stores float values in dt (fp16/bf16 rounded), returning the
// bytes and the values as stored.
func encodeVals(vals []float64, dt engram.DType) ([]byte, []float64) {
	out := make([]byte, len(vals)*dt.Size())
	got := make([]float64, len(vals))
	for i, v := range vals {
		switch dt {
		case engram.FP32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(v)))
			got[i] = float64(float32(v))
		case engram.FP16:
			h := floatx.F32ToF16(float32(v))
			binary.LittleEndian.PutUint16(out[2*i:], h)
			got[i] = float64(floatx.F16ToF32(h))
		case engram.BF16:
			h := floatx.F32ToBF16(float32(v))
			binary.LittleEndian.PutUint16(out[2*i:], h)
			got[i] = float64(floatx.BF16ToF32(h))
		}
	}
	return out, got
}

func decodeVals(raw []byte, dt engram.DType) []float64 {
	out := make([]float64, len(raw)/dt.Size())
	for i := range out {
		switch dt {
		case engram.FP32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		case engram.FP16:
			out[i] = float64(floatx.F16ToF32(binary.LittleEndian.Uint16(raw[2*i:])))
		case engram.BF16:
			out[i] = float64(floatx.BF16ToF32(binary.LittleEndian.Uint16(raw[2*i:])))
		}
	}
	return out
}

// ulpBits is the significand precision of the output dtype.
func ulpBits(dt engram.DType) int {
	switch dt {
	case engram.FP16:
		return 11
	case engram.BF16:
		return 8
	}
	return 24
}

func devBuf(t testing.TB, d *acl.Device, data []byte) *acl.DeviceBuffer {
	t.Helper()
	b, err := d.Malloc(uintptr(max(len(data), 1)), acl.MemMallocHugeFirst)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	if len(data) > 0 {
		require.NoError(t, b.CopyFromHost(data))
	}
	return b
}

type gradCase struct {
	w, t, hidden int
	e            int64
	dt           engram.DType
}

// runGrad does a training fetch and FetchGrad on every rank with random
// gradients and checks grad_unique against a float64 scatter-add: within
// one fp32 rounding per addition, plus one rounding to the output dtype.
func runGrad(t *testing.T, k gradCase, seed uint64) {
	c := newCluster(t, k.w)
	cfg := engram.Config{EntriesPerRank: k.e, Hidden: k.hidden, DType: k.dt, MaxTokensPerRank: k.t, Policy: engram.IndexZeroFill}
	bs := c.buffers(cfg)
	tab := slices(seed, k.w, cfg)
	ctx := ctxT(t)
	tab = pinAll(t, c, tab)
	require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r], ZeroCopy: true}) }))
	global := int64(k.w) * k.e
	idx := make([][]int32, k.w)
	vals := make([][]float64, k.w)
	grads := make([][]byte, k.w)
	for r := range idx {
		rng := rand.New(rand.NewPCG(seed, uint64(r)))
		idx[r] = zipf(rng, k.t, global, 1.05)
		if k.t > 10 {
			idx[r][3] = -1 // dropped: its gradient goes nowhere
		}
		v := make([]float64, k.t*k.hidden)
		for i := range v {
			v[i] = rng.NormFloat64() * math.Exp2(float64(rng.IntN(9)-4))
		}
		grads[r], vals[r] = encodeVals(v, k.dt)
	}
	out := make([]engram.GradResult, k.w)
	require.NoError(t, c.each(func(r int) error {
		res, tc, err := bs[r].FetchTrain(ctx, idx[r])
		if err != nil {
			return err
		}
		defer res.Rows.Close()
		defer tc.Close()
		g := engram.Grad{Data: devBuf(t, c.devs[r], grads[r]), Rows: k.t, Hidden: k.hidden, DType: k.dt}
		out[r], err = bs[r].FetchGrad(ctx, g, tc)
		return err
	}))
	// Reference: float64 sums and absolute sums per global row.
	sum := map[int32][]float64{}
	abs := map[int32][]float64{}
	cnt := map[int32]int{}
	for r := range idx {
		for i, gi := range idx[r] {
			if gi < 0 || int64(gi) >= global {
				continue
			}
			if sum[gi] == nil {
				sum[gi], abs[gi] = make([]float64, k.hidden), make([]float64, k.hidden)
			}
			cnt[gi]++
			for j := 0; j < k.hidden; j++ {
				x := vals[r][i*k.hidden+j]
				sum[gi][j] += x
				abs[gi][j] += math.Abs(x)
			}
		}
	}
	for r := 0; r < k.w; r++ {
		var want []int32
		for g := int64(r) * k.e; g < int64(r+1)*k.e; g++ {
			if cnt[int32(g)] > 0 {
				want = append(want, int32(g-int64(r)*k.e))
			}
		}
		require.Equal(t, len(want), out[r].K, "rank %d K", r)
		if out[r].K == 0 {
			continue
		}
		assert.Equal(t, want, readI32(t, out[r].Entries, out[r].K), "rank %d unique_local_entry", r)
		got := decodeVals(readBack(t, out[r].Rows, int64(out[r].K)*cfg.RowBytes()), k.dt)
		bad := 0
		for u, l := range want {
			g := int32(int64(r)*k.e) + l
			for j := 0; j < k.hidden; j++ {
				ref := sum[g][j]
				tol := float64(cnt[g]-1)*math.Exp2(-24)*abs[g][j]*1.0001 + math.Abs(ref)*math.Exp2(-float64(ulpBits(k.dt)))
				if k.dt == engram.FP16 {
					tol += math.Exp2(-25) // subnormal spacing
				}
				if d := math.Abs(got[u*k.hidden+j] - ref); d > tol {
					if bad++; bad < 5 {
						t.Errorf("rank %d row %d col %d: got %g, want %g ± %g (%d terms)", r, l, j, got[u*k.hidden+j], ref, tol, cnt[g])
					}
				}
			}
		}
		require.Zero(t, bad, "rank %d: elements outside the bound", r)
		require.NoError(t, out[r].Close())
	}
}

// FetchGrad equals a float64 scatter-add, W = 2..8, every gradient dtype,
// T up to 50k with Zipf duplicates.
func TestFetchGrad(t *testing.T) {
	for i, k := range []gradCase{
		{2, 50000, 16, 3000, engram.BF16},
		{3, 20000, 8, 5000, engram.FP16},
		{4, 12000, 12, 1000, engram.FP32},
		{5, 4000, 4, 700, engram.BF16},
		{6, 3000, 8, 200, engram.FP16},
		{7, 2000, 4, 300, engram.FP32},
		{8, 5000, 16, 5000, engram.BF16},
	} {
		t.Run(fmt.Sprintf("W%d/T%d/%v", k.w, k.t, k.dt), func(t *testing.T) { runGrad(t, k, uint64(40+i)) })
	}
}

// Misuse: each a clear error on every rank, no hang; the buffers stay
// usable.
func TestFetchGradErrors(t *testing.T) {
	const w = 3
	c := newCluster(t, w)
	cfg := engram.Config{EntriesPerRank: 10, Hidden: 2, DType: engram.FP32, MaxTokensPerRank: 8}
	bs := c.buffers(cfg)
	tab := slices2(t, w, cfg)
	ctx := ctxT(t)
	tab = pinAll(t, c, tab)
	require.NoError(t, c.each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r], ZeroCopy: true}) }))
	fetch := func() []*engram.TrainCtx {
		tcs := make([]*engram.TrainCtx, w)
		require.NoError(t, c.each(func(r int) error {
			res, tc, err := bs[r].FetchTrain(ctx, []int32{int32(r), 29, 0, int32(10 * r)})
			tcs[r] = tc
			if err == nil {
				err = res.Rows.Close()
			}
			return err
		}))
		t.Cleanup(func() {
			for _, tc := range tcs {
				_ = tc.Close()
			}
		})
		return tcs
	}
	tcs := fetch()
	grad := func(r int) engram.Grad {
		return engram.Grad{Data: devBuf(t, c.devs[r], make([]byte, 4*2*4)), Rows: 4, Hidden: 2, DType: engram.FP32}
	}
	try := func(f func(r int) (engram.Grad, *engram.TrainCtx)) []error {
		errs := make([]error, w)
		_ = c.each(func(r int) error {
			g, tc := f(r)
			var out engram.GradResult
			out, errs[r] = bs[r].FetchGrad(ctx, g, tc)
			_ = out.Close()
			return nil
		})
		return errs
	}
	check := func(errs []error, own, peers string) {
		t.Helper()
		for r, err := range errs {
			require.ErrorIs(t, err, engram.ErrConfig, "rank %d", r)
			if r == 1 {
				assert.ErrorContains(t, err, own)
			} else {
				assert.ErrorContains(t, err, peers, "rank %d", r)
			}
		}
	}
	check(try(func(r int) (engram.Grad, *engram.TrainCtx) {
		g := grad(r)
		if r == 1 {
			g.DType = engram.BF16
		}
		return g, tcs[r]
	}), "grad dtype must match storage dtype (fp32), got bf16", "rank 1 passed a gradient of the wrong dtype")
	check(try(func(r int) (engram.Grad, *engram.TrainCtx) {
		g := grad(r)
		if r == 1 {
			g.Rows = 3
		}
		return g, tcs[r]
	}), "grad row count (3) must match the number of tokens fetched in the forward pass (4)", "rank 1 passed a gradient of the wrong shape")
	check(try(func(r int) (engram.Grad, *engram.TrainCtx) {
		g := grad(r)
		if r == 1 {
			g.Hidden = 3
		}
		return g, tcs[r]
	}), "grad hidden size (3) must match storage hidden size (2)", "rank 1 passed a gradient of the wrong shape")
	check(try(func(r int) (engram.Grad, *engram.TrainCtx) {
		if r == 1 {
			return grad(r), tcs[0]
		}
		return grad(r), tcs[r]
	}), "not made by this buffer's FetchTrain", "rank 1 passed a context of another buffer")
	// A context tensor of the wrong length.
	bad := *tcs[1]
	bad.RecvLocalEntry = devBuf(t, c.devs[1], make([]byte, 4*(8*w-1)))
	check(try(func(r int) (engram.Grad, *engram.TrainCtx) {
		if r == 1 {
			return grad(r), &bad
		}
		return grad(r), tcs[r]
	}), "fetch_ctx.recv_local_entry length (23) must be 24", "rank 1 passed a malformed context")
	// A context tensor with impossible contents.
	bad = *tcs[1]
	bad.Perm = devBuf(t, c.devs[1], i32le(0, 0, 1, 2))
	check(try(func(r int) (engram.Grad, *engram.TrainCtx) {
		if r == 1 {
			return grad(r), &bad
		}
		return grad(r), tcs[r]
	}), "fetch_ctx.perm[1] = 0 is not a distinct token of [0, 4)", "rank 1 passed a malformed context")
	// Contexts of different fetches.
	tcs2 := fetch()
	errs := try(func(r int) (engram.Grad, *engram.TrainCtx) {
		if r == 1 {
			return grad(r), tcs[r]
		}
		return grad(r), tcs2[r]
	})
	for r, err := range errs {
		require.ErrorIs(t, err, engram.ErrConfig, "rank %d", r)
		assert.ErrorContains(t, err, "contexts of different fetches")
	}
	// Still usable: rows 0 (from rank 0, twice), 29, 10, 20.
	errs = try(func(r int) (engram.Grad, *engram.TrainCtx) {
		vals := make([]float64, 8)
		for i := range vals {
			vals[i] = float64(r*8 + i)
		}
		raw, _ := encodeVals(vals, engram.FP32)
		return engram.Grad{Data: devBuf(t, c.devs[r], raw), Rows: 4, Hidden: 2, DType: engram.FP32}, tcs2[r]
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
}

func i32le(v ...int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}
