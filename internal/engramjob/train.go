package engramjob

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/floatx"
)

// GradValue is the synthetic gradient of rank r's token i, column j: a
// small multiple of 1/4, so sums of up to 2^20 of them are exact in fp32
// and grad_unique has one right answer (the sum rounded once).
func GradValue(r, i, j int) float32 {
	return float32((r*7+i*13+j*5)%17-8) / 4
}

func putVal(dt engram.DType, dst []byte, v float32) {
	switch dt {
	case engram.FP32:
		binary.LittleEndian.PutUint32(dst, math.Float32bits(v))
	case engram.FP16:
		binary.LittleEndian.PutUint16(dst, floatx.F32ToF16(v))
	case engram.BF16:
		binary.LittleEndian.PutUint16(dst, floatx.F32ToBF16(v))
	}
}

// trainRank runs the training job: a checked FetchTrain + FetchGrad, then
// job.Iters timed ones.
func trainRank(ctx context.Context, buf *engram.Buffer, dev *acl.Device, rank int, job Job, idx []int32, rep *Report) error {
	cfg := job.Config()
	rb, es := cfg.RowBytes(), job.DType.Size()
	// FetchGrad sums bf16, fp16 and fp32 gradients; an fp8 table has the
	// training fetch only.
	grad := !job.DType.FP8()
	var gbuf *acl.DeviceBuffer
	if grad {
		graw := make([]byte, int64(job.T)*rb)
		for i := 0; i < job.T; i++ {
			for j := 0; j < job.Hidden; j++ {
				putVal(job.DType, graw[(i*job.Hidden+j)*es:], GradValue(rank, i, j))
			}
		}
		var err error
		if gbuf, err = dev.Malloc(uintptr(max(len(graw), 1)), acl.MemMallocHugeFirst); err != nil {
			return err
		}
		defer gbuf.Close()
		if len(graw) > 0 {
			if err := gbuf.CopyFromHost(graw); err != nil {
				return err
			}
		}
	}
	// Under IndexError one out-of-range index on any rank fails the
	// training fetch on every rank, naming the first such rank's.
	badRank := -1
	if job.Policy == engram.IndexError {
		for s := 0; s < job.Ranks && badRank < 0; s++ {
			if firstBad(Indices(job, s), job) >= 0 {
				badRank = s
			}
		}
	}
	step := func(checked bool) error {
		res, tc, err := buf.FetchTrain(ctx, idx)
		if badRank >= 0 {
			if err == nil {
				_ = tc.Close()
				_ = res.Rows.Close()
			}
			return checkIndexErr(err, job, idx, badRank)
		}
		if err != nil {
			return err
		}
		defer tc.Close()
		if res.Rows != nil {
			defer res.Rows.Close()
		}
		if res.SF != nil {
			defer res.SF.Close()
		}
		if checked {
			if err := checkResult(res, engram.Output{Rows: res.Rows, SF: res.SF}, idx, job); err != nil {
				return err
			}
		}
		if !grad {
			return nil
		}
		gr, err := buf.FetchGrad(ctx, engram.Grad{Data: gbuf, Rows: job.T, Hidden: job.Hidden, DType: job.DType}, tc)
		if err != nil {
			return err
		}
		defer gr.Close()
		if checked {
			return checkGrad(gr, rank, job, rb)
		}
		return nil
	}
	if err := step(true); err != nil {
		return err
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	for range job.Iters {
		if err := step(false); err != nil {
			return err
		}
	}
	rep.Seconds = time.Since(t0).Seconds()
	runtime.ReadMemStats(&m1)
	if job.Iters > 0 {
		rep.Allocs = float64(m1.Mallocs-m0.Mallocs) / float64(job.Iters)
	}
	global := int64(job.Ranks) * job.Entries
	for _, g := range idx {
		if InRange(g, global) && int64(g)/max(job.Entries, 1) != int64(rank) {
			rep.Remote += int64(job.Iters)
		}
	}
	rep.Bad = countBad(idx, job)
	rep.Rows = int64(job.Iters) * int64(job.T)
	rep.Bytes = rep.Rows * rb
	return nil
}

// checkGrad compares grad_unique with the exact sums of every rank's
// synthetic gradient over this rank's rows, rounded once to the dtype.
func checkGrad(gr engram.GradResult, rank int, job Job, rb int64) error {
	lo := int64(rank) * job.Entries
	sums := map[int64][]float64{}
	for s := 0; s < job.Ranks; s++ {
		for i, g := range Indices(job, s) {
			if int64(g) < lo || int64(g) >= lo+job.Entries {
				continue
			}
			k := int64(g) - lo
			if sums[k] == nil {
				sums[k] = make([]float64, job.Hidden)
			}
			for j := range sums[k] {
				sums[k][j] += float64(GradValue(s, i, j))
			}
		}
	}
	if gr.K != len(sums) {
		return fmt.Errorf("FetchGrad: K = %d, want %d", gr.K, len(sums))
	}
	if gr.K == 0 {
		return nil
	}
	ent := make([]byte, 4*gr.K)
	if err := gr.Entries.CopyToHostAt(ent, 0); err != nil {
		return err
	}
	rows := make([]byte, int64(gr.K)*rb)
	if err := gr.Rows.CopyToHostAt(rows, 0); err != nil {
		return err
	}
	es := job.DType.Size()
	want := make([]byte, es)
	prev := int64(-1)
	for u := 0; u < gr.K; u++ {
		k := int64(int32(binary.LittleEndian.Uint32(ent[4*u:])))
		if k <= prev || sums[k] == nil {
			return fmt.Errorf("FetchGrad: unique_local_entry[%d] = %d (previous %d) is not the next row with a gradient", u, k, prev)
		}
		prev = k
		for j, v := range sums[k] {
			putVal(job.DType, want, float32(v))
			off := (int64(u)*int64(job.Hidden) + int64(j)) * int64(es)
			if string(rows[off:off+int64(es)]) != string(want) {
				return fmt.Errorf("FetchGrad: row %d column %d differs from the sum %g", k, j, v)
			}
		}
	}
	return nil
}
