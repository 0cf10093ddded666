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
	// post announces this rank's descriptor of collective seq without
	// waiting; collect then waits for every rank's and returns them by
	// rank. An abandoned collective (a rank did not post in time) fails
	// with HCCL_E_TIMEOUT on every rank, late ones included. The call
	// posts, so collectives pair in call order; the stream task collects.
	post(c *comm, seq uint64, d *opDesc, timeout time.Duration) (ticket, error)
	collect(c *comm, t ticket) ([]*opDesc, error)
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
	ownerSpans(dst []span, c *comm, owner int) ([]span, error)
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

// ticket is a posted collective descriptor (transport.post).
type ticket struct {
	seq     uint64
	timeout time.Duration
	mt      *meeting  // in-process
	ch      chan *msg // multi-process: the hub's answer
}

// join posts and collects at once.
func (c *comm) join(seq uint64, d *opDesc, timeout time.Duration) ([]*opDesc, error) {
	t, err := c.tr.post(c, seq, d, timeout)
	if err != nil {
		return nil, err
	}
	return c.tr.collect(c, t)
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

// xfer is one BatchGet/BatchPut transfer (or CopyLocal copy): the local
// buffer and the remote address range (in the owner's address space). It
// is kept small (a batch carries hundreds): the local bytes are local(),
// once the batch's local buffers have been checked.
type xfer struct {
	lptr   unsafe.Pointer
	remote uintptr
	n      uint64
	desc   int // the descriptor's index in its batch (one-sided), for messages
}

// local is the transfer's local buffer; only valid once checkLocals (or
// CopyLocal's checks) has found it inside live device memory of the rank.
func (x *xfer) local() []byte { return unsafe.Slice((*byte)(x.lptr), x.n) }

// comm is one rank of a communicator. Its methods are safe for concurrent
// use; the collectives of one communicator must be called in the same
// order on every rank (the HCCL rule).
type comm struct {
	sim     *Sim
	handle  uintptr
	rank, n int
	dev     int32
	name    string
	timeout time.Duration // HCCL_EXEC_TIMEOUT or the config's
	connect time.Duration // HCCL_CONNECT_TIMEOUT: links of the first operation
	checkOp string        // inconsistent_check: checkFirst, checkOn, checkOff
	a3      bool          // the device is an Atlas A3 (Options.SocName): windows exist
	stop    chan struct{} // closed by destroy: held and waiting tasks give up
	tr      transport
	world   [16]byte
	red     *reducer    // data phases of a rank are serialised, so one suffices
	waiter  *rankWaiter // where the data phases park (round.go); made by the first

	mu         sync.Mutex
	nextSeq    uint64   // collectives issued at call time
	last       *collRec // the last collective issued, serving lastSeq (collective.go)
	lastSeq    uint64
	collFree   []*collRec          // records of finished collectives, for reuse
	linked     bool                // the first operation built the links (and checked consistency)
	asyncErr   code                // HcclGetCommAsyncError
	broken     error               // sticky: an operation failed its stream; every later one fails too
	doomed     bool                // an operation is holding until its exec timeout to fail
	ahead      [maxAhead]aheadSlot // collectives in flight, by sequence number
	destroyed  bool
	queued     map[*queuedTask]struct{} // work on streams (queued.go)
	queueChg   chan struct{}            // closed and replaced when a queued task finishes and queueWatch is set
	queueWatch bool                     // a destroy waits on queueChg
	execMu     sync.Mutex               // serialises the rank's data phases (they share its staging memory)

	os oneSidedState
	rs resolver   // owner-side scratch of this rank's one-sided batches (under execMu)
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

// usable fails a call on a destroyed communicator. A failed one still
// takes calls, as on the device: their stream tasks fail (execFail).
func (c *comm) usable() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.destroyed {
		return errf(codePara, "communicator destroyed")
	}
	return nil
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

// fail records a failure of one-sided or in-model work
// (HcclGetCommAsyncError). A data phase that timed out leaves the ranks
// out of step, so it also breaks the communicator for good.
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

// execFail is how a stream task of a collective or send/recv fails when
// it cannot complete with its peers (a mismatch after the first
// operation, a rank that never came or died, a communicator that failed
// before): on the device its notify wait times out, so the task fails
// only once HCCL_EXEC_TIMEOUT has passed since it started, with
// ACL_ERROR_RT_FFTS_PLUS_TIMEOUT 507048 at synchronize, and the
// communicator is unusable after (hcclsim docs; hccl-vs-source.md,
// "where failures surface": transport_manager.cc:1650, EI0002). The
// message says more than the device's: what disagreed, which rank was
// lost.
//
// Only the task that breaks the communicator waits out the timeout. A
// task of a communicator that already failed fails at once with the same
// code: its peers gave up on this rank's links, so there is nothing its
// wait could meet, and waiting the full timeout again for each of the up
// to maxAhead tasks queued behind the failure would delay the failure a
// program synchronizes on by hundreds of timeouts (the killed-rank hang:
// a survivor's loop of asynchronous collectives never returned).
func (c *comm) execFail(start time.Time, cause error) error {
	c.mu.Lock()
	if c.destroyed {
		c.mu.Unlock()
		return cause
	}
	c.doomed = true
	already := c.broken != nil
	c.mu.Unlock()
	if d := time.Until(start.Add(c.timeout)); d > 0 && !already {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-c.stop:
		}
		t.Stop()
	}
	c.mu.Lock()
	if c.broken == nil {
		c.broken = cause
	}
	c.mu.Unlock()
	msg := cause.Error()
	if se, ok := cause.(*simError); ok {
		msg = se.msg
	}
	return acl.Errorf("HCCL", acl.CodeRTFftsPlusTimeout, "rank %d: not complete within HCCL_EXEC_TIMEOUT %s: %s",
		c.rank, fmtTimeout(c.timeout), msg)
}

// setAsync records the code HcclGetCommAsyncError reports.
func (c *comm) setAsync(k code) {
	c.mu.Lock()
	if c.asyncErr == codeSuccess {
		c.asyncErr = k
	}
	c.mu.Unlock()
}

// firstOp reports whether the next operation builds the links, and marks
// them built: the first operation's call blocks until its peers arrive
// (within the connect timeout) and checks consistency; later calls only
// enqueue.
func (c *comm) firstOp() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.linked
}

func (c *comm) setLinked() {
	c.mu.Lock()
	was := c.linked
	c.linked = true
	c.mu.Unlock()
	if rt, ok := c.tr.(roundTransport); ok && !was {
		rt.rankLinked()
	}
}

// inconsistent is the verdict of a first operation whose ranks disagree:
// with inconsistent_check first or on, the consistency check of link
// building fails the call with HCCL_E_INTERNAL on every rank
// (rank_consistentcy_checker.cc:195-243, CheckFrameRecv; EI0005).
func (c *comm) inconsistent(v error) error {
	if v == nil || c.checkOp == checkOff {
		return nil
	}
	msg := v.Error()
	if se, ok := v.(*simError); ok {
		msg = se.msg
	}
	return errf(codeInternal, "inconsistent operation on the ranks (HCCL_DFS_CONFIG inconsistent_check:%s): %s", c.checkOp, msg)
}

// laterMismatch is what a disagreement after the first operation does:
// with inconsistent_check on the heartbeat records it and
// HcclGetCommAsyncError reports HCCL_E_PARA (heartbeat.cc:2082-2106);
// either way the ranks wait for each other in vain (execFail).
func (c *comm) laterMismatch(start time.Time, v error) error {
	if c.checkOp == checkOn {
		c.setAsync(codePara)
	}
	return c.execFail(start, v)
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

// enqueueGated queues task on the rank's stream, tracked for destroy; task
// runs only if the gate opens without an error.
func enqueueGated[T any](c *comm, s acl.StreamHandle, g gate[T], task func(T) error) error {
	qt := c.track()
	skipped, err := c.sim.env.enqueue(c.dev, s, func() error {
		defer c.untrack(qt)
		v, err := g.wait()
		if err != nil {
			return nil // the call already reported it
		}
		if err := c.usable(); err != nil {
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

// runRound is the data phase of a collective on a transport that meets
// once (roundTransport): the descriptors are agreed and the data moved in
// one rendezvous. met reports whether every rank reached it.
func (c *comm) runRound(rt roundTransport, seq uint64, d *opDesc, start time.Time, send, recv unsafe.Pointer, sendBytes, recvBytes uint64) (met bool, err error) {
	bufs := opBufs{}
	bufs.send, bufs.err = c.view(send, sendBytes)
	if bufs.err == nil {
		bufs.recv, bufs.err = c.view(recv, recvBytes)
	}
	var verdict error
	if err := c.exclusive(func() error {
		var err error
		verdict, err = rt.round(c, seq, d, bufs, c.timeout)
		return err
	}); err != nil {
		return false, c.execFail(start, err)
	}
	if verdict != nil {
		return true, c.laterMismatch(start, verdict)
	}
	return true, nil
}

// runP2P queues the data movement of sends and receives. Every item pairs
// with its peer's (in call order per peer and direction; a count or type
// disagreement is a mismatch). The first operation of a communicator pairs
// at the call (within the connect timeout; a disagreement fails both sides
// with HCCL_E_INTERNAL unless inconsistent_check is off); later calls
// return at once and the stream task pairs, failing after the exec
// timeout if the peer never comes or disagrees.
func (c *comm) runP2P(s acl.StreamHandle, items []p2pItem) error {
	if err := c.usable(); err != nil {
		return err
	}
	type paired struct {
		items   []p2pItem
		verdict error // first operation: the pairing's disagreement, inconsistent_check off
		done    bool  // paired at the call
	}
	g := newGate[paired]()
	err := enqueueGated(c, s, g, func(p paired) error {
		start := time.Now()
		if err := c.check(); err != nil {
			return c.execFail(start, err)
		}
		items := p.items
		if !p.done {
			if err := c.pairItems(items, c.timeout); err != nil {
				if codeOf(err) == codePara {
					return c.laterMismatch(start, err)
				}
				return c.execFail(start, err)
			}
		} else if p.verdict != nil {
			return c.execFail(start, p.verdict)
		}
		for i := range items {
			it := &items[i]
			it.view, it.err = c.view(it.ptr, it.count*it.dt.size())
		}
		if err := c.exclusive(func() error { return c.tr.p2p(c, items, c.timeout) }); err != nil {
			return c.execFail(start, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !c.firstOp() {
		g.open(paired{items: items}, nil)
		return nil
	}
	err = c.pairItems(items, c.connect)
	p := paired{items: items, done: true}
	if err == nil || codeOf(err) == codePara {
		c.setLinked()
		p.verdict = err
		err = c.inconsistent(err)
	}
	g.open(p, err)
	return err
}

// pairItems pairs every item with its peer's. Items to different peers
// (or in different directions) pair at once, so a batch never waits on
// its own order; items of one peer and direction pair in item order, so
// their messages match in the order both sides posted them. A count or
// type disagreement is HCCL_E_PARA (after every item paired, so both
// sides stay in step).
func (c *comm) pairItems(items []p2pItem, timeout time.Duration) error {
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
			res, err := c.tr.pair(c, pairP2P, it.peer, it.send, pairOffer{Count: it.count, DT: it.dt}, timeout)
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
	var para error
	for _, e := range errs {
		if e != nil && codeOf(e) != codePara {
			return e
		}
		if e != nil && para == nil {
			para = e
		}
	}
	return para
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
