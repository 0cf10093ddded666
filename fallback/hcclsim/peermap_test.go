package hcclsim

import (
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestPeerMemView: translation by offset, and nothing outside the
// announced memory.
func TestPeerMemView(t *testing.T) {
	mem := make([]byte, 1<<16)
	for i := range mem {
		mem[i] = byte(i * 7)
	}
	const base = 0x7f0000000000
	p := peerMem{mem: mem, base: base, size: uintptr(len(mem))}
	b, ok := p.view(base+100, 50)
	require.True(t, ok)
	require.Equal(t, mem[100:150], b)
	b, ok = p.view(base+uintptr(len(mem))-8, 8)
	require.True(t, ok)
	require.Len(t, b, 8)
	b, ok = p.view(base+5, 0)
	require.True(t, ok, "an empty range is always fine")
	require.Nil(t, b)
	for _, c := range []struct {
		addr uintptr
		n    uint64
	}{{base - 1, 1}, {base + uintptr(len(mem)), 1}, {base + uintptr(len(mem)) - 8, 9}, {base, 1 << 63}} {
		_, ok := p.view(c.addr, c.n)
		require.False(t, ok, "[%#x, +%d)", c.addr, c.n)
	}
}

// TestMapPeerMem: an announced device memory is mapped through /proc even
// when it names this very process (a second mapping of the same pages,
// never the announced address), and only when it is a fallback device
// memory file of this user of the announced size; anything else is an
// error (the communicator then stages its data), never a crash.
func TestMapPeerMem(t *testing.T) {
	const size = 1 << 16
	fd, err := unix.MemfdCreate("fallback-device-7", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.NoError(t, unix.Ftruncate(fd, size))
	_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, requiredSeals) // as fallback seals device memory
	require.NoError(t, err)
	arena, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err)
	defer unix.Munmap(arena)
	arena[300] = 42
	base := uintptr(unsafe.Pointer(&arena[0]))
	self, err := mapPeerMem(devMem{pid: os.Getpid(), fd: fd, base: base, size: size})
	require.NoError(t, err)
	b, ok := self.view(base+300, 1)
	require.True(t, ok)
	require.Equal(t, byte(42), b[0])
	require.NotEqual(t, base, uintptr(unsafe.Pointer(&b[0])), "a peer's address is never used as ours")
	b[0] = 43
	require.Equal(t, byte(43), arena[300], "the same pages")
	self.unmap()

	// A forged announcement: this process, an address of the forger's
	// choice, and an fd that is not device memory.
	other, err := os.CreateTemp(t.TempDir(), "victim")
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, other.Truncate(size))
	_, err = mapPeerMem(devMem{pid: os.Getpid(), fd: int(other.Fd()), base: 0xdead0000, size: size})
	require.ErrorContains(t, err, "not a device memory file")
	anon, err := unix.MemfdCreate("something-else", unix.MFD_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(anon)
	require.NoError(t, unix.Ftruncate(anon, size))
	_, err = mapPeerMem(devMem{pid: os.Getpid(), fd: anon, base: 0xdead0000, size: size})
	require.ErrorContains(t, err, "not a device memory file")
	_, err = mapPeerMem(devMem{pid: os.Getpid(), fd: fd, base: 0xdead0000, size: 2 * size})
	require.Error(t, err, "announced size differs from the file")
	_, err = mapPeerMem(devMem{pid: os.Getpid(), fd: fd, base: ^uintptr(0) - 10, size: size})
	require.Error(t, err, "range wraps")

	_, err = mapPeerMem(devMem{})
	require.Error(t, err, "nothing announced")
	_, err = mapPeerMem(devMem{pid: 1 << 30, fd: 3, base: base, size: 1 << 16})
	require.Error(t, err, "no such process")

	var empty peerMem
	_, ok = empty.view(base, 1)
	require.False(t, ok, "no mapping, no view")
}
