package native_test

import (
	"os"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	aclnative "github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/hccltest"
	"github.com/ascend-go/cann/hccl/native"
)

// EnvRealLibDir names the lib64 directory of a real CANN installation on
// which the conformance suite also runs (the variable the ACL binding's
// tests read too).
const EnvRealLibDir = "CANN_REAL_LIB_DIR"

// TestConformanceReal runs the suite on the hardware when
// CANN_REAL_LIB_DIR points at a CANN lib64 directory: one rank per NPU,
// buffers in device memory, operations on each rank's own stream. The
// timeout subtests are skipped (the device waits HCCL_EXEC_TIMEOUT, 30 min
// by default); set HCCL_EXEC_TIMEOUT/HCCL_CONNECT_TIMEOUT and
// CANN_REAL_HCCL_TIMEOUT_S to run them too.
func TestConformanceReal(t *testing.T) {
	dir := os.Getenv(EnvRealLibDir)
	if dir == "" {
		t.Skip(EnvRealLibDir + " is not set; the HCCL suite runs on the stub only")
	}
	a, err := aclnative.Open(aclnative.WithLibraryPath(dir))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	require.NoError(t, a.Init(""))
	t.Cleanup(func() { _ = a.Finalize() })
	h, err := native.Open(native.WithLibraryPath(dir))
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	n, err := a.GetDeviceCount()
	require.NoError(t, err)
	if n < 2 {
		t.Skipf("%d NPU: the suite needs at least 2", n)
	}
	t.Logf("loaded %v and %v, %d NPUs", a.Paths(), h.Paths(), n)
	// The vendor does not promise the one-sided header stable: a library
	// may lack it.
	// The installation's SoC is what it is: no other one to switch to.
	opts := hccltest.Options{Lacks: []hccltest.Feature{hccltest.OneSided, hccltest.Windows, hccltest.SocSwitch}}
	if s := os.Getenv("CANN_REAL_HCCL_TIMEOUT_S"); s != "" {
		sec, err := time.ParseDuration(s + "s")
		require.NoError(t, err)
		opts.Timeout = sec
	}
	hccltest.Run(t, &deviceEnv{acl: a, hccl: h, n: int(n)}, opts)
}

// deviceEnv hands each rank an NPU, a stream and device memory.
type deviceEnv struct {
	acl  acl.Backend
	hccl *native.Backend
	n    int
}

func (e *deviceEnv) Backend() hccl.Backend { return e.hccl }
func (e *deviceEnv) MaxRanks() int         { return e.n }
func (e *deviceEnv) Devices(n int) []int32 {
	d := make([]int32, n)
	for i := range d {
		d[i] = int32(i % e.n)
	}
	return d
}

func (e *deviceEnv) OpenRank(rank int, dev int32) (hccltest.Rank, error) {
	if err := e.acl.SetDevice(dev); err != nil {
		return nil, err
	}
	s, err := e.acl.CreateStream()
	if err != nil {
		return nil, err
	}
	return &deviceRank{acl: e.acl, s: s}, nil
}

// deviceRank is one rank's stream and device memory, used on its thread.
type deviceRank struct {
	acl acl.Backend
	s   acl.StreamHandle
}

func (r *deviceRank) Stream() acl.StreamHandle { return r.s }
func (r *deviceRank) Sync() error              { return r.acl.SynchronizeStream(r.s) }
func (r *deviceRank) MemType() hccl.MemType    { return hccl.MemDevice }
func (r *deviceRank) Alloc(size uintptr) (unsafe.Pointer, error) {
	return r.acl.Malloc(max(size, 1), acl.MemMallocHugeFirst)
}
func (r *deviceRank) Free(p unsafe.Pointer) error { return r.acl.Free(p) }
func (r *deviceRank) Write(dst unsafe.Pointer, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return r.acl.Memcpy(dst, uintptr(len(src)), unsafe.Pointer(&src[0]), uintptr(len(src)), acl.MemcpyHostToDevice)
}
func (r *deviceRank) Read(dst []byte, src unsafe.Pointer) error {
	if len(dst) == 0 {
		return nil
	}
	return r.acl.Memcpy(unsafe.Pointer(&dst[0]), uintptr(len(dst)), src, uintptr(len(dst)), acl.MemcpyDeviceToHost)
}
func (r *deviceRank) Close() error { return r.acl.DestroyStream(r.s) }
