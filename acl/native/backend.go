package native

import (
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
	lib dl.Binding
	fns [numRuntimeSyms]uintptr
	mdl [numModelSyms]uintptr
	ops [numOpSyms]uintptr

	setAttrFloat func(attr uintptr, name *byte, v float32) int32 // aclopSetAttrFloat (op.go)
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
	b := &Backend{}
	b.lib.Set(lib)
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
func (b *Backend) Path() string {
	if b == nil {
		return ""
	}
	return b.lib.Path()
}

// Paths lists every loaded file, the primary first.
func (b *Backend) Paths() []string {
	if b == nil {
		return nil
	}
	return b.lib.Paths()
}

// Symbol returns the address of any symbol of the loaded libraries, or 0
// when it is absent or the backend is closed. It is an escape hatch for
// functions this package does not bind, and for tests and benchmarks.
func (b *Backend) Symbol(name string) uintptr {
	if b == nil {
		return 0
	}
	return b.lib.Symbol(name)
}

// Has reports whether the library exports the C function name.
func (b *Backend) Has(name string) bool { return b.Symbol(name) != 0 }

// Close unloads the library. It does not call aclFinalize. Close is
// idempotent; calls made after it fail with ACL_ERROR_UNINITIALIZE.
func (b *Backend) Close() error {
	if b == nil {
		return nil
	}
	return b.lib.Close()
}

// invoke runs the runtime function id with the first n arguments of f.
// The caller owns f (and returns it to the pool).
func (b *Backend) invoke(id sym, f *dl.Frame, n int) error {
	if b == nil {
		return acl.NilHandle(runtimeSyms[id].Name, "native backend")
	}
	return b.status(runtimeSyms[id].Name, b.fns[id], f, n)
}

// status runs one aclError-returning C function fn (named op) with the
// first n arguments of f; on failure the error carries the message the
// library recorded for the calling thread (dl.Call reads it on that thread).
func (b *Backend) status(op string, fn uintptr, f *dl.Frame, n int) error {
	if b == nil {
		return acl.NilHandle(op, "native backend")
	}
	if fn == 0 || b.lib.Closed() {
		return b.unavailable(op, fn)
	}
	if r, msg := dl.Call(fn, f, n, b.fns[symGetRecentErrMsg]); int32(r) != 0 {
		return &acl.Error{Op: op, Code: acl.Code(int32(r)), Msg: msg}
	}
	return nil
}

// create runs a C constructor returning a pointer; NULL becomes an
// ACL_ERROR_BAD_ALLOC error carrying the thread's error message.
func (b *Backend) create(op string, fn uintptr, f *dl.Frame, n int) (uintptr, error) {
	if b == nil {
		return 0, acl.NilHandle(op, "native backend")
	}
	if fn == 0 || b.lib.Closed() {
		return 0, b.unavailable(op, fn)
	}
	r, msg := dl.CallPtr(fn, f, n, b.fns[symGetRecentErrMsg])
	if r != 0 {
		return r, nil
	}
	if msg == "" {
		msg = "native: " + op + " returned NULL"
	}
	return 0, &acl.Error{Op: op, Code: acl.CodeBadAlloc, Msg: msg}
}

func (b *Backend) unavailable(op string, fn uintptr) error {
	if b.lib.Closed() {
		return &acl.Error{Op: op, Code: acl.CodeUninitialize, Msg: "native: backend is closed"}
	}
	return &acl.Error{Op: op, Code: acl.CodeAPINotSupport,
		Msg: b.lib.NotExported(op)}
}

// ready reports whether fn can be called, for C functions that return no
// aclError.
func (b *Backend) ready(fn uintptr) bool {
	if b == nil {
		return false
	}
	return fn != 0 && !b.lib.Closed()
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
