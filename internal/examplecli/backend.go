// Package examplecli is what the example programs share on their command
// line, so that every one of them reads its flags the same way: the
// -backend flag that follows CANN_BACKEND, the refusal of stray
// arguments, early checks that output paths can be written, and the
// check of a job's size against the device memory the backend reports.
// Every check runs before a program allocates memory or starts a
// process, so a bad flag is a one-line error and exit status 2, never a
// panic, an out-of-memory crash or minutes of work thrown away.
package examplecli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ascend-go/cann"
)

// Backend is the backend an example runs on and where that choice came
// from, so that an error can name what the user typed.
type Backend struct {
	Mode cann.Mode
	// Source is "-backend X", "CANN_BACKEND=X" or "default".
	Source string
}

// FromFlag reports whether the choice was the -backend flag.
func (b Backend) FromFlag() bool { return strings.HasPrefix(b.Source, "-backend") }

// BackendFlag registers -backend on fs. Its default is empty (so -h
// prints no second default); ResolveBackend reads CANN_BACKEND when the
// flag is not given. The usage names the values cann.ParseMode accepts.
func BackendFlag(fs *flag.FlagSet) *string {
	return fs.String("backend", "", "auto, native or fallback (when not given: $"+cann.EnvBackend+", else fallback)")
}

// ResolveBackend picks the backend from the flag's value, else from
// CANN_BACKEND, else the fallback: the examples build models in the
// SDK's ge format, which only the fallback runs, so they do not default
// to auto. A value cann.ParseMode refuses is an error naming where it
// came from (cann.ErrUnknownMode).
func ResolveBackend(flagValue string) (Backend, error) {
	if v := strings.TrimSpace(flagValue); v != "" {
		m, err := cann.ParseMode(v)
		if err != nil {
			return Backend{}, fmt.Errorf("-backend: %w", err)
		}
		return Backend{m, "-backend " + v}, nil
	}
	if v, ok := os.LookupEnv(cann.EnvBackend); ok && strings.TrimSpace(v) != "" {
		m, err := cann.ParseMode(v)
		if err != nil {
			return Backend{}, fmt.Errorf("%s: %w", cann.EnvBackend, err)
		}
		return Backend{m, cann.EnvBackend + "=" + v}, nil
	}
	return Backend{cann.Fallback, "default"}, nil
}

// Open opens the chosen backends with cann.Open. Its error names the
// choice, and when the choice was -backend the library's advice to set
// CANN_BACKEND=fallback (which a -backend flag overrides, so it would not
// help) becomes -backend fallback.
func (b Backend) Open(opt cann.Options) (cann.Picked, error) {
	p, err := cann.Open(b.Mode, opt)
	if err != nil {
		return cann.Picked{}, &OpenError{Backend: b, Err: err}
	}
	return p, nil
}

// OpenError is a backend that did not open, with the choice that asked
// for it.
type OpenError struct {
	Backend Backend
	Err     error
}

func (e *OpenError) Error() string {
	msg := e.Err.Error()
	if e.Backend.FromFlag() {
		msg = strings.ReplaceAll(msg, cann.EnvBackend+"=fallback", "-backend fallback")
	}
	return fmt.Sprintf("%s: %s", e.Backend.Source, msg)
}

func (e *OpenError) Unwrap() error { return e.Err }

// ErrFallbackOnly is returned by FallbackOnly for the native backend.
var ErrFallbackOnly = errors.New("runs on the fallback only")

// FallbackOnly resolves the choice of a program that has no native path
// (its models are ge-format or ONNX, its ranks are fallback processes):
// fallback and auto give the fallback (auto picks what can run the
// program), native is refused with why and what to run on the device
// instead (matching ErrFallbackOnly).
func (b Backend) FallbackOnly(prog, why string) (Backend, error) {
	if b.Mode == cann.Native {
		return b, fmt.Errorf("%s: %s %w: %s", b.Source, prog, ErrFallbackOnly, why)
	}
	return Backend{cann.Fallback, b.Source}, nil
}
