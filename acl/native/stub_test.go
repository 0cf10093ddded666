package native_test

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/internal/stubbuild"
)

const stubDir = "testdata/stub"

// stubLib builds the stub library (a variant when defines are given). Each
// distinct set of defines is a distinct file, hence a distinct instance of
// the library's global state in the process.
func stubLib(t testing.TB, defines ...string) string {
	t.Helper()
	return stubbuild.BuildWith(t, stubDir, native.LibACL, stubbuild.Options{Defines: defines})
}

// stub wraps a Backend over the stub library with the stub's test controls.
type stub struct {
	*native.Backend
	t testing.TB
}

// openStub opens the stub, resets its counters and faults, and closes it at
// the end of the test (finalizing it if the test left it initialized).
func openStub(t testing.TB, defines ...string) *stub {
	t.Helper()
	b, err := native.Open(native.WithLibraryPath(stubLib(t, defines...)))
	require.NoError(t, err)
	s := &stub{Backend: b, t: t}
	s.ccall("stub_reset")
	t.Cleanup(func() {
		_ = b.Finalize()
		require.NoError(t, b.Close())
	})
	return s
}

// initStub is openStub followed by aclInit.
func initStub(t testing.TB, defines ...string) *stub {
	t.Helper()
	s := openStub(t, defines...)
	require.NoError(t, s.Init(""))
	return s
}

// ccall calls a stub control function and returns its raw result.
//
//go:uintptrescapes
func (s *stub) ccall(name string, args ...uintptr) uintptr {
	s.t.Helper()
	fn := s.Symbol(name)
	require.NotZero(s.t, fn, "stub symbol %s", name)
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// code calls a stub control function returning aclError.
//
//go:uintptrescapes
func (s *stub) code(name string, args ...uintptr) error {
	if c := int32(s.ccall(name, args...)); c != 0 {
		return &acl.Error{Op: name, Code: acl.Code(c)}
	}
	return nil
}

func (s *stub) calls() uint64 { return uint64(s.ccall("stub_call_count")) }

func (s *stub) failCall(k uint64, code acl.Code) {
	s.ccall("stub_fail_call", uintptr(k), uintptr(code))
}

func (s *stub) failTask(st acl.StreamHandle, k uint64, code acl.Code) error {
	return s.code("stub_fail_task", uintptr(st), uintptr(k), uintptr(code))
}

// hold makes st busy until the returned release is called.
func (s *stub) hold(st acl.StreamHandle) (release func(), err error) {
	var token uint64
	if err := s.code("stub_hold_stream", uintptr(st), uintptr(unsafe.Pointer(&token))); err != nil {
		return nil, err
	}
	return func() { s.ccall("stub_release_hold", uintptr(token)) }, nil
}

// Kinds counted by stub_live and stub_leaked.
var liveKinds = []string{"device allocation", "MallocHost block", "host registration", "stream", "event", "context", "model"}

func (s *stub) count(fn string) []string {
	var out []string
	for k, name := range liveKinds {
		if n := s.ccall(fn, uintptr(k)); n != 0 {
			out = append(out, fmt.Sprintf("%d %s(s)", n, name))
		}
	}
	return out
}

// live lists the resources the stub holds now.
func (s *stub) live() []string { return s.count("stub_live") }

// leaks lists the resources a device reset, a context destroy or
// aclFinalize had to release since the stub was opened.
func (s *stub) leaks() []string { return s.count("stub_leaked") }

// bound locks the test goroutine to its thread for the rest of the test
// (the thread is discarded afterwards) and sets device 0 there.
func (s *stub) bound(t *testing.T) {
	t.Helper()
	runtime.LockOSThread()
	require.NoError(t, s.SetDevice(0))
}
