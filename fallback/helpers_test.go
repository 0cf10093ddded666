package fallback

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// testMem is the device memory of test NPUs: small enough that capacity
// tests are quick, large enough for the copies.
const testMem = 64 << 20

// newTestNPU returns an initialized NPU with device 0 set on the calling
// goroutine's OS thread, which stays locked for the test. At cleanup it
// closes the NPU and checks that no stream goroutine is left.
func newTestNPU(t *testing.T, opts ...Option) *NPU {
	t.Helper()
	base := streamWorkers()
	opts = append([]Option{WithDeviceMemory(testMem), WithHostMemory(testMem)}, opts...)
	n, err := New(opts...)
	require.NoError(t, err)
	runtime.LockOSThread()
	t.Cleanup(func() {
		require.NoError(t, n.Close())
		runtime.UnlockOSThread()
		waitWorkers(t, base)
	})
	require.NoError(t, n.Init(""))
	require.NoError(t, n.SetDevice(0))
	return n
}

// streamWorkers counts goroutines running a stream loop.
func streamWorkers() int {
	buf := make([]byte, 1<<20)
	for {
		k := runtime.Stack(buf, true)
		if k < len(buf) {
			return bytes.Count(buf[:k], []byte("created by github.com/ascend-go/cann/fallback.newStream"))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// hangBound bounds waits that a passing test never reaches: a bound on a
// hang, not on speed, so generous enough for a loaded machine under -race.
const (
	hangBound   = time.Minute
	hangBoundMs = int32(hangBound / time.Millisecond)
)

// requireWorkers waits briefly until exactly want stream goroutines exist.
func requireWorkers(t *testing.T, want int) {
	t.Helper()
	require.Eventually(t, func() bool { return streamWorkers() == want }, hangBound, time.Millisecond,
		"want %d stream goroutines", want)
}

// waitWorkers waits (briefly: exiting goroutines need a moment to be gone
// from the dump) until at most want stream goroutines remain.
func waitWorkers(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(hangBound)
	for streamWorkers() > want {
		if time.Now().After(deadline) {
			t.Fatalf("%d stream goroutines leaked", streamWorkers()-want)
		}
		time.Sleep(time.Millisecond)
	}
}

// codeOf asserts err is an *acl.Error with code want.
func requireCode(t *testing.T, want acl.Code, err error, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	var e *acl.Error
	require.True(t, errors.As(err, &e), "error %v (%T) is not an *acl.Error", err, err)
	require.Equal(t, want, e.Code, "error: %v", err)
}

func assertCode(t *testing.T, want acl.Code, err error, msgAndArgs ...any) bool {
	t.Helper()
	return assert.Equal(t, want, acl.CodeOf(err), append([]any{"error: %v", err}, msgAndArgs...)...)
}

// onThread runs f on a fresh goroutine locked to its own OS thread (the
// thread ends with it) and waits.
func onThread(f func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		f()
	}()
	<-done
}

func newRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
}

func randBytes(r *rand.Rand, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return p
}

func ptrOf(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

func mustMalloc(t *testing.T, n *NPU, size uintptr) unsafe.Pointer {
	t.Helper()
	p, err := n.Malloc(size, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	return p
}

func mustMallocHost(t *testing.T, n *NPU, size int) []byte {
	t.Helper()
	p, err := n.MallocHost(uintptr(size))
	require.NoError(t, err)
	return unsafe.Slice((*byte)(p), size)
}

// hold queues a task on s that blocks until the returned release is
// called (idempotent).
func hold(t *testing.T, n *NPU, s acl.StreamHandle) func() {
	t.Helper()
	ch := make(chan struct{})
	require.NoError(t, n.enqueueTask(s, func() error { <-ch; return nil }))
	done := false
	release := func() {
		if !done {
			done = true
			close(ch)
		}
	}
	t.Cleanup(release)
	return release
}

func unsafeBytes(p unsafe.Pointer, n uintptr) []byte { return unsafe.Slice((*byte)(p), n) }

// pages maps n anonymous 4 KiB pages outside the Go heap, unmapped at the
// end of the test.
func pages(t *testing.T, n int) []byte {
	t.Helper()
	p, err := unix.Mmap(-1, 0, n*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Munmap(p) })
	return p
}

func readFile(name string) ([]byte, error) { return os.ReadFile(name) }

func itoa(i int) string { return strconv.Itoa(i) }
