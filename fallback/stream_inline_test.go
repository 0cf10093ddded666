package fallback

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tasks that may run inline (hook tasks) and tasks that may not, queued in
// a random mix while other goroutines synchronize the same stream, run one
// at a time and in queue order, and each exactly once; a synchronizing
// caller ran some of them itself.
func TestStreamInlineKeepsOrder(t *testing.T) {
	n := newTestNPU(t)
	s, err := n.CreateStream()
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 1))
	var (
		mu      sync.Mutex
		order   []int
		running atomic.Int32
		overlap atomic.Bool
	)
	task := func(i int) func() error {
		return func() error {
			if running.Add(1) != 1 {
				overlap.Store(true)
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			running.Add(-1)
			return nil
		}
	}
	// Other threads synchronize the stream while tasks are queued; they
	// are bound to the stream's context as ACL callers are.
	ctx, err := n.GetCurrentContext()
	require.NoError(t, err)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // the thread ends with the goroutine
			if !assert.NoError(t, n.SetCurrentContext(ctx)) {
				return
			}
			for {
				select {
				case <-stop:
					return
				default:
				}
				assert.NoError(t, n.SynchronizeStream(s))
			}
		}()
	}
	before := n.Counters().InlineTasks
	const total = 3000
	for i := range total {
		if rng.IntN(2) == 0 {
			_, err = n.enqueueOpState(s, "hook", task(i)) // may run inline
		} else {
			err = n.enqueueTask(s, task(i)) // runs on the stream's goroutine
		}
		require.NoError(t, err)
		if rng.IntN(8) == 0 {
			require.NoError(t, n.SynchronizeStream(s))
		}
	}
	require.NoError(t, n.SynchronizeStream(s))
	close(stop)
	wg.Wait()
	want := make([]int, total)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, order)
	assert.False(t, overlap.Load(), "two tasks of one stream ran at once")
	assert.Greater(t, n.Counters().InlineTasks, before, "no synchronize ran a task itself")
	require.NoError(t, n.DestroyStream(s))
}
