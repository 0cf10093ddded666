package dl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ebitengine/purego"
)

// Environment variables consulted by Open besides Spec.EnvVar.
const (
	EnvAscendHome    = "ASCEND_HOME_PATH"
	EnvToolkitHome   = "ASCEND_TOOLKIT_HOME"
	EnvACLOverride   = "CANN_ACL_LIB"
	EnvHCCLOverride  = "CANN_HCCL_LIB"
	defaultOpenFlags = purego.RTLD_LAZY | purego.RTLD_LOCAL
)

// Spec says which library family to load and where to look first. It is a
// plain value: safe to share once built.
type Spec struct {
	// Family names the library in errors ("ACL", "HCCL").
	Family string
	// Names are the alternative primary libraries in preference order.
	Names []string
	// Extras are loaded beside the primary when present; lookups fall
	// through to them.
	Extras []string
	// Path is the caller's explicit file or directory ("" for none).
	Path string
	// EnvVar names the environment override ("" for none).
	EnvVar string
	// Flags for dlopen; 0 means RTLD_LAZY|RTLD_LOCAL.
	Flags int
}

// Attempt records one location Open tried and why it did not load (an
// immutable value).
type Attempt struct {
	Path string
	Err  error
}

// NotFoundError is returned by Open when no location yields a library; it
// is not modified after Open returns it.
type NotFoundError struct {
	Family   string
	Attempts []Attempt
	// Authoritative names the caller's option ("option") or the
	// environment override ("$CANN_ACL_LIB") when that was the only place
	// tried; "" when the default locations were searched.
	Authoritative string
	// EnvVar is Spec.EnvVar, named in the advice that ends the message.
	EnvVar string
}

// Error says which library was not found, where it was looked for, and
// what to do about it.
func (e *NotFoundError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dl: cannot load the %s library", e.Family)
	for i, a := range e.Attempts {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %v", a.Path, a.Err)
	}
	b.WriteString(". ")
	b.WriteString(e.Advice())
	return b.String()
}

// Advice is the last sentence of Error: what the user can do.
func (e *NotFoundError) Advice() string {
	switch {
	case e.Authoritative == "option":
		return "The path given to Open is authoritative: point it at the library, or pick the fallback backend (CANN_BACKEND=fallback)."
	case e.Authoritative != "":
		return fmt.Sprintf("%s is authoritative: point it at the %s library or unset it, or pick the fallback backend (CANN_BACKEND=fallback).", e.Authoritative, e.Family)
	}
	env := ""
	if e.EnvVar != "" {
		env = ", or " + e.EnvVar + " to the library file"
	}
	return fmt.Sprintf("Set %s to the CANN install (its lib64 is searched)%s, or pick the fallback backend (CANN_BACKEND=fallback).", EnvAscendHome, env)
}

var errNoFile = errors.New("no such file")

// location is one place to look: a directory, a file, or the loader path
// (dir == "" && file == "").
type location struct {
	source string // what put it on the list, for errors
	dir    string
	file   string
}

// locations lists where to look, in order, following the package rules.
func (s *Spec) locations() []location {
	if s.Path != "" {
		return []location{pathLocation("option", s.Path)}
	}
	if s.EnvVar != "" {
		if v := os.Getenv(s.EnvVar); v != "" {
			return []location{pathLocation("$"+s.EnvVar, v)}
		}
	}
	var locs []location
	for _, env := range []string{EnvAscendHome, EnvToolkitHome} {
		if v := os.Getenv(env); v != "" {
			locs = append(locs, location{source: "$" + env, dir: filepath.Join(v, "lib64")})
		}
	}
	return append(locs, location{source: "loader path"})
}

func pathLocation(source, p string) location {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return location{source: source, dir: p}
	}
	return location{source: source, file: p}
}

// Open loads the library described by s; see the package documentation for
// the search order. The caller owns one reference and must Close it.
func Open(s Spec) (*Library, error) {
	if len(s.Names) == 0 {
		return nil, errors.New("dl: Spec.Names is empty")
	}
	flags := s.Flags
	if flags == 0 {
		flags = defaultOpenFlags
	}
	// dlopen failures are reported through dlerror, which is per thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	nf := &NotFoundError{Family: s.Family, EnvVar: s.EnvVar}
	locs := s.locations()
	if len(locs) == 1 && locs[0].source != "loader path" {
		nf.Authoritative = locs[0].source
	}
	for _, loc := range locs {
		lib, attempts := openAt(&s, loc, flags)
		nf.Attempts = append(nf.Attempts, attempts...)
		if lib != nil {
			return lib, nil
		}
	}
	return nil, nf
}

// openAt tries the primary names at one location, then the extras beside
// the primary that loaded.
func openAt(s *Spec, loc location, flags int) (*Library, []Attempt) {
	var attempts []Attempt
	try := func(p string) uintptr {
		if loc.dir != "" || loc.file != "" {
			if _, err := os.Stat(p); err != nil {
				attempts = append(attempts, Attempt{Path: p + " (" + loc.source + ")", Err: errNoFile})
				return 0
			}
		}
		h, err := purego.Dlopen(p, flags)
		if err != nil {
			attempts = append(attempts, Attempt{Path: p + " (" + loc.source + ")", Err: err})
			return 0
		}
		return h
	}
	place := func(name string) string {
		if loc.dir != "" {
			return filepath.Join(loc.dir, name)
		}
		return name
	}

	var primary handle
	if loc.file != "" {
		if h := try(loc.file); h != 0 {
			primary = handle{path: loc.file, h: h}
		}
	} else {
		for _, name := range s.Names {
			p := place(name)
			if h := try(p); h != 0 {
				primary = handle{path: p, h: h}
				break
			}
		}
	}
	if primary.h == 0 {
		return nil, attempts
	}
	lib := &Library{family: s.Family, handles: []handle{primary}, refs: 1}
	extraDir := loc.dir
	if loc.file != "" {
		extraDir = filepath.Dir(loc.file)
	}
	for _, name := range s.Extras {
		if filepath.Base(primary.path) == name {
			continue
		}
		p := name
		if extraDir != "" {
			p = filepath.Join(extraDir, name)
			if _, err := os.Stat(p); err != nil {
				continue // extras are optional
			}
		}
		if h, err := purego.Dlopen(p, flags); err == nil {
			lib.handles = append(lib.handles, handle{path: p, h: h})
		} else {
			lib.skipped = append(lib.skipped, Attempt{Path: p, Err: err})
		}
	}
	return lib, nil
}
