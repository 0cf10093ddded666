package dl

import (
	"errors"
	"runtime"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

type handle struct {
	path string
	h    uintptr
}

// Library is a set of loaded shared objects that contribute symbols: the
// primary library first, then the extras. It is safe for concurrent use.
type Library struct {
	family  string
	mu      sync.Mutex
	handles []handle
	skipped []Attempt
	refs    int
	closed  bool // the opener's reference was released
}

// ErrClosed is returned when a closed Library is used.
var ErrClosed = errors.New("dl: library closed")

// Path is the file of the primary library.
func (l *Library) Path() string { return l.handles[0].path }

// Paths lists every loaded file, primary first.
func (l *Library) Paths() []string {
	out := make([]string, len(l.handles))
	for i, h := range l.handles {
		out[i] = h.path
	}
	return out
}

// Skipped lists extras that were present but failed to load.
func (l *Library) Skipped() []Attempt { return append([]Attempt(nil), l.skipped...) }

// Lookup returns the address of name in the first library that exports it,
// or 0. It returns 0 once the libraries are unloaded.
func (l *Library) Lookup(name string) uintptr {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refs == 0 {
		return 0
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return l.lookupLocked(name)
}

func (l *Library) lookupLocked(name string) uintptr {
	for _, h := range l.handles {
		if p, err := purego.Dlsym(h.h, name); err == nil && p != 0 {
			return p
		}
	}
	return 0
}

// Symbol is one entry of a symbol table: the C name, the slot that receives
// its address and whether the library must export it. Resolve writes the
// slots; the caller must not read them concurrently with it.
type Symbol struct {
	Name     string
	Slot     *uintptr
	Optional bool
}

// Entry is one row of a binding's symbol table: the C name of a function
// and whether Open may succeed without it.
type Entry struct {
	Name     string
	Optional bool
}

// Table pairs a binding's entries with the slots that receive their
// addresses (slots[i] for entries[i]), ready for Resolve.
func Table(entries []Entry, slots []uintptr) []Symbol {
	out := make([]Symbol, len(entries))
	for i, e := range entries {
		out[i] = Symbol{Name: e.Name, Slot: &slots[i], Optional: e.Optional}
	}
	return out
}

// MissingSymbolsError says which required symbols a library lacks; it is
// not modified after Resolve returns it.
type MissingSymbolsError struct {
	Family string
	Paths  []string
	Names  []string
}

// Error lists the missing symbols.
func (e *MissingSymbolsError) Error() string {
	return "dl: " + e.Family + " library " + strings.Join(e.Paths, ", ") +
		" lacks required symbols: " + strings.Join(e.Names, ", ")
}

// Resolve fills every slot of syms. Optional symbols that are missing get
// 0; if any required symbol is missing, Resolve returns a
// *MissingSymbolsError naming all of them (the slots of the symbols that
// were found are filled regardless).
func (l *Library) Resolve(syms []Symbol) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refs == 0 {
		return ErrClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var missing []string
	for _, s := range syms {
		p := l.lookupLocked(s.Name)
		*s.Slot = p
		if p == 0 && !s.Optional {
			missing = append(missing, s.Name)
		}
	}
	if missing != nil {
		return &MissingSymbolsError{Family: l.family, Paths: l.pathsLocked(), Names: missing}
	}
	return nil
}

func (l *Library) pathsLocked() []string {
	out := make([]string, len(l.handles))
	for i, h := range l.handles {
		out[i] = h.path
	}
	return out
}

// Acquire takes another reference that keeps the libraries loaded until
// release is called; release is idempotent.
func (l *Library) Acquire() (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refs == 0 {
		return nil, ErrClosed
	}
	l.refs++
	var once sync.Once
	return func() { once.Do(l.unref) }, nil
}

// Close releases the opener's reference; the libraries are unloaded when
// no reference is left. Later calls do nothing and return nil.
func (l *Library) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	return l.unrefErr()
}

func (l *Library) unref() { _ = l.unrefErr() }

func (l *Library) unrefErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refs--
	if l.refs > 0 {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var errs []error
	// Unload in reverse order: extras may depend on the primary.
	for i := len(l.handles) - 1; i >= 0; i-- {
		if err := purego.Dlclose(l.handles[i].h); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Refs reports the number of live references (for tests and diagnostics).
func (l *Library) Refs() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refs
}
