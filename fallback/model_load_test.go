package fallback

import (
	"github.com/ascend-go/cann/ge/getest"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/stretchr/testify/require"
)

// TestModelDesc checks every description function against the compiled
// model.
func TestModelDesc(t *testing.T) {
	n := newTestNPU(t)
	g := ge.NewGraph("desc")
	a := g.Data("tokens", 0, acl.Int32, []int64{3, 5})
	b := g.Data("image", 1, acl.Float16, []int64{2, 3, 4}, ge.WithFormat(acl.FormatNCHW))
	g.Output(g.Cast(a, acl.Float32, ge.Name("cast")), g.Relu(b, ge.Name("act")))
	m, err := ge.Compile(g)
	require.NoError(t, err)
	blob, err := m.MarshalBinary()
	require.NoError(t, err)
	id := loadBlob(t, n, blob)
	d, err := n.CreateDesc()
	require.NoError(t, err)
	require.Zero(t, n.GetNumInputs(d), "not filled yet")
	require.NoError(t, n.GetDesc(d, id))
	require.Equal(t, uintptr(2), n.GetNumInputs(d))
	require.Equal(t, uintptr(2), n.GetNumOutputs(d))
	require.Equal(t, uintptr(3*5*4), n.GetInputSizeByIndex(d, 0))
	require.Equal(t, uintptr(2*3*4*2), n.GetInputSizeByIndex(d, 1))
	require.Equal(t, uintptr(3*5*4), n.GetOutputSizeByIndex(d, 0))
	require.Equal(t, uintptr(2*3*4*2), n.GetOutputSizeByIndex(d, 1))
	require.Equal(t, "tokens", n.GetInputNameByIndex(d, 0))
	require.Equal(t, "image", n.GetInputNameByIndex(d, 1))
	require.Equal(t, m.Outputs[1].Name, n.GetOutputNameByIndex(d, 1))
	require.Equal(t, acl.Int32, n.GetInputDataType(d, 0))
	require.Equal(t, acl.Float16, n.GetInputDataType(d, 1))
	require.Equal(t, acl.Float32, n.GetOutputDataType(d, 0))
	require.Equal(t, acl.FormatNCHW, n.GetInputFormat(d, 1))
	require.Equal(t, acl.FormatND, n.GetInputFormat(d, 0))
	require.Equal(t, m.Outputs[1].Format, n.GetOutputFormat(d, 1))
	var dims acl.IODims
	require.NoError(t, n.GetInputDims(d, 1, &dims))
	require.Equal(t, "image", dims.NameString())
	require.Equal(t, []int64{2, 3, 4}, dims.Shape())
	require.NoError(t, n.GetOutputDims(d, 0, &dims))
	require.Equal(t, []int64{3, 5}, dims.Shape())
	require.Equal(t, m.Outputs[0].Name, dims.NameString())
	i, err := n.GetInputIndexByName(d, "image")
	require.NoError(t, err)
	require.Equal(t, uintptr(1), i)
	_, err = n.GetInputIndexByName(d, "nope")
	requireCode(t, acl.CodeInvalidParam, err)

	// Bad indexes and handles.
	requireCode(t, acl.CodeInvalidParam, n.GetInputDims(d, 2, &dims))
	requireCode(t, acl.CodeInvalidParam, n.GetOutputDims(d, 0, nil))
	const bogus = 0x7ead_0000_0020
	requireCode(t, acl.CodeInvalidParam, n.GetInputDims(bogus, 0, &dims))
	require.Zero(t, n.GetInputSizeByIndex(d, 9))
	require.Zero(t, n.GetOutputSizeByIndex(bogus, 0))
	require.Empty(t, n.GetInputNameByIndex(d, 9))
	require.Empty(t, n.GetOutputNameByIndex(bogus, 0))
	require.Equal(t, acl.DTUndefined, n.GetInputDataType(d, 9))
	require.Equal(t, acl.DTUndefined, n.GetOutputDataType(bogus, 0))
	require.Equal(t, acl.FormatUndefined, n.GetInputFormat(bogus, 0))
	require.Equal(t, acl.FormatUndefined, n.GetOutputFormat(d, 9))
	_, err = n.GetInputIndexByName(bogus, "image")
	requireCode(t, acl.CodeInvalidParam, err)
	requireCode(t, acl.CodeInvalidParam, n.GetDesc(bogus, id))

	// The description outlives the model it was filled from.
	require.NoError(t, n.Unload(id))
	require.Equal(t, "tokens", n.GetInputNameByIndex(d, 0))
	require.NoError(t, n.DestroyDesc(d))
	requireCode(t, acl.CodeInvalidParam, n.DestroyDesc(d))
	require.Zero(t, n.GetNumInputs(d))
}

// TestModelConfigOpt checks aclmdlSetConfigOpt's value checks and the
// attributes LoadWithConfig requires, and loads through every supported
// load type.
func TestModelConfigOpt(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newMLP(t, rng)
	h, err := n.CreateConfigHandle()
	require.NoError(t, err)
	v := uintptr(acl.MdlLoadFromMem)
	pv := unsafe.Pointer(&v)
	requireCode(t, acl.CodeInvalidParam, n.SetConfigOpt(h, acl.MdlLoadTypeSizet, pv, 4), "value size")
	requireCode(t, acl.CodeInvalidParam, n.SetConfigOpt(h, acl.MdlLoadTypeSizet, nil, 8))
	requireCode(t, acl.CodeInvalidParam, n.SetConfigOpt(0, acl.MdlLoadTypeSizet, pv, 8))
	requireCode(t, acl.CodeInvalidParam, n.SetConfigOpt(h, 999, pv, 8))
	requireCode(t, acl.CodeInvalidParam, n.SetConfigOpt(h, -1, pv, 8))
	for _, bad := range []uintptr{0, 7, 1 << 40} {
		b := bad
		requireCode(t, acl.CodeInvalidParam, n.SetConfigOpt(h, acl.MdlLoadTypeSizet, unsafe.Pointer(&b), 8))
	}
	two := uintptr(2)
	requireCode(t, acl.CodeInvalidParam, n.SetConfigOpt(h, acl.MdlWorkspaceMemOptimize, unsafe.Pointer(&two), 8))
	prio := int32(3)
	require.NoError(t, n.SetConfigOpt(h, acl.MdlPriorityInt32, unsafe.Pointer(&prio), 4))
	requireCode(t, acl.CodeInvalidParam, n.SetConfigOpt(h, acl.MdlPriorityInt32, unsafe.Pointer(&prio), 8))
	prio = 8
	requireCode(t, acl.CodeInvalidParam, n.SetConfigOpt(h, acl.MdlPriorityInt32, unsafe.Pointer(&prio), 4))
	requireCode(t, acl.CodeFeatureUnsupported, n.SetConfigOpt(h, acl.MdlInputQNumSizet, pv, 8))

	_, err = n.LoadWithConfig(h)
	requireCode(t, acl.CodeInvalidParam, err, "no load type")
	setOpt(t, n, h, acl.MdlLoadTypeSizet, acl.MdlLoadFromMem)
	_, err = n.LoadWithConfig(h)
	requireCode(t, acl.CodeInvalidParam, err, "no model memory")
	setPtrOpt(t, n, h, acl.MdlMemAddrPtr, ptrOf(p.blob))
	setOpt(t, n, h, acl.MdlMemSizet, uintptr(len(p.blob)))
	id, err := n.LoadWithConfig(h)
	require.NoError(t, err)
	io := newMLPIO(t, n, p)
	x, r := p.feed(rng, io.bufs[0], io.bufs[1])
	require.NoError(t, n.Execute(id, io.in, io.out))
	p.check(t, x, r, io.bufs[2], io.bufs[3])
	require.NoError(t, n.Unload(id))

	setOpt(t, n, h, acl.MdlLoadTypeSizet, acl.MdlLoadFromMemWithMem)
	_, err = n.LoadWithConfig(h)
	requireCode(t, acl.CodeInvalidParam, err, "no workspace or weight memory")

	// From a file.
	path := filepath.Join(t.TempDir(), "mlp.om")
	require.NoError(t, os.WriteFile(path, p.blob, 0o600))
	cpath := append([]byte(path), 0)
	fh, err := n.CreateConfigHandle()
	require.NoError(t, err)
	setOpt(t, n, fh, acl.MdlLoadTypeSizet, acl.MdlLoadFromFile)
	_, err = n.LoadWithConfig(fh)
	requireCode(t, acl.CodeInvalidParam, err, "no path")
	setPtrOpt(t, n, fh, acl.MdlPathPtr, ptrOf(cpath))
	id, err = n.LoadWithConfig(fh)
	require.NoError(t, err)
	x, r = p.feed(rng, io.bufs[0], io.bufs[1])
	require.NoError(t, n.Execute(id, io.in, io.out))
	p.check(t, x, r, io.bufs[2], io.bufs[3])
	require.NoError(t, n.Unload(id))
	missing := append([]byte(filepath.Join(t.TempDir(), "none.om")), 0)
	setPtrOpt(t, n, fh, acl.MdlPathPtr, ptrOf(missing))
	_, err = n.LoadWithConfig(fh)
	requireCode(t, acl.CodeGEExecModelPathInvalid, err) // hicann/ge runtime/om2/om2_model_executor.cc:1721-1732
	setOpt(t, n, fh, acl.MdlLoadTypeSizet, acl.MdlLoadFromMemWithQ)
	_, err = n.LoadWithConfig(fh)
	requireCode(t, acl.CodeFeatureUnsupported, err)

	require.NoError(t, n.DestroyConfigHandle(h))
	require.NoError(t, n.DestroyConfigHandle(fh))
	requireCode(t, acl.CodeInvalidParam, n.DestroyConfigHandle(fh))
	_, err = n.LoadWithConfig(fh)
	requireCode(t, acl.CodeInvalidParam, err)
}

// TestModelLoadAllocFailure: a load the device has no memory for fails
// with ACL_ERROR_GE_MEMORY_ALLOCATION and leaves nothing allocated.
func TestModelLoadAllocFailure(t *testing.T) {
	n := newTestNPU(t)
	p := newMLP(t, newRand(t))
	before := n.Counters().LiveAllocs[0]
	for k := 1; k <= 2; k++ {
		n.FailAllocation(k, 0)
		_, err := n.LoadFromMem(ptrOf(p.blob), uintptr(len(p.blob)))
		requireCode(t, acl.CodeGEMemoryAllocation, err)
		require.Equal(t, before, n.Counters().LiveAllocs[0])
	}
	require.Empty(t, n.loadedModels())
}

// TestModelLeaks: a model left loaded is released by ResetDevice and by
// Finalize, recorded as a model leak, and its memory is freed.
func TestModelLeaks(t *testing.T) {
	n := newTestNPU(t, WithDevices(2))
	p := newMLP(t, newRand(t))
	base := n.Counters().LiveAllocs
	id0 := loadBlob(t, n, p.blob)
	require.NoError(t, n.SetDevice(1))
	id1 := loadBlob(t, n, p.blob)
	require.NoError(t, n.ResetDevice(1))
	require.Equal(t, []acl.ModelID{id0}, n.loadedModels())
	leaks := n.Leaks()
	require.Len(t, leaks, 1)
	require.Equal(t, LeakModel, leaks[0].Kind)
	require.Equal(t, uintptr(id1), leaks[0].Addr)
	require.Equal(t, int32(1), leaks[0].Device)
	require.Equal(t, "aclrtResetDevice", leaks[0].At)
	require.Contains(t, leaks[0].String(), "model")
	require.Zero(t, n.Counters().LiveAllocs[1])

	n.ClearLeaks()
	require.NoError(t, n.Finalize())
	leaks = n.Leaks()
	require.Len(t, leaks, 1, "only the model: its memory is not reported again")
	require.Equal(t, LeakModel, leaks[0].Kind)
	require.Equal(t, uintptr(id0), leaks[0].Addr)
	require.Empty(t, n.loadedModels())
	require.Equal(t, base[0], n.Counters().LiveAllocs[0])
	require.NoError(t, n.Init(""))
	require.NoError(t, n.SetDevice(0))
	requireCode(t, acl.CodeGEExecModelIDInvalid, n.Unload(id0))
}

// TestModelRandomShapes runs models of random sizes with fresh data,
// alternating device and host buffers, against the float64 reference.
func TestModelRandomShapes(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	s := mkStream(t, n)
	for range 8 {
		p := &mlp{M: 1 + rng.IntN(9), K: 1 + rng.IntN(40), N: 1 + rng.IntN(40)}
		p.W = getest.RandF32(rng, p.K*p.N)
		g := ge.NewGraph("rnd")
		x := g.Data("x", 0, acl.Float32, []int64{int64(p.M), int64(p.K)})
		r := g.Data("r", 1, acl.Float32, []int64{int64(p.M), int64(p.N)})
		w := g.ConstFloat32("w", acl.Float32, []int64{int64(p.K), int64(p.N)}, p.W)
		g.Output(g.Add(g.Relu(g.MatMul(x, w)), r), g.Mul(x, x))
		m, err := ge.Compile(g)
		require.NoError(t, err)
		p.blob, err = m.MarshalBinary()
		require.NoError(t, err)
		id := loadBlob(t, n, p.blob)
		var bufs [4][]byte
		for i, size := range append(p.inSizes(), p.outSizes()...) {
			// Device memory, exact or larger: model IO is device memory
			// (hicann/ge api/acl/acl_model/model/model.cpp:750, 777).
			bufs[i] = devBytes(t, n, size+rng.IntN(2)*rng.IntN(256))[:size]
		}
		in, _ := newDataset(t, n, bufs[0], bufs[1])
		out, _ := newDataset(t, n, bufs[2], bufs[3])
		for range 2 {
			xv, rv := p.feed(rng, bufs[0], bufs[1])
			runAsync(t, n, id, in, out, s)
			p.check(t, xv, rv, bufs[2], bufs[3])
		}
		require.NoError(t, n.Unload(id))
	}
}

// TestModelHostObjectsWithoutInit: data buffers, datasets, descriptions
// and config handles are host objects, usable without aclInit (as in C);
// loading and executing need it. After Close every call fails.
func TestModelHostObjectsWithoutInit(t *testing.T) {
	n, err := New(WithDeviceMemory(testMem), WithHostMemory(testMem))
	require.NoError(t, err)
	b, err := n.CreateDataBuffer(nil, 0)
	require.NoError(t, err)
	ds, err := n.CreateDataset()
	require.NoError(t, err)
	require.NoError(t, n.AddDatasetBuffer(ds, b))
	d, err := n.CreateDesc()
	require.NoError(t, err)
	h, err := n.CreateConfigHandle()
	require.NoError(t, err)
	p := newMLP(t, newRand(t))
	_, _, err = n.QuerySizeFromMem(ptrOf(p.blob), uintptr(len(p.blob)))
	requireCode(t, acl.CodeGEExecNotInit, err)
	requireCode(t, acl.CodeGEExecNotInit, n.GetDesc(d, 1))
	require.NoError(t, n.Close())
	_, err = n.CreateDataBuffer(nil, 0)
	requireCode(t, acl.CodeUninitialize, err)
	requireCode(t, acl.CodeUninitialize, n.DestroyDataset(ds))
	requireCode(t, acl.CodeUninitialize, n.DestroyConfigHandle(h))
	require.Zero(t, n.GetDatasetNumBuffers(ds))
}
