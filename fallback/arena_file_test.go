package fallback

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
)

// mapDeviceFile maps a device's memory file the way a peer process does:
// through /proc/<pid>/fd/<fd>, MAP_SHARED.
func mapDeviceFile(t *testing.T, f npuhook.MemoryFile) []byte {
	t.Helper()
	fd, err := unix.Open("/proc/"+strconv.Itoa(f.Pid)+"/fd/"+strconv.Itoa(f.Fd), unix.O_RDWR|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	m, err := unix.Mmap(fd, 0, int(f.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Munmap(m) })
	return m
}

// fileBlocks is the number of 512-byte blocks the memory file holds.
func fileBlocks(t *testing.T, fd int) int64 {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(fd, &st))
	return st.Blocks
}

// TestShareableDeviceMemory: a second mapping of the device memory file
// sees the device's bytes at address − Base and its writes reach the
// device; freed pages leave the file once a purge runs.
func TestShareableDeviceMemory(t *testing.T) {
	n := newTestNPU(t, WithShareableDeviceMemory())
	f, err := n.memoryFile(0)
	require.NoError(t, err)
	require.Equal(t, uintptr(testMem), f.Size)
	peer := mapDeviceFile(t, f)

	const size = 16 << 20 // more than the arena's purge budget (an eighth of testMem): its free purges
	p, err := n.Malloc(size, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(rand.Uint32())
	}
	require.NoError(t, n.Memcpy(p, size, unsafe.Pointer(&want[0]), size, acl.MemcpyHostToDevice))
	off := uintptr(p) - f.Base
	require.Equal(t, want, peer[off:off+size], "the peer mapping sees the device's bytes")

	for i := range want {
		want[i] = byte(rand.Uint32())
	}
	copy(peer[off:off+size], want)
	got := make([]byte, size)
	require.NoError(t, n.Memcpy(unsafe.Pointer(&got[0]), size, p, size, acl.MemcpyDeviceToHost))
	require.Equal(t, want, got, "the peer's writes reach the device")

	before := fileBlocks(t, f.Fd)
	require.GreaterOrEqual(t, before, int64(size/512), "touched pages are in the file")
	require.NoError(t, n.Free(p))
	require.LessOrEqual(t, fileBlocks(t, f.Fd), before-int64((size-(2<<20))/512), "freed pages leave the file")
	require.Zero(t, peer[off+size/2], "freed pages read as zero")
}

// TestDeviceMemoryFileMisuse: no file without the option, a device out of
// range, a closed NPU.
func TestDeviceMemoryFileMisuse(t *testing.T) {
	plain := newTestNPU(t)
	_, err := plain.memoryFile(0)
	requireCode(t, acl.CodeRTFeatureNotSupport, err)

	n, err := New(WithDevices(2), WithDeviceMemory(testMem), WithHostMemory(testMem), WithShareableDeviceMemory())
	require.NoError(t, err)
	_, err = n.memoryFile(2)
	requireCode(t, acl.CodeInvalidDevice, err)
	_, err = n.memoryFile(-1)
	requireCode(t, acl.CodeInvalidDevice, err)
	_, err = n.memoryFile(1)
	require.NoError(t, err)
	require.NoError(t, n.Close())
	require.NoError(t, n.Close())
	_, err = n.memoryFile(1)
	requireCode(t, acl.CodeUninitialize, err)
}
