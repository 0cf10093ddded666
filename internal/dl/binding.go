package dl

import (
	"strings"
	"sync"
	"sync/atomic"
)

// Binding is a purego binding's hold on its loaded libraries: the Library,
// the closed state every call checks, and an idempotent Close. The ACL and
// HCCL backends embed one each as a field.
type Binding struct {
	lib    *Library
	closed atomic.Bool
	once   sync.Once
	err    error
}

// Set makes l the binding's library; it is called once, by Open, before
// the binding is shared.
func (b *Binding) Set(l *Library) { b.lib = l }

// Path is the file of the primary library.
func (b *Binding) Path() string { return b.lib.Path() }

// Paths lists every loaded file, the primary first.
func (b *Binding) Paths() []string { return b.lib.Paths() }

// Symbol returns the address of name in the loaded libraries, or 0 when it
// is absent or the binding is closed.
func (b *Binding) Symbol(name string) uintptr {
	if b.closed.Load() {
		return 0
	}
	return b.lib.Lookup(name)
}

// Closed reports whether Close was called.
func (b *Binding) Closed() bool { return b.closed.Load() }

// Close marks the binding closed and releases the opener's reference to
// the libraries; later calls return the first call's result.
func (b *Binding) Close() error {
	b.once.Do(func() {
		b.closed.Store(true)
		b.err = b.lib.Close()
	})
	return b.err
}

// NotExported is the message of a call to a C function the libraries do
// not export.
func (b *Binding) NotExported(op string) string {
	return "native: " + op + " is not exported by " + strings.Join(b.lib.Paths(), ", ")
}
