package fallback

import (
	"sync"
	"sync/atomic"

	"github.com/ascend-go/cann/internal/osthread"
)

// threadState is what ACL keeps per OS thread: the current context and the
// most recent error message. Fields are atomic because the Go scheduler
// may run several goroutines on one thread in turn.
type threadState struct {
	ctx atomic.Pointer[rtContext]
	msg atomic.Pointer[string]
}

// threadTable maps OS thread ids (gettid) to their state.
type threadTable struct {
	mu sync.RWMutex
	m  map[int]*threadState
}

func (t *threadTable) get(tid int, create bool) *threadState {
	t.mu.RLock()
	ts := t.m[tid]
	t.mu.RUnlock()
	if ts != nil || !create {
		return ts
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if ts = t.m[tid]; ts == nil {
		ts = new(threadState)
		t.m[tid] = ts
	}
	return ts
}

// current returns the live context bound to the thread, or nil.
func (t *threadTable) current(tid int) *rtContext {
	ts := t.get(tid, false)
	if ts == nil {
		return nil
	}
	if ctx := ts.ctx.Load(); ctx != nil && !ctx.dead.Load() {
		return ctx
	}
	return nil
}

func (t *threadTable) bind(tid int, ctx *rtContext) { t.get(tid, true).ctx.Store(ctx) }

func (t *threadTable) setMsg(tid int, msg string) { t.get(tid, true).msg.Store(&msg) }

// takeMsg returns and clears the thread's most recent error message.
func (t *threadTable) takeMsg(tid int) string {
	ts := t.get(tid, false)
	if ts == nil {
		return ""
	}
	if p := ts.msg.Swap(nil); p != nil {
		return *p
	}
	return ""
}

// reset forgets every binding (aclFinalize).
func (t *threadTable) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ts := range t.m {
		ts.ctx.Store(nil)
	}
}

// GetRecentErrMsg is aclGetRecentErrMsg: the message of the most recent
// failed call on the calling OS thread, cleared by reading it as ACL does
// ("" when there is none).
func (n *NPU) GetRecentErrMsg() string {
	if !n.enter() {
		return ""
	}
	defer n.exit()
	return n.threads.takeMsg(osthread.ID())
}
