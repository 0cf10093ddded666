package native_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/hccltest"
	"github.com/ascend-go/cann/hccl/native"
	"github.com/ascend-go/cann/internal/stubbuild"
)

const stubDir = "testdata/stub"

// stubLib builds the stub library (a variant when defines are given). Each
// set of defines is a distinct file, hence a distinct instance of the
// stub's global state in the process.
func stubLib(t testing.TB, defines ...string) string {
	t.Helper()
	return stubbuild.BuildWith(t, stubDir, native.LibHCCL, stubbuild.Options{Defines: defines})
}

// openStub opens the stub through the native backend and closes it at the
// end of the test.
func openStub(t testing.TB, defines ...string) *native.Backend {
	t.Helper()
	b, err := native.Open(native.WithLibraryPath(stubLib(t, defines...)))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	return b
}

// stubCall calls a test hook of the stub.
//
//go:uintptrescapes
func stubCall(t testing.TB, b *native.Backend, name string, args ...uintptr) uintptr {
	t.Helper()
	fn := b.Symbol(name)
	require.NotZero(t, fn, "stub hook %s", name)
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// setTimeout sets the stub's rendezvous timeout.
func setTimeout(t testing.TB, b *native.Backend, d time.Duration) {
	stubCall(t, b, "HcclStubSetTimeoutMs", uintptr(d.Milliseconds()))
}

// stubEnv runs the conformance suite over the stub: ranks are goroutines
// of this process, buffers are anonymous mappings (plain memory outside the
// Go heap), operations run at the call and report failures on the rank's
// stub stream (testdata/stub/stream.c), whose synchronize is a stub hook.
type stubEnv struct {
	t testing.TB
	b *native.Backend
}

func (e *stubEnv) Backend() hccl.Backend { return e.b }
func (e *stubEnv) MaxRanks() int         { return 8 }
func (e *stubEnv) Devices(n int) []int32 {
	d := make([]int32, n)
	for i := range d {
		d[i] = int32(i)
	}
	return d
}
func (e *stubEnv) OpenRank(rank int, dev int32) (hccltest.Rank, error) {
	return &plainRank{t: e.t, b: e.b, s: acl.StreamHandle(stubCall(e.t, e.b, "HcclStubStreamCreate"))}, nil
}
func (e *stubEnv) Live() int { return int(stubCall(e.t, e.b, "HcclStubLive")) }

// plainRank hands out mmap'ed memory and has a stub stream.
type plainRank struct {
	t    testing.TB
	b    *native.Backend
	s    acl.StreamHandle
	maps map[unsafe.Pointer][]byte
}

func (r *plainRank) Stream() acl.StreamHandle { return r.s }

// Sync is the stub's synchronize: the code of a failure an HCCL operation
// left on the stream (507048), once it has surfaced.
func (r *plainRank) Sync() error {
	if c := acl.Code(stubCall(r.t, r.b, "HcclStubStreamSync", uintptr(r.s))); c != acl.Success {
		return acl.Errorf("aclrtSynchronizeStream", c, "stub stream %#x", uintptr(r.s))
	}
	return nil
}
func (r *plainRank) MemType() hccl.MemType { return hccl.MemDevice }

func (r *plainRank) Alloc(size uintptr) (unsafe.Pointer, error) {
	m, err := unix.Mmap(-1, 0, int(max(size, 1)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	if r.maps == nil {
		r.maps = map[unsafe.Pointer][]byte{}
	}
	p := unsafe.Pointer(&m[0])
	r.maps[p] = m
	return p, nil
}

func (r *plainRank) Free(p unsafe.Pointer) error {
	m, ok := r.maps[p]
	if !ok {
		return os.ErrInvalid
	}
	delete(r.maps, p)
	return unix.Munmap(m)
}

func (r *plainRank) Write(dst unsafe.Pointer, src []byte) error {
	copy(unsafe.Slice((*byte)(dst), len(src)), src)
	return nil
}

func (r *plainRank) Read(dst []byte, src unsafe.Pointer) error {
	copy(dst, unsafe.Slice((*byte)(src), len(dst)))
	return nil
}

func (r *plainRank) Close() error {
	for p := range r.maps {
		_ = r.Free(p)
	}
	if r.s != 0 {
		stubCall(r.t, r.b, "HcclStubStreamDestroy", uintptr(r.s))
		r.s = 0
	}
	return nil
}

// linkDir puts the given files, under the given names, in a fresh
// directory (to assemble a library layout from built stub variants).
func linkDir(t testing.TB, files map[string]string) string {
	dir := t.TempDir()
	for name, src := range files {
		require.NoError(t, os.Symlink(src, filepath.Join(dir, name)))
	}
	return dir
}

// WithSoc makes the stub's communicators initialised from now on run on
// devices of SoC name (hccltest.SocEnv); release restores the default A3.
func (e *stubEnv) WithSoc(name string) (hccltest.Env, func(), error) {
	c := append([]byte(name), 0)
	stubCall(e.t, e.b, "HcclStubSetSocName", uintptr(unsafe.Pointer(&c[0])))
	return e, func() { stubCall(e.t, e.b, "HcclStubSetSocName", 0) }, nil
}
