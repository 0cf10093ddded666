package hcclsim

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ascend-go/cann/internal/npuhook"
)

// openMapping opens the file behind this process's mapping that starts at
// addr, as a process holding it open would (root may open
// /proc/self/map_files; a rank process of the same user could have kept
// the descriptor it mapped it with).
func openMapping(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	prefix := strconv.FormatUint(uint64(addr), 16) + "-"
	for sc.Scan() {
		if rng, _, ok := strings.Cut(sc.Text(), " "); ok && strings.HasPrefix(rng, prefix) {
			fd, err := unix.Open("/proc/self/map_files/"+rng, unix.O_RDWR|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Skipf("cannot open the segment behind %s (%v): the test needs CAP_SYS_ADMIN", rng, err)
			}
			return fd
		}
	}
	t.Fatalf("no mapping at %#x", addr)
	return -1
}

// TestTruncatedSharedFiles: a rank (or any process of the user holding a
// descriptor) that truncates a shared file of a running world. A device
// memory file is sealed: truncating or growing it fails with EPERM
// (fcntl(2): F_SEAL_SHRINK, F_SEAL_GROW). A segment cannot be sealed (it
// is a named tmpfs file); truncating it makes every later access to it a
// SIGBUS, which the ranks now survive: the next collective fails on every
// rank, the communicator is destroyed cleanly, and the process lives on.
// Before, both killed every rank within a collective, on both paths.
func TestTruncatedSharedFiles(t *testing.T) {
	if underRace {
		t.Skip("the race detector runs atomics in C, where a fault cannot become a panic")
	}
	isolated(t, func(t *testing.T) {
		for _, direct := range []bool{true, false} {
			t.Run(map[bool]string{true: "direct", false: "staged"}[direct], func(t *testing.T) {
				ranks := newTCPRanks(t, 2, tcpOpts{shareable: direct, exec: time.Second})
				for r, err := range initRanks(ranks, tcpRoot(t, ranks)) {
					require.NoError(t, err, "rank %d", r)
				}
				w1 := ranks[1].world(t)
				require.Equal(t, direct, w1.peers != nil)
				for r, err := range allReduce(t, ranks, 100_000) {
					require.NoError(t, err, "rank %d", r)
				}
				if direct {
					mf, err := npuhook.Of(ranks[1].npu).MemoryFile(0)
					require.NoError(t, err)
					fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", mf.Fd), unix.O_RDWR|unix.O_CLOEXEC, 0)
					require.NoError(t, err)
					defer unix.Close(fd)
					assert.ErrorIs(t, unix.Ftruncate(fd, 0), unix.EPERM, "shrink a device memory file")
					assert.ErrorIs(t, unix.Ftruncate(fd, int64(mf.Size)*2), unix.EPERM, "grow a device memory file")
					for r, err := range allReduce(t, ranks, 100_000) {
						require.NoError(t, err, "rank %d, after the refused truncation", r)
					}
				}
				fd := openMapping(t, uintptr(unsafe.Pointer(&w1.own.mem[0])))
				require.NoError(t, unix.Ftruncate(fd, 0))
				_ = unix.Close(fd)
				for r, err := range allReduce(t, ranks, 100_000) {
					require.Error(t, err, "rank %d, after its segment was truncated", r)
					t.Logf("rank %d: %v", r, err)
				}
			})
		}
	})
}
