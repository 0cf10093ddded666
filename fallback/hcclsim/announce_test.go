package hcclsim

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
)

// deviceFile makes a device memory file as fallback makes one (a sealed
// memfd named fallback-device-N, mapped here) and returns its
// announcement.
func deviceFile(t *testing.T, dev, size int) devMem {
	t.Helper()
	fd, err := unix.MemfdCreate(fmt.Sprintf("fallback-device-%d", dev), unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Close(fd) })
	require.NoError(t, unix.Ftruncate(fd, int64(size)))
	_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL)
	require.NoError(t, err)
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Munmap(mem) })
	return devMem{pid: os.Getpid(), fd: fd, base: uintptr(unsafe.Pointer(&mem[0])), size: uintptr(size)}
}

// announce writes d into s as publishMem does.
func announce(s *segment, d devMem) {
	atomic.StoreUint64(s.dword(offMemBase), uint64(d.base))
	atomic.StoreUint64(s.dword(offMemSize), uint64(d.size))
	atomic.StoreUint32(s.word(offMemFd), uint32(d.fd))
	atomic.StoreUint32(s.word(offMemPid), uint32(d.pid))
}

// testSegments creates n segments in a private directory.
func testSegments(t *testing.T, n int) []*segment {
	t.Helper()
	dir := t.TempDir()
	segs := make([]*segment, n)
	for k := range segs {
		s, err := createSegment(dir, fmt.Sprintf("%stest-r%d", segPrefix, k), layoutFor(n, 64<<10))
		require.NoError(t, err)
		t.Cleanup(s.unmap)
		segs[k] = s
	}
	return segs
}

// TestAnnouncedMemoryOfAnotherRank: a rank that announces another rank's
// device memory file as its own (the same device and inode) is not
// mapped, nor is one that announces the file of the rank that maps: the
// honest ranks would otherwise write AllReduce sums, and serve one-sided
// requests, into memory that rank never registered for anyone. Any other
// rank's own file maps.
func TestAnnouncedMemoryOfAnotherRank(t *testing.T) {
	const size = 1 << 16
	a, b, c := deviceFile(t, 0, size), deviceFile(t, 1, size), deviceFile(t, 2, size)
	segs := testSegments(t, 3)
	announce(segs[0], a)
	announce(segs[1], b)

	announce(segs[2], a) // rank 2 claims rank 0's memory
	_, err := mapPeers(segs, 1)
	require.Error(t, err, "rank 1 maps rank 2, which announced rank 0's file")
	assert.Contains(t, err.Error(), "rank 2")
	_, err = mapPeers(segs, 0)
	require.Error(t, err, "rank 0 maps rank 2, which announced rank 0's own file")
	assert.Contains(t, err.Error(), "rank 2")

	announce(segs[2], c)
	for me := range segs {
		peers, err := mapPeers(segs, me)
		require.NoError(t, err, "rank %d", me)
		unmapPeers(peers)
	}
}

// TestMapPeerMemNeedsSeals: a device memory file that could still shrink
// is not mapped (an access past its new end would be a SIGBUS).
func TestMapPeerMemNeedsSeals(t *testing.T) {
	const size = 1 << 16
	fd, err := unix.MemfdCreate("fallback-device-3", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.NoError(t, unix.Ftruncate(fd, size))
	d := devMem{pid: os.Getpid(), fd: fd, base: 0x7f0000000000, size: size}
	_, err = mapPeerMem(d)
	require.Error(t, err, "no seals")
	_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK)
	require.NoError(t, err)
	_, err = mapPeerMem(d)
	require.Error(t, err, "it can still grow, and be sealed for writing")
	_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_GROW|unix.F_SEAL_SEAL)
	require.NoError(t, err)
	p, err := mapPeerMem(d)
	require.NoError(t, err)
	p.unmap()
}

// TestPeerViewCapacity: a view of a peer's memory ends where the range
// the peer named ends; its capacity does not run on to the end of the
// peer's mapping.
func TestPeerViewCapacity(t *testing.T) {
	mem := make([]byte, 1<<16)
	const base = 0x7f0000000000
	p := peerMem{mem: mem, base: base, size: uintptr(len(mem))}
	b, ok := p.view(base+100, 50)
	require.True(t, ok)
	assert.Equal(t, 50, len(b))
	assert.Equal(t, 50, cap(b))
}

// TestHostilePieces: a sender that announces more pieces than its message
// takes fails the receive with an error (and tells the sender), instead
// of running the copy past the message.
func TestHostilePieces(t *testing.T) {
	segs := testSegments(t, 2)
	w := newShmWorld(nil, 2, 0, segs[0], segs, nil)
	// Rank 1's message to rank 0: 4 × fp32 in 1000 pieces, all posted.
	s := segs[1]
	atomic.StoreUint64(s.p2pDword(0, pwCountLo), 4)
	atomic.StoreUint32(s.p2pWord(0, pwDT), uint32(dtFP32))
	atomic.StoreUint32(s.p2pWord(0, pwPieces), 1000)
	atomic.StoreUint32(s.p2pWord(0, pwMsgSeq), 1)
	atomic.StoreUint32(s.p2pWord(0, pwSent), 1000)
	buf := make([]byte, 16)
	var err error
	require.NotPanics(t, func() {
		err = w.p2p(nil, []p2pItem{{peer: 1, count: 4, dt: dtFP32, view: buf}}, time.Second)
	})
	require.Error(t, err)
	assert.Equal(t, codeInternal, codeOf(err), "%v", err)
	assert.Equal(t, uint32(1), atomic.LoadUint32(segs[0].p2pWord(1, pwVerdict)), "the sender is told")
}

// impostor is the env of a rank that announces another rank's device
// memory file as its own (its segment's tag is valid: it holds the
// world's secret).
type impostor struct {
	env
	as *devMem
}

func (e impostor) deviceMemory(int32) (devMem, error) { return *e.as, nil }

// TestImpostorRankStagesTheWorld: rank 2 of a world whose ranks map each
// other's device memory announces rank 0's device memory file as its own.
// Ranks 0 and 1 refuse to map it (rank 0's own file; a file another rank
// announced), so the whole world stages its data: every AllReduce is
// exact, no byte moves directly, and rank 0's memory outside its buffers
// is untouched. Before, ranks 0 and 1 took rank 2's buffer addresses as
// addresses in rank 0's memory.
func TestImpostorRankStagesTheWorld(t *testing.T) {
	var victim devMem // rank 0's, set before the world forms
	ranks := newTCPRanks(t, 3, tcpOpts{shareable: true, env: func(rank int, honest env) env {
		if rank == 2 {
			return impostor{env: honest, as: &victim}
		}
		return honest
	}})
	mf, err := npuhook.Of(ranks[0].npu).MemoryFile(0)
	require.NoError(t, err)
	victim = devMem{pid: mf.Pid, fd: mf.Fd, base: mf.Base, size: mf.Size}

	// Rank 0's canary: memory no one registered, filled with a pattern.
	const canaryBytes = 1 << 20
	canary := make([]byte, canaryBytes)
	for i := range canary {
		canary[i] = byte(i*131 + 7)
	}
	var p unsafe.Pointer
	require.NoError(t, ranks[0].do(func() (err error) {
		if p, err = ranks[0].npu.Malloc(canaryBytes, acl.MemMallocHugeFirst); err != nil {
			return err
		}
		return ranks[0].npu.Memcpy(p, canaryBytes, unsafe.Pointer(&canary[0]), canaryBytes, acl.MemcpyHostToDevice)
	}))

	for r, err := range initRanks(ranks, tcpRoot(t, ranks)) {
		require.NoError(t, err, "rank %d", r)
	}
	for r := range ranks {
		assert.True(t, ranks[r].world(t).peers == nil, "rank %d moves data directly", r)
	}
	before := ReadTraffic()
	for i := 0; i < 3; i++ {
		for r, err := range allReduce(t, ranks, 50_000) {
			require.NoError(t, err, "rank %d", r)
		}
	}
	assert.Zero(t, ReadTraffic().DirectBytes-before.DirectBytes)
	assert.NotZero(t, ReadTraffic().StagedBytes-before.StagedBytes)
	got := make([]byte, canaryBytes)
	require.NoError(t, ranks[0].do(func() error {
		return ranks[0].npu.Memcpy(unsafe.Pointer(&got[0]), canaryBytes, p, canaryBytes, acl.MemcpyDeviceToHost)
	}))
	require.Equal(t, canary, got, "rank 0's unregistered memory changed")
}
