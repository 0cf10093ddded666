package acl

import (
	"sync"
	"sync/atomic"
)

// res is the open/closed state every idiomatic handle (Runtime, Device,
// Stream, Event, DeviceBuffer, HostBuffer, HostRegistration) embeds.
// Operations hold it shared for the duration of their backend call; Close
// takes it exclusively, so a handle is never destroyed under a call that is
// using it, and a call that starts after Close fails cleanly instead of
// passing a dead handle to the backend.
type res struct {
	mu     sync.RWMutex
	closed bool
	seq    uint64 // creation order: several handles are always taken in this order
	kind   string // "stream", "event", … for error messages
	// pins is the Device's pin guard for handles a pinned execution may
	// use (model, stream, dataset, memory); pinned says a pin has named the
	// handle, so that closing it must bump the guard (pin.go).
	pins   *pinGuard
	pinned atomic.Bool
}

var resSeq atomic.Uint64

func newRes(kind string) res { return res{seq: resSeq.Add(1), kind: kind} }

// closedError is the error every method of a closed (or nil) handle
// returns: ACL_ERROR_RT_INVALID_HANDLE, the code the runtime itself gives
// for a destroyed handle, with Op naming the Go method.
func closedError(op, kind string) *Error {
	return &Error{Op: op, Code: CodeRTInvalidHandle, Msg: kind + " is closed"}
}

func nilError(op string) *Error { return NilHandle(op, "handle") }

// NilHandle is the error of a call on, or given, a nil handle (what names
// it) in every package of the SDK that reports aclError codes:
// ACL_ERROR_INVALID_PARAM, the code the ACL layer returns for a NULL handle
// (hicann/runtime src/acl/common/log_inner.h:452-460,
// ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT, e.g. aclrtDestroyStream(NULL)
// at src/acl/aclrt_impl/stream.cpp:100). A handle that is closed, not nil,
// is ACL_ERROR_RT_INVALID_HANDLE, as the runtime's handle guard answers a
// destroyed one. The error also matches ErrInvalidHandle (errors.Is).
func NilHandle(op, what string) *Error {
	return &Error{Op: op, Code: CodeInvalidParam, Msg: "nil " + what, Cause: ErrInvalidHandle}
}

// maxHeld is the most handles one operation takes: a stream and up to
// seven memories (Stream.Do).
const maxHeld = 8

// held is a set of handles taken shared by acquire, released together.
type held struct {
	rs [maxHeld]*res
	n  int
}

// acquire takes up to maxHeld handles shared, in creation order so that two
// calls naming the same handles in a different order cannot deadlock with a
// pending Close. It fails, holding nothing, if any handle is nil or closed.
func acquire(op string, rs ...*res) (held, error) {
	var h held
	for _, r := range rs {
		if r == nil {
			return held{}, nilError(op)
		}
		dup := false
		for _, x := range h.rs[:h.n] {
			dup = dup || x == r
		}
		if !dup {
			h.rs[h.n] = r
			h.n++
		}
	}
	// Insertion sort of a few entries.
	for i := 1; i < h.n; i++ {
		for j := i; j > 0 && h.rs[j].seq < h.rs[j-1].seq; j-- {
			h.rs[j], h.rs[j-1] = h.rs[j-1], h.rs[j]
		}
	}
	for i := 0; i < h.n; i++ {
		r := h.rs[i]
		r.mu.RLock()
		if r.closed {
			r.mu.RUnlock()
			for _, x := range h.rs[:i] {
				x.mu.RUnlock()
			}
			return held{}, closedError(op, r.kind)
		}
	}
	return h, nil
}

func (h *held) release() {
	for _, r := range h.rs[:h.n] {
		r.mu.RUnlock()
	}
}

// markClosed takes r exclusively (waiting for calls in flight), marks it
// closed and reports whether this caller did so: only the first Close
// releases the underlying resource. For a handle pinned executions may use
// it then invalidates the pins, waiting for the pinned runs in flight, so
// that none uses the handle once markClosed has returned.
func (r *res) markClosed() bool {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return false
	}
	r.closed = true
	r.mu.Unlock()
	if r.pins != nil && r.pinned.Load() {
		r.pins.bump()
	}
	return true
}

// isClosed reports whether r has been closed.
func (r *res) isClosed() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.closed
}
