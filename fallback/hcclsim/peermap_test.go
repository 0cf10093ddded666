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

// TestMapPeerMem: a rank of this process needs no mapping (its addresses
// are ours); memory that was never announced, or a file that cannot be
// opened, is an error (the communicator then stages its data), never a
// crash.
func TestMapPeerMem(t *testing.T) {
	arena, err := unix.Mmap(-1, 0, 1<<16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	defer unix.Munmap(arena)
	arena[300] = 42
	base := uintptr(unsafe.Pointer(&arena[0]))
	self, err := mapPeerMem(devMem{pid: os.Getpid(), fd: 99, base: base, size: 1 << 16})
	require.NoError(t, err)
	b, ok := self.view(base+300, 1)
	require.True(t, ok)
	require.Equal(t, byte(42), b[0])
	self.unmap()

	_, err = mapPeerMem(devMem{})
	require.Error(t, err, "nothing announced")
	_, err = mapPeerMem(devMem{pid: 1 << 30, fd: 3, base: base, size: 1 << 16})
	require.Error(t, err, "no such process")
}
