package fallback

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/ascend-go/cann/internal/zcrt"
)

// execRec is one execution request: the caller's buffers as classified at
// call time and the binding Prepare decided. Records are pooled per model
// and reused, so the steady state of ExecuteAsync allocates nothing.
type execRec struct {
	md  *model
	e   zcrt.Exec
	ub  []zcrt.UserBuffer   // inputs then outputs
	mem []ioMem             // the same order: pointer and allocation
	run func(*stream) error // built once: the stream task

	// Guarded by model.mu: where the request was queued. The stream's
	// completion count covers a task skipped after a stream failure.
	queued bool
	s      *stream
	seq    uint64
	done   atomic.Bool // set when the task has run
}

// ioMem is one caller buffer: its pointer (kept as a pointer so the memory
// stays reachable for the checker) and its classification.
type ioMem struct {
	ptr unsafe.Pointer
	l   loc
}

// bind returns the binding of buffer i (inputs first, then outputs).
func (r *execRec) bind(i int) *zcrt.IOBind {
	if i < len(r.e.In) {
		return &r.e.In[i]
	}
	return &r.e.Out[i-len(r.e.In)]
}

func newExecRec(md *model) *execRec {
	r := &execRec{md: md}
	r.run = func(s *stream) error {
		defer r.done.Store(true)
		return md.execute(r, s)
	}
	return r
}

// inUse reports whether the request is queued and not finished; model.mu
// held.
func (r *execRec) inUse() bool {
	if !r.queued || r.done.Load() {
		return false
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.s.completed < r.seq
}

// wait blocks until the request's stream task completed; false if the NPU
// closed first.
func (r *execRec) wait(n *NPU) bool {
	if r.done.Load() {
		return true
	}
	return r.s.waitFor(r.seq, nil, nil, false) == waitDone
}

// ExecuteAsync is aclmdlExecuteAsync: the buffers are checked now (GE's
// rules, see zcrt.Runtime.Prepare), the execution runs when stream s
// reaches it. Executions of one model queued on one stream run in order;
// one queued on another stream while an earlier one has not finished, or
// while Execute runs, is refused with ACL_ERROR_RT_MODEL_EXECUTE (the
// model's resources are single: "must not run concurrently").
func (n *NPU) ExecuteAsync(id acl.ModelID, in, out acl.DatasetHandle, s acl.StreamHandle) error {
	c, err := n.begin("aclmdlExecuteAsync", true)
	if err != nil {
		return err
	}
	defer n.exit()
	md, err := c.lookupModel(id)
	if err != nil {
		return err
	}
	st, err := c.stream(s)
	if err != nil {
		return err
	}
	if md.dyn != nil {
		return c.executeDynamic(md, in, out, st)
	}
	skip := -1
	if md.gears != nil {
		if md, err = c.gearFor(md, in, out, st); err != nil {
			return err
		}
		skip = len(md.m.Inputs) // the batch input is the last
	}
	md.mu.Lock()
	defer md.mu.Unlock()
	if md.unloaded {
		return c.fail(acl.CodeGEExecModelIDInvalid, "model id %d was unloaded", id)
	}
	if err := c.checkMode(md, execAsync); err != nil {
		return err
	}
	if md.syncRunning {
		return c.fail(acl.CodeRTModelExecute, "model %d is executing (aclmdlExecute on another thread); one model id must not run concurrently", id)
	}
	var rec *execRec
	for _, r := range md.recs {
		if r.inUse() {
			if r.s != st {
				return c.fail(acl.CodeRTModelExecute, "model %d is still executing on stream 0x%x; one model id must not run concurrently on several streams (synchronize that stream first)", id, uintptr(r.s.h))
			}
		} else if rec == nil {
			rec = r
		}
	}
	if rec == nil {
		rec = newExecRec(md)
		md.recs = append(md.recs, rec)
	}
	if err := c.prepare(md, rec, in, out, skip, true); err != nil {
		return err
	}
	if err := c.sameContext(md); err != nil {
		return err
	}
	md.execMode = execAsync
	rec.s, rec.queued = st, true
	rec.done.Store(false)
	if err := c.enqueue(st, true, false, rec.run); err != nil {
		rec.queued = false
		return err
	}
	st.mu.Lock()
	rec.seq = st.submitted // this task's position or later: safe for inUse
	st.mu.Unlock()
	return nil
}

// Execute is aclmdlExecute: the execution runs on the calling goroutine
// and returns when it is done. It is refused with ACL_ERROR_RT_MODEL_EXECUTE
// while another execution of the model is queued or running.
func (n *NPU) Execute(id acl.ModelID, in, out acl.DatasetHandle) error {
	c, err := n.begin("aclmdlExecute", true)
	if err != nil {
		return err
	}
	defer n.exit()
	md, err := c.lookupModel(id)
	if err != nil {
		return err
	}
	if md.dyn != nil {
		return c.executeDynamic(md, in, out, nil)
	}
	skip := -1
	if md.gears != nil {
		if md, err = c.gearFor(md, in, out, nil); err != nil {
			return err
		}
		skip = len(md.m.Inputs)
	}
	md.mu.Lock()
	if md.unloaded {
		md.mu.Unlock()
		return c.fail(acl.CodeGEExecModelIDInvalid, "model id %d was unloaded", id)
	}
	if err := c.checkMode(md, execSync); err != nil {
		md.mu.Unlock()
		return err
	}
	busy := md.syncRunning
	for _, r := range md.recs {
		busy = busy || r.inUse()
	}
	if busy {
		md.mu.Unlock()
		return c.fail(acl.CodeRTModelExecute, "model %d is already executing; one model id must not run concurrently", id)
	}
	rec := md.syncRec
	if err := c.prepare(md, rec, in, out, skip, false); err != nil {
		md.mu.Unlock()
		return err
	}
	if err := c.sameContext(md); err != nil {
		md.mu.Unlock()
		return err
	}
	md.execMode = execSync
	md.syncRunning = true
	md.mu.Unlock()
	err = md.execute(rec, nil)
	md.mu.Lock()
	md.syncRunning = false
	md.mu.Unlock()
	if e, ok := err.(*acl.Error); ok {
		return c.fail(e.Code, "%s", e.Msg)
	}
	return err
}

// sameContext requires the current context to be the one the model was
// loaded in. GE checks nothing itself; its execution ends in
// aclmdlRIExecute/aclmdlRIExecuteAsync (hicann/ge davinci_model.cc:
// 7752-7765), after the IO checks, and the runtime refuses a model of
// another context there (hicann/runtime src/runtime/api/impl/api_impl.cc:
// 4413-4445, COND_RETURN_AND_MSG_INVALID_CONTEXT_MODEL_WITH_FUNC_DESC,
// src/runtime/core/inc/common/error_message_manage.hpp:328-334) with
// RT_ERROR_MODEL_CONTEXT → ACL_ERROR_RT_MODEL_CONTEXT (errcode_manage.cc:
// 178), which GE returns as is (davinci_model.cc:7765,
// error_codes_inner.h:24-28). Another context of the same device is
// refused like one of another device.
func (c *call) sameContext(md *model) error {
	if c.ctx != md.ctx {
		return c.fail(acl.CodeRTModelContext, "model %d was loaded in context 0x%x (device %d), but the current context of OS thread %d is 0x%x (device %d); load, execute and unload a model in one context",
			md.id, uintptr(md.ctx.h), md.dev.id, c.tid, uintptr(c.ctx.h), c.ctx.dev.id)
	}
	return nil
}

// prepare reads the datasets, classifies every buffer and lets the
// zero-copy runtime decide the binding; model.mu held.
func (c *call) prepare(md *model, rec *execRec, in, out acl.DatasetHandle, skip int, async bool) error {
	badAddr, err := c.gather(md, rec, in, out, skip, async)
	if err != nil {
		return err
	}
	nin := len(md.m.Inputs)
	if err := md.rt.Prepare(c.op, rec.ub[:nin], rec.ub[nin:], &rec.e); err != nil {
		e := err.(*acl.Error)
		return c.fail(e.Code, "%s", e.Msg)
	}
	if badAddr != nil {
		// Reported after the size rule, as GE checks sizes first.
		return c.fail(badAddr.Code, "%s", badAddr.Msg)
	}
	if err := c.checkExtents(md, rec); err != nil {
		return err
	}
	if c.n.cfg.pedantic {
		return c.pedanticHostCopies(rec, async)
	}
	return nil
}

// pedanticHostCopies refuses, under WithPedantic, a copied IO in host
// memory that the device copies only because it tolerates a wrong kind:
// GE asks for ACL_MEMCPY_DEVICE_TO_DEVICE (the ACL layer passes every
// buffer as device memory), which a synchronous copy ignores and an
// asynchronous one corrects for pinned memory. Plain memory copied
// asynchronously is not tolerated but faults, as without the option.
func (c *call) pedanticHostCopies(rec *execRec, async bool) error {
	nin := len(rec.e.In)
	for i := range rec.mem {
		b, p := rec.bind(i), rec.mem[i].l.Place
		if !b.Copy || !isHostPlace(p) || (async && p == npuhook.PlaceHost) {
			continue
		}
		role, k := "input", i
		if i >= nin {
			role, k = "output", i-nin
		}
		device := "the device's synchronous copy goes by where the pointers live"
		if async {
			dir := "D2H"
			if role == "input" {
				dir = "H2D"
			}
			device = "the device would have corrected the kind of its asynchronous copy to " + dir
		}
		return c.pedantic(c.fail(acl.CodeRTInvalidMemoryType,
			"%s %d (0x%x) is host memory that GE copies with ACL_MEMCPY_DEVICE_TO_DEVICE: the ACL layer passes every model IO as device memory (hicann/ge api/acl/acl_model/model/model.cpp:750, 777)",
			role, k, b.Addr), device)
	}
	return nil
}

// gather copies the datasets' buffers into rec, classified. For
// aclmdlExecute an output buffer with a null address and size 0 gets
// device memory of the output's size, which the caller frees (as
// aclmdlExecute documents); aclmdlExecuteAsync allocates nothing (hicann/ge
// api/acl/acl_model/model/model.cpp:781, !basync), so there the empty
// buffer meets the size rule and the null-address check as any other. The
// first buffer whose address is unusable is returned as badAddr, for the
// caller to report after the size checks. Input skip (-1: none) is left
// out: a dynamic-batch model's batch input, which its gear does not have.
func (c *call) gather(md *model, rec *execRec, in, out acl.DatasetHandle, skip int, async bool) (badAddr *acl.Error, err error) {
	t := &c.n.models
	for pass := 0; ; pass++ {
		badAddr = nil
		t.mu.RLock()
		ins, outs := t.sets[in], t.sets[out]
		switch {
		case ins == nil:
			t.mu.RUnlock()
			return nil, c.badHandle("input dataset", uintptr(in))
		case outs == nil:
			t.mu.RUnlock()
			return nil, c.badHandle("output dataset", uintptr(out))
		}
		nin := len(ins.bufs)
		if skip >= 0 && skip < nin {
			nin--
		}
		if err := zcrt.CheckIOCount(c.op, md.m, nin, len(outs.bufs)); err != nil {
			t.mu.RUnlock()
			e := err.(*acl.Error)
			return nil, c.fail(e.Code, "%s", e.Msg)
		}
		total := nin + len(outs.bufs)
		if cap(rec.ub) < total {
			rec.ub = make([]zcrt.UserBuffer, total)
			rec.mem = make([]ioMem, total)
		}
		rec.ub, rec.mem = rec.ub[:total], rec.mem[:total]
		needAlloc := false
		for i := range total {
			h, role := acl.DataBufferHandle(0), "input"
			switch {
			case i < nin && skip >= 0 && i >= skip:
				h = ins.bufs[i+1]
			case i < nin:
				h = ins.bufs[i]
			default:
				h, role = outs.bufs[i-nin], "output"
			}
			b := t.bufs[h]
			if b == nil {
				t.mu.RUnlock()
				return nil, c.fail(acl.CodeInvalidParam, "%s data buffer 0x%x (dataset entry %d) is unknown or destroyed", role, uintptr(h), i)
			}
			if b.data == nil && b.size == 0 && role == "output" && !async {
				needAlloc = true
				continue
			}
			if err := c.classifyIO(md, role, b.data, b.size, &rec.ub[i], &rec.mem[i]); err != nil && badAddr == nil {
				badAddr = err.(*acl.Error)
			}
		}
		nouts := outs.bufs
		t.mu.RUnlock()
		if !needAlloc {
			return badAddr, nil
		}
		if pass > 0 {
			return nil, c.fail(acl.CodeInvalidParam, "output data buffers changed while being allocated")
		}
		if err := c.allocOutputs(md, nouts); err != nil {
			return nil, err
		}
	}
}

// allocOutputs gives every empty output buffer device memory of the
// output's size.
func (c *call) allocOutputs(md *model, bufs []acl.DataBufferHandle) error {
	t := &c.n.models
	t.mu.Lock()
	defer t.mu.Unlock()
	for j, h := range bufs {
		b := t.bufs[h]
		if b == nil || b.data != nil || b.size != 0 || j >= len(md.m.Outputs) {
			continue
		}
		size := uintptr(md.m.Outputs[j].Size)
		p, err := c.allocate(md.dev.arena, size, callers())
		if err != nil {
			return err
		}
		b.data, b.size = p, size
	}
	return nil
}

// classifyIO checks a caller buffer and records where it lives. A pointer
// outside every live allocation (unknown, freed, running past its end) and
// another device's memory give ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID. Every
// other buffer is handed to the zero-copy runtime as device memory, as the
// ACL layer does (hicann/ge api/acl/acl_model/model/model.cpp:750, 777 set
// kPlacementDevice on every blob), so GE never takes its host-placement
// paths (davinci_model.cc:6743-6760, 6856-6900) on this API: a host buffer
// is bound in place or copied with a device-to-device copy, and what that
// does is decided when the execution runs (execute, resolve).
func (c *call) classifyIO(md *model, role string, p unsafe.Pointer, size uintptr, ub *zcrt.UserBuffer, m *ioMem) error {
	*m = ioMem{ptr: p}
	*ub = zcrt.UserBuffer{Addr: uintptr(p), Size: size}
	if p == nil {
		return nil // Prepare reports the null address
	}
	l, err := c.checkRange(role, p, max(size, 1))
	if err != nil {
		return c.fail(acl.CodeGEExecModelAddrInvalid, "%s buffer: %s", role, err.(*acl.Error).Msg)
	}
	m.l = l
	switch l.Place {
	case npuhook.PlaceDevice:
		if l.Device != md.dev.id {
			return c.fail(acl.CodeGEExecModelAddrInvalid, "%s buffer 0x%x is device %d memory, but model %d runs on device %d", role, uintptr(p), l.Device, md.id, md.dev.id)
		}
	}
	ub.Place = zcrt.PlaceDevice
	return nil
}

// checkExtents verifies that a buffer addressed in place has the bytes the
// tasks touch: a buffer up to 64 bytes short of its tensor relies on the
// allocation's padding (device blocks are 512-byte granular), which an
// interior pointer or a registration may not have.
func (c *call) checkExtents(md *model, rec *execRec) error {
	for i := range rec.mem {
		b := rec.bind(i)
		if b.Target != b.Addr || b.Extent <= b.Size {
			continue
		}
		l := &rec.mem[i].l
		limit := l.Base + l.Size
		if l.Place == npuhook.PlaceDevice {
			limit = l.Base + roundUp(l.Size)
		}
		if b.Addr+b.Extent > limit {
			return c.fail(acl.CodeGEParamInvalid, "buffer 0x%x of %d bytes is %d bytes short of its %d-byte tensor, and the bytes after it are outside its allocation",
				b.Addr, b.Size, b.Extent-b.Size, b.Extent)
		}
	}
	return nil
}

// execute runs one prepared execution: refresh the changed argument
// slots, copy the copied inputs in, launch every task on the memory its
// slots address, copy the copied outputs out. s is the stream it runs on
// (nil for a synchronous execute), for the device profile.
func (md *model) execute(rec *execRec, s *stream) error {
	n := md.n
	for _, l := range [...]*loc{&md.workLoc, &md.weightLoc} {
		if err := l.alive("model memory"); err != nil {
			return err
		}
	}
	for i := range rec.mem {
		if err := rec.mem[i].l.alive("IO buffer"); err != nil {
			return err
		}
	}
	md.rt.Apply(&rec.e)
	md.launchMu.Lock()
	copy(md.launch, md.rt.Args())
	md.launchMu.Unlock()

	nin := len(rec.e.In)
	if s != nil {
		if err := md.checkAsyncCopies(rec); err != nil {
			return err
		}
	}
	for i := range rec.e.In {
		if b := &rec.e.In[i]; b.Copy {
			md.copyIO(n, md.work[b.Target-md.workAddr:][:b.CopyLen], unsafe.Slice((*byte)(rec.mem[i].ptr), b.CopyLen), rec.mem[i].l.Place, true)
		}
	}
	tasks := md.m.Tasks
	for ti := range tasks {
		t := &tasks[ti]
		args := md.rt.TaskArgs(ti)
		for ai, a := range args {
			b, err := md.resolve(rec, a, uintptr(t.Args[ai].Size))
			if err != nil {
				code, msg := acl.CodeRTParamInvalid, err.Error()
				if e, ok := err.(*acl.Error); ok {
					code, msg = e.Code, e.Msg
				}
				return acl.Errorf("model execution", code, "model %d task %d (%q) argument %d: %s", md.id, ti, t.Name, ai, msg)
			}
			md.scratch[ai] = b
		}
		// The tasks were validated once by ParseModel (ge.RunTask would
		// re-validate at every launch); the slices are exactly the slot
		// sizes, which is all a kernel relies on.
		var t0 time.Time
		if n.prof != nil {
			t0 = time.Now()
		}
		err := md.kernels[ti](t, md.scratch[:len(args)])
		if n.prof != nil {
			var sh acl.StreamHandle
			if s != nil {
				sh = s.h
			}
			n.prof.add(profKey{model: md.m.Name, op: t.Name, opType: t.Op.String(), stream: sh}, time.Since(t0))
		}
		n.ctr.launches.Add(1)
		if err != nil {
			return err
		}
	}
	for i := range rec.e.Out {
		if b := &rec.e.Out[i]; b.Copy {
			md.copyIO(n, unsafe.Slice((*byte)(rec.mem[nin+i].ptr), b.CopyLen), md.work[b.Target-md.workAddr:][:b.CopyLen], rec.mem[nin+i].l.Place, false)
		}
	}
	md.executed.Add(1)
	return nil
}

// copyIO copies one copied IO and counts it by where the caller's buffer
// lives (GE asks for a device-to-device copy; a synchronous copy goes by
// the pointers, an asynchronous one is corrected to H2D or D2H for pinned
// memory): host buffers move H2D or D2H, device buffers D2D.
func (md *model) copyIO(n *NPU, dst, src []byte, place npuhook.Place, in bool) {
	copy(dst, src)
	dir := DeviceToDevice
	if isHostPlace(place) {
		dir = DeviceToHost
		if in {
			dir = HostToDevice
		}
	}
	n.ctr.copied(dir, uint64(len(src)))
	md.ioCopies.Add(1)
}

// isHostPlace reports whether memory of place p is host memory the device
// cannot address as given: plain or pinned (registered memory is mapped).
func isHostPlace(p npuhook.Place) bool {
	return p == npuhook.PlaceHost || p == npuhook.PlacePinned
}

// checkAsyncCopies fails an asynchronous execution that copies an IO of
// plain host memory. GE queues the copy as aclrtMemcpyAsync with
// ACL_MEMCPY_DEVICE_TO_DEVICE (hicann/ge davinci_model.cc:6759-6770 in,
// 5063-5077 out: the ACL layer said "device"); the runtime keeps that kind
// for pageable memory (hicann/runtime src/runtime/api/impl/api_error.cc:
// 2711-2719, rules 5 and 6 allow D2D) and, the kind being D2D, does not
// turn it into a synchronous copy (JudgeIsInvolvePageableMemory,
// api_error.cc:2789-2802): the DMA engine is given a pageable host address.
// Pinned memory is fine: its kind is corrected to H2D or D2H (rules 1
// and 2, l.2695-2701). Which fault the DMA engine raises is the hardware's; its SDMA copy
// error maps to ACL_ERROR_RT_SYS_DMA (errcode_manage.cc:489), the code
// modelled here.
func (md *model) checkAsyncCopies(rec *execRec) error {
	for i := range rec.mem {
		if b := rec.bind(i); b.Copy && rec.mem[i].l.Place == npuhook.PlaceHost {
			return acl.Errorf("model execution", acl.CodeRTSysDMA,
				"model %d: IO buffer 0x%x is plain host memory; the ACL layer passes every model IO as device memory (GE model.cpp:750, 777), so its asynchronous copy is a device-to-device DMA of a pageable address, which faults",
				md.id, b.Addr)
		}
	}
	return nil
}

// resolve turns a slot's address into the memory behind it: the model's
// work or weight region, or a caller buffer bound in place. The kernel
// reads what the slot says, so a slot left stale shows up as a failure or
// a wrong result, never as a silent pass.
func (md *model) resolve(rec *execRec, a uint64, size uintptr) ([]byte, error) {
	addr := uintptr(a)
	if off := addr - md.workAddr; md.workAddr != 0 && addr >= md.workAddr && off+size <= uintptr(len(md.work)) {
		return md.work[off : off+size], nil
	}
	if off := addr - md.weightAddr; md.weightAddr != 0 && addr >= md.weightAddr && off+size <= uintptr(len(md.weight)) {
		return md.weight[off : off+size], nil
	}
	for i := range rec.mem {
		b := rec.bind(i)
		if b.Target == b.Addr && addr >= b.Target && addr-b.Target+size <= b.Extent {
			if isHostPlace(rec.mem[i].l.Place) {
				// The ACL layer passes every IO as device memory (hicann/ge
				// api/acl/acl_model/model/model.cpp:750, 777): GE binds the
				// host address into the task's arguments and the core's
				// access to it faults. The source names no code; the
				// runtime reports an AI Core fault as
				// ACL_ERROR_RT_AICORE_EXCEPTION (hicann/runtime
				// errcode_manage.cc:416), which aclmdlExecute returns as is
				// (hicann/ge davinci_model.cc:7765; error_codes_inner.h:24-28).
				return nil, acl.Errorf("model execution", acl.CodeRTAICoreException,
					"IO buffer 0x%x is host memory, which the model's tasks address as device memory; bind device memory (acl.Model and zerocopy.Binding stage acl.HostBuffer IO through device memory)", b.Addr)
			}
			return unsafe.Slice((*byte)(unsafe.Add(rec.mem[i].ptr, addr-b.Target)), size), nil
		}
	}
	return nil, fmt.Errorf("address 0x%x (%d bytes) is not inside the model's memory or a buffer bound to this execution", a, size)
}
