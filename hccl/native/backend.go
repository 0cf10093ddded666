package native

import (
	"github.com/ascend-go/cann/hccl"
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
	LibHCCL  = "libhccl.so"
	LibHComm = "libhcomm.so"
)

// EnvLibrary is the environment override of the library location (a file
// or a directory).
const EnvLibrary = dl.EnvHCCLOverride

// Option configures Open; it is applied once, during the call.
type Option func(*config)

type config struct {
	path string
}

// WithLibraryPath loads the library from path, a file or a directory,
// instead of searching for it.
func WithLibraryPath(path string) Option { return func(c *config) { c.path = path } }

// Backend is the purego binding of HCCL. It is safe for concurrent use, as
// the C library is.
type Backend struct {
	lib dl.Binding
	fns [numSyms]uintptr
}

var _ hccl.Backend = (*Backend)(nil)

// Open loads the HCCL library and resolves its symbols.
func Open(opts ...Option) (*Backend, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	lib, err := dl.Open(dl.Spec{
		Family: "HCCL",
		Names:  []string{LibHCCL, LibHComm},
		Extras: []string{LibHComm},
		Path:   c.path,
		EnvVar: EnvLibrary,
	})
	if err != nil {
		return nil, err
	}
	b := &Backend{}
	b.lib.Set(lib)
	if err := lib.Resolve(dl.Table(syms[:], b.fns[:])); err != nil {
		lib.Close()
		return nil, err
	}
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
// when it is absent or the backend is closed: an escape hatch for functions
// this package does not bind, and for tests.
func (b *Backend) Symbol(name string) uintptr {
	if b == nil {
		return 0
	}
	return b.lib.Symbol(name)
}

// Has reports whether the C function name was resolved (bound functions)
// or is exported (any other name).
func (b *Backend) Has(name string) bool {
	if b == nil {
		return false
	}
	for i, s := range syms {
		if s.Name == name {
			return b.fns[i] != 0 && !b.lib.Closed()
		}
	}
	return b.Symbol(name) != 0
}

// Close unloads the library. Communicators still open are not destroyed;
// calls made after Close fail with HCCL_E_UNAVAIL. Close is idempotent, but
// must not run while another goroutine is inside a call: the library would
// be unloaded under it.
func (b *Backend) Close() error {
	if b == nil {
		return nil
	}
	return b.lib.Close()
}

// call runs the HcclResult-returning C function id. Pointer arguments must
// be converted to uintptr in the call expression: the directive keeps their
// objects alive and off the goroutine stack for the duration of the call.
//
//go:uintptrescapes
func (b *Backend) call(id sym, args ...uintptr) error {
	f := dl.GetFrame()
	n := copy(f.Args[:], args)
	return b.invoke(id, f, n)
}

func (b *Backend) unavailable(id sym) error {
	op := syms[id].Name
	if b.lib.Closed() {
		return &hccl.Error{Op: op, Code: hccl.EUnavail, Msg: "native: backend is closed"}
	}
	return &hccl.Error{Op: op, Code: hccl.ENotSupport,
		Msg: b.lib.NotExported(op)}
}

// errorf builds an error found before calling C.
func errorf(id sym, code hccl.Result, format string, args ...any) error {
	return hccl.Errorf(syms[id].Name, code, format, args...)
}

// rawCall calls fn and returns its raw result, for C functions that do not
// return an HcclResult.
//
//go:uintptrescapes
func (b *Backend) rawCall(fn uintptr, args ...uintptr) uintptr {
	f := dl.GetFrame()
	n := copy(f.Args[:], args)
	r := dl.CallRaw(fn, f, n)
	dl.PutFrame(f)
	return r
}

// invoke runs the HcclResult-returning C function id with the first n
// arguments of f and recycles f. Pointers stored in f are uintptrs the
// compiler does not track: callers pass them through dl.Escape first and
// keep them alive with runtime.KeepAlive after the call. HCCL keeps no
// per-thread error message (HcclGetErrorString only names a code), so none
// is read.
func (b *Backend) invoke(id sym, f *dl.Frame, n int) error {
	if b == nil {
		dl.PutFrame(f)
		return hccl.NilHandle(syms[id].Name, "native backend")
	}
	fn := b.fns[id]
	if fn == 0 || b.lib.Closed() {
		dl.PutFrame(f)
		return b.unavailable(id)
	}
	r, _ := dl.Call(fn, f, n, 0)
	dl.PutFrame(f)
	if int32(r) == 0 {
		return nil
	}
	return &hccl.Error{Op: syms[id].Name, Code: hccl.Result(int32(r))}
}
