package hccltest

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

// worker runs the closures of one rank on a goroutine locked to its own OS
// thread.
type worker struct {
	rank int
	dev  int32
	r    Rank
	comm hccl.CommHandle
	reqs chan func()
	done chan struct{}
	// allocs tracks this rank's buffers so a failed step cannot leak them.
	allocs map[unsafe.Pointer]bool
}

func (w *worker) alloc(size uintptr) (unsafe.Pointer, error) {
	p, err := w.r.Alloc(size)
	if err == nil {
		w.allocs[p] = true
	}
	return p, err
}

func (w *worker) free(p unsafe.Pointer) error {
	if !w.allocs[p] {
		return nil
	}
	delete(w.allocs, p)
	return w.r.Free(p)
}

// write allocates a buffer holding data (at least 1 byte).
func (w *worker) buffer(data []byte, size int) (unsafe.Pointer, error) {
	if size < len(data) {
		size = len(data)
	}
	p, err := w.alloc(uintptr(max(size, 1)))
	if err != nil {
		return nil, err
	}
	if len(data) > 0 {
		if err := w.r.Write(p, data); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (w *worker) read(p unsafe.Pointer, n int) ([]byte, error) {
	out := make([]byte, n)
	if n == 0 {
		return out, nil
	}
	return out, w.r.Read(out, p)
}

// group is n ranks, each with its worker; comms are filled by an init.
type group struct {
	t   testing.TB
	s   *suite
	b   hccl.Backend
	ws  []*worker
	dog time.Duration
}

// in returns the group for use by subtest t (its failures end t, not the
// test that made the group).
func (g *group) in(t testing.TB) *group {
	c := *g
	c.t = t
	return &c
}

// newGroup starts n workers, each opening its rank on its own thread.
func (s *suite) newGroup(t testing.TB, n int) *group {
	t.Helper()
	devs := s.env.Devices(n)
	if len(devs) != n {
		t.Fatalf("env.Devices(%d) returned %d devices", n, len(devs))
	}
	g := &group{t: t, s: s, b: s.b, dog: s.watchdog}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		w := &worker{rank: i, dev: devs[i], reqs: make(chan func()), done: make(chan struct{}), allocs: map[unsafe.Pointer]bool{}}
		g.ws = append(g.ws, w)
		wg.Add(1)
		go func() {
			runtime.LockOSThread()
			// Never unlocked: thread state the env set dies with the thread.
			defer close(w.done)
			w.r, errs[w.rank] = s.env.OpenRank(w.rank, w.dev)
			wg.Done()
			if errs[w.rank] != nil {
				return
			}
			for f := range w.reqs {
				f()
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			g.stop()
			t.Fatalf("OpenRank(%d): %v", i, err)
		}
	}
	t.Cleanup(g.stop)
	return g
}

// stop destroys leftover communicators, frees leftover buffers, closes the
// ranks and ends the workers. Idempotent.
func (g *group) stop() {
	for _, w := range g.ws {
		if w.reqs == nil {
			continue
		}
		if w.r != nil {
			fin := make(chan struct{})
			select {
			case w.reqs <- func() {
				defer close(fin)
				if w.comm != 0 {
					_ = g.b.CommDestroy(w.comm)
					w.comm = 0
				}
				for p := range w.allocs {
					_ = w.free(p)
				}
				_ = w.r.Close()
			}:
				<-fin
			case <-w.done:
			case <-time.After(g.dog):
				// A worker stuck in a call: leave it, the test already failed.
			}
		}
		close(w.reqs)
		w.reqs = nil
	}
}

// each runs f on every rank concurrently and returns the per-rank errors.
// A step that outlives the watchdog fails the test (fatally).
func (g *group) each(f func(w *worker) error) []error {
	g.t.Helper()
	return g.some(nil, f)
}

// some runs f on the listed ranks (all when ranks is nil).
func (g *group) some(ranks []int, f func(w *worker) error) []error {
	g.t.Helper()
	if ranks == nil {
		ranks = make([]int, len(g.ws))
		for i := range ranks {
			ranks[i] = i
		}
	}
	errs := make([]error, len(g.ws))
	var wg sync.WaitGroup
	for _, r := range ranks {
		w := g.ws[r]
		wg.Add(1)
		w.reqs <- func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					errs[w.rank] = fmt.Errorf("rank %d panicked: %v", w.rank, p)
				}
			}()
			errs[w.rank] = f(w)
		}
	}
	fin := make(chan struct{})
	go func() { wg.Wait(); close(fin) }()
	select {
	case <-fin:
	case <-time.After(g.dog):
		g.t.Fatalf("ranks %v did not finish within the watchdog (%v): a backend call hangs", ranks, g.dog)
	}
	return errs
}

// async starts f on the listed ranks and returns a function that waits for
// them (with the watchdog) and returns the per-rank errors.
func (g *group) async(ranks []int, f func(w *worker) error) func() []error {
	errs := make([]error, len(g.ws))
	var wg sync.WaitGroup
	for _, r := range ranks {
		w := g.ws[r]
		wg.Add(1)
		w.reqs <- func() {
			defer wg.Done()
			errs[w.rank] = f(w)
		}
	}
	return func() []error {
		g.t.Helper()
		fin := make(chan struct{})
		go func() { wg.Wait(); close(fin) }()
		select {
		case <-fin:
		case <-time.After(g.dog):
			g.t.Fatalf("ranks %v did not finish within the watchdog (%v)", ranks, g.dog)
		}
		return errs
	}
}

// noErr fails the test (fatally) if any rank failed.
func (g *group) noErr(what string, errs []error) {
	g.t.Helper()
	failed := false
	for r, err := range errs {
		if err != nil {
			g.t.Errorf("%s: rank %d: %v", what, r, err)
			failed = true
		}
	}
	if failed {
		g.t.FailNow()
	}
}

// initRoot creates the group's communicator by root info (rank 0's
// GetRootInfo, shared in memory), with cfg when non-nil.
func (g *group) initRoot(cfg *hccl.CommConfig) []error {
	g.t.Helper()
	var root hccl.RootInfo
	errs := g.some([]int{0}, func(w *worker) error {
		var err error
		root, err = g.b.GetRootInfo()
		return err
	})
	if errs[0] != nil {
		return errs
	}
	n := uint32(len(g.ws))
	return g.each(func(w *worker) error {
		var h hccl.CommHandle
		var err error
		if cfg != nil {
			h, err = g.b.CommInitRootInfoConfig(n, &root, uint32(w.rank), cfg)
		} else {
			h, err = g.b.CommInitRootInfo(n, &root, uint32(w.rank))
		}
		if err == nil {
			w.comm = h
		}
		return err
	})
}

// mustInit is initRoot that fails the test on error.
func (g *group) mustInit() *group {
	g.t.Helper()
	g.noErr("CommInitRootInfo", g.initRoot(nil))
	return g
}

// destroy destroys every rank's communicator.
func (g *group) destroy() []error {
	g.t.Helper()
	return g.each(func(w *worker) error {
		if w.comm == 0 {
			return nil
		}
		err := g.b.CommDestroy(w.comm)
		w.comm = 0
		return err
	})
}
