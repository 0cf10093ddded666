package fallback

import (
	"github.com/ascend-go/cann/ge/getest"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/stretchr/testify/require"
)

// mlpIO allocates device buffers for the test model and their datasets.
type mlpIO struct {
	bufs    [4][]byte
	in, out acl.DatasetHandle
	hs      []acl.DataBufferHandle
}

func newMLPIO(t *testing.T, n *NPU, p *mlp) *mlpIO {
	t.Helper()
	io := &mlpIO{}
	for i, size := range append(p.inSizes(), p.outSizes()...) {
		io.bufs[i] = devBytes(t, n, size)
	}
	var ih, oh []acl.DataBufferHandle
	io.in, ih = newDataset(t, n, io.bufs[0], io.bufs[1])
	io.out, oh = newDataset(t, n, io.bufs[2], io.bufs[3])
	io.hs = append(ih, oh...)
	return io
}

func TestModelUnloadTwiceAndExecuteAfterUnload(t *testing.T) {
	n := newTestNPU(t)
	p := newMLP(t, newRand(t))
	id := loadBlob(t, n, p.blob)
	io := newMLPIO(t, n, p)
	s := mkStream(t, n)
	require.NoError(t, n.Unload(id))
	requireCode(t, acl.CodeGEExecModelIDInvalid, n.Unload(id))
	requireCode(t, acl.CodeGEExecModelIDInvalid, n.Execute(id, io.in, io.out))
	requireCode(t, acl.CodeGEExecModelIDInvalid, n.ExecuteAsync(id, io.in, io.out, s))
	requireCode(t, acl.CodeGEExecModelIDInvalid, n.Unload(12345))
	d, err := n.CreateDesc()
	require.NoError(t, err)
	requireCode(t, acl.CodeGEExecModelIDInvalid, n.GetDesc(d, id))
	_, err = n.ModelStats(id)
	requireCode(t, acl.CodeGEExecModelIDInvalid, err)
	require.NoError(t, n.DestroyDesc(d))
}

// setOpt sets a size_t or pointer attribute from a uintptr value.
func setOpt(t *testing.T, n *NPU, h acl.ModelConfigHandle, attr acl.ModelConfigAttr, v uintptr) {
	t.Helper()
	require.NoError(t, n.SetConfigOpt(h, attr, unsafe.Pointer(&v), 8))
}

func setPtrOpt(t *testing.T, n *NPU, h acl.ModelConfigHandle, attr acl.ModelConfigAttr, p unsafe.Pointer) {
	t.Helper()
	require.NoError(t, n.SetConfigOpt(h, attr, unsafe.Pointer(&p), 8))
}

func TestModelWorkspaceMemOptimize(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	m := p.model
	h, err := n.CreateConfigHandle()
	require.NoError(t, err)
	setOpt(t, n, h, acl.MdlLoadTypeSizet, acl.MdlLoadFromMem)
	setPtrOpt(t, n, h, acl.MdlMemAddrPtr, ptrOf(p.blob))
	setOpt(t, n, h, acl.MdlMemSizet, uintptr(len(p.blob)))
	setOpt(t, n, h, acl.MdlWorkspaceMemOptimize, acl.WorkspaceMemOptimizeInputOutput)
	before := n.Counters().LiveBytes[0]
	id, err := n.LoadWithConfig(h)
	require.NoError(t, err)
	require.Equal(t, uint64(m.FeatureMapSize()+m.WeightSize), n.Counters().LiveBytes[0]-before, "work memory excludes IO")

	io := newMLPIO(t, n, p)
	n.ResetCounters()
	x, r := p.feed(rng, io.bufs[0], io.bufs[1])
	require.NoError(t, n.Execute(id, io.in, io.out))
	p.check(t, x, r, io.bufs[2], io.bufs[3])
	require.Zero(t, n.Counters().Copies())

	// A host buffer: GE's reuse-mode check (davinci_model.cc:6870, 6886-6900)
	// runs only for host placement, which the ACL layer never passes
	// (api/acl/acl_model/model/model.cpp:750, 777): the buffer is bound as
	// device memory and the task's access faults.
	host := mustMallocHost(t, n, p.inSizes()[1])
	require.NoError(t, n.UpdateDataBuffer(io.hs[1], ptrOf(host), uintptr(len(host))))
	requireCode(t, acl.CodeRTAICoreException, n.Execute(id, io.in, io.out))
	require.NoError(t, n.Unload(id))

	// With caller memory: the feature map is enough, with or without the
	// option (GE's required_minimum_size, davinci_model.cc:607-631).
	work := mustMalloc(t, n, uintptr(m.FeatureMapSize()))
	weight := mustMalloc(t, n, uintptr(m.WeightSize))
	h2, err := n.CreateConfigHandle()
	require.NoError(t, err)
	setOpt(t, n, h2, acl.MdlLoadTypeSizet, acl.MdlLoadFromMemWithMem)
	setPtrOpt(t, n, h2, acl.MdlMemAddrPtr, ptrOf(p.blob))
	setOpt(t, n, h2, acl.MdlMemSizet, uintptr(len(p.blob)))
	setPtrOpt(t, n, h2, acl.MdlWorkspaceAddrPtr, work)
	setOpt(t, n, h2, acl.MdlWorkspaceSizet, uintptr(m.FeatureMapSize()))
	setPtrOpt(t, n, h2, acl.MdlWeightAddrPtr, weight)
	setOpt(t, n, h2, acl.MdlWeightSizet, uintptr(m.WeightSize))
	require.NoError(t, n.UpdateDataBuffer(io.hs[1], ptrOf(io.bufs[1]), uintptr(len(io.bufs[1]))))
	for _, opt := range []bool{false, true} {
		if opt {
			setOpt(t, n, h2, acl.MdlWorkspaceMemOptimize, acl.WorkspaceMemOptimizeInputOutput)
		}
		id2, err := n.LoadWithConfig(h2)
		require.NoError(t, err)
		x, r = p.feed(rng, io.bufs[0], io.bufs[1])
		require.NoError(t, n.Execute(id2, io.in, io.out))
		p.check(t, x, r, io.bufs[2], io.bufs[3])
		require.NoError(t, n.Unload(id2))
	}
	setOpt(t, n, h2, acl.MdlWorkspaceSizet, uintptr(m.FeatureMapSize())-1)
	_, err = n.LoadWithConfig(h2)
	requireCode(t, acl.CodeGEParamInvalid, err)
	require.NoError(t, n.DestroyConfigHandle(h))
	require.NoError(t, n.DestroyConfigHandle(h2))
	require.NoError(t, n.Free(work))
	require.NoError(t, n.Free(weight))
}

// TestModelLoadWithMemChecks: caller work and weight memory must be device
// memory of the current device, large enough and disjoint; the model runs
// in it and Unload leaves it to the caller.
func TestModelLoadWithMemChecks(t *testing.T) {
	n := newTestNPU(t, WithDevices(2))
	rng := newRand(t)
	p := newMLP(t, rng)
	m := p.model
	ws, wts := uintptr(m.MemorySize), uintptr(m.WeightSize)
	work, weight := mustMalloc(t, n, ws), mustMalloc(t, n, wts)
	blob, size := ptrOf(p.blob), uintptr(len(p.blob))
	load := func(w unsafe.Pointer, wsz uintptr, wt unsafe.Pointer, wtsz uintptr) error {
		id, err := n.LoadFromMemWithMem(blob, size, w, wsz, wt, wtsz)
		if err == nil {
			require.NoError(t, n.Unload(id))
		}
		return err
	}
	fm := uintptr(m.FeatureMapSize())
	requireCode(t, acl.CodeGEParamInvalid, load(work, fm-1, weight, wts), "less than the feature map")
	require.NoError(t, load(work, fm, weight, wts), "the feature map is enough (davinci_model.cc:621)")
	requireCode(t, acl.CodeGEParamInvalid, load(work, ws, weight, wts-1))
	requireCode(t, acl.CodeGEParamInvalid, load(work, ws+1, weight, wts), "size past the allocation")
	requireCode(t, acl.CodeGEParamInvalid, load(nil, ws, weight, wts))
	host := mustMallocHost(t, n, int(ws))
	requireCode(t, acl.CodeGEParamInvalid, load(ptrOf(host), ws, weight, wts))
	requireCode(t, acl.CodeGEParamInvalid, load(work, ws, work, wts), "overlap")
	require.NoError(t, n.SetDevice(1))
	other := mustMalloc(t, n, ws)
	require.NoError(t, n.SetDevice(0))
	requireCode(t, acl.CodeGEParamInvalid, load(other, ws, weight, wts))

	id, err := n.LoadFromMemWithMem(blob, size, work, ws, weight, wts)
	require.NoError(t, err)
	require.Equal(t, p.model.Weights, unsafeBytes(weight, wts), "weights copied into the caller's memory")
	io := newMLPIO(t, n, p)
	x, r := p.feed(rng, io.bufs[0], io.bufs[1])
	require.NoError(t, n.Execute(id, io.in, io.out))
	p.check(t, x, r, io.bufs[2], io.bufs[3])
	live := n.Counters().LiveAllocs[0]
	require.NoError(t, n.Unload(id))
	require.Equal(t, live, n.Counters().LiveAllocs[0], "caller memory is not freed by Unload")
	require.NoError(t, n.Free(work))
	require.NoError(t, n.Free(weight))
}

// TestModelConcurrentExecute: one model id runs once at a time. A second
// ExecuteAsync on the same stream is ordered by the stream and accepted;
// on another stream, or a synchronous Execute, it is refused with
// ACL_ERROR_RT_MODEL_EXECUTE until the first finishes.
func TestModelConcurrentExecute(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	id := loadBlob(t, n, p.blob)
	io := newMLPIO(t, n, p)
	s1, s2 := mkStream(t, n), mkStream(t, n)
	release := hold(t, n, s1)
	x, r := p.feed(rng, io.bufs[0], io.bufs[1])
	require.NoError(t, n.ExecuteAsync(id, io.in, io.out, s1))
	requireCode(t, acl.CodeRTModelExecute, n.ExecuteAsync(id, io.in, io.out, s2))
	// aclmdlExecute of a model that ran asynchronously is refused as a
	// mixed execution (davinci_model.cc:7636-7638) before its state.
	requireCode(t, acl.CodeGEFailure, n.Execute(id, io.in, io.out))
	// Same stream, other buffers: queued behind the first, each run sees
	// its own binding.
	io2 := newMLPIO(t, n, p)
	x2, r2 := p.feed(rng, io2.bufs[0], io2.bufs[1])
	require.NoError(t, n.ExecuteAsync(id, io2.in, io2.out, s1))
	release()
	require.NoError(t, n.SynchronizeStream(s1))
	p.check(t, x, r, io.bufs[2], io.bufs[3])
	p.check(t, x2, r2, io2.bufs[2], io2.bufs[3])
	runAsync(t, n, id, io.in, io.out, s2)

	// Synchronous executes racing from several threads: each either runs
	// or is refused, never anything else (a second load: one kind of
	// execution per model id).
	id = loadBlob(t, n, p.blob)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[acl.Code]int{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := n.SetDevice(0); err != nil {
				t.Error(err)
				return
			}
			defer func() { _ = n.ResetDevice(0) }()
			for range 50 {
				c := acl.CodeOf(n.Execute(id, io.in, io.out))
				mu.Lock()
				codes[c]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for c := range codes {
		require.Contains(t, []acl.Code{acl.Success, acl.CodeRTModelExecute}, c)
	}
	require.Positive(t, codes[acl.Success])
	p.check(t, x, r, io.bufs[2], io.bufs[3])
	require.NoError(t, n.Unload(id))
}

// TestModelBufferFreedBeforeRun: a buffer freed after ExecuteAsync
// returned but before the stream ran it fails the stream with
// ACL_ERROR_RT_DEVICE_MEM_ERROR, and the model is usable afterwards.
func TestModelBufferFreedBeforeRun(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	id := loadBlob(t, n, p.blob)
	io := newMLPIO(t, n, p)
	s := mkStream(t, n)
	tmp := devBytes(t, n, p.inSizes()[0])
	require.NoError(t, n.UpdateDataBuffer(io.hs[0], ptrOf(tmp), uintptr(len(tmp))))
	release := hold(t, n, s)
	require.NoError(t, n.ExecuteAsync(id, io.in, io.out, s))
	require.NoError(t, n.Free(ptrOf(tmp)))
	release()
	requireCode(t, acl.CodeRTDeviceMemError, n.SynchronizeStream(s))
	require.NoError(t, n.UpdateDataBuffer(io.hs[0], ptrOf(io.bufs[0]), uintptr(len(io.bufs[0]))))
	x, r := p.feed(rng, io.bufs[0], io.bufs[1])
	runAsync(t, n, id, io.in, io.out, s)
	p.check(t, x, r, io.bufs[2], io.bufs[3])
	require.NoError(t, n.Unload(id))
}

// TestModelFaultedTask: an injected stream fault on the model task fails
// the stream; the model is not left busy.
func TestModelFaultedTask(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	id := loadBlob(t, n, p.blob)
	io := newMLPIO(t, n, p)
	s1, s2 := mkStream(t, n), mkStream(t, n)
	n.FailTask(1, 0)
	require.NoError(t, n.ExecuteAsync(id, io.in, io.out, s1))
	requireCode(t, acl.CodeRTTSError, n.SynchronizeStream(s1))
	// ACL_CONTINUE_ON_FAILURE: the stream goes on, the failure was reported once.
	x0, r0 := p.feed(rng, io.bufs[0], io.bufs[1])
	require.NoError(t, n.ExecuteAsync(id, io.in, io.out, s1), "queued on the stream after the failure: runs")
	require.NoError(t, n.SynchronizeStream(s1))
	p.check(t, x0, r0, io.bufs[2], io.bufs[3])
	x, r := p.feed(rng, io.bufs[0], io.bufs[1])
	runAsync(t, n, id, io.in, io.out, s2)
	p.check(t, x, r, io.bufs[2], io.bufs[3])
	require.NoError(t, n.Unload(id))
}

// TestModelCorruptBytes: damaged model bytes give ge.ParseModel's code
// from every entry point; nothing is loaded.
func TestModelCorruptBytes(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	ws, wts, err := n.QuerySizeFromMem(ptrOf(p.blob), uintptr(len(p.blob)))
	require.NoError(t, err)
	require.Equal(t, uintptr(p.model.MemorySize), ws)
	require.Equal(t, uintptr(p.model.WeightSize), wts)
	for range 20 {
		bad := append([]byte(nil), p.blob...)
		switch rng.IntN(3) {
		case 0:
			bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
		case 1:
			bad = bad[:rng.IntN(len(bad))]
		default:
			bad = randBytes(rng, 1+rng.IntN(len(bad)))
		}
		if len(bad) == 0 {
			continue
		}
		_, perr := ge.ParseModel(bad)
		if perr == nil {
			continue // a flip in padding the format does not read
		}
		checkCorrupt(t, n, bad)
	}
	// The rows of docs/misuse.md one by one: under the om2 magic, shorter
	// than the header, a header length one byte off either way, a bad magic.
	long := append(append([]byte(nil), p.blob...), 0)
	magic := append([]byte(nil), p.blob...)
	magic[0] ^= 0xff
	for _, bad := range [][]byte{p.blob[:3], p.blob[:ge.HeaderSize-1], p.blob[:len(p.blob)-1], long, magic} {
		checkCorrupt(t, n, bad)
	}
	_, err = n.LoadFromMem(nil, 10)
	requireCode(t, acl.CodeInvalidParam, err)
	_, err = n.LoadFromMem(ptrOf(p.blob), 0)
	requireCode(t, acl.CodeInvalidParam, err)
	_, _, err = n.QuerySizeFromMem(nil, 0)
	requireCode(t, acl.CodeInvalidParam, err)
	require.Empty(t, n.loadedModels())
}

// checkCorrupt asserts the codes GE returns for model bytes that do not
// parse: fewer than 4 bytes are 145006 everywhere (the om2 check, hicann/ge
// runtime/om2/om2_model_executor.cc:1698-1706); bytes shorter than the
// header are 145006 for a load (model_helper.cc:1158-1166) and 145000 for
// the size query (model_manager.cc:2364-2367); a bad magic, a header length
// that disagrees with the data or a payload that does not decode are 145000
// (model_helper.cc:1267-1270, model_manager.cc:2364-2367).
func checkCorrupt(t *testing.T, n *NPU, bad []byte) {
	t.Helper()
	query, load := acl.CodeGEParamInvalid, acl.CodeGEParamInvalid
	switch {
	case len(bad) < 4:
		query, load = acl.CodeGEExecModelDataSizeInvalid, acl.CodeGEExecModelDataSizeInvalid
	case len(bad) < ge.HeaderSize:
		load = acl.CodeGEExecModelDataSizeInvalid
	}
	_, _, err := n.QuerySizeFromMem(ptrOf(bad), uintptr(len(bad)))
	requireCode(t, query, err, "QuerySizeFromMem of %d bytes", len(bad))
	_, err = n.LoadFromMem(ptrOf(bad), uintptr(len(bad)))
	requireCode(t, load, err, "LoadFromMem of %d bytes", len(bad))
	_, err = n.LoadFromMemWithMem(ptrOf(bad), uintptr(len(bad)), nil, 0, nil, 0)
	requireCode(t, load, err, "LoadFromMemWithMem of %d bytes", len(bad))
}

// TestModelBadHandles: unknown, destroyed and null handles give
// ACL_ERROR_INVALID_PARAM where C returns an aclError, and 0/NULL where it
// returns a value.
func TestModelBadHandles(t *testing.T) {
	n := newTestNPU(t)
	p := newMLP(t, newRand(t))
	id := loadBlob(t, n, p.blob)
	io := newMLPIO(t, n, p)
	const bogus = 0x7ead_0000_0010
	requireCode(t, acl.CodeInvalidParam, n.Execute(id, 0, io.out))
	requireCode(t, acl.CodeInvalidParam, n.Execute(id, io.in, bogus))
	requireCode(t, acl.CodeInvalidParam, n.ExecuteAsync(id, bogus, io.out, 0))
	requireCode(t, acl.CodeInvalidParam, n.DestroyDataset(0))
	requireCode(t, acl.CodeInvalidParam, n.DestroyDataset(bogus))
	requireCode(t, acl.CodeInvalidParam, n.DestroyDataBuffer(bogus))
	requireCode(t, acl.CodeInvalidParam, n.UpdateDataBuffer(0, nil, 0))
	requireCode(t, acl.CodeInvalidParam, n.AddDatasetBuffer(io.in, bogus))
	requireCode(t, acl.CodeInvalidParam, n.AddDatasetBuffer(bogus, io.hs[0]))
	require.Nil(t, n.GetDataBufferAddr(bogus))
	require.Zero(t, n.GetDataBufferSizeV2(bogus))
	require.Zero(t, n.GetDatasetNumBuffers(bogus))
	require.Zero(t, n.GetDatasetBuffer(io.in, 2))
	require.Zero(t, n.GetDatasetBuffer(bogus, 0))
	require.Equal(t, uintptr(2), n.GetDatasetNumBuffers(io.in))
	require.Equal(t, io.hs[1], n.GetDatasetBuffer(io.in, 1))
	// A handle of one kind is not valid as another.
	requireCode(t, acl.CodeInvalidParam, n.DestroyDataBuffer(acl.DataBufferHandle(io.in)))
	// A buffer destroyed while in a dataset fails the execution.
	require.NoError(t, n.DestroyDataBuffer(io.hs[1]))
	requireCode(t, acl.CodeInvalidParam, n.DestroyDataBuffer(io.hs[1]))
	requireCode(t, acl.CodeInvalidParam, n.Execute(id, io.in, io.out))
	// A null address with a size is not a buffer.
	nb, err := n.CreateDataBuffer(nil, 4096)
	require.NoError(t, err)
	in2, _ := newDataset(t, n, io.bufs[0])
	require.NoError(t, n.AddDatasetBuffer(in2, nb))
	requireCode(t, acl.CodeGEExecModelAddrInvalid, n.Execute(id, in2, io.out))
	// Unknown pointers and ranges running past an allocation.
	junk, err := n.CreateDataBuffer(unsafe.Pointer(uintptr(unsafe.Pointer(&io.bufs[0][0]))+1<<20), uintptr(p.inSizes()[1]))
	require.NoError(t, err)
	in3, _ := newDataset(t, n, io.bufs[0])
	require.NoError(t, n.AddDatasetBuffer(in3, junk))
	requireCode(t, acl.CodeGEExecModelAddrInvalid, n.Execute(id, in3, io.out))
	require.NoError(t, n.UpdateDataBuffer(junk, ptrOf(io.bufs[1]), 1<<20))
	requireCode(t, acl.CodeGEExecModelAddrInvalid, n.Execute(id, in3, io.out))
	freed := devBytes(t, n, p.inSizes()[1])
	require.NoError(t, n.Free(ptrOf(freed)))
	require.NoError(t, n.UpdateDataBuffer(junk, ptrOf(freed), uintptr(len(freed))))
	requireCode(t, acl.CodeGEExecModelAddrInvalid, n.ExecuteAsync(id, in3, io.out, 0))
	// An input with no memory at all fails the size rule first.
	require.NoError(t, n.UpdateDataBuffer(junk, nil, 0))
	requireCode(t, acl.CodeGEFailure, n.Execute(id, in3, io.out))
	require.NoError(t, n.Unload(id))
}

// TestModelOtherDevice: a buffer on another device is refused with
// ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID; executing from a context of
// another device with ACL_ERROR_RT_MODEL_CONTEXT (the runtime's model
// context check, hicann/runtime api_impl.cc:4413-4445).
func TestModelOtherDevice(t *testing.T) {
	n := newTestNPU(t, WithDevices(2))
	p := newMLP(t, newRand(t))
	id := loadBlob(t, n, p.blob)
	io := newMLPIO(t, n, p)
	require.NoError(t, n.SetDevice(1))
	other := devBytes(t, n, p.inSizes()[0])
	requireCode(t, acl.CodeRTModelContext, n.Execute(id, io.in, io.out))
	requireCode(t, acl.CodeRTModelContext, n.ExecuteAsync(id, io.in, io.out, 0))
	require.NoError(t, n.SetDevice(0))
	require.NoError(t, n.UpdateDataBuffer(io.hs[0], ptrOf(other), uintptr(len(other))))
	requireCode(t, acl.CodeGEExecModelAddrInvalid, n.Execute(id, io.in, io.out))
	require.NoError(t, n.Unload(id))
}

// TestModelReusePairs: with outputReuseInputMemIndexes "0,1" the output 1
// buffer must be input 0's; the model then computes x⊙x in place.
func TestModelReusePairs(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	p.model.Attrs["ge.exec.outputReuseInputMemIndexes"] = "0,1"
	blob, err := p.model.MarshalBinary()
	require.NoError(t, err)
	id := loadBlob(t, n, blob)
	io := newMLPIO(t, n, p)
	err = n.Execute(id, io.in, io.out)
	requireCode(t, acl.CodeGEFailure, err)
	require.Contains(t, err.Error(), "Output[1] address")
	require.Contains(t, err.Error(), "'0,1'")
	out2, _ := newDataset(t, n, io.bufs[2], io.bufs[0])
	x, r := p.feed(rng, io.bufs[0], io.bufs[1])
	require.NoError(t, n.Execute(id, io.in, out2))
	w0, w1 := p.ref(x, r)
	requireClose(t, w0, getF32s(io.bufs[2], p.M*p.N), "y0")
	requireClose(t, w1, getF32s(io.bufs[0], p.M*p.K), "y1 in place")
	require.NoError(t, n.Unload(id))
}

// TestModelKernelFailure: a kernel failing at run time (a Gather index out
// of range) gives ACL_ERROR_RT_AICORE_EXCEPTION from aclmdlExecute and as
// the stream's sticky error after aclmdlExecuteAsync; valid indices then
// gather the right rows.
func TestModelKernelFailure(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	const rows, cols = 10, 6
	table := getest.RandF32(rng, rows*cols)
	g := ge.NewGraph("gather")
	params := g.ConstFloat32("table", acl.Float32, []int64{rows, cols}, table)
	idx := g.Data("idx", 0, acl.Int32, []int64{3})
	g.Output(g.Gather(params, idx, 0))
	m, err := ge.Compile(g)
	require.NoError(t, err)
	blob, err := m.MarshalBinary()
	require.NoError(t, err)
	id := loadBlob(t, n, blob)
	// A model id runs with aclmdlExecute or aclmdlExecuteAsync, not both
	// (hicann/ge runtime/v1/graph/load/model_manager/davinci_model.cc:
	// 7636-7638): the asynchronous runs use a second load of the model.
	idA := loadBlob(t, n, blob)
	ib, ob := devBytes(t, n, 12), devBytes(t, n, 3*cols*4)
	in, _ := newDataset(t, n, ib)
	out, _ := newDataset(t, n, ob)
	put := func(v ...int32) {
		for i, x := range v {
			*(*int32)(unsafe.Pointer(&ib[4*i])) = x
		}
	}
	put(1, rows, 2)
	requireCode(t, acl.CodeRTAICoreException, n.Execute(id, in, out))
	s := mkStream(t, n)
	require.NoError(t, n.ExecuteAsync(idA, in, out, s))
	requireCode(t, acl.CodeRTAICoreException, n.SynchronizeStream(s))
	want := []int32{int32(rng.IntN(rows)), int32(rng.IntN(rows)), int32(rng.IntN(rows))}
	put(want...)
	require.NoError(t, n.Execute(id, in, out))
	got := getF32s(ob, 3*cols)
	for i, r := range want {
		for c := range cols {
			require.Equal(t, table[int(r)*cols+c], got[i*cols+c])
		}
	}
	require.NoError(t, n.Unload(id))
}
