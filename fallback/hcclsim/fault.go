package hcclsim

import (
	"runtime/debug"
)

// Faults in shared memory. A rank maps its peers' segments and device
// memory MAP_SHARED; an access to a page past the end of the file behind a
// mapping raises SIGBUS (mmap(2): "Attempted access to a page of the
// buffer that lies beyond the end of the mapped file"), which by default
// kills the process. Device memory files are sealed against shrinking
// (fallback/arena_file.go; peers check the seals before mapping,
// peermap.go), but a segment is a file in the shared-memory directory,
// which cannot be sealed (fcntl(2): seals are for memfd_create files; a
// tmpfs file opened by name carries F_SEAL_SEAL), so a rank that keeps a
// peer's segment open can truncate it, and a full directory can refuse a
// page a hole punched in a segment needs again. Every code path that
// touches a segment therefore runs with debug.SetPanicOnFault, which turns
// the fault into a run-time panic carrying the address (runtime.Error with
// an Addr method); catchFault recovers it into HCCL_E_REMOTE, and the
// rank's world is aborted, so its later operations fail at once instead of
// touching the memory again. A peer's waits on this rank end at their own
// timeouts (507048 on their streams) or at a fault of their own.

// faultAddr is the panic value of a memory fault under SetPanicOnFault.
type faultAddr interface {
	error
	Addr() uintptr
}

// catchFault runs f with faults turned into panics and returns f's error,
// or an HCCL_E_REMOTE error naming what (faulted true) if f faulted. Any
// other panic goes on.
func catchFault(what string, f func() error) (err error, faulted bool) {
	prev := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(prev)
		if p := recover(); p != nil {
			fa, ok := p.(faultAddr)
			if !ok {
				panic(p)
			}
			err = errf(codeRemote, "%s: memory shared with the other ranks faulted at %#x (a shared file was truncated under its mapping)",
				what, fa.Addr())
			faulted = true
		}
	}()
	return f(), false
}

// guarded runs a step of w that touches shared memory (see catchFault);
// after a fault the world is aborted with the fault's error.
func (w *shmWorld) guarded(what string, f func() error) error {
	err, faulted := catchFault(what, f)
	if faulted {
		w.abort(err)
	}
	return err
}

// ringSafe rings s's doorbell, ignoring a fault (the segment is gone: no
// one can be waiting on it).
func ringSafe(s *segment) {
	_, _ = catchFault("ring", func() error { s.bell().ring(); return nil })
}
