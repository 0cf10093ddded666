package fallback

import (
	"sync"
	"sync/atomic"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/osthread"
)

// device is one simulated device: its memory and the default context that
// aclrtSetDevice creates and reference-counts. Fields other than id and
// arena are guarded by NPU.mu.
type device struct {
	id    int32
	arena *arena
	refs  int            // aclrtSetDevice calls not yet reset
	def   *rtContext     // default context while refs > 0
	peers map[int32]bool // devices this one enabled peer access to (peer.go)
}

// rtContext is an aclrtContext: a device binding with a default stream and
// the streams and events created while it was current. streams and events
// are guarded by NPU.mu.
type rtContext struct {
	h         acl.ContextHandle
	dev       *device
	isDefault bool
	def       *stream
	streams   map[acl.StreamHandle]*stream
	events    map[acl.EventHandle]*event
	where     where
	dead      atomic.Bool

	// stopMode: a stream of the context is in ACL_STOP_ON_FAILURE, so the
	// context's first task failure (failCode, failMsg) stops all of it.
	stopMode atomic.Bool
	failMu   sync.Mutex
	failCode acl.Code
	failMsg  string
}

// failed records a task failure on one of the context's streams; in stop
// mode the first one stops the context.
func (ctx *rtContext) failed(code acl.Code, msg string) {
	if !ctx.stopMode.Load() {
		return
	}
	ctx.failMu.Lock()
	if ctx.failCode == 0 {
		ctx.failCode, ctx.failMsg = code, msg
	}
	ctx.failMu.Unlock()
}

// stopped reports whether the context stopped on a failure, and which.
func (ctx *rtContext) stopped() (bool, acl.Code, string) {
	if !ctx.stopMode.Load() {
		return false, 0, ""
	}
	ctx.failMu.Lock()
	defer ctx.failMu.Unlock()
	return ctx.failCode != 0, ctx.failCode, ctx.failMsg
}

// newContextLocked creates a context and its default stream; n.mu held.
func (n *NPU) newContextLocked(d *device, isDefault bool, w where) *rtContext {
	ctx := &rtContext{
		h:         acl.ContextHandle(n.handle()),
		dev:       d,
		isDefault: isDefault,
		streams:   make(map[acl.StreamHandle]*stream),
		events:    make(map[acl.EventHandle]*event),
		where:     w,
	}
	ctx.def = newStream(n, ctx, acl.StreamHandle(n.handle()), w)
	n.contexts[ctx.h] = ctx
	return ctx
}

// forget removes h, a stream or event of a context, from the NPU-wide table
// all and its context's table ofCtx, if all still maps h to v; false when a
// concurrent destroy or a context teardown got there first.
func forget[H comparable, V comparable](n *NPU, all, ofCtx map[H]V, h H, v V) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if all[h] != v {
		return false
	}
	delete(all, h)
	delete(ofCtx, h)
	return true
}

// teardownList holds what a detach removed from the tables; finish stops
// it outside NPU.mu, since draining a stream may run tasks that call back
// into the NPU.
type teardownList struct {
	streams []*stream
	events  []*event
}

func (t *teardownList) finish() {
	for _, e := range t.events {
		e.kill()
	}
	for _, s := range t.streams {
		s.shutdown()
	}
}

// detachContextLocked removes ctx with its streams and events from the
// tables, recording what the program created and did not destroy (the
// context itself too when leaked is set); n.mu held.
func (n *NPU) detachContextLocked(ctx *rtContext, at string, t *teardownList, leaked bool) {
	ctx.dead.Store(true)
	delete(n.contexts, ctx.h)
	dev := ctx.dev.id
	if !ctx.isDefault && leaked {
		n.recordLeak(Leak{Kind: LeakContext, Device: dev, Addr: uintptr(ctx.h), Where: ctx.where.String(), At: at})
	} else if ctx.dev.def == ctx {
		ctx.dev.def = nil
	}
	for h, s := range ctx.streams {
		delete(n.streams, h)
		n.recordLeak(Leak{Kind: LeakStream, Device: dev, Addr: uintptr(h), Where: s.where.String(), At: at})
		t.streams = append(t.streams, s)
	}
	t.streams = append(t.streams, ctx.def)
	for h, e := range ctx.events {
		delete(n.events, h)
		n.recordLeak(Leak{Kind: LeakEvent, Device: dev, Addr: uintptr(h), Where: e.where.String(), At: at})
		t.events = append(t.events, e)
	}
	clear(ctx.streams)
	clear(ctx.events)
}

// device checks a device id.
func (c *call) device(id int32) (*device, error) {
	if id < 0 || int(id) >= len(c.n.devs) {
		return nil, c.fail(acl.CodeRTInvalidDeviceID, "device id %d is outside [0, %d)", id, len(c.n.devs))
	}
	return c.n.devs[id], nil
}

// bind makes ctx current on the calling OS thread.
func (c *call) bind(ctx *rtContext) {
	if c.tid < 0 {
		c.tid = osthread.ID()
	}
	c.n.threads.bind(c.tid, ctx)
}

// SetDevice is aclrtSetDevice: it opens the device (creating its default
// context on first use; the count of calls is kept per process) and makes
// the default context current on the calling OS thread.
func (n *NPU) SetDevice(deviceID int32) error {
	c, err := n.begin("aclrtSetDevice", false)
	if err != nil {
		return err
	}
	defer n.exit()
	d, err := c.device(deviceID)
	if err != nil {
		return err
	}
	n.mu.Lock()
	d.refs++
	if d.def == nil {
		d.def = n.newContextLocked(d, true, where{})
	}
	ctx := d.def
	n.mu.Unlock()
	c.bind(ctx)
	return nil
}

// ResetDevice is aclrtResetDevice. The device is reference-counted: each
// aclrtSetDevice is undone by one reset, and when the last is reset
// everything on the device is released (contexts, their streams and
// events, device memory) and what the program left is recorded as leaked;
// threads bound to those contexts lose their binding. A reset with no
// aclrtSetDevice left is ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, as the runtime
// finds no primary context to release (hicann/runtime
// src/runtime/core/src/runtime.cc:2931 returns RT_ERROR_CONTEXT_DEL,
// src/runtime/api/impl/api_error.cc:3443-3446, mapped to 507007 by
// src/runtime/core/src/common/errcode_manage.cc:221).
func (n *NPU) ResetDevice(deviceID int32) error {
	return n.resetDevice("aclrtResetDevice", deviceID, false)
}

// ResetDeviceForce is aclrtResetDeviceForce: it releases the device at
// once, whatever the count of aclrtSetDevice calls (hicann/runtime
// src/acl/aclrt_impl/device.cpp:101-108; include/external/acl/acl_rt.h:1587-1607).
func (n *NPU) ResetDeviceForce(deviceID int32) error {
	return n.resetDevice("aclrtResetDeviceForce", deviceID, true)
}

func (n *NPU) resetDevice(op string, deviceID int32, force bool) error {
	c, err := n.begin(op, false)
	if err != nil {
		return err
	}
	defer n.exit()
	d, err := c.device(deviceID)
	if err != nil {
		return err
	}
	n.mu.Lock()
	if d.refs == 0 {
		n.mu.Unlock()
		return c.fail(acl.CodeRTContextReleaseError, "device %d is not set: %s without a matching aclrtSetDevice (the device has not been set or has already been reset)", deviceID, op)
	}
	d.refs--
	if force {
		d.refs = 0
	}
	if d.refs > 0 {
		n.mu.Unlock()
		return nil
	}
	var t teardownList
	for _, ctx := range n.contexts {
		if ctx.dev == d {
			n.detachContextLocked(ctx, op, &t, true)
		}
	}
	d.def = nil
	clear(d.peers)
	n.mu.Unlock()
	t.finish()
	n.releaseModels(d.id, op)
	n.releaseMemory(d.arena, op)
	return nil
}

// GetDevice is aclrtGetDevice: the device of the calling thread's current
// context.
func (n *NPU) GetDevice() (int32, error) {
	c, err := n.begin("aclrtGetDevice", true)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	return c.ctx.dev.id, nil
}

// GetDeviceCount is aclrtGetDeviceCount.
func (n *NPU) GetDeviceCount() (uint32, error) {
	_, err := n.begin("aclrtGetDeviceCount", false)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	return uint32(len(n.devs)), nil
}

// GetRunMode is aclrtGetRunMode: always ACL_HOST, the program runs on the
// host beside its devices.
func (n *NPU) GetRunMode() (acl.RunMode, error) {
	_, err := n.begin("aclrtGetRunMode", false)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	return acl.RunModeHost, nil
}

// CreateContext is aclrtCreateContext: a new context on the device, bound
// to the calling OS thread.
func (n *NPU) CreateContext(deviceID int32) (acl.ContextHandle, error) {
	c, err := n.begin("aclrtCreateContext", false)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	d, err := c.device(deviceID)
	if err != nil {
		return 0, err
	}
	n.mu.Lock()
	ctx := n.newContextLocked(d, false, callers())
	n.mu.Unlock()
	c.bind(ctx)
	return ctx.h, nil
}

// DestroyContext is aclrtDestroyContext. Streams and events still in the
// context are destroyed with it (after their queued work) and recorded as
// leaked. A device's default context is released by ResetDevice instead.
func (n *NPU) DestroyContext(h acl.ContextHandle) error {
	c, err := n.begin("aclrtDestroyContext", false)
	if err != nil {
		return err
	}
	defer n.exit()
	if h == 0 {
		return c.fail(acl.CodeInvalidParam, "null context")
	}
	n.mu.Lock()
	ctx := n.contexts[h]
	switch {
	case ctx == nil:
		// hicann/runtime src/runtime/api/impl/api_impl.cc:4133-4139:
		// RT_ERROR_CONTEXT_NULL, 107002 (errcode_manage.cc:218).
		n.mu.Unlock()
		return c.fail(acl.CodeRTContextNull, "context 0x%x is a null pointer or has already been destroyed", uintptr(h))
	case ctx.isDefault:
		// api_impl.cc:4140-4142: "Primary context cannot be destroyed
		// explicitly", RT_ERROR_CONTEXT_NULL.
		n.mu.Unlock()
		return c.fail(acl.CodeRTContextNull, "context 0x%x is the default (primary) context of device %d, which cannot be destroyed explicitly; aclrtResetDevice releases it", uintptr(h), ctx.dev.id)
	}
	var t teardownList
	n.detachContextLocked(ctx, "aclrtDestroyContext", &t, false)
	n.mu.Unlock()
	t.finish()
	return nil
}

// SetCurrentContext is aclrtSetCurrentContext: it binds the context to the
// calling OS thread.
func (n *NPU) SetCurrentContext(h acl.ContextHandle) error {
	c, err := n.begin("aclrtSetCurrentContext", false)
	if err != nil {
		return err
	}
	defer n.exit()
	if h == 0 {
		return c.fail(acl.CodeInvalidParam, "null context")
	}
	n.mu.RLock()
	ctx := n.contexts[h]
	n.mu.RUnlock()
	if ctx == nil {
		// hicann/runtime src/runtime/api/impl/api_impl.cc:4184-4187:
		// RT_ERROR_CONTEXT_NULL, 107002.
		return c.fail(acl.CodeRTContextNull, "context 0x%x has already been destroyed", uintptr(h))
	}
	c.bind(ctx)
	return nil
}

// GetCurrentContext is aclrtGetCurrentContext for the calling OS thread.
func (n *NPU) GetCurrentContext() (acl.ContextHandle, error) {
	c, err := n.begin("aclrtGetCurrentContext", true)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	return c.ctx.h, nil
}

// countOnDevice counts the streams (or events) the program created on d's
// contexts and has not destroyed; n.mu held.
func (n *NPU) countOnDevice(d *device, events bool) int {
	k := 0
	for _, ctx := range n.contexts {
		if ctx.dev == d {
			if events {
				k += len(ctx.events)
			} else {
				k += len(ctx.streams)
			}
		}
	}
	return k
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
