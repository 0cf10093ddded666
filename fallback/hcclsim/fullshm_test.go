package hcclsim

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ascend-go/cann/hccl"
)

// smallTmpfs mounts a tmpfs of size bytes on a fresh directory (unmounted
// at the end of the test), or skips the test when this process may not
// mount (it needs CAP_SYS_ADMIN).
func smallTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)+",mode=0700"); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v): the test needs CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// TestFullShmDir: a shared-memory directory too full for the segments
// (any local user can fill /dev/shm) fails the communicator's
// initialisation with HCCL_E_SYSCALL on every rank, leaves nothing in the
// directory, and crashes nothing. Before segments were reserved with
// fallocate, a full directory was a SIGBUS in every rank (the first touch
// of a sparse segment's page), and a directory with room for the touched
// header pages but not for the staging area formed the world and faulted
// in its first staged collective.
func TestFullShmDir(t *testing.T) {
	isolated(t, func(t *testing.T) {
		const n = 2
		seg := layoutFor(n, 64<<10).total
		for _, c := range []struct {
			name string
			size int // of the tmpfs
			fill int // bytes taken by another user's file first
		}{
			{"full", 1 << 20, 1 << 20},
			{"room for one segment", seg + seg/2, 0},
		} {
			t.Run(c.name, func(t *testing.T) {
				dir := smallTmpfs(t, c.size)
				if c.fill > 0 {
					f, err := os.Create(filepath.Join(dir, "filler"))
					require.NoError(t, err)
					buf := make([]byte, 64<<10)
					for written := 0; written < c.fill; written += len(buf) {
						if _, err := f.Write(buf); err != nil {
							break // full
						}
					}
					require.NoError(t, f.Close())
				}
				ranks := newTCPRanks(t, n, tcpOpts{dir: dir})
				errs := initRanks(ranks, tcpRoot(t, ranks))
				for r, err := range errs {
					require.Error(t, err, "rank %d", r)
					t.Logf("rank %d: %v", r, err)
					assert.Equal(t, hccl.ESyscall, hccl.ResultOf(err), "rank %d: %v", r, err)
				}
				ents, err := os.ReadDir(dir)
				require.NoError(t, err)
				for _, e := range ents {
					assert.Equal(t, "filler", e.Name(), "left behind")
				}
			})
		}
	})
}
