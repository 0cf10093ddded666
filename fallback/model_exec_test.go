package fallback

import (
	"fmt"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/internal/zcrt"
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

	x, r := getest.RandF32(rng, p.M*p.K), getest.RandF32(rng, p.M*p.N)
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

	launches, err := n.modelLaunches(id)
	require.NoError(t, err)
	require.Len(t, launches, len(p.model.Tasks))
	user := map[[2]int]uintptr{{1, 0}: addrOf(xd), {1, 1}: addrOf(rd), {2, 0}: addrOf(y0d), {2, 1}: addrOf(y1d)}
	seen := 0
	for _, l := range launches {
		task := &p.model.Tasks[l.Task]
		for a, slot := range task.Args {
			if l.Types[a] != zcrt.AddrModelIO {
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

// TestModelHostBuffers: the ACL layer passes every model IO as device
// memory (hicann/ge api/acl/acl_model/model/model.cpp:750, 777). A host
// buffer, pinned or plain, on a zero-copy IO is bound into the tasks'
// arguments and the task's access faults: aclmdlExecute returns
// ACL_ERROR_RT_AICORE_EXCEPTION, aclmdlExecuteAsync succeeds and its
// stream reports it. On a copy-only IO GE copies with
// ACL_MEMCPY_DEVICE_TO_DEVICE: the synchronous copy of aclmdlExecute goes
// by the pointers (works, counted H2D and D2H), the asynchronous one works
// for pinned memory (kind corrected) and faults for plain memory
// (ACL_ERROR_RT_SYS_DMA at the stream).
func TestModelHostBuffers(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	// Input 0 ("x") and output 1 are copy-only; input 1 and output 0 are
	// zero copy.
	p := newMLP(t, rng, ge.NoZeroCopyOps("square"))
	require.False(t, p.model.Inputs[0].ZeroCopy)
	require.True(t, p.model.Inputs[1].ZeroCopy)
	require.True(t, p.model.Outputs[0].ZeroCopy)
	require.False(t, p.model.Outputs[1].ZeroCopy)
	// A model id runs with aclmdlExecute or aclmdlExecuteAsync, not both
	// (hicann/ge runtime/v1/graph/load/model_manager/davinci_model.cc:
	// 7636-7638): the asynchronous runs use a second load of the model.
	id := loadBlob(t, n, p.blob)
	idA := loadBlob(t, n, p.blob)
	s := mkStream(t, n)
	dev := func(i int) []byte {
		sizes := append(p.inSizes(), p.outSizes()...)
		return devBytes(t, n, sizes[i])
	}
	host := map[string]func(size int) []byte{
		"pinned": func(size int) []byte { return mustMallocHost(t, n, size) },
		"plain":  func(size int) []byte { return pages(t, 1+size/4096)[:size] },
	}
	for _, kind := range []string{"pinned", "plain"} {
		h := host[kind]
		// Zero-copy IO in host memory: the task's access faults.
		for _, io := range []int{1, 2} { // input 1, output 0
			bufs := [][]byte{dev(0), dev(1), dev(2), dev(3)}
			sizes := append(p.inSizes(), p.outSizes()...)
			bufs[io] = h(sizes[io])
			in, _ := newDataset(t, n, bufs[0], bufs[1])
			out, _ := newDataset(t, n, bufs[2], bufs[3])
			p.feed(rng, bufs[0], bufs[1])
			requireCode(t, acl.CodeRTAICoreException, n.Execute(id, in, out), "%s buffer on zero-copy IO %d, aclmdlExecute", kind, io)
			require.NoError(t, n.ExecuteAsync(idA, in, out, s), "%s buffer on zero-copy IO %d: the call succeeds", kind, io)
			requireCode(t, acl.CodeRTAICoreException, n.SynchronizeStream(s), "%s buffer on zero-copy IO %d, aclmdlExecuteAsync", kind, io)
		}
		// Copy-only IO in host memory.
		bufs := [][]byte{h(p.inSizes()[0]), dev(1), dev(2), h(p.outSizes()[1])}
		in, _ := newDataset(t, n, bufs[0], bufs[1])
		out, _ := newDataset(t, n, bufs[2], bufs[3])
		n.ResetCounters()
		x, r := p.feed(rng, bufs[0], bufs[1])
		require.NoError(t, n.Execute(id, in, out), "%s buffers on copy-only IO, aclmdlExecute", kind)
		p.check(t, x, r, bufs[2], bufs[3])
		c := n.Counters()
		require.Equal(t, Traffic{Copies: 1, Bytes: uint64(p.inSizes()[0])}, c.H2D, kind)
		require.Equal(t, Traffic{Copies: 1, Bytes: uint64(p.outSizes()[1])}, c.D2H, kind)
		x, r = p.feed(rng, bufs[0], bufs[1])
		require.NoError(t, n.ExecuteAsync(idA, in, out, s), "%s buffers on copy-only IO: the call succeeds", kind)
		if kind == "plain" {
			requireCode(t, acl.CodeRTSysDMA, n.SynchronizeStream(s), "plain buffers on copy-only IO, aclmdlExecuteAsync")
			continue
		}
		require.NoError(t, n.SynchronizeStream(s))
		p.check(t, x, r, bufs[2], bufs[3])
	}
	// The model still runs on device memory after the faults.
	bufs := [][]byte{dev(0), dev(1), dev(2), dev(3)}
	in, _ := newDataset(t, n, bufs[0], bufs[1])
	out, _ := newDataset(t, n, bufs[2], bufs[3])
	x, r := p.feed(rng, bufs[0], bufs[1])
	runAsync(t, n, idA, in, out, s)
	p.check(t, x, r, bufs[2], bufs[3])
	// A copied output 4 bytes short (accepted for an output bound in
	// place): CopyOutputData fails (GE davinci_model.cc:5054) and the
	// execute returns ACL_ERROR_GE_INTERNAL_ERROR (davinci_model.cc:7911).
	short, _ := newDataset(t, n, bufs[2], bufs[3][:len(bufs[3])-4])
	requireCode(t, acl.CodeGEInternalError, n.Execute(id, in, short), "copy-only output 4 bytes short")
	short0, _ := newDataset(t, n, bufs[2][:len(bufs[2])-4], bufs[3])
	require.NoError(t, n.Execute(id, in, short0), "zero-copy output 4 bytes short")
	require.NoError(t, n.Unload(id))
	require.NoError(t, n.Unload(idA))
}

// TestModelSwapBuffers: swapping one buffer between executions re-patches
// exactly that IO's slots; the launch then carries the new address.
func TestModelSwapBuffers(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	id := loadBlob(t, n, p.blob)
	bufs := [][]byte{devBytes(t, n, p.inSizes()[0]), devBytes(t, n, p.inSizes()[1]), devBytes(t, n, p.outSizes()[0]), devBytes(t, n, p.outSizes()[1])}
	spare := [][]byte{devBytes(t, n, p.inSizes()[0]), devBytes(t, n, p.inSizes()[1]), devBytes(t, n, p.outSizes()[0]), devBytes(t, n, p.outSizes()[1])}
	in, inH := newDataset(t, n, bufs[0], bufs[1])
	out, outH := newDataset(t, n, bufs[2], bufs[3])
	hs := append(inH, outH...)
	s := mkStream(t, n)
	all := 0
	for i := range 4 {
		all += slotCount(t, n, id, i >= 2, i%2)
	}
	runAsync(t, n, id, in, out, s)
	st, err := n.ModelStats(id)
	require.NoError(t, err)
	require.Equal(t, uint64(all), st.LastPatched)
	n.ResetCounters()
	for round := range 12 {
		want := 0
		for i := range 4 {
			if rng.IntN(3) == 0 {
				bufs[i], spare[i] = spare[i], bufs[i]
				require.NoError(t, n.UpdateDataBuffer(hs[i], ptrOf(bufs[i]), uintptr(len(bufs[i]))))
				want += slotCount(t, n, id, i >= 2, i%2)
			}
		}
		x, r := p.feed(rng, bufs[0], bufs[1])
		runAsync(t, n, id, in, out, s)
		p.check(t, x, r, bufs[2], bufs[3])
		st, err := n.ModelStats(id)
		require.NoError(t, err)
		require.Equal(t, uint64(want), st.LastPatched, "round %d", round)
		launches, err := n.modelLaunches(id)
		require.NoError(t, err)
		rt, err := n.modelRuntime(id)
		require.NoError(t, err)
		for k, recs := range [][]zcrt.IORecord{rt.Inputs(), rt.Outputs()} {
			for i, rec := range recs {
				for _, sl := range rec.Slots {
					require.Equal(t, uint64(addrOf(bufs[2*k+i]))+uint64(sl.Rel), launches[sl.Task].Args[sl.Arg])
				}
			}
		}
	}
	require.Zero(t, n.Counters().Copies())
	require.NoError(t, n.Unload(id))
}

// TestModelCopyOnlyIO: an IO whose consumer cannot take an external
// address is copied even from device memory (D2D in and out), and its
// slots keep the model's address; a NoZeroCopy slot on an IO-region block
// (GE's DisableZeroCopy) behaves the same.
func TestModelCopyOnlyIO(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng, ge.NoZeroCopyOps("square"))
	require.False(t, p.model.Inputs[0].ZeroCopy)
	require.False(t, p.model.Outputs[1].ZeroCopy)
	id := loadBlob(t, n, p.blob)
	bufs := [][]byte{devBytes(t, n, p.inSizes()[0]), devBytes(t, n, p.inSizes()[1]), devBytes(t, n, p.outSizes()[0]), devBytes(t, n, p.outSizes()[1])}
	in, _ := newDataset(t, n, bufs[0], bufs[1])
	out, _ := newDataset(t, n, bufs[2], bufs[3])
	s := mkStream(t, n)
	n.ResetCounters()
	for range 2 {
		x, r := p.feed(rng, bufs[0], bufs[1])
		runAsync(t, n, id, in, out, s)
		p.check(t, x, r, bufs[2], bufs[3])
	}
	c := n.Counters()
	require.Equal(t, Traffic{Copies: 4, Bytes: 2 * uint64(p.inSizes()[0]+p.outSizes()[1])}, c.D2D)
	require.Zero(t, c.H2D.Copies+c.D2H.Copies)
	st, err := n.ModelStats(id)
	require.NoError(t, err)
	require.Equal(t, uint64(4), st.IOCopies, "two copy-only IOs, two executions")
	rt, err := n.modelRuntime(id)
	require.NoError(t, err)
	require.Equal(t, zcrt.CopyInFeatureMap, rt.Inputs()[0].CopyOnly)
	launches, err := n.modelLaunches(id)
	require.NoError(t, err)
	x := rt.Inputs()[0]
	for _, sl := range x.Slots {
		require.Equal(t, uint64(rt.ModelAddr(&x))+uint64(sl.Rel), launches[sl.Task].Args[sl.Arg])
		require.Equal(t, zcrt.AddrFeatureMap, launches[sl.Task].Types[sl.Arg])
	}

	// The copy-only IOs bound to the model's own blocks: source equals
	// destination, so nothing is copied or counted and the results are
	// still right.
	md, err := n.hookModel("test", id)
	require.NoError(t, err)
	y1 := rt.Outputs()[1]
	own := func(rec *zcrt.IORecord) []byte {
		return md.work[rt.ModelAddr(rec)-md.workAddr:][:rec.Size]
	}
	xOwn, y1Own := own(&x), own(&y1)
	inOwn, _ := newDataset(t, n, xOwn, bufs[1])
	outOwn, _ := newDataset(t, n, bufs[2], y1Own)
	n.ResetCounters()
	xv, rv := p.feed(rng, xOwn, bufs[1])
	runAsync(t, n, id, inOwn, outOwn, s)
	p.check(t, xv, rv, bufs[2], y1Own)
	require.Zero(t, n.Counters().Copies())
	st, err = n.ModelStats(id)
	require.NoError(t, err)
	require.Equal(t, uint64(4), st.IOCopies, "an IO bound to its own block is not copied")
	require.NoError(t, n.Unload(id))

	// Hand-made model: output 0's producer flagged NoZeroCopy on its
	// IO-region slot.
	p2 := newMLP(t, rng)
	m := p2.model
	found := false
	for ti := range m.Tasks {
		for ai, a := range m.Tasks[ti].Args {
			if a.Mem == ge.MemModelIO && a.IO == (ge.IORef{Dir: ge.IOOutput, Index: 0}) {
				m.Tasks[ti].Args[ai].NoZeroCopy, found = true, true
			}
		}
	}
	require.True(t, found)
	blob, err := m.MarshalBinary()
	require.NoError(t, err)
	id2 := loadBlob(t, n, blob)
	rt2, err := n.modelRuntime(id2)
	require.NoError(t, err)
	require.Equal(t, zcrt.CopyNoZeroCopyConsumer, rt2.Outputs()[0].CopyOnly)
	n.ResetCounters()
	x2, r2 := p2.feed(rng, bufs[0], bufs[1])
	runAsync(t, n, id2, in, out, s)
	p2.check(t, x2, r2, bufs[2], bufs[3])
	require.Equal(t, Traffic{Copies: 1, Bytes: uint64(p2.outSizes()[0])}, n.Counters().D2D)
	st2, err := n.ModelStats(id2)
	require.NoError(t, err)
	require.Equal(t, uint64(1), st2.IOCopies)
	require.NoError(t, n.Unload(id2))
}

// TestModelExecuteSync: aclmdlExecute gives the reference results and the
// same bytes as the ge reference interpreter (a second opinion), with no
// copy.
func TestModelExecuteSync(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	id := loadBlob(t, n, p.blob)
	bufs := [][]byte{devBytes(t, n, p.inSizes()[0]), devBytes(t, n, p.inSizes()[1]), devBytes(t, n, p.outSizes()[0]), devBytes(t, n, p.outSizes()[1])}
	in, _ := newDataset(t, n, bufs[0], bufs[1])
	out, _ := newDataset(t, n, bufs[2], bufs[3])
	n.ResetCounters()
	x, r := p.feed(rng, bufs[0], bufs[1])
	require.NoError(t, n.Execute(id, in, out))
	p.check(t, x, r, bufs[2], bufs[3])
	require.Zero(t, n.Counters().Copies())
	want, err := getest.Run(p.model, [][]byte{bufs[0], bufs[1]})
	require.NoError(t, err)
	require.Equal(t, want[0], bufs[2])
	require.Equal(t, want[1], bufs[3])
	require.NoError(t, n.Unload(id))
}

// TestModelSlightlySmallerBuffers: GE accepts a buffer up to 64 bytes
// smaller than the tensor (the device pads allocations); more is refused
// naming the IO and both sizes.
func TestModelSlightlySmallerBuffers(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	id := loadBlob(t, n, p.blob)
	xb, rb := devBytes(t, n, p.inSizes()[0]), devBytes(t, n, p.inSizes()[1])
	y0b, y1b := devBytes(t, n, p.outSizes()[0]-64), devBytes(t, n, p.outSizes()[1])
	in, _ := newDataset(t, n, xb, rb)
	out, outH := newDataset(t, n, y0b, y1b)
	x, r := p.feed(rng, xb, rb)
	require.NoError(t, n.Execute(id, in, out))
	w0, _ := p.ref(x, r)
	requireClose(t, w0[:len(y0b)/4], getF32s(y0b, len(y0b)/4), "y0 prefix")

	short := devBytes(t, n, p.outSizes()[0]-65)
	require.NoError(t, n.UpdateDataBuffer(outH[0], ptrOf(short), uintptr(len(short))))
	err := n.Execute(id, in, out)
	requireCode(t, acl.CodeGEFailure, err)
	require.Contains(t, err.Error(), `output 0 ("add:0")`)
	require.Contains(t, err.Error(), fmt.Sprintf("provided %d bytes of buffer size plus the aligned 64 bytes is less than the tensor size %d bytes", len(short), p.outSizes()[0]))

	// 64 bytes short at the very end of an allocation: the bytes the
	// kernel writes past the buffer do not exist.
	block := devBytes(t, n, 1024)
	tail := block[1024-(p.outSizes()[0]-64):]
	require.NoError(t, n.UpdateDataBuffer(outH[0], ptrOf(tail), uintptr(len(tail))))
	requireCode(t, acl.CodeGEParamInvalid, n.Execute(id, in, out))
	require.NoError(t, n.Unload(id))
}
