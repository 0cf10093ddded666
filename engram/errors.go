package engram

import "errors"

// Sentinel errors. Every error of this package wraps one of them (or an
// *acl.Error / *hccl.Error from the runtime), and its text names the value
// at fault and the limit it broke.
var (
	// ErrConfig: a Config or argument out of range (the seed's ValueError
	// and tiling failures).
	ErrConfig = errors.New("engram: invalid argument")
	// ErrDestroyed: the Buffer was destroyed.
	ErrDestroyed = errors.New("engram: buffer destroyed")
	// ErrNotWritten: a fetch before the first Write.
	ErrNotWritten = errors.New("engram: storage not written")
	// ErrPending: a fetch or write while a fetch is pending.
	ErrPending = errors.New("engram: fetch pending")
	// ErrStorage: a write whose storage conflicts with the registered one
	// (zero copy: another address or size, or a switch of mode).
	ErrStorage = errors.New("engram: storage conflict")
	// ErrIndex: an out-of-range index under IndexError.
	ErrIndex = errors.New("engram: index out of range")
	// ErrNotSupported: the backend lacks the one-sided service.
	ErrNotSupported = errors.New("engram: not supported")
	// ErrStale: Wait on a handle whose fetch was already waited for.
	ErrStale = errors.New("engram: stale fetch handle")
)
