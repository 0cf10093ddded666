package hcclsim

import (
	"crypto/rand"
	"os"
	"strconv"
	"sync"
	"time"
)

// Default timeouts of the model when neither Options nor the HCCL
// environment variables set them. The device waits far longer (1836 s for
// execution, 120 s for connection); the model is for tests and
// development, where a rank that never arrives should fail the run in
// seconds. A caller's context ends a wait sooner (see hccl.Comm).
const (
	DefaultExecTimeout    = 10 * time.Second
	DefaultConnectTimeout = 10 * time.Second
)

// Options configure a Sim (a plain value, copied by New). Zero fields take
// the HCCL environment variables the device honours, then the defaults
// above.
type Options struct {
	// ExecTimeout bounds every wait for a peer during an operation
	// (collectives, send/recv pairing, exchanges, one-sided requests).
	// Default: HCCL_EXEC_TIMEOUT seconds, else DefaultExecTimeout.
	ExecTimeout time.Duration
	// ConnectTimeout bounds communicator initialisation.
	// Default: HCCL_CONNECT_TIMEOUT seconds, else DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// BufferBytes is the staging memory of each rank of a multi-process
	// communicator. Default: HCCL_BUFFSIZE MiB, else 64 MiB. Larger
	// transfers move in pieces.
	BufferBytes int
	// ShmDir is where segments are created. Default /dev/shm.
	ShmDir string
}

func (o Options) withDefaults() Options {
	envSeconds := func(name string, def time.Duration) time.Duration {
		if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
			return time.Duration(v) * time.Second
		}
		return def
	}
	if o.ExecTimeout <= 0 {
		o.ExecTimeout = envSeconds("HCCL_EXEC_TIMEOUT", DefaultExecTimeout)
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = envSeconds("HCCL_CONNECT_TIMEOUT", DefaultConnectTimeout)
	}
	if o.BufferBytes <= 0 {
		o.BufferBytes = 64 << 20
		if v, err := strconv.Atoi(os.Getenv("HCCL_BUFFSIZE")); err == nil && v > 0 {
			o.BufferBytes = v << 20
		}
	}
	o.BufferBytes = max(o.BufferBytes, 64<<10) / 4096 * 4096
	if o.ShmDir == "" {
		o.ShmDir = "/dev/shm"
	}
	return o
}

// Sim is the HCCL model of the host-memory NPU: communicators whose ranks
// are goroutines of one process (data moves directly between their device
// memories) or separate processes (data moves through shared memory), with
// the argument checks, agreement checks and timeouts of docs/misuse.md. It
// implements hccl.Backend (backend.go). Safe for concurrent use.
type Sim struct {
	env  env
	opts Options

	mu     sync.Mutex
	comms  map[uintptr]*comm
	next   uintptr
	hubs   []*hub
	closed bool
}

func newSim(e env, opts Options) *Sim {
	return &Sim{env: e, opts: opts.withDefaults(), comms: make(map[uintptr]*comm), next: 0x5100}
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
	c := &comm{sim: s, rank: rank, n: n, dev: dev, name: name, timeout: timeout, tr: tr, world: world}
	c.os.init()
	return c
}

// Live counts communicators, registrations, enabled accesses and windows
// still held, for leak checks.
func (s *Sim) Live() int {
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
	failed := c.broken != nil || c.asyncErr != codeSuccess
	c.mu.Unlock()
	if !failed {
		c.waitQueued(c.timeout)
	}
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
