// Package cann picks the backends a program runs on: AscendCL and HCCL
// together.
//
// The SDK has two implementations of each API: the purego bindings of the
// installed libascendcl and libhccl (packages acl/native and hccl/native)
// and the host-memory NPU with its HCCL model (packages fallback and
// fallback/hcclsim). Programs that must run anywhere call OpenFromEnv,
// which reads CANN_BACKEND and picks both:
//
//	CANN_BACKEND=auto      native when the libraries load, the fallback otherwise (default)
//	CANN_BACKEND=native    native or an error
//	CANN_BACKEND=fallback  the fallback
//
// The two are never mixed: the HCCL model runs on the fallback's devices,
// the native HCCL on the native ones. An explicit library path (an option
// or CANN_ACL_LIB / CANN_HCCL_LIB) is authoritative even under auto: when
// it is set and does not load, Open fails instead of falling back
// silently. Every load error ends with what to do about it.
//
// This package imports both backends and so links purego; a program that
// wants a fully static binary imports package fallback directly instead.
//
// Open and the mode functions are safe for concurrent use; a Picked is a
// plain value whose backends are as safe for concurrent use as they say
// (all are).
package cann

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
	hcclnative "github.com/ascend-go/cann/hccl/native"
)

// Version is the SDK's release, a semantic version without the "v"; the
// first entry of CHANGELOG.md describes it (a test keeps the two in step).
const Version = "0.2.0-dev"

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

// Options configure Open. The zero value uses each backend's defaults and
// opens HCCL beside ACL.
type Options struct {
	Native     []native.Option     // the ACL binding
	HCCLNative []hcclnative.Option // the HCCL binding
	Fallback   []fallback.Option   // the host-memory NPU
	HCCLSim    hcclsim.Options     // its HCCL model
	// NoHCCL opens ACL only (Picked.HCCL stays nil), for programs that
	// do not communicate: a missing libhccl then does not matter.
	NoHCCL bool
}

// Picked is the pair of backends Open chose and why.
type Picked struct {
	Backend acl.Backend
	HCCL    hccl.Backend // nil with Options.NoHCCL
	Mode    Mode         // Native or Fallback: what was picked
	Reason  string       // one line a program can print
}

// Close releases the backends, HCCL first (idempotent).
func (p Picked) Close() error {
	var errs []error
	for _, b := range []any{p.HCCL, p.Backend} {
		if c, ok := b.(interface{ Close() error }); ok && b != nil {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// Open returns backends for mode: the native libraries, the fallback, or in
// Auto mode the native libraries when they load and the fallback
// otherwise — unless a library path was given explicitly (option or
// environment) and did not load, which is an error in every mode.
func Open(mode Mode, opt Options) (Picked, error) {
	switch mode {
	case Native:
		return openNative(opt)
	case Fallback:
		return openFallback(opt, "fallback: requested")
	case Auto, "":
		p, err := openNative(opt)
		if err == nil {
			return p, nil
		}
		if authoritative(err) {
			return Picked{}, err
		}
		if !opt.NoHCCL {
			// ACL did not load; an HCCL path set explicitly must still
			// load, or the program would silently run without it.
			h, herr := hcclnative.Open(opt.HCCLNative...)
			if authoritative(herr) {
				return Picked{}, herr
			}
			if h != nil {
				_ = h.Close()
			}
		}
		return openFallback(opt, "fallback: native libraries unavailable ("+err.Error()+")")
	}
	_, err := ParseMode(string(mode))
	return Picked{}, err
}

// authoritative reports whether err is a library that was not found where
// the caller said it is (an option or CANN_ACL_LIB / CANN_HCCL_LIB).
func authoritative(err error) bool {
	var nf *native.NotFoundError
	return errors.As(err, &nf) && nf.Authoritative != ""
}

// openNative loads the ACL binding and, unless opt.NoHCCL, the HCCL one;
// both or neither.
func openNative(opt Options) (Picked, error) {
	b, err := native.Open(opt.Native...)
	if err != nil {
		return Picked{}, err
	}
	p := Picked{Backend: b, Mode: Native, Reason: "native: loaded " + b.Path()}
	if opt.NoHCCL {
		return p, nil
	}
	h, err := hcclnative.Open(opt.HCCLNative...)
	if err != nil {
		_ = b.Close()
		return Picked{}, err
	}
	p.HCCL = h
	p.Reason += " and " + h.Path()
	return p, nil
}

func openFallback(opt Options, reason string) (Picked, error) {
	npu, err := fallback.New(opt.Fallback...)
	if err != nil {
		return Picked{}, err
	}
	p := Picked{Backend: npu, Mode: Fallback, Reason: reason}
	if !opt.NoHCCL {
		p.HCCL = hcclsim.New(npu, opt.HCCLSim)
	}
	return p, nil
}

// OpenFromEnv is Open with the mode from CANN_BACKEND.
func OpenFromEnv(opt Options) (Picked, error) {
	m, err := ModeFromEnv()
	if err != nil {
		return Picked{}, err
	}
	return Open(m, opt)
}
