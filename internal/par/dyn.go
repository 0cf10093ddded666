package par

import (
	"sync"
	"sync/atomic"
)

// ForChunks runs fn over [0,n) in chunks of grain indices (the last may
// be shorter) that up to threads goroutines claim one at a time, the
// calling goroutine among them, and returns when every chunk is done. A
// helper that starts late, or a core that other work slows, just takes
// fewer chunks: the others never wait for it to begin. Which goroutine
// runs which chunk varies from call to call, so each chunk's work must
// depend only on its own indices (as For's ranges).
func ForChunks(threads, n, grain int, fn func(lo, hi int)) {
	forChunks(threads, n, grain, fn, nil, nil)
}

// ForChunksW is ForChunks telling fn which of the goroutines, w in
// [0, min(threads, chunks)), runs the chunk: a goroutine runs its chunks
// one after another, so it may keep state per w across them (a packed
// operand) without locking.
func ForChunksW(threads, n, grain int, fn func(w, lo, hi int)) {
	forChunks(threads, n, grain, nil, fn, nil)
}

// ForChunksSetup is ForChunksW with setup(w) run by goroutine w before it
// claims its first chunk (and not at all if none is left by then): work
// a goroutine needs for every chunk (packing an operand) delays no chunk
// another goroutine could have run.
func ForChunksSetup(threads, n, grain int, setup func(w int), fn func(w, lo, hi int)) {
	forChunks(threads, n, grain, nil, fn, setup)
}

func forChunks(threads, n, grain int, fn func(lo, hi int), fnW func(w, lo, hi int), setup func(w int)) {
	grain = max(1, grain)
	chunks := (n + grain - 1) / grain
	t := min(threads, chunks)
	if t <= 1 {
		if setup != nil && n > 0 {
			setup(0)
		}
		for lo := 0; lo < n; lo += grain {
			if fn != nil {
				fn(lo, min(lo+grain, n))
			} else {
				fnW(0, lo, min(lo+grain, n))
			}
		}
		return
	}
	j := chunkJobs.Get().(*chunkJob)
	j.next.Store(0)
	j.n, j.grain, j.fn, j.fnW, j.setup = n, grain, fn, fnW, setup
	For(t, t, j.work)
	j.fn, j.fnW, j.setup = nil, nil, nil
	chunkJobs.Put(j)
}

// chunkJob is one ForChunks call's shared state; pooled with its method
// value, so a call allocates nothing.
type chunkJob struct {
	next     atomic.Int64
	n, grain int
	fn       func(lo, hi int)
	fnW      func(w, lo, hi int)
	setup    func(w int)
	work     func(int, int)
}

var chunkJobs = sync.Pool{New: func() any {
	j := new(chunkJob)
	j.work = j.claim
	return j
}}

// claim runs chunks until none is left, as goroutine w (For's range w).
func (j *chunkJob) claim(w, _ int) {
	if j.setup != nil {
		if int(j.next.Load())*j.grain >= j.n {
			return
		}
		j.setup(w)
	}
	for {
		lo := int(j.next.Add(1)-1) * j.grain
		if lo >= j.n {
			return
		}
		if j.fn != nil {
			j.fn(lo, min(lo+j.grain, j.n))
		} else {
			j.fnW(w, lo, min(lo+j.grain, j.n))
		}
	}
}

// Chunked is ForChunks with four chunks per thread: for loops whose
// chunks cost alike, balanced to a quarter of a thread's share when one
// thread starts late or runs slow.
func Chunked(threads, n int, fn func(lo, hi int)) {
	if threads <= 1 || n <= 1 {
		fn(0, n)
		return
	}
	ForChunks(threads, n, (n+4*threads-1)/(4*threads), fn)
}
