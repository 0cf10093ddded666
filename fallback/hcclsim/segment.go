package hcclsim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A segment is one rank's shared memory in a multi-process communicator: a
// file in the shared-memory directory, mapped MAP_SHARED by its owner and
// by every peer. The names are unlinked as soon as every rank has mapped
// every segment, so nothing is left in the directory even if a process is
// killed afterwards; the pages go away with the last mapping.

// segPrefix starts every segment name, so tests can look for leftovers.
const segPrefix = "hcclsim-"

// segName is the name of rank's segment in world id, made by the hub from
// values it holds: no name a peer chose ever reaches the file system. The
// pid (the rank's word, a number) only helps a person find the owner.
func segName(id [16]byte, rank, pid int) string {
	return fmt.Sprintf("%s%x-r%d-p%d", segPrefix, id[:6], rank, pid)
}

// validSegName reports whether name is one segName could have made for
// rank of world id: a rank opens nothing else, whoever relays it.
func validSegName(id [16]byte, rank int, name string) bool {
	want := fmt.Sprintf("%s%x-r%d-p", segPrefix, id[:6], rank)
	if !strings.HasPrefix(name, want) {
		return false
	}
	pid := name[len(want):]
	if pid == "" || len(pid) > 7 || pid[0] == '0' {
		return false
	}
	for _, c := range pid {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Segment layout. The header holds futex words and control fields, each
// group on its own cache line; then the one-sided request entries; then the
// staging area through which every byte between processes moves.
const (
	offBell      = 0   // doorbell ring counter (futex word)
	offSleepers  = 4   // doorbell sleepers
	offMemPid    = 8   // where the rank's device memory can be mapped from (peermap.go): pid, 0 if nowhere
	offMemFd     = 12  // its file descriptor in that process
	offMemBase   = 16  // the memory's base address in the rank's process
	offMemSize   = 24  // its size
	offDirect    = 32  // set at formation: directMapped or directFailed
	offEpoch     = 64  // data-phase barrier epoch
	offFailEpoch = 68  // epoch at which this rank reported a failure
	offFailCode  = 72  // that failure's code
	offBufs      = 80  // direct collectives: send address, send bytes, recv address, recv bytes (u64 each)
	offReq       = 128 // one-sided request: get, entries, check-only
	offSegTag    = 144 // segTag (auth.go) over the rank, this name and offMem*: 32 bytes
	offResp      = 192 // one-sided response (written by the server): seq, code, message
	respMsgBytes = 248
	offP2P       = 448 // per peer: p2p words and message header (p2pStride bytes)
	p2pStride    = 64

	reqEntryBytes = 24 // remote addr, length, staging offset
	maxReqEntries = 8192

	// Registration table: what this rank registered for whom, so that a
	// peer can check at call time that memory is still registered.
	regEntryBytes = 32 // state u32, peer u32, id u64, addr u64, size u64
	maxRegs       = 1024
)

// segLayout gives the offsets of a segment for n ranks and staging bytes.
type segLayout struct {
	n        int
	entries  int // offset of the request entries
	regs     int // offset of the registration table
	staging  int // offset of the staging area
	stageLen int // staging bytes
	total    int // mapping size
}

func layoutFor(n int, staging int) segLayout {
	l := segLayout{n: n}
	l.entries = align(offP2P+n*p2pStride, 4096)
	l.regs = align(l.entries+maxReqEntries*reqEntryBytes, 4096)
	l.staging = align(l.regs+maxRegs*regEntryBytes, 4096)
	l.stageLen = staging
	l.total = l.staging + staging
	return l
}

func align(x, a int) int { return (x + a - 1) / a * a }

// segment is one mapped segment (own or a peer's).
type segment struct {
	name string
	mem  []byte
	l    segLayout
}

// createSegment makes and maps a new segment file.
func createSegment(dir, name string, l segLayout) (*segment, error) {
	path := filepath.Join(dir, name)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	defer unix.Close(fd)
	// Reserve every page now. ftruncate would make a sparse file whose
	// pages are allocated on first touch: in a full directory (any local
	// user can fill /dev/shm) that touch is a SIGBUS, in this rank and in
	// every peer. fallocate(2) with mode 0 "allocates the disk space within
	// the range ... subsequent writes into the range ... are guaranteed not
	// to fail because of lack of disk space", and fails with ENOSPC when it
	// cannot, here, where it is an error (tmpfs supports it since Linux
	// 3.5).
	if err := unix.Fallocate(fd, 0, 0, int64(l.total)); err != nil {
		_ = unix.Unlink(path)
		return nil, fmt.Errorf("reserve %d bytes for %s: %w", l.total, path, err)
	}
	mem, err := unix.Mmap(fd, 0, l.total, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		_ = unix.Unlink(path)
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	return &segment{name: name, mem: mem, l: l}, nil
}

// openSegment maps a peer's segment. It follows no symbolic link and maps
// only a regular file of this user that no one else may open (what
// createSegment makes), of the layout's size.
func openSegment(dir, name string, l segLayout) (*segment, error) {
	if name != filepath.Base(name) || strings.ContainsRune(name, '/') {
		return nil, fmt.Errorf("segment name %q is not a plain name", name)
	}
	path := filepath.Join(dir, name)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if err := ownedPrivateFile(&st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.Size != int64(l.total) {
		return nil, fmt.Errorf("%s has %d bytes, want %d", path, st.Size, l.total)
	}
	mem, err := unix.Mmap(fd, 0, l.total, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	return &segment{name: name, mem: mem, l: l}, nil
}

// ownedPrivateFile checks that st is a regular file of this process's user
// with no permission for anyone else.
func ownedPrivateFile(st *unix.Stat_t) error {
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("not a regular file (mode %#o)", st.Mode)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("owned by uid %d, not %d", st.Uid, os.Geteuid())
	case st.Mode&0o077 != 0:
		return fmt.Errorf("mode %#o lets others in", st.Mode&0o777)
	}
	return nil
}

// unlinkSegment removes a segment name if it is a file of this user (a
// name someone else put there stays); a missing name is not an error.
func unlinkSegment(dir, name string) {
	if name == "" || name != filepath.Base(name) {
		return
	}
	path := filepath.Join(dir, name)
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil || ownedPrivateFile(&st) != nil {
		return
	}
	// Best effort: the pages still go away with the last mapping.
	_ = unix.Unlink(path)
}

// tag returns the segment's authentication tag bytes.
func (s *segment) tag() []byte { return s.mem[offSegTag : offSegTag+32] }

func (s *segment) unmap() {
	if s != nil && s.mem != nil {
		_ = unix.Munmap(s.mem)
		s.mem = nil
	}
}

// word returns the 32-bit word at off.
func (s *segment) word(off int) *uint32 { return (*uint32)(unsafe.Pointer(&s.mem[off])) }

// dword returns the 64-bit word at off (8-byte aligned).
func (s *segment) dword(off int) *uint64 { return (*uint64)(unsafe.Pointer(&s.mem[off])) }

func (s *segment) bell() doorbell {
	return doorbell{bell: s.word(offBell), sleepers: s.word(offSleepers)}
}

// stage returns the staging bytes [off, off+n).
func (s *segment) stage(off, n int) []byte { return s.mem[s.l.staging+off : s.l.staging+off+n] }

// p2p words of this segment about peer p: see shm.go.
func (s *segment) p2pWord(p, i int) *uint32  { return s.word(offP2P + p*p2pStride + 4*i) }
func (s *segment) p2pDword(p, i int) *uint64 { return s.dword(offP2P + p*p2pStride + 8*i) }
