package fallback

import (
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/osthread"
)

// NPU is the host-memory model of an Ascend machine: a set of devices with
// mmap'ed memory, pinned host memory, contexts bound per OS thread, streams
// running on goroutines, events and host registrations. It implements
// acl.Backend with the argument checks and error codes of docs/misuse.md.
//
// An NPU is safe for concurrent use, like the C library; calls that act on
// "the current context" read the binding of the calling OS thread, so
// callers hold runtime.LockOSThread across such calls.
type NPU struct {
	cfg    config
	devs   []*device
	host   *arena   // pinned host memory (MallocHost)
	arenas []*arena // every arena sorted by base address; fixed at New

	state      atomic.Int32
	initConfig *string // content of the first successful aclInit's config; guarded by mu
	closed     atomic.Bool
	inflight   atomic.Int64
	done       chan struct{} // closed by Close to abort waits
	closeMu    sync.Mutex

	mu       sync.RWMutex // guards the handle tables and device state
	contexts map[acl.ContextHandle]*rtContext
	streams  map[acl.StreamHandle]*stream
	events   map[acl.EventHandle]*event
	nextH    uintptr

	regMu sync.RWMutex
	regs  treap[*registration]
	nregs atomic.Int64

	threads threadTable
	ctr     counters
	faults  faults
	prof    *deviceProfile // nil unless WithDeviceProfile

	leakMu sync.Mutex
	leaks  []Leak

	models modelTable      // loaded models, descs, datasets, data buffers (model*.go)
	colls  collectiveTable // communicators of models' collective tasks (collective.go)
	ops    opTable         // single-op descriptions, attributes and compiled ops (op.go)
}

const (
	stateNew int32 = iota
	stateInit
	stateFinal
)

var _ acl.Backend = (*NPU)(nil)

// New builds an NPU. The device and host arenas are reserved here (address
// space only); call Init before any runtime call and Close when done.
func New(opts ...Option) (*NPU, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	const op = "fallback.New"
	switch {
	case cfg.devices < 1 || cfg.devices > MaxDevices:
		return nil, acl.Errorf(op, acl.CodeInvalidParam, "device count %d is outside [1, %d]", cfg.devices, MaxDevices)
	case cfg.devMem < Alignment || cfg.devMem > MaxMemory:
		return nil, acl.Errorf(op, acl.CodeInvalidParam, "device memory %d bytes is outside [%d, %d]", cfg.devMem, Alignment, uintptr(MaxMemory))
	case cfg.hostMem < Alignment || cfg.hostMem > MaxMemory:
		return nil, acl.Errorf(op, acl.CodeInvalidParam, "host memory %d bytes is outside [%d, %d]", cfg.hostMem, Alignment, uintptr(MaxMemory))
	case cfg.clock == nil:
		return nil, acl.Errorf(op, acl.CodeInvalidParam, "nil clock")
	}
	for _, f := range append(slices.Clone(cfg.allocFault), cfg.taskFault...) {
		if f.nth < 1 {
			return nil, acl.Errorf(op, acl.CodeInvalidParam, "fault position %d must be ≥ 1", f.nth)
		}
	}
	n := &NPU{
		cfg:      cfg,
		done:     make(chan struct{}),
		contexts: make(map[acl.ContextHandle]*rtContext),
		streams:  make(map[acl.StreamHandle]*stream),
		events:   make(map[acl.EventHandle]*event),
		nextH:    0x0ac10000,
	}
	n.threads.m = make(map[int]*threadState)
	if cfg.profile {
		n.prof = newDeviceProfile(time.Now())
	}
	fail := func(err error) (*NPU, error) {
		for _, a := range n.arenas {
			a.unmap()
		}
		return nil, acl.Errorf(op, acl.CodeRTMemoryAllocation, "%v", err)
	}
	for i := range cfg.devices {
		newDev := newArena
		if cfg.shareable {
			newDev = newArenaFile
		}
		a, err := newDev(roundUp(cfg.devMem), int32(i))
		if err != nil {
			return fail(err)
		}
		n.arenas = append(n.arenas, a)
		n.devs = append(n.devs, &device{id: int32(i), arena: a})
	}
	h, err := newArena(roundUp(cfg.hostMem), -1)
	if err != nil {
		return fail(err)
	}
	n.host = h
	n.arenas = append(n.arenas, h)
	slices.SortFunc(n.arenas, func(a, b *arena) int {
		if a.base < b.base {
			return -1
		}
		return 1
	})
	for _, f := range cfg.allocFault {
		n.faults.arm(&n.faults.alloc, f.nth, f.code)
	}
	for _, f := range cfg.taskFault {
		n.faults.arm(&n.faults.task, f.nth, f.code)
	}
	return n, nil
}

// Name returns "fallback".
func (n *NPU) Name() string { return "fallback" }

// Close releases everything: it waits for calls in progress (aborting
// synchronize waits), drains and stops every stream goroutine, records
// leftovers as leaks and unmaps all memory. Pointers into device or pinned
// memory are invalid afterwards. Close is idempotent; later runtime calls
// fail with ACL_ERROR_UNINITIALIZE (a Go-side state: the device has no
// such thing as a closed runtime).
func (n *NPU) Close() error {
	if n == nil {
		return nil
	}
	n.closeMu.Lock()
	defer n.closeMu.Unlock()
	if n.closed.Load() {
		return nil
	}
	n.closed.Store(true)
	close(n.done)
	for n.inflight.Load() != 0 {
		time.Sleep(20 * time.Microsecond)
	}
	n.teardown("Close")
	n.state.Store(stateFinal)
	for _, a := range n.arenas {
		a.mu.Lock()
		a.unmap()
		a.mu.Unlock()
	}
	return nil
}

// Init is aclInit. The configuration file's content is remembered at the
// first successful aclInit: a later aclInit (after aclFinalize) with a file
// of other content is refused with ACL_ERROR_INVALID_PARAM, as the ACL layer
// compares the hash of the content (hicann/runtime
// src/acl/aclrt_impl/acl.cpp:403-416).
func (n *NPU) Init(configPath string) error {
	c := call{n: n, op: "aclInit", tid: -1}
	if !n.enter() {
		return c.closedErr()
	}
	defer n.exit()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state.Load() == stateInit {
		// hicann/runtime src/acl/aclrt_impl/acl.cpp:387-392
		return c.fail(acl.CodeRepeatInitialize, "aclInit was already called; call aclFinalize first")
	}
	content := configContent(configPath)
	if n.initConfig != nil && *n.initConfig != content {
		return c.fail(acl.CodeInvalidParam, "config %q differs in content from the one the first aclInit used", configPath)
	}
	n.initConfig = &content
	n.state.Store(stateInit)
	return nil
}

// configContent is what aclInit compares between calls: the file's bytes
// ("" for no file); a file that cannot be read compares by its path.
func configContent(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "\x00unreadable:" + path
	}
	return string(b)
}

// Finalize is aclFinalize: it releases every device, context, stream,
// event, allocation and registration the program left, recording each as a
// leak (see Leaks), and succeeds. Before any aclInit it succeeds too (the
// ACL layer checks only its finalized flag: hicann/runtime
// src/acl/aclrt_impl/acl.cpp:630-643), and afterwards a second aclFinalize
// is ACL_ERROR_REPEAT_FINALIZE (acl.cpp:634-637).
func (n *NPU) Finalize() error {
	c := call{n: n, op: "aclFinalize", tid: -1}
	if !n.enter() {
		return c.closedErr()
	}
	defer n.exit()
	n.mu.Lock()
	if n.state.Load() == stateFinal {
		n.mu.Unlock()
		return c.fail(acl.CodeRepeatFinalize, "aclFinalize was already called")
	}
	n.state.Store(stateFinal)
	n.mu.Unlock()
	n.teardown("aclFinalize")
	return nil
}

// teardown releases every resource, recording what the program left.
func (n *NPU) teardown(at string) {
	var t teardownList
	n.mu.Lock()
	for _, ctx := range n.contexts {
		n.detachContextLocked(ctx, at, &t, true)
	}
	for _, d := range n.devs {
		d.refs, d.def = 0, nil
		clear(d.peers)
	}
	n.mu.Unlock()
	n.threads.reset()
	t.finish()
	n.releaseModels(-1, at)
	for _, d := range n.devs {
		n.releaseMemory(d.arena, at)
	}
	n.releaseMemory(n.host, at)
	n.regMu.Lock()
	n.regs.each(func(_ uint64, r *registration) bool {
		r.gone.Store(true)
		n.recordLeak(Leak{Kind: LeakRegistration, Device: -1, Addr: r.addr, Size: r.size, Where: r.where.String(), At: at})
		return true
	})
	n.regs.clear()
	n.nregs.Store(0)
	n.regMu.Unlock()
}

// releaseMemory frees every live allocation of a, recording each as leaked.
func (n *NPU) releaseMemory(a *arena, at string) {
	kind := LeakDeviceMemory
	if a.dev < 0 {
		kind = LeakHostMemory
	}
	a.releaseAll(func(al *alloc) {
		n.recordLeak(Leak{Kind: kind, Device: a.dev, Addr: al.addr, Size: al.size, Where: al.where.String(), At: at})
	})
}

// enter admits a call unless the NPU is closed; Close waits for admitted
// calls to exit before unmapping memory.
func (n *NPU) enter() bool {
	if n == nil {
		return false
	}
	n.inflight.Add(1)
	if n.closed.Load() {
		n.inflight.Add(-1)
		return false
	}
	return true
}

func (n *NPU) exit() { n.inflight.Add(-1) }

// call is one runtime call in progress: its C name (for errors), the
// calling OS thread (looked up at most once) and its current context.
type call struct {
	n     *NPU
	op    string
	tid   int
	ctx   *rtContext
	quiet bool // hooks: errors do not become the thread's recent message
}

// begin admits a call: the NPU must be open and, when needCtx, the calling
// OS thread must have a current context. The runtime makes no aclInit
// check of its own (hicann/runtime: ACL_ERROR_UNINITIALIZE appears only in
// src/acl/toolchain/dump.cpp), so runtime calls before aclInit or after
// aclFinalize proceed; the model API (ops named aclmdl*) is refused with
// ACL_ERROR_GE_EXEC_NOT_INIT while GE is not initialised (hicann/ge
// runtime/v1/executor/ge_executor.cc:1173-1177). On success the caller
// must defer n.exit().
func (n *NPU) begin(op string, needCtx bool) (call, error) {
	c := call{n: n, op: op, tid: -1}
	if !n.enter() {
		return c, c.closedErr()
	}
	if strings.HasPrefix(op, "aclmdl") && n.state.Load() != stateInit {
		err := c.fail(acl.CodeGEExecNotInit, "%s called before aclInit or after aclFinalize: the model executor is not initialised", op)
		n.exit()
		return c, err
	}
	if needCtx {
		c.tid = osthread.ID()
		if c.ctx = n.threads.current(c.tid); c.ctx == nil {
			err := c.fail(acl.CodeRTContextNull, "OS thread %d has no current context: call aclrtSetDevice or aclrtSetCurrentContext on this thread first (a goroutine must hold runtime.LockOSThread to keep its thread)", c.tid)
			n.exit()
			return c, err
		}
	}
	return c, nil
}

// fail builds the error of a failed call and records its message as the
// calling thread's most recent error (GetRecentErrMsg).
func (c *call) fail(code acl.Code, format string, args ...any) error {
	e := acl.Errorf(c.op, code, format, args...)
	if c.quiet {
		return e
	}
	if c.tid < 0 {
		c.tid = osthread.ID()
	}
	c.n.threads.setMsg(c.tid, e.Msg)
	return e
}

func (c *call) closedErr() error {
	if c.n == nil {
		return acl.NilHandle(c.op, "fallback NPU")
	}
	return acl.Errorf(c.op, acl.CodeUninitialize, "the fallback NPU is closed")
}

// handle returns a fresh handle value; n.mu must be held. Handles of all
// kinds share one sequence so a handle of one kind is never valid as
// another.
func (n *NPU) handle() uintptr {
	n.nextH += 0x10
	return n.nextH
}
