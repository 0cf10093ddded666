// Package acltest is the conformance suite every acl.Backend must pass.
//
// Run drives one fresh, uninitialized backend through the whole AscendCL
// runtime contract: use before aclInit, every Backend method, every row of
// docs/misuse.md with its exact error code, the per-OS-thread current
// context, data correctness of copies on random bytes, stream and event
// ordering, and the idiomatic layer of package acl (Runtime, Device, Stream,
// Event, DeviceBuffer, HostBuffer) on top of the backend. It ends with
// aclFinalize, so a backend is good for one Run; the native library is
// process-global and the suite never asks for a second instance.
//
// The subtest names are the same on every backend; what cannot be provoked
// on a backend is skipped by name, never left out, so listings compare.
//
// Run drives its backend from one test at a time (its subtests start
// goroutines of their own to test concurrency); two Runs must not share a
// backend. Options is a plain value.
package acltest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Options carry what legitimately differs between backends.
type Options struct {
	// ConfigPath is passed to aclInit ("" passes NULL).
	ConfigPath string

	// HoldStream enqueues on stream s a task that keeps s busy until
	// release is called (release must be idempotent and safe to call from
	// any goroutine). The suite calls it with s's context current on the
	// calling OS thread. It is needed to provoke
	// ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, ACL_ERROR_RT_EVENT_NOT_COMPLETE,
	// context cancellation of waits, and to prove ordering across streams;
	// when nil those subtests are skipped.
	HoldStream func(s acl.StreamHandle) (release func(), err error)

	// FailNextTask makes the next task enqueued on stream s fail with code
	// when it executes. The suite calls it with s's context current. When
	// nil the sticky stream error subtests are skipped.
	FailNextTask func(s acl.StreamHandle, code acl.Code) error

	// SkipUndefined leaves out the misuse that is undefined behaviour in
	// C — unknown or destroyed stream, event and context handles, double
	// frees — for a real CANN installation, where such a call may crash the
	// process instead of returning a code. The fallback and the stub run
	// them all.
	SkipUndefined bool

	// Leaks reports, one line each, the resources (memory, streams,
	// events, contexts, registrations) that aclrtResetDevice,
	// aclrtDestroyContext or aclFinalize had to release because the
	// program had not, since the backend was created. The suite checks it
	// is empty after the raw subtests reset their device, after the
	// idiomatic layer closed a Device, and after aclFinalize. When nil
	// those checks are skipped.
	Leaks func() []string

	// StreamLimit and EventLimit are the backend's per-device limits of
	// streams and events (fallback.WithResourceLimits; the C stub's
	// STUB_MAX_STREAMS / STUB_MAX_EVENTS). The suite fills a device up to
	// them, so they should be small; 0 skips those subtests (a real
	// device's limits are its driver's).
	StreamLimit, EventLimit int

	// Model builds the backend's model file for the model subtests: one
	// input and one output per ModelIO, output = input + Addend, with a
	// feature map (intermediate tensors or work memory) of more than a
	// byte. When nil
	// the model subtests are skipped (a real installation has no builder).
	Model func(ios []ModelIO) ([]byte, error)

	// BatchModel builds a dynamic-batch model (ATC's --dynamic_batch_size)
	// with these gears: the ios with dim 0 as the batch (their Dims are the
	// largest gear's), output = input + Addend on the gear's rows, and the
	// extra input acl.DynamicTensorName. When nil the DynamicBatch subtest
	// is skipped.
	BatchModel func(ios []ModelIO, gears []uint64) ([]byte, error)

	// DynamicModel builds a model with unknown dims (ATC's
	// --input_shape with -1): the ios' -1 dims are unknown, each with the
	// range [1, -1]; output = input + Addend, of the input's real shape.
	// When nil the UnknownDims subtest is skipped.
	DynamicModel func(ios []ModelIO) ([]byte, error)

	// ModelLacks declares the model features the backend does not have;
	// only the subtests of those features skip.
	ModelLacks []ModelFeature
}

// Run runs the conformance suite on b, which must be fresh and not yet
// initialized. It initializes b, runs every subtest in order and finalizes
// b last. It must not run in parallel with anything else using b.
func Run(t *testing.T, b acl.Backend, opt Options) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("backend %q, random seed %d", b.Name(), seed)
	s := &suite{b: b, opt: opt, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}

	t.Run("BeforeInit", s.beforeInit)
	if !t.Run("Init", s.init) {
		t.Fatal("the backend did not initialize; nothing else can run")
	}
	t.Run("Info", s.info)
	t.Run("Device", s.device)
	if !t.Run("Setup", s.setup) {
		t.Fatal("no device context; nothing else can run")
	}
	t.Run("Context", s.context)
	t.Run("Stream", s.stream)
	t.Run("Event", s.event)
	t.Run("Memory", s.memory)
	t.Run("Copy", s.copy)
	t.Run("HostRegister", s.hostRegister)
	t.Run("SourceRules", s.sourceRules)
	t.Run("Model", s.modelAPI)
	t.Run("Teardown", s.teardown)
	t.Run("Idiomatic", s.idiomatic)
	t.Run("Finalize", s.finalize)
	t.Run("AfterFinalize", s.afterFinalize)
}

// suite is the state shared by the subtests of one Run. Subtests run one
// after another, never in parallel.
type suite struct {
	b   acl.Backend
	opt Options
	rng *rand.Rand
	rt  *acl.Runtime

	devCount int32
	dev      int32             // the device the raw subtests use
	ctx      acl.ContextHandle // its context, created by Setup
}

// bind locks the calling goroutine (a subtest's) to its OS thread for the
// rest of its life and makes the suite's context current there. The lock
// is never released, so the thread dies with the subtest and no pooled
// thread keeps a current context the suite set.
func (s *suite) bind(t *testing.T) {
	t.Helper()
	require.NotZero(t, s.ctx, "no suite context")
	runtime.LockOSThread()
	require.NoError(t, s.b.SetCurrentContext(s.ctx))
}

// undefined runs f, a misuse that is undefined behaviour in C, as the
// subtest what — skipped, visibly and with the reason, when
// Options.SkipUndefined says the backend may crash on it. The subtest runs
// on its own goroutine: it locks that to a thread (for its life, as bind
// does) and makes current there the context current on the caller's.
func (s *suite) undefined(t *testing.T, what string, f func(t *testing.T)) {
	t.Helper()
	cur, curErr := s.b.GetCurrentContext()
	t.Run(what, func(t *testing.T) {
		if s.opt.SkipUndefined {
			t.Skipf("undefined behaviour in C, left out where the backend may crash on it (Options.SkipUndefined): %s", what)
		}
		runtime.LockOSThread()
		if curErr == nil && cur != 0 {
			_ = s.b.SetCurrentContext(cur) // may be destroyed already: the misuse under test
		}
		f(t)
	})
}

// errPanicked stands for the result of a call that panicked.
var errPanicked = errors.New("acltest: call panicked")

// try runs f and returns its error, turning a panic into a test failure:
// a backend must answer misuse with an error code, never a panic.
func try(t *testing.T, what string, f func() error) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v\n%s", what, r, debug.Stack())
			err = errPanicked
		}
	}()
	return f()
}

// expect runs f (panics are failures) and asserts that it fails with the
// exact aclError code want, as an *acl.Error matching errors.Is.
func expect(t *testing.T, want acl.Code, what string, f func() error) bool {
	t.Helper()
	err := try(t, what, f)
	if err == nil {
		t.Errorf("%s: succeeded, want %v (%d)", what, want, int32(want))
		return false
	}
	var e *acl.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: error %v (%T) is not an *acl.Error, want %v", what, err, err, want)
		return false
	}
	if !errors.Is(err, &acl.Error{Code: want}) {
		t.Errorf("%s: got %v (%d), want %v (%d); error: %v", what, e.Code, int32(e.Code), want, int32(want), err)
		return false
	}
	return true
}

// ok runs f (panics are failures) and requires success.
func ok(t *testing.T, what string, f func() error) {
	t.Helper()
	require.NoError(t, try(t, what, f), what)
}

// randBytes returns n random bytes.
func (s *suite) randBytes(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(s.rng.Uint32())
	}
	return p
}

// hostPtr returns the address of p's first byte (p must not be empty).
func hostPtr(p []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(p)) }

// bogus handles and pointers: values no backend hands out (odd and high,
// never a live allocation) used to check that unknown handles are refused.
const bogusHandle = 0x7ead_beef_0001

// onFreshThread runs f on a goroutine locked to an OS thread that has no
// current context, and waits for it. Go reuses threads, and one may still
// carry a context some earlier code made current there; such a thread is
// discarded by exiting its goroutine while locked (Go then ends the thread)
// and another is tried. f runs off the test goroutine: it must report with
// assert, not require.
func (s *suite) onFreshThread(t *testing.T, f func()) {
	t.Helper()
	for range 64 {
		fresh := make(chan bool)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			_, err := s.b.GetCurrentContext()
			if acl.CodeOf(err) != acl.CodeRTContextNull {
				fresh <- false
				return
			}
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("panic on a fresh thread: %v\n%s", r, debug.Stack())
				}
				fresh <- true
			}()
			f()
		}()
		if <-fresh {
			return
		}
	}
	t.Fatal("could not get an OS thread without a current context in 64 tries")
}

// onThread runs f on a new goroutine locked to its own OS thread, waits
// for it, and ends the thread afterwards. Panics are failures.
func onThread(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("panic on a helper thread: %v\n%s", r, debug.Stack())
			}
		}()
		f()
	}()
	<-done
}

// check is assert.NoError with the call named, for goroutines other than
// the test's.
func check(t *testing.T, err error, format string, args ...any) bool {
	t.Helper()
	return assert.NoError(t, err, fmt.Sprintf(format, args...))
}
