package osthread

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestIDIsGettid compares ID with the system call on many locked threads
// at once, and checks the fast path is in use where it is built.
func TestIDIsGettid(t *testing.T) {
	require.Equal(t, haveProcid, Fast(), "the runtime's thread record disagrees with gettid")
	var wg sync.WaitGroup
	errs := make(chan [2]int, 32)
	for range 32 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range 100 {
				if a, b := ID(), unix.Gettid(); a != b {
					errs <- [2]int{a, b}
					return
				}
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("ID() = %d, gettid = %d", e[0], e[1])
	}
}

func BenchmarkID(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.Run("ID", func(b *testing.B) {
		for b.Loop() {
			_ = ID()
		}
	})
	b.Run("Gettid", func(b *testing.B) {
		for b.Loop() {
			_ = unix.Gettid()
		}
	})
}
