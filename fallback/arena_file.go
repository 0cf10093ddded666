package fallback

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
)

// A shareable device arena is backed by an anonymous memory file
// (memfd_create) mapped MAP_SHARED, so that another process (a rank of a
// multi-process HCCL communicator) can map the same pages through
// /proc/<pid>/fd/<fd> and read and write this device's memory directly.
// The file is sized once and sealed against shrinking and growing
// (F_SEAL_SHRINK, F_SEAL_GROW, then F_SEAL_SEAL so no one adds a write
// seal later; fcntl(2), "File Sealing"): no process, a peer that opened it
// through /proc included, can truncate it under a mapping, so a peer's
// mapping stays valid (no SIGBUS) whatever anyone does, even after this
// process exits. Peers map only files that carry these seals
// (fallback/hcclsim/peermap.go). Punching holes (arenaFile.punch) is not
// sealed: it keeps the size. Pages are allocated on first touch, like the
// anonymous arenas.

// arenaFile is the memfd behind a shareable arena.
type arenaFile struct {
	fd int
}

// newArenaFile maps a fresh memfd of size bytes as an arena of device dev.
func newArenaFile(size uintptr, dev int32) (*arena, error) {
	fd, err := unix.MemfdCreate(fmt.Sprintf("fallback-device-%d", dev), unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("size the device memory file to %d bytes: %w", size, err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, deviceFileSeals); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("seal the device memory file: %w", err)
	}
	mem, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_NORESERVE)
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("mmap %d bytes of the device memory file: %w", size, err)
	}
	// As for anonymous arenas: advice only (the kernel may not give shared
	// memory huge pages at all).
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE)
	return arenaOver(mem, dev, &arenaFile{fd: fd}), nil
}

// deviceFileSeals are the seals of a shareable device memory file: its
// size is fixed, and no seal can be added (a write seal would fail every
// later writable mapping).
const deviceFileSeals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

// punch returns the pages of [off, off+n) of the file to the kernel; they
// read as zero afterwards, in every process that maps them.
func (f *arenaFile) punch(off, n uintptr) {
	_ = unix.Fallocate(f.fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, int64(off), int64(n))
}

func (f *arenaFile) close() {
	if f != nil && f.fd >= 0 {
		_ = unix.Close(f.fd)
		f.fd = -1
	}
}

// WithShareableDeviceMemory backs each device's memory with an anonymous
// memory file mapped MAP_SHARED instead of private anonymous memory, so
// that another process can map it (npuhook.NPU.MemoryFile). The HCCL model then
// moves the data of a multi-process communicator directly between the
// ranks' device memories; without it, through staging copies. Capacity,
// laziness (pages cost memory once touched) and the return of freed pages
// are the same; the kernel may not back shared memory with huge pages.
func WithShareableDeviceMemory() Option { return func(c *config) { c.shareable = true } }

// memoryFile describes the memory file behind device dev's memory. It
// fails with ACL_ERROR_RT_FEATURE_NOT_SUPPORT when the NPU was built
// without WithShareableDeviceMemory, ACL_ERROR_INVALID_DEVICE for a device
// out of range. The descriptor stays open until Close. Safe for concurrent
// use.
func (n *NPU) memoryFile(dev int32) (npuhook.MemoryFile, error) {
	const op = "fallback.DeviceMemoryFile"
	c := call{n: n, op: op, tid: -1, quiet: true}
	if !n.enter() {
		return npuhook.MemoryFile{}, c.closedErr()
	}
	defer n.exit()
	if dev < 0 || int(dev) >= len(n.devs) {
		return npuhook.MemoryFile{}, c.fail(acl.CodeInvalidDevice, "device %d of %d", dev, len(n.devs))
	}
	a := n.devs[dev].arena
	if a.file == nil {
		return npuhook.MemoryFile{}, c.fail(acl.CodeRTFeatureNotSupport, "device memory is not shareable (the NPU was built without WithShareableDeviceMemory)")
	}
	return npuhook.MemoryFile{Pid: os.Getpid(), Fd: a.file.fd, Base: a.base, Size: a.size}, nil
}
