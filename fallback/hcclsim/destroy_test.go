package hcclsim_test

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/npuhook"
)

// TestDestroyAfterStreamFailure: CommDestroy waits for the communicator's
// work queued on a healthy stream, but not for work queued behind a task
// that failed for a reason of its own (not HCCL's): the stream skips it,
// so waiting would only sit out the execution timeout.
func TestDestroyAfterStreamFailure(t *testing.T) {
	const execTimeout = time.Minute // what a wrong wait would cost
	for _, streamFails := range []bool{true, false} {
		name := map[bool]string{true: "failed stream", false: "healthy stream"}[streamFails]
		t.Run(name, func(t *testing.T) {
			npu := newNPU(t, 1)
			sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: execTimeout, ConnectTimeout: 10 * time.Second})
			t.Cleanup(func() { _ = sim.Close() })
			g := newGroup(t, &npuEnv{npu: npu, sim: sim}, 1)
			const count = 256
			in := make([]byte, 4*count)
			for i := range count {
				binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(i)+0.5))
			}
			var took time.Duration
			var syncErr error
			var out []byte
			g.on(0, func(w *rankW) error {
				r := w.r.(*npuRank)
				send, err := w.buf(in, 0)
				if err != nil {
					return err
				}
				recv, err := w.buf(nil, len(in))
				if err != nil {
					return err
				}
				// Hold the stream so that everything below is queued
				// before anything runs.
				if err := r.Hold(); err != nil {
					return err
				}
				if streamFails {
					// A failure stops the stream's later work only in
					// ACL_STOP_ON_FAILURE (the default runs it).
					if err := npu.SetStreamFailureMode(r.Stream(), acl.StopOnFailure); err != nil {
						return err
					}
					if _, err := npuhook.Of(npu).Enqueue(r.Stream(), "kernel", func() error { return errors.New("a kernel failed") }); err != nil {
						return err
					}
				}
				if err := sim.AllReduce(send, recv, count, hccl.Float32, hccl.Sum, w.comm, r.Stream()); err != nil {
					return err
				}
				// Release while CommDestroy waits: it must notice the
				// stream's failure (or the work finishing) by itself.
				go func() {
					time.Sleep(50 * time.Millisecond)
					_ = r.Release()
				}()
				start := time.Now()
				err = sim.CommDestroy(w.comm)
				took = time.Since(start)
				w.comm = 0
				if err != nil {
					return err
				}
				syncErr = r.Sync()
				out, err = w.read(recv, len(in))
				return err
			})
			// A bound on a hang, not a speed check: the wrong behaviour
			// waits the full minute.
			assert.Less(t, took, execTimeout/4, "CommDestroy waited for work the stream will not run")
			if streamFails {
				require.Error(t, syncErr)
				assert.Equal(t, acl.CodeRTTSError, acl.CodeOf(syncErr), "the stream reports its own failure: %v", syncErr)
				assert.Equal(t, make([]byte, len(in)), out, "the skipped AllReduce wrote its output")
			} else {
				require.NoError(t, syncErr)
				assert.Equal(t, in, out, "destroy did not let the queued AllReduce finish (one rank: output = input)")
			}
		})
	}
}
