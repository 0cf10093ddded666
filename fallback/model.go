package fallback

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/onnx"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/ascend-go/cann/internal/zcrt"
)

var _ acl.ModelBackend = (*NPU)(nil)

// modelTable holds the model API's objects. Its maps are created on first
// use; mu guards them and the mutable fields of data buffers and datasets.
type modelTable struct {
	mu      sync.RWMutex
	models  map[acl.ModelID]*model
	nextID  acl.ModelID
	descs   map[acl.ModelDescHandle]*modelDesc
	sets    map[acl.DatasetHandle]*dataset
	bufs    map[acl.DataBufferHandle]*dataBuffer
	configs map[acl.ModelConfigHandle]*modelConfig
	dsDescs map[acl.TensorDescHandle]*dsDesc // descriptions datasets own (model_dynamic.go)
}

// initLocked creates the maps; mu must be held for writing.
func (t *modelTable) initLocked() {
	if t.models == nil {
		t.models = map[acl.ModelID]*model{}
		t.descs = map[acl.ModelDescHandle]*modelDesc{}
		t.sets = map[acl.DatasetHandle]*dataset{}
		t.bufs = map[acl.DataBufferHandle]*dataBuffer{}
		t.configs = map[acl.ModelConfigHandle]*modelConfig{}
		t.dsDescs = map[acl.TensorDescHandle]*dsDesc{}
	}
}

// model is one loaded model: its parsed form, its memory and the zero-copy
// runtime that owns the task arguments.
type model struct {
	n        *NPU
	id       acl.ModelID
	internal bool // a compiled single op (op.go): no leak report
	dev      *device
	ctx      *rtContext // the context it was loaded in, which must be current to execute it
	m        *ge.CompiledModel
	rt       *zcrt.Runtime

	work, weight         []byte // the regions as the tasks see them
	workLoc, weightLoc   loc    // their allocations, checked alive at every run
	ownWork, ownWeight   bool   // allocated by the NPU, freed at unload
	workAddr, weightAddr uintptr
	excludeIO            bool

	// mu guards the execution state: whether the model is unloaded or
	// running synchronously, and the pool of execution records.
	mu          sync.Mutex
	unloaded    bool
	syncRunning bool
	execMode    execMode // the kind of the model's first execution
	recs        []*execRec
	syncRec     *execRec

	// launchMu guards launch, the argument memory as the last execution's
	// kernels were launched with.
	launchMu sync.Mutex
	launch   []uint64
	executed atomic.Uint64 // executions run
	ioCopies atomic.Uint64 // IO copies made by executions
	scratch  [][]byte      // resolved slots of the task being launched
	kernels  []ge.Kernel   // per task, resolved at load

	// A dynamic-batch model (ge.BatchModel) has no tasks of its own: each
	// execution runs the gear its batch input selects. gears[i] (batch
	// batches[i]) is set up like a model of its own in a slice of this
	// model's memory and is never registered under an id; batchIdx is the
	// index of the acl.DynamicTensorName input.
	gears    []*model
	batches  []int64
	batchIdx int
	curBatch atomic.Int64 // the batch SetDynamicBatchSize chose last, 0 before

	// dyn is set for a model with unknown dims (model_dynamic.go): it has
	// no tasks; each execution plans and runs its shapes.
	dyn *dynModel
}

// loadSpec is what a load call asks for.
type loadSpec struct {
	blob       []byte
	withMem    bool
	work       unsafe.Pointer
	workSize   uintptr
	weight     unsafe.Pointer
	weightSize uintptr
	excludeIO  bool
}

// QuerySizeFromMem is aclmdlQuerySizeFromMem: the work size is the model's
// memory_size (feature map plus IO) and the weight size its weight region.
func (n *NPU) QuerySizeFromMem(modelPtr unsafe.Pointer, modelSize uintptr) (workSize, weightSize uintptr, err error) {
	c, err := n.begin("aclmdlQuerySizeFromMem", false)
	if err != nil {
		return 0, 0, err
	}
	defer n.exit()
	m, err := c.parseModel(modelPtr, modelSize)
	if err != nil {
		return 0, 0, err
	}
	return uintptr(m.MemorySize), uintptr(m.WeightSize), nil
}

// LoadFromMem is aclmdlLoadFromMem: the NPU allocates the model's work and
// weight memory on the current device.
func (n *NPU) LoadFromMem(modelPtr unsafe.Pointer, modelSize uintptr) (acl.ModelID, error) {
	c, err := n.begin("aclmdlLoadFromMem", true)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	blob, err := c.modelBytes(modelPtr, modelSize)
	if err != nil {
		return 0, err
	}
	return c.load(loadSpec{blob: blob})
}

// LoadFromMemWithMem is aclmdlLoadFromMemWithMem: the model runs in work
// and weight memory the caller owns, which must be device memory of the
// current device, hold the feature map (memory_size - zero_copy_size, as
// GE's InitFeatureMapAndP2PMem) and the weight size, and not overlap. Work
// memory shorter than memory_size holds no IO blocks: every IO is then a
// device buffer of the caller.
func (n *NPU) LoadFromMemWithMem(modelPtr unsafe.Pointer, modelSize uintptr, work unsafe.Pointer, workSize uintptr, weight unsafe.Pointer, weightSize uintptr) (acl.ModelID, error) {
	c, err := n.begin("aclmdlLoadFromMemWithMem", true)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	blob, err := c.modelBytes(modelPtr, modelSize)
	if err != nil {
		return 0, err
	}
	return c.load(loadSpec{blob: blob, withMem: true, work: work, workSize: workSize, weight: weight, weightSize: weightSize})
}

func (c *call) modelBytes(p unsafe.Pointer, size uintptr) ([]byte, error) {
	if p == nil {
		return nil, c.fail(acl.CodeInvalidParam, "null model data")
	}
	if size == 0 {
		return nil, c.fail(acl.CodeInvalidParam, "model size is 0")
	}
	return unsafe.Slice((*byte)(p), size), nil
}

// parseModel parses model bytes; a corrupt model gives ge.ParseModel's
// code, reported under this call's name.
func (c *call) parseModel(p unsafe.Pointer, size uintptr) (*ge.CompiledModel, error) {
	blob, err := c.modelBytes(p, size)
	if err != nil {
		return nil, err
	}
	m, _, _, err := c.parse(blob)
	return m, err
}

// omMagic opens every offline model ATC writes: ModelFileHeader.magic is
// MODEL_FILE_MAGIC_NUM = 0x444F4D49 (CANN GE, inc/framework/common/types.h),
// stored little-endian.
var omMagic = []byte("IMOD")

// parse accepts the two model formats the fallback runs: ge's own
// (ge.ModelMagic) and ONNX, which it imports and compiles as ATC would. An
// offline model built by ATC holds device kernels the fallback cannot run;
// it gets an error saying so.
//
// A model that does not parse gets the code GE returns, not the one it
// logs (parseCode): ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID for fewer
// than 4 bytes on every call, and for a load of bytes shorter than the
// format's header; ACL_ERROR_GE_PARAM_INVALID for anything else.
//
// A dynamic-batch model (ge.BatchModelMagic) comes back as its gears and
// a CompiledModel without tasks that describes it: the IO a device
// reports, and memory and weight sizes that hold every gear side by side.
// An ONNX model whose shapes only a run fixes comes back as a dynModel and
// a CompiledModel without tasks describing its IO with -1 dims
// (model_dynamic.go). A refused ONNX model's error keeps the *onnx.Error
// (acl.Error.Cause), so errors.As and errors.Is reach it.
func (c *call) parse(blob []byte) (*ge.CompiledModel, *ge.BatchModel, *dynModel, error) {
	if len(blob) < om2MagicSize {
		// ACL asks whether the bytes are an om2 model before any loader
		// sees them; fewer bytes than its magic are refused there
		// (hicann/ge runtime/om2/om2_model_executor.cc:1698-1706).
		return nil, nil, nil, c.fail(acl.CodeGEExecModelDataSizeInvalid,
			"model data size %d must be greater than or equal to %d", len(blob), om2MagicSize)
	}
	switch {
	case bytes.HasPrefix(blob, []byte(ge.ModelMagic)):
	case bytes.HasPrefix(blob, []byte(ge.BatchModelMagic)):
		bm, err := ge.ParseBatchModel(blob)
		if err != nil {
			return nil, nil, nil, c.fail(c.parseCode(err, len(blob) < batchHeaderSize), "cannot parse the dynamic-batch model: %v", err)
		}
		m := &ge.CompiledModel{Name: bm.Gears[0].Model.Name, Inputs: bm.Inputs(), Outputs: bm.Outputs()}
		for _, g := range bm.Gears {
			m.MemorySize += g.Model.MemorySize
			m.ZeroCopySize += g.Model.ZeroCopySize
			m.WeightSize += g.Model.WeightSize
		}
		return m, bm, nil, nil
	case bytes.HasPrefix(blob, omMagic):
		return nil, nil, nil, c.fail(acl.CodeGEParamInvalid, "this is an offline model (.om, built by ATC for the device): "+
			"the fallback cannot run its device kernels; load the ONNX model it was built from (or a ge model) instead")
	case onnx.LooksLikeONNX(blob):
		m, dm, err := c.loadONNX(blob)
		return m, nil, dm, err
	}
	m, err := ge.ParseModel(blob)
	if err != nil {
		if looksLikeTruncatedONNX(blob) {
			// Neither format: bytes that start as an ONNX model but do not
			// decode (a truncated .onnx file) get the importer's refusal.
			if _, oerr := onnx.Compile(blob); oerr != nil {
				return nil, nil, nil, c.failCause(acl.CodeOf(oerr), oerr, "cannot import the ONNX model: %v", oerr)
			}
		}
		return nil, nil, nil, c.fail(c.parseCode(err, len(blob) < ge.HeaderSize), "cannot parse the model: %v", err)
	}
	return m, nil, nil, nil
}

// om2MagicSize is FILE_MAGIC_HEADER_SIZE, the om2 magic ACL compares
// before any loader runs (hicann/ge runtime/om2/om2_model_executor.cc:
// 1698-1706).
const om2MagicSize = 4

// batchHeaderSize is the header of a dynamic-batch model (ge/batch.go:
// magic, version, gear count).
const batchHeaderSize = 16

// parseCode is the error for model bytes of at least om2MagicSize that do
// not parse; short says they do not hold the format's header. GE logs
// ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID for a bad magic or a header
// length that disagrees with the data (base/common/helper/
// model_parser_base.cc:120-129) but its callers return
// ACL_ERROR_GE_PARAM_INVALID: the loads (ModelHelper::LoadRootModel,
// model_helper.cc:1267-1270, the path of ModelManager::LoadModelOffline,
// model_manager.cc:1499) and the size query (model_manager.cc:2364-2367,
// which also covers bytes shorter than the header). Only a load of bytes
// shorter than the header keeps 145006: LoadRootModel checks the length
// first (GetModelFileHead, model_helper.cc:1158-1166).
func (c *call) parseCode(err error, short bool) acl.Code {
	if short && acl.CodeOf(err) == acl.CodeInvalidFileSize && c.op != "aclmdlQuerySizeFromMem" {
		return acl.CodeGEExecModelDataSizeInvalid
	}
	return acl.CodeGEParamInvalid
}

// execMode is the kind of a model's executions: GE fixes it at the first
// one and refuses the other kind afterwards ("NnExecute not support mix
// execute", hicann/ge runtime/v1/graph/load/model_manager/
// davinci_model.cc:7636-7638: INTERNAL_ERROR, which ACL returns as
// ACL_ERROR_GE_FAILURE, api/acl/common/error_codes_inner.h:24-28).
type execMode uint8

const (
	execNone execMode = iota
	execSync
	execAsync
)

// checkMode refuses an execution of the other kind than the model's
// first; md.mu held.
func (c *call) checkMode(md *model, want execMode) error {
	return c.modeConflict(md.id, md.execMode, want)
}

// modeConflict refuses an execution of kind want of model id, whose
// executions so far were of kind have.
func (c *call) modeConflict(id acl.ModelID, have, want execMode) error {
	if have != execNone && have != want {
		return c.fail(acl.CodeGEFailure, "model %d: NnExecute not support mix execute: it ran with %s before, so %s is refused", id, modeCall(have), c.op)
	}
	return nil
}

func modeCall(m execMode) string {
	if m == execSync {
		return "aclmdlExecute"
	}
	return "aclmdlExecuteAsync"
}

// load parses the model, sets up its memory and its zero-copy runtime and
// registers it under a new id.
func (c *call) load(s loadSpec) (acl.ModelID, error) {
	m, bm, dm, err := c.parse(s.blob)
	if err != nil {
		return 0, err
	}
	n := c.n
	md := &model{n: n, m: m, dev: c.ctx.dev, ctx: c.ctx, excludeIO: s.excludeIO, dyn: dm}
	need := uintptr(m.MemorySize)
	if s.excludeIO {
		need = uintptr(m.FeatureMapSize())
	}
	if s.withMem {
		if err := c.userRegion(md, "work", s.work, s.workSize, &md.workLoc); err != nil {
			return 0, err
		}
		if err := c.userRegion(md, "weight", s.weight, s.weightSize, &md.weightLoc); err != nil {
			return 0, err
		}
		if s.work != nil && s.weight != nil && uintptr(s.work) < uintptr(s.weight)+s.weightSize && uintptr(s.weight) < uintptr(s.work)+s.workSize {
			return 0, c.fail(acl.CodeGEParamInvalid, "work memory 0x%x (%d bytes) and weight memory 0x%x (%d bytes) overlap",
				uintptr(s.work), s.workSize, uintptr(s.weight), s.weightSize)
		}
		md.work, md.weight = regionBytes(s.work, s.workSize), regionBytes(s.weight, s.weightSize)
	} else {
		s.workSize, s.weightSize = need, uintptr(m.WeightSize)
		if err := c.ownRegion(md, need, &md.work, &md.workLoc, &md.ownWork); err != nil {
			return 0, err
		}
		if err := c.ownRegion(md, s.weightSize, &md.weight, &md.weightLoc, &md.ownWeight); err != nil {
			md.release(n)
			return 0, err
		}
	}
	md.workAddr, md.weightAddr = sliceAddr(md.work), sliceAddr(md.weight)
	switch {
	case dm != nil: // runs plan their own memory
	case bm != nil:
		err = c.setupGears(md, bm)
	default:
		err = c.setupRuntime(md)
	}
	if err != nil {
		md.release(n)
		return 0, err
	}

	t := &n.models
	t.mu.Lock()
	t.initLocked()
	t.nextID++
	md.id = t.nextID
	for _, g := range md.gears {
		g.id = md.id
	}
	t.models[md.id] = md
	t.mu.Unlock()
	return md.id, nil
}

// setupGears sets every gear of a dynamic-batch model up in its slice of
// md's work and weight memory, side by side in gear order.
func (c *call) setupGears(md *model, bm *ge.BatchModel) error {
	// Caller memory shorter than every gear's memory_size holds the
	// feature maps only (as for a single model): each gear then gets its
	// feature map and every IO must be a device buffer.
	fmOnly := md.excludeIO || int64(len(md.work)) < md.m.MemorySize
	need := md.m.MemorySize
	if fmOnly {
		need = md.m.FeatureMapSize()
	}
	if int64(len(md.work)) < need || int64(len(md.weight)) < md.m.WeightSize {
		return c.fail(acl.CodeGEParamInvalid, "model %q: work memory of %d bytes and weight memory of %d bytes are less than the %d and %d bytes its %d batch gears need",
			md.m.Name, len(md.work), len(md.weight), need, md.m.WeightSize, len(bm.Gears))
	}
	var work, weight int
	for _, g := range bm.Gears {
		need := int(g.Model.MemorySize)
		if fmOnly {
			need = int(g.Model.FeatureMapSize())
		}
		ws := int(g.Model.WeightSize)
		gm := &model{n: md.n, m: g.Model, dev: md.dev, ctx: md.ctx, excludeIO: md.excludeIO,
			work: md.work[work : work+need : work+need], weight: md.weight[weight : weight+ws : weight+ws],
			workLoc: md.workLoc, weightLoc: md.weightLoc}
		gm.workAddr, gm.weightAddr = sliceAddr(gm.work), sliceAddr(gm.weight)
		if err := c.setupRuntime(gm); err != nil {
			return err
		}
		work, weight = work+need, weight+ws
		md.gears = append(md.gears, gm)
		md.batches = append(md.batches, g.Batch)
		md.batchIdx = len(md.m.Inputs) - 1
	}
	return nil
}

// setupRuntime builds the zero-copy runtime of a model whose memory is
// set, copies its weights in and resolves its kernels.
func (c *call) setupRuntime(md *model) error {
	n, m := c.n, md.m
	var err error
	md.rt, err = zcrt.New(m, zcrt.Config{
		Op:       c.op,
		WorkBase: md.workAddr, WorkSize: uintptr(len(md.work)),
		WeightBase: md.weightAddr, WeightSize: uintptr(len(md.weight)),
		ExcludeIO: md.excludeIO,
	})
	if err != nil {
		if e, ok := err.(*acl.Error); ok {
			return c.fail(e.Code, "%s", e.Msg)
		}
		return err
	}
	if len(m.Weights) > 0 {
		copy(md.weight, m.Weights)
		n.ctr.copied(HostToDevice, uint64(len(m.Weights)))
	}
	md.kernels = make([]ge.Kernel, len(m.Tasks))
	for i := range m.Tasks {
		if md.kernels[i] = md.kernelFor(&m.Tasks[i]); md.kernels[i] == nil {
			return c.fail(acl.CodeFeatureUnsupported, "model %q task %d (%q): op %s has no kernel", m.Name, i, m.Tasks[i].Name, m.Tasks[i].Op)
		}
	}
	md.launch = make([]uint64, len(md.rt.Args()))
	maxArgs := 0
	for i := range m.Tasks {
		maxArgs = max(maxArgs, len(m.Tasks[i].Args))
	}
	md.scratch = make([][]byte, maxArgs)
	md.syncRec = newExecRec(md)
	return nil
}

// userRegion checks caller memory for a load: null is allowed only for an
// empty region; otherwise it must lie inside one live allocation of the
// current device.
func (c *call) userRegion(md *model, role string, p unsafe.Pointer, size uintptr, l *loc) error {
	if p == nil {
		if size != 0 {
			return c.fail(acl.CodeGEParamInvalid, "null %s memory with size %d", role, size)
		}
		return nil
	}
	if size == 0 {
		return c.fail(acl.CodeGEParamInvalid, "%s memory 0x%x has size 0", role, uintptr(p))
	}
	addr := uintptr(p)
	got := c.n.locate(addr)
	switch {
	case got.Place != npuhook.PlaceDevice:
		return c.fail(acl.CodeGEParamInvalid, "%s memory 0x%x must be device memory of device %d, but it is %s", role, addr, md.dev.id, c.n.describe(addr))
	case got.Device != md.dev.id:
		return c.fail(acl.CodeGEParamInvalid, "%s memory 0x%x is on device %d, but the current context is on device %d", role, addr, got.Device, md.dev.id)
	case addr+size < addr || addr+size > got.Base+got.Size:
		return c.fail(acl.CodeGEParamInvalid, "%s memory 0x%x+%d runs past the end of its allocation 0x%x (%d bytes)", role, addr, size, got.Base, got.Size)
	}
	*l = got
	return nil
}

// ownRegion allocates size bytes of the current device for a model load.
func (c *call) ownRegion(md *model, size uintptr, b *[]byte, l *loc, own *bool) error {
	if size == 0 {
		return nil
	}
	p, err := c.allocate(md.dev.arena, size, callers())
	if err != nil {
		return c.fail(acl.CodeGEMemoryAllocation, "model %q: %v", md.m.Name, err)
	}
	*l = c.n.locate(uintptr(p))
	*b = unsafe.Slice((*byte)(p), size)
	*own = true
	return nil
}

func regionBytes(p unsafe.Pointer, size uintptr) []byte {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(p), size)
}

func sliceAddr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

// Unload is aclmdlUnload. Executions still queued are waited for (bounded
// by Close); the model's own memory is freed. An id that is not loaded
// (never, or already unloaded) gives ACL_ERROR_GE_EXEC_MODEL_ID_INVALID.
func (n *NPU) Unload(id acl.ModelID) error {
	c, err := n.begin("aclmdlUnload", true)
	if err != nil {
		return err
	}
	defer n.exit()
	t := &n.models
	t.mu.Lock()
	md := t.models[id]
	if md != nil {
		delete(t.models, id)
	}
	t.mu.Unlock()
	if md == nil {
		return c.fail(acl.CodeGEExecModelIDInvalid, "model id %d is not loaded (never loaded, or already unloaded)", id)
	}
	md.retire()
	for _, x := range md.parts() {
		if !x.drain(n) {
			return c.closedErr()
		}
	}
	md.release(n)
	return nil
}

// parts is the model and its gears: what executes.
func (md *model) parts() []*model {
	return append([]*model{md}, md.gears...)
}

// retire marks the model and its gears unloaded: no execution starts.
func (md *model) retire() {
	for _, x := range md.parts() {
		x.mu.Lock()
		x.unloaded = true
		x.mu.Unlock()
	}
}

// drain waits until no execution of the model is queued or running. It
// reports false if the NPU closed first.
func (md *model) drain(n *NPU) bool {
	for {
		md.mu.Lock()
		var wait *execRec
		for _, r := range md.recs {
			if r.inUse() {
				wait = r
				break
			}
		}
		running := md.syncRunning
		md.mu.Unlock()
		switch {
		case wait != nil:
			if !wait.wait(n) {
				return false
			}
		case running:
			select {
			case <-n.done:
				return false
			case <-time.After(50 * time.Microsecond):
			}
		default:
			return true
		}
	}
}

// release frees the memory the NPU allocated for the model (counted as
// frees, as the device frees it).
func (md *model) release(n *NPU) {
	for _, r := range [...]struct {
		own bool
		l   *loc
	}{{md.ownWork, &md.workLoc}, {md.ownWeight, &md.weightLoc}} {
		if r.own && r.l.al != nil && !r.l.al.freed.Load() && r.l.arena.releaseAt(r.l.al.addr) != nil {
			n.ctr.frees.Add(1)
		}
	}
}

// releaseModels unloads every model of device dev (all devices for -1),
// recording each as a leak; ResetDevice, Finalize and Close call it after
// the streams have drained.
func (n *NPU) releaseModels(dev int32, at string) {
	t := &n.models
	t.mu.Lock()
	var gone []*model
	for id, md := range t.models {
		if dev < 0 || md.dev.id == dev {
			gone = append(gone, md)
			delete(t.models, id)
		}
	}
	t.mu.Unlock()
	n.dropOps(dev)
	for _, md := range gone {
		md.retire()
		// Streams have drained; a synchronous Execute on another thread
		// may still be running.
		for _, x := range md.parts() {
			x.drain(n)
		}
		md.release(n)
		if md.internal {
			continue // a compiled single op, not the program's model
		}
		n.recordLeak(Leak{Kind: LeakModel, Device: md.dev.id, Addr: uintptr(md.id), Size: uintptr(len(md.work) + len(md.weight)), Where: "model " + md.m.Name, At: at})
	}
}

// lookupModel returns a loaded model.
func (c *call) lookupModel(id acl.ModelID) (*model, error) {
	t := &c.n.models
	t.mu.RLock()
	md := t.models[id]
	t.mu.RUnlock()
	if md == nil {
		return nil, c.fail(acl.CodeGEExecModelIDInvalid, "model id %d is not loaded (never loaded, or already unloaded)", id)
	}
	return md, nil
}
