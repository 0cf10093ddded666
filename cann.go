// Package cann picks the AscendCL backend a program runs on.
//
// The SDK has two implementations of acl.Backend: the purego binding of the
// installed libascendcl (package acl/native) and the host-memory NPU
// (package fallback). Programs that must run anywhere call Open, which reads
// CANN_BACKEND:
//
//	CANN_BACKEND=auto      native when libascendcl loads, the fallback otherwise (default)
//	CANN_BACKEND=native    native or an error
//	CANN_BACKEND=fallback  the fallback
//
// This package imports both backends and so links purego; a program that
// wants a fully static binary imports package fallback directly instead.
//
// Open and the mode functions are safe for concurrent use; a Picked is a
// plain value whose Backend is as safe for concurrent use as that backend
// says (both are).
package cann

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/fallback"
)

// Version is the SDK's release, a semantic version without the "v"; the
// first entry of CHANGELOG.md describes it (a test keeps the two in step).
const Version = "0.1.0"

// Mode says which backend Open should use.
type Mode string

// Backend modes accepted by Open and by the CANN_BACKEND environment variable.
const (
	Auto     Mode = "auto"
	Native   Mode = "native"
	Fallback Mode = "fallback"
)

// EnvBackend is the environment variable ModeFromEnv reads.
const EnvBackend = "CANN_BACKEND"

// ErrUnknownMode is returned for a mode other than auto, native or fallback.
var ErrUnknownMode = errors.New("cann: unknown backend mode")

// ParseMode parses "auto", "native" or "fallback" (case-insensitive; "" is auto).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", Auto:
		return Auto, nil
	case Native, Fallback:
		return m, nil
	}
	return "", fmt.Errorf("%w %q (want auto, native or fallback)", ErrUnknownMode, s)
}

// ModeFromEnv returns the mode named by CANN_BACKEND (auto when unset).
func ModeFromEnv() (Mode, error) { return ParseMode(os.Getenv(EnvBackend)) }

// Options configure Open. The zero value uses each backend's defaults.
type Options struct {
	Native   []native.Option
	Fallback []fallback.Option
}

// Picked is the backend Open chose and why.
type Picked struct {
	Backend acl.Backend
	Mode    Mode   // Native or Fallback: what was picked
	Reason  string // one line a program can print
}

// Close releases the backend (idempotent).
func (p Picked) Close() error {
	if c, ok := p.Backend.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Open returns a backend for mode: the native library, the fallback, or in
// Auto mode the native library when it loads and the fallback otherwise.
func Open(mode Mode, opt Options) (Picked, error) {
	switch mode {
	case Native:
		b, err := native.Open(opt.Native...)
		if err != nil {
			return Picked{}, err
		}
		return Picked{b, Native, "native: loaded " + b.Path()}, nil
	case Fallback:
		b, err := fallback.New(opt.Fallback...)
		if err != nil {
			return Picked{}, err
		}
		return Picked{b, Fallback, "fallback: requested"}, nil
	case Auto, "":
		nb, nerr := native.Open(opt.Native...)
		if nerr == nil {
			return Picked{nb, Native, "native: loaded " + nb.Path()}, nil
		}
		b, err := fallback.New(opt.Fallback...)
		if err != nil {
			return Picked{}, err
		}
		return Picked{b, Fallback, "fallback: native library unavailable (" + nerr.Error() + ")"}, nil
	}
	_, err := ParseMode(string(mode))
	return Picked{}, err
}

// OpenFromEnv is Open with the mode from CANN_BACKEND.
func OpenFromEnv(opt Options) (Picked, error) {
	m, err := ModeFromEnv()
	if err != nil {
		return Picked{}, err
	}
	return Open(m, opt)
}
