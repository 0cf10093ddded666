package hcclsim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Peer mapping: the ranks of a multi-process communicator map each other's
// device memory, so that data phases read and write peers' buffers
// directly instead of through staging copies. A rank whose NPU keeps its
// device memory in a memory file (fallback.WithShareableDeviceMemory)
// publishes (pid, fd, base, size) in its segment; each peer opens
// /proc/<pid>/fd/<fd> and maps the file MAP_SHARED, and translates the
// rank's device addresses by offset. The mapping outlives the owner: a
// killed rank's memory stays readable (its file is never shrunk), so a
// peer waiting for it times out cleanly instead of faulting.
//
// An announcement is a peer's word, so it never becomes an address: even a
// rank that names this very process is mapped through /proc like any
// other (a second mapping of the same pages), the file must be a device
// memory file of the fallback owned by this user and of the announced
// size, and every address a peer names later is translated into that
// mapping by offset and bounds-checked (view).

// devMem is where a rank's device memory can be mapped from.
type devMem struct {
	pid, fd    int
	base, size uintptr
}

// memFiler is implemented by envs whose device memory other processes can
// map (npuEnv over an NPU built WithShareableDeviceMemory).
type memFiler interface {
	deviceMemory(dev int32) (devMem, error)
}

func (e npuEnv) deviceMemory(dev int32) (devMem, error) {
	f, err := e.n.MemoryFile(dev)
	if err != nil {
		return devMem{}, err
	}
	return devMem{pid: f.Pid, fd: f.Fd, base: f.Base, size: f.Size}, nil
}

// peerMem is one rank's device memory as seen from this process.
type peerMem struct {
	mem  []byte // this process's mapping of the file; nil for none (this rank's own entry)
	base uintptr
	size uintptr
	id   fileID // the file mapped
}

// view translates [addr, addr+n) of the rank's address space into this
// process's mapping; ok is false when the range is not inside it.
func (p *peerMem) view(addr uintptr, n uint64) (b []byte, ok bool) {
	if n == 0 {
		return nil, true
	}
	off := addr - p.base
	if p.mem == nil || addr < p.base || off >= p.size || n > uint64(p.size-off) || p.size != uintptr(len(p.mem)) {
		return nil, false
	}
	// Capacity cut to the length: nothing may reach past the range the
	// peer named (append, a reslice).
	return p.mem[off : off+uintptr(n) : off+uintptr(n)], true
}

func (p *peerMem) unmap() {
	if p.mem != nil {
		_ = unix.Munmap(p.mem)
		p.mem = nil
	}
}

// deviceFilePrefix starts the /proc link target of a fallback device
// memory file (fallback/arena_file.go names its memfds so).
const deviceFilePrefix = "/memfd:fallback-device-"

// shareable reports whether an announcement describes memory another
// process could map.
func shareable(d devMem) bool {
	return d.size != 0 && d.pid > 0 && d.fd >= 0 && d.base != 0 && d.base+d.size >= d.base && d.size <= 1<<47
}

// requiredSeals are the seals a device memory file must carry before a
// peer maps it: its size cannot change, nor can its seals (fcntl(2), "File
// Sealing").
const requiredSeals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

// fileID identifies a file: its device and inode.
type fileID struct{ dev, ino uint64 }

// mapPeerMem maps the device memory d describes, after checking that the
// file is what a rank announces: a fallback device memory file of this
// user, of the announced size, sealed so that it can neither shrink nor
// grow. mapPeers checks that it is no other rank's.
func mapPeerMem(d devMem) (peerMem, error) {
	if !shareable(d) {
		return peerMem{}, fmt.Errorf("the rank's device memory cannot be mapped by other processes")
	}
	path := "/proc/" + strconv.Itoa(d.pid) + "/fd/" + strconv.Itoa(d.fd)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return peerMem{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	// What was opened, not what the path named a moment before.
	target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !strings.HasPrefix(target, deviceFilePrefix) {
		return peerMem{}, fmt.Errorf("%s is %q, not a device memory file", path, target)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return peerMem{}, fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
		return peerMem{}, fmt.Errorf("%s: not a regular file of this user", path)
	}
	if st.Size != int64(d.size) {
		return peerMem{}, fmt.Errorf("%s has %d bytes, the rank announced %d", path, st.Size, d.size)
	}
	// A file that could still shrink could fault every access to it (a
	// SIGBUS past its end): map only one sealed as fallback seals device
	// memory (fallback/arena_file.go).
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil || seals&requiredSeals != requiredSeals {
		return peerMem{}, fmt.Errorf("%s is not sealed against shrinking and growing (seals %#x)", path, seals)
	}

	mem, err := unix.Mmap(fd, 0, int(d.size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_NORESERVE)
	if err != nil {
		return peerMem{}, fmt.Errorf("map %s: %w", path, err)
	}
	return peerMem{mem: mem, base: d.base, size: d.size, id: fileID{uint64(st.Dev), st.Ino}}, nil
}

// publishMem writes where this rank's device memory can be mapped from into
// its segment (nothing when it cannot be mapped: peers then see pid 0).
func publishMem(s *segment, e env, dev int32) {
	f, ok := e.(memFiler)
	if !ok {
		return
	}
	d, err := f.deviceMemory(dev)
	if err != nil {
		return
	}
	atomic.StoreUint64(s.dword(offMemBase), uint64(d.base))
	atomic.StoreUint64(s.dword(offMemSize), uint64(d.size))
	atomic.StoreUint32(s.word(offMemFd), uint32(d.fd))
	atomic.StoreUint32(s.word(offMemPid), uint32(d.pid))
}

// announcedMem reads what a rank published with publishMem.
func announcedMem(s *segment) devMem {
	return devMem{
		pid:  int(atomic.LoadUint32(s.word(offMemPid))),
		fd:   int(atomic.LoadUint32(s.word(offMemFd))),
		base: uintptr(atomic.LoadUint64(s.dword(offMemBase))),
		size: uintptr(atomic.LoadUint64(s.dword(offMemSize))),
	}
}

// mapPeers maps the device memory of every rank of segs but me (whose
// entry stays empty: a rank reads its own buffers through its own views);
// on any failure it maps nothing and returns why.
func mapPeers(segs []*segment, me int) ([]peerMem, error) {
	peers := make([]peerMem, len(segs))
	taken := map[fileID]bool{}
	if id, ok := ownMemID(announcedMem(segs[me])); ok {
		taken[id] = true
	}
	for k, s := range segs {
		if k == me {
			continue
		}
		p, err := mapPeerMem(announcedMem(s))
		if err == nil && taken[p.id] {
			// A rank that announces this rank's memory, or another rank's,
			// would have honest ranks write at the addresses it names into
			// memory no one registered for it.
			p.unmap()
			err = fmt.Errorf("it announced the device memory of this rank or of another rank")
		}
		if err != nil {
			unmapPeers(peers)
			return nil, fmt.Errorf("rank %d: %w", k, err)
		}
		taken[p.id] = true
		peers[k] = p
	}
	return peers, nil
}

// ownMemID identifies the file behind this rank's own announcement (which
// this process made: its descriptor is this process's).
func ownMemID(d devMem) (fileID, bool) {
	if !shareable(d) || d.pid != os.Getpid() {
		return fileID{}, false
	}
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}

func unmapPeers(peers []peerMem) {
	for i := range peers {
		peers[i].unmap()
	}
}
