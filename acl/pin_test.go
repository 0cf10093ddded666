package acl_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/getest"
)

// TestModelPinnedSteadyState: repeated runs with one stream and one pair of
// datasets take the pinned path after the first, checked, one, and every
// result is right.
func TestModelPinnedSteadyState(t *testing.T) {
	r := newRig(t)
	d, rng, p, m, st, v := r.d, r.rng, r.p, r.m, r.st, r.v
	const runs = 6
	for range runs {
		v.fill(t, rng, p)
		require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
		require.NoError(t, st.Synchronize())
		v.check(t)
	}
	assert.Equal(t, uint64(runs-1), acl.PinnedRuns(m))

	// Freeing memory, or closing a dataset, that no run has used leaves
	// the pin alone.
	scratch := devMem(t, d, 4096)
	spare, err := d.NewDatasetOf(scratch)
	require.NoError(t, err)
	require.NoError(t, spare.Close())
	require.NoError(t, scratch.Close())
	v.fill(t, rng, p)
	require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
	require.NoError(t, st.Synchronize())
	v.check(t)
	assert.Equal(t, uint64(runs), acl.PinnedRuns(m))

	// Another stream, or other datasets, are checked again, then pinned.
	st2, err := d.NewStream()
	require.NoError(t, err)
	w := newIO(t, d, p)
	for _, c := range []struct {
		st *acl.Stream
		v  *io
	}{{st2, v}, {st2, v}, {st2, w}, {st2, w}, {st, w}, {st, w}} {
		c.v.fill(t, rng, p)
		require.NoError(t, m.ExecuteAsync(c.st, c.v.inDS, c.v.outDS))
		require.NoError(t, c.st.Synchronize())
		c.v.check(t)
	}
	assert.Equal(t, uint64(runs+3), acl.PinnedRuns(m))
}

// TestModelPinnedUpdate: pointing an input's buffer at other memory sends
// the next run through the checks, which pin the new memory: the run reads
// it, and closing it waits for a pinned run queued on it.
func TestModelPinnedUpdate(t *testing.T) {
	r := newRig(t)
	npu, d, rng, p, m, st, v := r.npu, r.d, r.rng, r.p, r.m, r.st, r.v
	for range 2 {
		v.fill(t, rng, p)
		require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
		require.NoError(t, st.Synchronize())
		v.check(t)
	}
	pinned := acl.PinnedRuns(m)
	require.Equal(t, uint64(1), pinned)

	x2 := devMem(t, d, v.in[0].Size())
	require.NoError(t, v.inDS.Buffer(0).Update(x2))
	old := v.in[0]
	v.in[0] = x2
	v.fill(t, rng, p)
	// The old memory holds other data: a run still reading it fails the
	// check below.
	require.NoError(t, old.CopyFromHost(getest.F32Bytes(getest.RandF32(rng, p.M*p.K))))
	require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
	require.NoError(t, st.Synchronize())
	v.check(t)
	assert.Equal(t, pinned, acl.PinnedRuns(m), "the run after the update is checked")

	release := hold(t, npu, d, st)
	v.fill(t, rng, p)
	require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
	assert.Equal(t, pinned+1, acl.PinnedRuns(m), "the new memory is pinned")
	closed := mustBlock(t, "Close of the updated input, a pinned run queued,", x2.Close)
	release()
	within(t, 10*time.Second, "Close", func() { assert.NoError(t, <-closed) })
	require.NoError(t, st.Synchronize())
	v.check(t)
	assert.ErrorIs(t, m.ExecuteAsync(st, v.inDS, v.outDS), acl.ErrInvalidHandle)
}

// TestModelPinnedCloseWaitsAndRefuses: closing a handle a pinned run uses
// waits for the run queued on it (memory, stream, model) and the next run
// is refused with ACL_ERROR_RT_INVALID_HANDLE, as for a checked run.
func TestModelPinnedCloseWaitsAndRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		waits bool // Close waits for the queued run
		close func(m *acl.Model, st *acl.Stream, v *io) error
	}{
		{"input memory", true, func(_ *acl.Model, _ *acl.Stream, v *io) error { return v.in[1].Close() }},
		{"output memory", true, func(_ *acl.Model, _ *acl.Stream, v *io) error { return v.out[0].Close() }},
		{"stream", true, func(_ *acl.Model, st *acl.Stream, _ *io) error { return st.Close() }},
		{"model", true, func(m *acl.Model, _ *acl.Stream, _ *io) error { return m.Close() }},
		// A dataset is closed only after its runs completed (Dataset).
		{"input dataset", false, func(_ *acl.Model, _ *acl.Stream, v *io) error { return v.inDS.Close() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			npu, d, rng, p, m, st, v := r.npu, r.d, r.rng, r.p, r.m, r.st, r.v
			v.fill(t, rng, p)
			require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
			require.NoError(t, st.Synchronize())
			release := hold(t, npu, d, st)
			v.fill(t, rng, p)
			require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
			require.Equal(t, uint64(1), acl.PinnedRuns(m))
			var closed <-chan error
			if c.waits {
				closed = mustBlock(t, "Close, a pinned run queued,", func() error { return c.close(m, st, v) })
				release()
			} else {
				release()
				require.NoError(t, st.Synchronize())
				ch := make(chan error, 1)
				ch <- c.close(m, st, v)
				closed = ch
			}
			within(t, 10*time.Second, "Close", func() { assert.NoError(t, <-closed) })
			if c.name != "output memory" {
				v.check(t) // the queued run read and wrote live memory
			}
			err := m.ExecuteAsync(st, v.inDS, v.outDS)
			assert.ErrorIs(t, err, acl.ErrInvalidHandle)
			assert.Equal(t, acl.CodeRTInvalidHandle, acl.CodeOf(err))
		})
	}
}

// TestModelPinnedRace: runs on the pinned path race with updates of an
// input buffer between two memories of the same content and, from a few
// milliseconds on, with Close of those memories. Every
// run either succeeds with the right result or is refused as closed; -race
// finds no unsynchronized access.
func TestModelPinnedRace(t *testing.T) {
	r := newRig(t)
	d, rng, p, m, st, v := r.d, r.rng, r.p, r.m, r.st, r.v
	v.fill(t, rng, p)
	alt := devMem(t, d, v.in[0].Size())
	require.NoError(t, alt.CopyFromHost(getest.F32Bytes(v.x)))
	const runners, runs = 3, 40
	var mu sync.Mutex // one runner's check at a time: they share the outputs
	within(t, 60*time.Second, "racing runs, updates and closes", func() {
		var wg sync.WaitGroup
		for range runners {
			wg.Go(func() {
				for range runs {
					mu.Lock()
					err := m.ExecuteAsync(st, v.inDS, v.outDS)
					if err == nil {
						err = st.Synchronize()
						if err == nil {
							v.check(t)
						}
					}
					mu.Unlock()
					if err != nil {
						assert.ErrorIs(t, err, acl.ErrInvalidHandle)
						return
					}
				}
			})
		}
		wg.Go(func() {
			for i := range 2 * runs {
				mm := acl.Memory(v.in[0])
				if i%2 == 0 {
					mm = alt
				}
				if err := v.inDS.Buffer(0).Update(mm); err != nil {
					assert.ErrorIs(t, err, acl.ErrInvalidHandle)
					return
				}
			}
		})
		wg.Go(func() {
			time.Sleep(5 * time.Millisecond)
			assert.NoError(t, alt.Close())
			assert.NoError(t, v.in[0].Close())
		})
		wg.Wait()
	})
	assert.NoError(t, m.Close())
}
