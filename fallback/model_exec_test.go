package fallback

import (
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/zerocopy"
	"github.com/stretchr/testify/require"
)

// TestModelZeroCopyDeviceBuffers proves zero copy the way GE's system tests
// do: with device buffers, no IO copy is recorded, every launch carries the
// caller's addresses in its IO slots, and the results match a float64
// reference.
func TestModelZeroCopyDeviceBuffers(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	id := loadBlob(t, n, p.blob)
	defer func() { require.NoError(t, n.Unload(id)) }()

	x, r := randF32(rng, p.M*p.K), randF32(rng, p.M*p.N)
	xd, rd := devBytes(t, n, p.inSizes()[0]), devBytes(t, n, p.inSizes()[1])
	y0d, y1d := devBytes(t, n, p.outSizes()[0]), devBytes(t, n, p.outSizes()[1])
	putF32s(xd, x)
	putF32s(rd, r)
	in, _ := newDataset(t, n, xd, rd)
	out, _ := newDataset(t, n, y0d, y1d)

	s, err := n.CreateStream()
	require.NoError(t, err)
	defer func() { require.NoError(t, n.DestroyStream(s)) }()
	n.ResetCounters()
	for range 2 {
		require.NoError(t, n.ExecuteAsync(id, in, out, s))
		require.NoError(t, n.SynchronizeStream(s))
	}
	c := n.Counters()
	require.Zero(t, c.Copies(), "zero copy: no IO copy")
	require.Equal(t, uint64(2*len(p.model.Tasks)), c.Launches)

	w0, w1 := p.ref(x, r)
	requireClose(t, w0, getF32s(y0d, p.M*p.N), "y0")
	requireClose(t, w1, getF32s(y1d, p.M*p.K), "y1")

	launches, err := n.ModelLaunches(id)
	require.NoError(t, err)
	require.Len(t, launches, len(p.model.Tasks))
	user := map[[2]int]uintptr{{1, 0}: addrOf(xd), {1, 1}: addrOf(rd), {2, 0}: addrOf(y0d), {2, 1}: addrOf(y1d)}
	seen := 0
	for _, l := range launches {
		task := &p.model.Tasks[l.Task]
		for a, slot := range task.Args {
			if l.Types[a] != zerocopy.AddrModelIO {
				continue
			}
			base := user[[2]int{int(slot.IO.Dir), slot.IO.Index}]
			require.NotZero(t, base)
			desc := p.model.Inputs
			if slot.IO.Dir == 2 {
				desc = p.model.Outputs
			}
			rel := slot.Offset - desc[slot.IO.Index].BasicOffset
			require.Equal(t, uint64(base)+uint64(rel), l.Args[a], "task %q slot %d holds the caller's address", task.Name, a)
			seen++
		}
	}
	require.Positive(t, seen)
	st, err := n.ModelStats(id)
	require.NoError(t, err)
	require.Equal(t, uint64(2), st.Executions)
	require.Zero(t, st.IOCopies)
	require.Zero(t, st.LastPatched, "second run with the same buffers patches nothing")
	require.Equal(t, uint64(seen), st.PatchedSlots)
	_ = acl.Success
}

// TestModelExecuteAsyncAllocs: the steady state of ExecuteAsync plus the
// stream synchronize allocates at most what the stream itself does (one
// progress channel per completed task).
func TestModelExecuteAsyncAllocs(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	id := loadBlob(t, n, p.blob)
	in, _ := newDataset(t, n, devBytes(t, n, p.inSizes()[0]), devBytes(t, n, p.inSizes()[1]))
	out, _ := newDataset(t, n, devBytes(t, n, p.outSizes()[0]), devBytes(t, n, p.outSizes()[1]))
	s, err := n.CreateStream()
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(200, func() {
		if err := n.ExecuteAsync(id, in, out, s); err != nil {
			t.Fatal(err)
		}
		if err := n.SynchronizeStream(s); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("allocs/op %.2f", allocs)
	require.LessOrEqual(t, allocs, 1.0)
	require.NoError(t, n.DestroyStream(s))
	require.NoError(t, n.Unload(id))
}
