package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A slot is one helper goroutine's mailbox: the caller posts a range, the
// helper runs it. Every change of state is a compare-and-swap, so neither
// side misses the other's wake-up; fn, lo and hi are written by the caller
// only while the slot is idle or asleep and read by the helper only after
// it took the range (posted → running).
type slot struct {
	state  atomic.Int32
	fn     func(lo, hi int)
	lo, hi int
	wake   chan struct{} // a range posted for a sleeping helper
	done   chan struct{} // a range finished for a sleeping caller
	_      [64]byte      // keeps the next slot's state off this cache line
}

// Slot states.
const (
	slotIdle    int32 = iota
	slotPosted        // a range waits for the helper (or the caller takes it back)
	slotRunning       // the helper runs the range
	slotWaited        // the helper runs the range, and the caller sleeps until it is done
	slotDone          // the helper finished; the caller resets the slot to idle
	slotAsleep        // idle, and the helper sleeps until a range is posted
)

// How long a helper stays awake after a range, and how long a caller
// spins for a helper's range to end before sleeping. A model's parallel
// kernels follow one another within a millisecond, and a helper woken
// from sleep costs a futex wake — after the machine idled, the core's
// own wake-up too: a two-thread ResNet run after a pause took 1.5× as
// long with helpers that slept after 50 µs. A spinning helper yields to
// any other goroutine that wants its P (runtime.Gosched), so it takes no
// time from the program, only an idle core's cycles. The ranges of a For
// are of equal size and end close together, so a caller rarely spins
// long; sleeping from acl's locked thread costs a hand-off each way.
const (
	helperSpin = time.Millisecond
	callerSpin = 200 * time.Microsecond
	maxHelpers = 63
)

// team is the persistent helpers: one caller at a time (mu) posts ranges
// to them.
type team struct {
	mu    sync.Mutex
	slots []*slot
}

var shared team

// run runs For's ranges on the team and reports true, or reports false
// when the team cannot take them (busy with another caller — a For
// nested in a range, or one from another goroutine — or more ranges than
// GOMAXPROCS): For then starts goroutines.
func (tm *team) run(t, n int, fn func(lo, hi int)) bool {
	if t > runtime.GOMAXPROCS(0) || t-1 > maxHelpers || !tm.mu.TryLock() {
		return false
	}
	for len(tm.slots) < t-1 {
		s := &slot{wake: make(chan struct{}, 1), done: make(chan struct{}, 1)}
		tm.slots = append(tm.slots, s)
		go s.serve()
	}
	slots := tm.slots[:t-1]
	for w, s := range slots {
		s.post(fn, (w+1)*n/t, (w+2)*n/t)
	}
	finished := false
	defer func() {
		// A panic in the caller's range (a kernel's bug, recovered by
		// its task runner) must not leave ranges behind: the ranges no
		// helper took are dropped, the others awaited.
		if !finished {
			for _, s := range slots {
				s.finish(false)
			}
		}
		tm.mu.Unlock()
	}()
	fn(0, n/t)
	for _, s := range slots {
		s.finish(true)
	}
	finished = true
	return true
}

// post gives the slot's helper the range [lo,hi).
func (s *slot) post(fn func(lo, hi int), lo, hi int) {
	s.fn, s.lo, s.hi = fn, lo, hi
	if s.state.CompareAndSwap(slotIdle, slotPosted) {
		return
	}
	// The helper is asleep (the only other state of a slot between
	// ranges): it wakes to find the range posted.
	s.state.Store(slotPosted)
	s.wake <- struct{}{}
}

// finish returns when the slot's range is done: run here if the helper
// has not taken it yet (and steal is set; else dropped), else waited for —
// spinning first, then asleep.
func (s *slot) finish(steal bool) {
	defer func() { s.fn = nil }() // the slot must not keep the range's data alive
	if s.state.CompareAndSwap(slotPosted, slotIdle) {
		if steal {
			s.fn(s.lo, s.hi)
		}
		return
	}
	var t0 time.Time
	for i := 0; ; i++ {
		switch s.state.Load() {
		case slotDone:
			s.state.Store(slotIdle)
			return
		case slotRunning:
			if i%64 != 63 {
				continue
			}
			if t0.IsZero() {
				t0 = time.Now()
			} else if time.Since(t0) > callerSpin && s.state.CompareAndSwap(slotRunning, slotWaited) {
				<-s.done
				s.state.Store(slotIdle)
				return
			}
		}
	}
}

// serve is a helper: it runs each range posted to its slot, stays awake
// for helperSpin after it, then sleeps until the next.
func (s *slot) serve() {
	t0 := time.Now()
	for i := 0; ; i++ {
		switch s.state.Load() {
		case slotPosted:
			if !s.state.CompareAndSwap(slotPosted, slotRunning) {
				continue // the caller took the range back
			}
			s.fn(s.lo, s.hi)
			if !s.state.CompareAndSwap(slotRunning, slotDone) {
				s.state.Store(slotDone) // slotWaited: the caller sleeps
				s.done <- struct{}{}
			}
			t0 = time.Now()
		case slotIdle:
			if i%64 != 63 {
				continue
			}
			if time.Since(t0) > helperSpin && s.state.CompareAndSwap(slotIdle, slotAsleep) {
				<-s.wake
				t0 = time.Now()
			} else if i%1024 == 1023 {
				runtime.Gosched() // let any goroutine waiting for this P run
			}
		}
	}
}
