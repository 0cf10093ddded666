package hcclsim

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Futexes on shared memory let a rank sleep until a peer in another
// process changes a word, without polling and without a socket. The words
// live in MAP_SHARED file mappings, so the (non-private) futex is keyed by
// the file page and works across processes.

const (
	futexWait = 0 // FUTEX_WAIT
	futexWake = 1 // FUTEX_WAKE
)

// futexSleep waits while *addr == val, at most d. Spurious and early
// returns are fine: callers re-check their condition.
func futexSleep(addr *uint32, val uint32, d time.Duration) {
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(d.Nanoseconds())
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWait, uintptr(val),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWakeAll wakes every waiter on addr.
func futexWakeAll(addr *uint32) {
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWake, uintptr(1<<31-1), 0, 0, 0)
}

// doorbell is a futex word a rank sleeps on. Whoever changes state the
// rank may be waiting for rings its doorbell after the change, so a waiter
// that reads the bell, finds its condition false and sleeps on the value
// it read can never miss a wake-up.
type doorbell struct {
	bell     *uint32 // the ring counter
	sleepers *uint32 // how many sleep on it: ringing skips the syscall when none
}

func (d doorbell) ring() {
	atomic.AddUint32(d.bell, 1)
	if atomic.LoadUint32(d.sleepers) != 0 {
		futexWakeAll(d.bell)
	}
}

// waitUntil polls cond, sleeping on the bell between checks, until cond
// holds, stop returns an error, or the deadline passes (HCCL_E_TIMEOUT
// with the description what).
func (d doorbell) waitUntil(cond func() bool, stop func() error, deadline time.Time, what func() string) error {
	const slice = 50 * time.Millisecond // bounds how late an abort is noticed
	spins := 0
	for {
		v := atomic.LoadUint32(d.bell)
		if cond() {
			return nil
		}
		if err := stop(); err != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return errf(codeTimeout, "timed out: %s", what())
		}
		// A short spin catches a peer that is a few microseconds behind
		// without paying for a sleep and a wake.
		if spins < 64 {
			spins++
			if spins%8 == 0 {
				yield()
			}
			continue
		}
		atomic.AddUint32(d.sleepers, 1)
		if atomic.LoadUint32(d.bell) == v && !cond() {
			futexSleep(d.bell, v, min(left, slice))
		}
		atomic.AddUint32(d.sleepers, ^uint32(0))
	}
}

// yield lets other goroutines run during a short spin.
func yield() { runtime.Gosched() }

// sleep waits on the bell while it still reads v, at most d.
func (d doorbell) sleep(v uint32, dur time.Duration) {
	atomic.AddUint32(d.sleepers, 1)
	if atomic.LoadUint32(d.bell) == v {
		futexSleep(d.bell, v, dur)
	}
	atomic.AddUint32(d.sleepers, ^uint32(0))
}

// value reads the ring counter.
func (d doorbell) value() uint32 { return atomic.LoadUint32(d.bell) }
