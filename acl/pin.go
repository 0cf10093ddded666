package acl

import (
	"sync"
	"sync/atomic"
)

// Pinned execution: the steady state of Model.ExecuteAsync without taking
// every handle's lock on every run.
//
// A checked execution (Model.exec) takes a dozen handles shared — the
// model, the stream, both datasets and their contents, each memory their
// buffers refer to, the Device — which costs two atomic operations per
// handle. Once such an execution has succeeded with a stream and two
// datasets, the Model pins them: it keeps the triple and the Device's pin
// epoch. A later run with the same triple on the same stream holds only the
// Device's pin guard shared and the Model's mutex (held across every
// launch anyway), and checks the epoch with one atomic load.
//
// Whatever could make a pinned run unsafe bumps the epoch first: closing a
// model, stream, dataset or memory a pin has named (res.markClosed, after
// the handle is marked closed and before it is destroyed), pointing a data
// buffer of such a dataset elsewhere and adding a buffer to it (under the
// dataset's content lock, before the backend call), and closing the
// Device. Handles no pin has named (res.pinned) change without a bump, so
// that freeing a scratch buffer leaves the pins of running models alone.
// The bump takes the guard exclusively, so it waits for the pinned runs in
// flight, and every later run finds its pin stale and takes the checked
// path again, which fails cleanly on a closed handle or pins the new
// state. A closer thus
// waits for a pinned run exactly as it waits for a checked one holding its
// lock, and memory still never goes from under a run: the checked run that
// made the pin recorded its stream on each memory (mem.usedBy), so the
// memory's Close, after the bump, waits for that stream.
//
// Lock order: pinGuard.mu, then Model.mu. A pinned run takes no handle's
// res lock and no dataset's content lock, so a bump may hold those (Update
// and Add do) but never a Model's mutex. The guard is an RWMutex held only
// across a launch, not the Model's mutex (which would save its two atomic
// operations per run): a bump then waits for launches only, never for an
// Execute or a Close that holds the Model's mutex while waiting for a
// stream.

// pinGuard is a Device's pin epoch and the lock pinned runs hold.
type pinGuard struct {
	mu    sync.RWMutex // held shared by pinned runs, exclusively by bump
	epoch atomic.Uint64
}

// bump invalidates every pin of the Device, after the pinned runs in
// flight have returned.
func (g *pinGuard) bump() {
	g.mu.Lock()
	g.epoch.Add(1)
	g.mu.Unlock()
}

// modelPin is what a Model's last checked asynchronous execution validated.
// It is guarded by Model.mu.
type modelPin struct {
	s       *Stream
	in, out *Dataset
	epoch   uint64
	ok      bool
	runs    uint64 // executions that took the pinned path, for tests
}

// pin records a checked execution's handles as the Model's pin, and marks
// each handle pinned so that closing or changing it bumps the guard. The
// caller still holds every handle the execution took (execLocks), so the
// epoch read here and the marks predate any change to them.
func (m *Model) pin(s *Stream, in, out *Dataset, ms []*mem) {
	for _, r := range [...]*res{&m.res, &s.res, &in.res, &out.res} {
		markPinned(r)
	}
	for _, x := range ms {
		markPinned(&x.res)
	}
	epoch := m.dev.pins.epoch.Load()
	m.mu.Lock()
	p := &m.pinned
	p.s, p.in, p.out, p.epoch, p.ok = s, in, out, epoch, true
	m.mu.Unlock()
}

// markPinned marks r as named by a pin, with a load first so that the
// steady state of re-pinning writes nothing shared.
func markPinned(r *res) {
	if !r.pinned.Load() {
		r.pinned.Store(true)
	}
}

// unpin drops the pin (so that it keeps no closed handle reachable). m.mu
// is held.
func (m *Model) unpin() {
	m.pinned = modelPin{runs: m.pinned.runs}
}

// executePinned runs ExecuteAsync's steady state when s, in and out are
// the Model's pin and the pin is current: one backend call under the pin
// guard and m.mu. It reports false, having done nothing, when the checked
// path must run instead: no or a stale pin, another triple, or an
// execution that needs more than a launch (a previous run queued on
// another stream, or the model run synchronously before).
func (m *Model) executePinned(s *Stream, in, out *Dataset) (bool, error) {
	g := &m.dev.pins
	g.mu.RLock()
	defer g.mu.RUnlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	p := &m.pinned
	if !p.ok || p.s != s || p.in != in || p.out != out || p.epoch != g.epoch.Load() ||
		m.ranSync || (m.last != nil && m.last != s) {
		return false, nil
	}
	if err := m.launch(s, in.h, out.h); err != nil {
		return true, err
	}
	// The memories need no usedBy(s): the checked run that made the pin
	// recorded s on each of them, and a memory forgets its streams only
	// when it closes, which makes the pin stale.
	m.last, m.ranAsync = s, true
	p.runs++
	return true, nil
}
