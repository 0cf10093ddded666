package native

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/dl"
)

// MissingSymbolsError is returned by Open when the library lacks required
// functions; Names lists all of them.
type MissingSymbolsError = dl.MissingSymbolsError

// NotFoundError is returned by Open when no candidate library loads; it
// lists every path tried and why it failed.
type NotFoundError = dl.NotFoundError

// Library names, in the order Open prefers them.
const (
	LibACL      = "libascendcl.so"
	LibACLRt    = "libacl_rt.so"
	LibACLModel = "libacl_mdl.so"
	// LibACLOpCompiler holds aclopCompile* (acl/acl_op_compiler.h); it
	// ships beside the runtime in every lib64, monolithic or split, and is
	// loaded when present so the single-op API resolves (hicann/ge
	// api/acl/acl_op_compiler/CMakeLists.txt:11).
	LibACLOpCompiler = "libacl_op_compiler.so"
	// LibACLOpExecutor holds the op attributes, aclopCreateAttr and
	// aclopSetAttr*, in the split layout (hicann/ge
	// api/acl/acl_op_executor/CMakeLists.txt:127, single_op/
	// acl_op_executor.cpp); the tensor descriptions are in libacl_mdl
	// (api/acl/acl_model/model/acl_model.cpp).
	LibACLOpExecutor = "libacl_op_executor.so"
)

// EnvLibrary is the environment override of the library location.
const EnvLibrary = dl.EnvACLOverride

// Option configures Open.
type Option func(*config)

type config struct {
	path string
}

// WithLibraryPath loads the library from path, a file or a directory,
// instead of searching for it.
func WithLibraryPath(path string) Option { return func(c *config) { c.path = path } }

// Backend is the purego binding of the AscendCL runtime (and model) API.
// It is safe for concurrent use; see the package documentation for the
// per-thread context rules.
type Backend struct {
	lib    *dl.Library
	fns    [numRuntimeSyms]uintptr
	mdl    [numModelSyms]uintptr
	ops    [numOpSyms]uintptr
	closed atomic.Bool

	setAttrFloat func(attr uintptr, name *byte, v float32) int32 // aclopSetAttrFloat (op.go)
	once         sync.Once
	err          error
}

var (
	_ acl.Backend      = (*Backend)(nil)
	_ acl.ModelBackend = (*Backend)(nil)
)

// Open loads the AscendCL library and resolves its symbols. It does not call
// aclInit.
func Open(opts ...Option) (*Backend, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	lib, err := dl.Open(dl.Spec{
		Family: "ACL",
		Names:  []string{LibACL, LibACLRt},
		Extras: []string{LibACLModel, LibACLOpCompiler, LibACLOpExecutor},
		Path:   c.path,
		EnvVar: EnvLibrary,
	})
	if err != nil {
		return nil, err
	}
	b := &Backend{lib: lib}
	syms := make([]dl.Symbol, 0, len(b.fns)+len(b.mdl))
	syms = append(syms, dl.Table(runtimeSyms[:], b.fns[:])...)
	for i, name := range modelSyms {
		syms = append(syms, dl.Symbol{Name: name, Slot: &b.mdl[i], Optional: true})
	}
	for i, name := range opSyms {
		syms = append(syms, dl.Symbol{Name: name, Slot: &b.ops[i], Optional: true})
	}
	if err := lib.Resolve(syms); err != nil {
		lib.Close()
		return nil, err
	}
	b.bindOps()
	return b, nil
}

// Name returns "native".
func (b *Backend) Name() string { return "native" }

// Path is the file of the primary library that was loaded.
func (b *Backend) Path() string { return b.lib.Path() }

// Paths lists every loaded file, the primary first.
func (b *Backend) Paths() []string { return b.lib.Paths() }

// Symbol returns the address of any symbol of the loaded libraries, or 0
// when it is absent or the backend is closed. It is an escape hatch for
// functions this package does not bind, and for tests and benchmarks.
func (b *Backend) Symbol(name string) uintptr {
	if b.closed.Load() {
		return 0
	}
	return b.lib.Lookup(name)
}

// Has reports whether the library exports the C function name.
func (b *Backend) Has(name string) bool { return b.Symbol(name) != 0 }

// Close unloads the library. It does not call aclFinalize. Close is
// idempotent; calls made after it fail with ACL_ERROR_UNINITIALIZE.
func (b *Backend) Close() error {
	b.once.Do(func() {
		b.closed.Store(true)
		b.err = b.lib.Close()
	})
	return b.err
}

// invoke runs one aclError-returning C function with the first n
// arguments of f. The goroutine stays on its OS thread for the call and, on
// failure, for the read of the thread's error message. The arguments live in
// the pooled frame rather than in a variadic slice, which would escape to
// the heap on every call.
func (b *Backend) invoke(id sym, f *frame, n int) error {
	fn := b.fns[id]
	if fn == 0 || b.closed.Load() {
		return b.unavailable(runtimeSyms[id].Name, fn)
	}
	runtime.LockOSThread()
	r, _, _ := purego.SyscallN(fn, f.args[:n]...)
	if int32(r) == 0 {
		runtime.UnlockOSThread()
		return nil
	}
	err := b.failure(runtimeSyms[id].Name, int32(r))
	runtime.UnlockOSThread()
	return err
}

// failure builds the error of a failed call; the caller is still locked to
// the thread that made it.
func (b *Backend) failure(op string, code int32) error {
	return &acl.Error{Op: op, Code: acl.Code(code), Msg: b.recentMsg()}
}

func (b *Backend) recentMsg() string {
	fn := b.fns[symGetRecentErrMsg]
	if fn == 0 {
		return ""
	}
	p, _, _ := purego.SyscallN(fn)
	return goString(p)
}

func (b *Backend) unavailable(op string, fn uintptr) error {
	if b.closed.Load() {
		return &acl.Error{Op: op, Code: acl.CodeUninitialize, Msg: "native: backend is closed"}
	}
	return &acl.Error{Op: op, Code: acl.CodeAPINotSupport,
		Msg: "native: " + op + " is not exported by " + joinPaths(b.lib.Paths())}
}

// ready reports whether fn can be called, for C functions that return no
// aclError.
func (b *Backend) ready(fn uintptr) bool { return fn != 0 && !b.closed.Load() }

func joinPaths(ps []string) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += ", "
		}
		s += p
	}
	return s
}

// goString and ptrOf are the shared C-string and address conversions.
var (
	goString = dl.GoString
	ptrOf    = dl.PtrOf
)

// cString returns s as a NUL-terminated byte slice, refusing interior NULs.
func cString(op, s string) ([]byte, error) {
	b, ok := dl.CString(s)
	if !ok {
		return nil, &acl.Error{Op: op, Code: acl.CodeInvalidParam, Msg: "native: string contains NUL"}
	}
	return b, nil
}

// frame holds the arguments of one call and receives its output
// parameters. Frames come from a pool so that calls do not allocate; C
// writes into out only during the call, and the frame is heap memory, so
// its address is stable.
type frame struct {
	args [8]uintptr
	out  [3]uint64
}

var framePool = sync.Pool{New: func() any { return new(frame) }}

func getFrame() *frame {
	f := framePool.Get().(*frame)
	*f = frame{} // a recycled frame carries the previous call's values
	return f
}

func putFrame(f *frame) { framePool.Put(f) }

// outp is the C address of output slot i of f.
func (f *frame) outp(i int) uintptr { return uintptr(unsafe.Pointer(&f.out[i])) }

// Caller memory reaches C as a uintptr inside a frame, which the compiler
// does not see as a use of the pointer. escape makes every pointer passed to
// a method escape, so it never lives on a goroutine stack that could move
// during the call, and runtime.KeepAlive after the call keeps it alive.
// The store sits behind a flag that is never set, so it costs one load; a
// package-level atomic keeps the store a use the tools can see.
var (
	escapeSink atomic.Pointer[byte]
	escapeOn   bool
)

func escape(p unsafe.Pointer) {
	if escapeOn {
		escapeSink.Store((*byte)(p))
	}
}
