package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every range of a For runs at the same time as the others (sgemm's
// threads meet at a barrier in every step): ranges that wait for all the
// others finish, on the team and on started goroutines, many times over.
func TestForRangesRunTogether(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, threads := range []int{2, 3, 4, 6} { // 6 > GOMAXPROCS: started goroutines
		for range 50 {
			var arrived atomic.Int32
			For(threads, threads, func(lo, hi int) {
				arrived.Add(1)
				deadline := time.Now().Add(10 * time.Second)
				for arrived.Load() < int32(threads) {
					if time.Now().After(deadline) {
						panic("a range never started")
					}
					runtime.Gosched()
				}
			})
		}
	}
}

// Fors nested in a range, and Fors from many goroutines at once, each
// cover their indices exactly once (the team takes one caller at a time;
// the others start goroutines).
func TestForNestedAndConcurrent(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				hits := make([]atomic.Int32, 60)
				For(3, 6, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						For(2, 10, func(a, b int) {
							for j := a; j < b; j++ {
								hits[i*10+j].Add(1)
							}
						})
					}
				})
				for i := range hits {
					if hits[i].Load() != 1 {
						t.Errorf("index %d visited %d times", i, hits[i].Load())
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// A panic in the caller's range (a kernel's bug, recovered by its task
// runner) leaves no range running behind it and the team usable.
func TestForPanicInCallerRange(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var other atomic.Int32
	func() {
		defer func() { assert.Equal(t, "boom", recover()) }()
		For(2, 2, func(lo, hi int) {
			if lo == 0 {
				panic("boom")
			}
			time.Sleep(time.Millisecond)
			other.Add(1)
		})
	}()
	assert.LessOrEqual(t, other.Load(), int32(1), "the other range ran at most once")
	done := make(chan struct{})
	go func() {
		defer close(done)
		hits := make([]atomic.Int32, 100)
		For(2, 100, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
		})
		for i := range hits {
			assert.Equal(t, int32(1), hits[i].Load())
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		require.FailNow(t, "For hangs after a panic")
	}
}

// Helpers that went to sleep wake for the next For, and a caller whose
// helper's range runs long sleeps and still sees it finish.
func TestForAfterIdle(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, pause := range []time.Duration{0, 2 * helperSpin, 3 * time.Millisecond} {
		time.Sleep(pause)
		var sum atomic.Int64
		For(2, 2, func(lo, hi int) {
			if lo == 1 {
				time.Sleep(4 * callerSpin)
			}
			sum.Add(int64(lo + 1))
		})
		assert.Equal(t, int64(3), sum.Load(), "pause %v", pause)
	}
}

// From a goroutine locked to its OS thread (acl runs models so), a
// parallel loop costs no heap allocation once the team is running — a
// goroutine per range used to cost a closure each.
func TestForLockedNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var out [2]int
	fn := func(lo, hi int) { out[lo] = hi }
	done := make(chan uint64)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		For(2, 2, fn)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range 100 {
			For(2, 2, fn)
		}
		runtime.ReadMemStats(&m1)
		done <- m1.Mallocs - m0.Mallocs
	}()
	assert.Less(t, <-done, uint64(10))
	assert.Equal(t, [2]int{1, 2}, out)
}

// ForChunks runs every chunk exactly once, in chunks of the grain, for
// any thread count; with a range that blocks until another starts, the
// caller finishes the other chunks meanwhile.
func TestForChunks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, n := range []int{0, 1, 7, 100, 1001} {
		for _, grain := range []int{0, 1, 3, 64, 5000} {
			for _, threads := range []int{1, 2, 3} {
				hits := make([]atomic.Int32, n)
				ForChunks(threads, n, grain, func(lo, hi int) {
					assert.True(t, lo%max(1, grain) == 0 && hi-lo <= max(1, grain) && hi > lo, "chunk [%d,%d) of grain %d", lo, hi, grain)
					for i := lo; i < hi; i++ {
						hits[i].Add(1)
					}
				})
				for i := range hits {
					require.Equal(t, int32(1), hits[i].Load(), "n=%d grain=%d threads=%d i=%d", n, grain, threads, i)
				}
			}
		}
	}
}

// ForChunksW's w names a goroutine that runs its chunks one at a time:
// state kept per w is never touched by two goroutines at once.
func TestForChunksW(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, threads := range []int{1, 2, 3, 5} {
		busy := make([]atomic.Int32, threads)
		hits := make([]atomic.Int32, 200)
		ForChunksW(threads, 200, 7, func(w, lo, hi int) {
			if !assert.Less(t, w, threads) {
				return
			}
			assert.Equal(t, int32(1), busy[w].Add(1), "goroutine %d runs two chunks at once", w)
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
			time.Sleep(10 * time.Microsecond)
			busy[w].Add(-1)
		})
		for i := range hits {
			require.Equal(t, int32(1), hits[i].Load(), "threads=%d i=%d", threads, i)
		}
	}
}

func TestChunked(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, n := range []int{0, 1, 5, 8, 9, 1000} {
		for _, threads := range []int{-1, 0, 1, 2, 3} {
			hits := make([]atomic.Int32, n)
			var calls atomic.Int32
			Chunked(threads, n, func(lo, hi int) {
				calls.Add(1)
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			})
			for i := range hits {
				require.Equal(t, int32(1), hits[i].Load(), "n=%d threads=%d i=%d", n, threads, i)
			}
			assert.LessOrEqual(t, int(calls.Load()), max(1, 4*threads, n), "n=%d threads=%d", n, threads)
		}
	}
}

// ForChunksSetup runs setup(w) once per goroutine that claims a chunk,
// before its first one, and never on a goroutine that finds none left.
func TestForChunksSetup(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, n := range []int{0, 1, 50} {
		var setups [2]atomic.Int32
		var ready [2]atomic.Bool
		hits := make([]atomic.Int32, n)
		ForChunksSetup(2, n, 3, func(w int) {
			setups[w].Add(1)
			ready[w].Store(true)
		}, func(w, lo, hi int) {
			assert.True(t, ready[w].Load(), "goroutine %d ran a chunk before its setup", w)
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
		})
		for w := range setups {
			require.LessOrEqual(t, setups[w].Load(), int32(1))
		}
		for i := range hits {
			require.Equal(t, int32(1), hits[i].Load())
		}
	}
}
