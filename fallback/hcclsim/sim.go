package hcclsim

import (
	"crypto/rand"
	"sync"
	"time"
)

// Sim is the HCCL model of the host-memory NPU: communicators whose ranks
// are goroutines of one process (data moves directly between their device
// memories) or separate processes (data moves through shared memory), with
// the argument checks, agreement checks and timeouts of docs/misuse.md. It
// implements hccl.Backend (backend.go). Safe for concurrent use.
type Sim struct {
	env  env
	opts Options
	// envErr is a malformed HCCL environment variable, reported by every
	// communicator initialisation (as the device parses the environment
	// at init).
	envErr error

	mu     sync.Mutex
	comms  map[uintptr]*comm
	next   uintptr
	hubs   []*hub
	closed bool
}

func newSim(e env, opts Options) *Sim {
	o, envErr := opts.withDefaults()
	return &Sim{env: e, opts: o, envErr: envErr, comms: make(map[uintptr]*comm), next: 0x5100}
}

// newWorldID returns a random world id.
func newWorldID() (id [16]byte) {
	_, _ = rand.Read(id[:])
	return id
}

// lookup returns the live communicator of handle h.
func (s *Sim) lookup(h uintptr) (*comm, error) {
	if h == 0 {
		return nil, errf(codePtr, "null communicator")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.comms[h]
	if c == nil {
		return nil, errf(codePara, "unknown or destroyed communicator %#x", h)
	}
	return c, nil
}

// register gives c a handle.
func (s *Sim) register(c *comm) uintptr {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next += 0x10
	c.handle = s.next
	s.comms[c.handle] = c
	return c.handle
}

// newComm builds rank `rank` of n on device dev over transport tr.
func (s *Sim) newComm(tr transport, world [16]byte, n, rank int, dev int32, name string, timeout time.Duration) *comm {
	c := &comm{sim: s, rank: rank, n: n, dev: dev, name: name, timeout: timeout, tr: tr, world: world,
		connect: s.opts.ConnectTimeout, checkOp: s.opts.InconsistentCheck, a3: a3Socs[s.opts.SocName], stop: make(chan struct{})}
	c.os.init()
	return c
}

// Live counts communicators, registrations, enabled accesses and windows
// still held, for leak checks.
func (s *Sim) Live() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	cs := make([]*comm, 0, len(s.comms))
	for _, c := range s.comms {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	n := len(cs)
	for _, c := range cs {
		n += c.os.live()
	}
	return n
}

// Close destroys every communicator still open and stops the rendezvous
// of root infos that were never used. Idempotent.
func (s *Sim) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	hs := s.hubs
	s.hubs = nil
	var hs2 []uintptr
	for h := range s.comms {
		hs2 = append(hs2, h)
	}
	s.mu.Unlock()
	for _, h := range hs2 {
		_ = s.destroy(h)
	}
	for _, h := range hs {
		h.close()
		<-h.done
	}
	return nil
}

// destroy is CommDestroy: the handle dies at once; work already queued on
// the rank's streams finishes (bounded by the timeout); then everything
// the rank holds is released.
func (s *Sim) destroy(h uintptr) error {
	s.mu.Lock()
	c := s.comms[h]
	delete(s.comms, h)
	s.mu.Unlock()
	if c == nil {
		return errf(codePara, "unknown or destroyed communicator %#x", h)
	}
	// Queued work finishes first, bounded by the timeout. After a failure
	// of the communicator the stream skips the rank's later tasks (its
	// error is sticky), so there is nothing to wait for: stop at once. A
	// stream that failed for another reason skips them too: waitQueued
	// does not wait for those.
	c.mu.Lock()
	failed := c.broken != nil || c.asyncErr != codeSuccess || c.doomed
	c.mu.Unlock()
	if !failed {
		c.waitQueued(min(c.timeout, c.connect))
	}
	close(c.stop) // held and waiting tasks give up now
	c.tr.stopWaits(c)
	c.mu.Lock()
	c.destroyed = true
	c.mu.Unlock()
	// Work that outlived the wait now fails its check instead of touching
	// released memory; take execMu so no data phase is mid-flight.
	c.execMu.Lock()
	c.os.clear()
	c.tr.close(c)
	c.execMu.Unlock()
	return nil
}
