package hcclsim_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// Posted reads are accounted per (peer, channel): a channel holds
// SQDepth requests until drained; one more fails the stream with
// HCCL_E_INTERNAL and moves nothing; a drain after a request without a
// completion flag, or a final drain of such a channel, fails too. Two
// channels to the same peer have separate queues.
func TestSendQueues(t *testing.T) {
	npu := newNPU(t, 2)
	sim := newSim(t, npu)
	g := newGroup(t, &npuEnv{npu: npu, sim: sim}, 2)
	const row = 8
	mem := make([]unsafe.Pointer, 2)
	g.must("alloc", g.each(func(w *rankW) error {
		var err error
		mem[w.rank], err = w.buf(make([]byte, 64), 64)
		return err
	}))
	enabled := exchangeAll(t, g, mem, 64)
	dst := make([]unsafe.Pointer, 2)
	g.must("dst", g.each(func(w *rankW) error {
		var err error
		dst[w.rank], err = w.buf(nil, row)
		return err
	}))
	post := func(n int, word func(i int) uint32) ([]hccl.OneSideOpDesc, []uint32) {
		ds := make([]hccl.OneSideOpDesc, n)
		ws := make([]uint32, n)
		for i := range ds {
			ds[i] = hccl.OneSideOpDesc{LocalAddr: dst[0], RemoteAddr: enabled[0][1].Addr, Count: row, DataType: hccl.Uint8}
			ws[i] = word(i)
		}
		return ds, ws
	}
	run := func(f func(w *rankW) error) error {
		var err error
		g.on(0, func(w *rankW) error {
			if err = f(w); err == nil {
				err = w.r.Sync()
			}
			return nil
		})
		return err
	}
	// Two channels of SQDepth each, every request signalled, drained at
	// the end: fine.
	ds, ws := post(2*hcclsim.SQDepth, func(i int) uint32 {
		return uint32(i%2)<<hcclsim.PostChannelShift | hcclsim.PostSignal
	})
	require.NoError(t, run(func(w *rankW) error {
		if err := postInBatches(sim, w, ds, ws); err != nil {
			return err
		}
		return sim.DrainSendQueues(w.comm, w.r.Stream())
	}))
	// A mid-stream drain lets a channel take more than its depth.
	ds, ws = post(hcclsim.SQDepth+10, func(i int) uint32 {
		if i == 99 {
			return hcclsim.PostSignal | hcclsim.PostDrain
		}
		return hcclsim.PostSignal
	})
	require.NoError(t, run(func(w *rankW) error {
		if err := postInBatches(sim, w, ds, ws); err != nil {
			return err
		}
		return sim.DrainSendQueues(w.comm, w.r.Stream())
	}))
	// Mismatched lengths, more than 256 descriptors: a parameter error at
	// the call.
	require.ErrorIs(t, run(func(w *rankW) error { return sim.BatchGetPosted(w.comm, 1, ds[:257], ws[:257], w.r.Stream()) }), hccl.ErrPara)
	require.ErrorIs(t, run(func(w *rankW) error { return sim.BatchGetPosted(w.comm, 1, ds, ws[:1], w.r.Stream()) }), hccl.ErrPara)
	// One request too many on one channel: the stream fails.
	ds, ws = post(hcclsim.SQDepth+1, func(int) uint32 { return hcclsim.PostSignal })
	err := run(func(w *rankW) error { return postInBatches(sim, w, ds, ws) })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "overflowed")
	assert.Equal(t, hccl.EInternal, hccl.ResultOf(err), "%v", err)
}

// postInBatches posts ds to rank 1 in BatchGetPosted calls of at most
// hccl.MaxOneSideDescs descriptors.
func postInBatches(sim *hcclsim.Sim, w *rankW, ds []hccl.OneSideOpDesc, ws []uint32) error {
	for lo := 0; lo < len(ds); lo += hccl.MaxOneSideDescs {
		hi := min(len(ds), lo+hccl.MaxOneSideDescs)
		if err := sim.BatchGetPosted(w.comm, 1, ds[lo:hi], ws[lo:hi], w.r.Stream()); err != nil {
			return err
		}
	}
	return nil
}

// A drain needs a completion to wait for.
func TestSendQueueDrainNeedsCompletion(t *testing.T) {
	for _, midStream := range []bool{true, false} {
		npu := newNPU(t, 2)
		sim := newSim(t, npu)
		g := newGroup(t, &npuEnv{npu: npu, sim: sim}, 2)
		mem := make([]unsafe.Pointer, 2)
		g.must("alloc", g.each(func(w *rankW) error {
			var err error
			mem[w.rank], err = w.buf(make([]byte, 64), 64)
			return err
		}))
		enabled := exchangeAll(t, g, mem, 64)
		var err error
		g.on(0, func(w *rankW) error {
			d, e := w.buf(nil, 8)
			if e != nil {
				return e
			}
			ds := []hccl.OneSideOpDesc{{LocalAddr: d, RemoteAddr: enabled[0][1].Addr, Count: 8, DataType: hccl.Uint8}}
			word := uint32(0)
			if midStream {
				word = hcclsim.PostDrain
			}
			if err = sim.BatchGetPosted(w.comm, 1, ds, []uint32{word}, w.r.Stream()); err == nil && !midStream {
				err = sim.DrainSendQueues(w.comm, w.r.Stream())
			}
			if err == nil {
				err = w.r.Sync()
			}
			return nil
		})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the drain would never finish")
	}
}
