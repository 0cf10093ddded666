package hcclsim

import (
	"sync"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// transport moves a communicator's data: directly between the device
// memories of ranks in one process (localWorld), or through shared-memory
// segments between processes (shmWorld). Call-time methods (join, pair)
// run on the caller's goroutine and block until the peers arrive; data
// phases (collective, p2p, oneSided) run on the rank's stream.
type transport interface {
	// join exchanges the descriptors of collective seq among all ranks
	// and returns them by rank; an abandoned collective (a rank did not
	// arrive in time) fails with HCCL_E_TIMEOUT on every rank, late ones
	// included.
	join(c *comm, seq uint64, d *opDesc, timeout time.Duration) ([]*opDesc, error)
	// pair meets peer for a send/recv or an exchange (see pair.go).
	pair(c *comm, kind uint8, peer int, sending bool, offer pairOffer, timeout time.Duration) (pairResult, error)
	// collective is the data phase of a joined collective. bufs holds this
	// rank's views (or the error that prevented taking them, which the
	// transport reports to the peers so that none waits for this rank).
	collective(c *comm, seq uint64, ds []*opDesc, bufs opBufs, timeout time.Duration) error
	// p2p moves the data of matched sends and receives; all items of a
	// batch make progress together.
	p2p(c *comm, items []p2pItem, timeout time.Duration) error
	// ownerHas reports whether owner still holds registration id.
	ownerHas(c *comm, owner int, id uint64) bool
	// ownerSpans lists the memory owner still has registered for c's
	// rank (HCCL_E_REMOTE when the owner is gone).
	ownerSpans(c *comm, owner int) ([]span, error)
	// publishReg makes a registration visible to (or withdraws it from)
	// peers in other processes.
	publishReg(c *comm, r *registration, live bool) error
	// oneSided runs the transfers of a BatchGet (get) or BatchPut to peer.
	oneSided(c *comm, peer int, get bool, xs []xfer, timeout time.Duration) error
	// stopWaits makes the rank's pending waits fail now (destroy of a rank
	// whose queued work outlived the timeout).
	stopWaits(c *comm)
	// close releases the rank's share of the transport.
	close(c *comm)
}

// opBufs are one rank's views of its buffers for a collective.
type opBufs struct {
	send, recv []byte
	err        error
}

// p2pItem is one send or receive of a Send, Recv or BatchSendRecv.
type p2pItem struct {
	send  bool
	peer  int
	seq   uint64 // the pair's sequence number, from the call-time pairing
	count uint64
	dt    dtype
	ptr   unsafe.Pointer
	view  []byte // taken on the stream
	err   error  // view failure, reported to the peer
}

// xfer is one BatchGet/BatchPut transfer: local bytes and the remote
// address range (in the owner's address space).
type xfer struct {
	local  []byte
	lptr   unsafe.Pointer
	remote uintptr
	n      uint64
}

// comm is one rank of a communicator. Its methods are safe for concurrent
// use; the collectives of one communicator must be called in the same
// order on every rank (the HCCL rule).
type comm struct {
	sim     *Sim
	handle  uintptr
	rank, n int
	dev     int32
	name    string
	timeout time.Duration
	tr      transport
	world   [16]byte
	red     *reducer // data phases of a rank are serialised, so one suffices

	mu        sync.Mutex
	nextSeq   uint64 // collectives issued at call time
	lastDone  chan struct{}
	asyncErr  code
	broken    error // sticky: a data phase lost a peer
	destroyed bool
	queued    map[*queuedTask]struct{} // work on streams (queued.go)
	queueChg  chan struct{}            // closed and replaced when a queued task finishes
	execMu    sync.Mutex               // serialises the rank's data phases (they share its staging memory)

	os oneSidedState
	sq sendQueues // per-channel send queues of posted reads (sendqueue.go)
}

// reducer returns the rank's reduction scratch (data phases only, which
// execMu serialises).
func (c *comm) reducer() *reducer {
	if c.red == nil {
		c.red = new(reducer)
	}
	return c.red
}

// check fails when the communicator can no longer run operations.
func (c *comm) check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.destroyed {
		return errf(codePara, "communicator destroyed")
	}
	return c.broken
}

// fail records a failure of asynchronous work (HcclGetCommAsyncError). A
// data phase that timed out leaves the ranks out of step, so it also
// breaks the communicator for good, as on the device.
func (c *comm) fail(err error) {
	if err == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.asyncErr == codeSuccess {
		c.asyncErr = codeOf(err)
	}
	if codeOf(err) == codeTimeout && c.broken == nil {
		c.broken = err
	}
}

// gate is how a call hands its call-time result to the data phase it
// queued before the result was known.
type gate[T any] struct {
	ch chan gateVal[T]
}

type gateVal[T any] struct {
	v   T
	err error
}

func newGate[T any]() gate[T]         { return gate[T]{ch: make(chan gateVal[T], 1)} }
func (g gate[T]) open(v T, err error) { g.ch <- gateVal[T]{v, err} }
func (g gate[T]) wait() (T, error)    { x := <-g.ch; return x.v, x.err }

// enqueue queues task on the rank's stream, tracked for destroy; task
// runs only if the gate opens without an error.
func enqueueGated[T any](c *comm, s acl.StreamHandle, g gate[T], task func(T) error) error {
	qt := c.track()
	skipped, err := c.sim.env.enqueue(c.dev, s, func() error {
		defer c.untrack(qt)
		v, err := g.wait()
		if err != nil {
			return nil // the call already reported it
		}
		if err := c.check(); err != nil {
			return err
		}
		return task(v)
	})
	if err != nil {
		c.untrack(qt)
		return errf(codePara, "stream: %v", err)
	}
	c.setSkipped(qt, skipped)
	return nil
}

// runCollective is the common path of every collective call (local
// argument checks are the caller's): the data phase is queued on the
// stream first, so a bad stream fails before the sequence number is taken
// and before any peer waits; then the ranks agree at the call (HCCL_E_PARA
// on every rank if they do not), and the call returns once all have
// joined, leaving the data phase to the stream.
func (c *comm) runCollective(s acl.StreamHandle, d *opDesc, send, recv unsafe.Pointer, sendBytes, recvBytes uint64) error {
	if err := c.check(); err != nil {
		return err
	}
	type joined struct {
		seq        uint64
		ds         []*opDesc
		prev, done chan struct{}
	}
	g := newGate[joined]()
	err := enqueueGated(c, s, g, func(j joined) error {
		defer close(j.done)
		if j.prev != nil {
			// Data phases of one communicator run in call order on each rank.
			t := time.NewTimer(c.timeout)
			select {
			case <-j.prev:
				t.Stop()
			case <-t.C:
				err := errf(codeTimeout, "%v: the previous collective did not finish", d.Kind)
				c.fail(err)
				return err
			}
		}
		bufs := opBufs{}
		bufs.send, bufs.err = c.view(send, sendBytes)
		if bufs.err == nil {
			bufs.recv, bufs.err = c.view(recv, recvBytes)
		}
		err := c.exclusive(func() error { return c.tr.collective(c, j.seq, j.ds, bufs, c.timeout) })
		c.fail(err)
		return err
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	j := joined{seq: c.nextSeq, prev: c.lastDone, done: make(chan struct{})}
	c.nextSeq++
	c.lastDone = j.done
	c.mu.Unlock()
	j.ds, err = c.tr.join(c, j.seq, d, c.timeout)
	if err == nil {
		err = agree(j.ds)
	}
	if err != nil {
		close(j.done) // the data phase will not run
	}
	g.open(j, err)
	return err
}

// runP2P pairs every item with its peer's call (in call order; a count or
// type disagreement fails both sides with HCCL_E_PARA) and queues the data
// movement on the stream.
func (c *comm) runP2P(s acl.StreamHandle, items []p2pItem) error {
	if err := c.check(); err != nil {
		return err
	}
	g := newGate[[]p2pItem]()
	err := enqueueGated(c, s, g, func(items []p2pItem) error {
		for i := range items {
			it := &items[i]
			it.view, it.err = c.view(it.ptr, it.count*it.dt.size())
		}
		err := c.exclusive(func() error { return c.tr.p2p(c, items, c.timeout) })
		c.fail(err)
		return err
	})
	if err != nil {
		return err
	}
	// Items to different peers (or in different directions) pair at once,
	// so a batch never waits on its own order; items of one peer and
	// direction pair in item order, so their messages match in the order
	// both sides posted them.
	type group struct {
		peer int
		send bool
	}
	var order []group
	byGroup := map[group][]int{}
	for i, it := range items {
		g := group{it.peer, it.send}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], i)
	}
	errs := make([]error, len(items))
	pairGroup := func(idx []int) {
		for _, i := range idx {
			it := &items[i]
			res, err := c.tr.pair(c, pairP2P, it.peer, it.send, pairOffer{Count: it.count, DT: it.dt}, c.timeout)
			if err != nil {
				errs[i] = err
				return
			}
			it.seq = res.seq
			if res.peer.Count != it.count || res.peer.DT != it.dt {
				s, r := pairOffer{Count: it.count, DT: it.dt}, res.peer
				if !it.send {
					s, r = r, s
				}
				errs[i] = errf(codePara, "send of %d × %v paired with a receive of %d × %v", s.Count, s.DT, r.Count, r.DT)
			}
		}
	}
	if len(order) == 1 {
		pairGroup(byGroup[order[0]])
	} else {
		var wg sync.WaitGroup
		for _, g := range order {
			wg.Add(1)
			go func(idx []int) {
				defer wg.Done()
				pairGroup(idx)
			}(byGroup[g])
		}
		wg.Wait()
	}
	for _, e := range errs {
		if e != nil {
			err = e
			break
		}
	}
	g.open(items, err)
	return err
}

// exclusive runs a data phase under execMu; a panic (a bug) still
// releases the lock and becomes the phase's error.
func (c *comm) exclusive(f func() error) (err error) {
	c.execMu.Lock()
	defer c.execMu.Unlock()
	if err := c.check(); err != nil {
		return err // destroyed while this task waited for the lock
	}
	defer func() {
		if p := recover(); p != nil {
			err = errf(codeInternal, "data phase panicked: %v", p)
		}
	}()
	return f()
}

// view checks a buffer of this rank and returns its bytes; zero bytes is
// an empty view.
func (c *comm) view(p unsafe.Pointer, n uint64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	b, err := c.sim.env.view(c.dev, memDevice, p, n)
	if err != nil {
		return nil, errf(codePara, "buffer %p (+%d bytes): %v", p, n, err)
	}
	return b, nil
}
