package hcclsim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// TestStreamErrorNamesHcclCode: when a queued collective fails (here its
// peer never arrives), the stream error the caller gets at synchronize
// names the HCCL code (HCCL_E_TIMEOUT), never a bare "hccl code 9", and
// says the code once.
func TestStreamErrorNamesHcclCode(t *testing.T) {
	npu := newNPU(t, 2)
	sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: 300 * time.Millisecond, ConnectTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = sim.Close() })
	g := newGroup(t, &npuEnv{npu: npu, sim: sim}, 2)
	allReduce := func(w *rankW, hold bool, then func(error)) error {
		r := w.r.(*npuRank)
		send, err := w.buf(make([]byte, 64), 0)
		if err != nil {
			return err
		}
		recv, err := w.buf(nil, 64)
		if err != nil {
			return err
		}
		if hold {
			if err := r.Hold(); err != nil {
				return err
			}
		}
		if err := sim.AllReduce(send, recv, 16, hccl.Float32, hccl.Sum, w.comm, r.Stream()); err != nil {
			return err
		}
		then(r.Sync())
		return nil
	}
	// The communicator's first operation is checked at the call; after
	// it, collectives only queue, and a peer whose stream never reaches
	// the collective fails this rank's stream.
	g.must("first AllReduce", g.each(func(w *rankW) error {
		var err error
		if e := allReduce(w, false, func(e error) { err = e }); e != nil {
			return e
		}
		return err
	}))
	var syncErr error
	done := make(chan struct{})
	g.must("second AllReduce", g.each(func(w *rankW) error {
		if w.rank == 0 {
			return allReduce(w, false, func(err error) { syncErr = err; close(done) })
		}
		// Rank 1 calls too, but its stream is held until rank 0 gave up.
		r := w.r.(*npuRank)
		go func() { <-done; _ = r.Release() }()
		return allReduce(w, true, func(error) {})
	}))
	require.Error(t, syncErr)
	// A peer that never arrives fails the stream with 507048 after the
	// exec timeout, as HCCL's FFTS+ tasks do (hccl-vs-source.md).
	assert.Equal(t, acl.CodeRTFftsPlusTimeout, acl.CodeOf(syncErr), "%v", syncErr)
	msg := syncErr.Error()
	assert.Contains(t, msg, "HCCL_EXEC_TIMEOUT")
	assert.NotContains(t, msg, "hccl code")
	assert.Equal(t, 1, strings.Count(msg, "ACL_ERROR_RT_FFTS_PLUS_TIMEOUT"), msg)
}
