package dl

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Frame holds the arguments of one C call and receives its output
// parameters. Frames come from a pool so that calls do not allocate (a
// variadic argument list would escape to the heap on every call); C writes
// into Out only during the call, and a Frame is heap memory, so the
// addresses of its slots are stable.
type Frame struct {
	Args [10]uintptr
	Out  [3]uint64
}

var framePool = sync.Pool{New: func() any { return new(Frame) }}

// GetFrame returns a zeroed frame from the pool.
func GetFrame() *Frame {
	f := framePool.Get().(*Frame)
	*f = Frame{} // a recycled frame carries the previous call's values
	return f
}

// PutFrame returns f to the pool; f must not be used afterwards.
func PutFrame(f *Frame) { framePool.Put(f) }

// Outp is the C address of output slot i of f.
func (f *Frame) Outp(i int) uintptr { return uintptr(unsafe.Pointer(&f.Out[i])) }

// Call runs the C function fn with the first n arguments of f and returns
// its raw result. A result whose low 32 bits are non-zero is a failure
// code: msgFn, when non-zero, is the library's "recent error message"
// function (const char *(void), thread-local in C), and Call reads it on
// the OS thread that made the failed call, returning its text. With msgFn
// zero the goroutine is not locked to its thread and msg is empty.
func Call(fn uintptr, f *Frame, n int, msgFn uintptr) (r uintptr, msg string) {
	if msgFn == 0 {
		r, _, _ = purego.SyscallN(fn, f.Args[:n]...)
		return r, ""
	}
	runtime.LockOSThread()
	r, _, _ = purego.SyscallN(fn, f.Args[:n]...)
	if int32(r) != 0 {
		msg = message(msgFn)
	}
	runtime.UnlockOSThread()
	return r, msg
}

// CallPtr is Call for a C constructor that returns a pointer: a NULL result
// is the failure, whose message is read as Call reads it.
func CallPtr(fn uintptr, f *Frame, n int, msgFn uintptr) (r uintptr, msg string) {
	if msgFn == 0 {
		r, _, _ = purego.SyscallN(fn, f.Args[:n]...)
		return r, ""
	}
	runtime.LockOSThread()
	r, _, _ = purego.SyscallN(fn, f.Args[:n]...)
	if r == 0 {
		msg = message(msgFn)
	}
	runtime.UnlockOSThread()
	return r, msg
}

// CallRaw runs fn with the first n arguments of f and returns its raw
// result, for C functions whose result is a value, not a status.
func CallRaw(fn uintptr, f *Frame, n int) uintptr {
	r, _, _ := purego.SyscallN(fn, f.Args[:n]...)
	return r
}

// Message reads the library's recent error message with msgFn (0 gives
// ""); the caller must still be on the thread of the call it explains.
func Message(msgFn uintptr) string {
	if msgFn == 0 {
		return ""
	}
	return message(msgFn)
}

func message(msgFn uintptr) string {
	p, _, _ := purego.SyscallN(msgFn)
	return GoString(p)
}

// Caller memory reaches C as a uintptr inside a Frame, which the compiler
// does not see as a use of the pointer. Escape makes every pointer passed
// to a binding's method escape, so it never lives on a goroutine stack that
// could move during the call; runtime.KeepAlive after the call keeps it
// alive. The store sits behind a flag that is never set, so it costs one
// load; a package-level atomic keeps the store a use the tools can see.
var (
	escapeSink atomic.Pointer[byte]
	escapeOn   bool
)

// Escape forces p to the heap (see above) and returns its address.
func Escape(p unsafe.Pointer) uintptr {
	if escapeOn {
		escapeSink.Store((*byte)(p))
	}
	return uintptr(p)
}
