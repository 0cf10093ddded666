package osthread

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// Offsets into the runtime's g and m structs (runtime/runtime2.go, Go
// 1.21 to 1.26; later releases are built without the fast path, see the
// build constraints, until checked): g.m follows stack (2 words), stackguard0, stackguard1,
// _panic and _defer; m.procid follows g0, morebuf (a 6-word gobuf) and
// divmod (uint32, padded).
const (
	offGM      = 6 * 8
	offMProcid = 8 + 6*8 + 8
)

var (
	verifyOnce sync.Once
	fast       bool
)

// ID returns the id of the calling OS thread, as gettid(2) does. The
// caller must hold runtime.LockOSThread for the answer to stay true after
// the call returns.
func ID() int {
	verifyOnce.Do(verify)
	if fast {
		if id := procid(); id != 0 {
			return id
		}
	}
	return unix.Gettid()
}

// Fast reports whether ID reads the runtime's record (true) or makes the
// system call.
func Fast() bool {
	verifyOnce.Do(verify)
	return fast
}

// verify compares the runtime's record with gettid on the calling thread
// and on fresh threads; one mismatch disables the fast path for good.
func verify() {
	if !haveProcid {
		return
	}
	ok := make(chan bool, 4)
	check := func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ok <- procid() == unix.Gettid()
	}
	check()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(check)
	}
	wg.Wait()
	close(ok)
	fast = true
	for v := range ok {
		fast = fast && v
	}
}
