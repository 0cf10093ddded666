package hcclsim

import (
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// A collective in flight on one rank: the call queues its data phase,
// takes the next sequence number and posts its descriptor; the stream task
// waits for the communicator's previous data phase and runs its own.
//
// Both halves share one record, which is reused from collective to
// collective: a training step issues many small collectives, and every
// allocation is garbage-collector work that preempts the ranks spinning in
// their rendezvous. The records are kept per communicator (comm.collFree);
// the ring of collectives in flight (comm.ahead) and the link to the
// previous collective name a record together with its sequence number,
// since a record that finished may already serve a later collective.

// maxAhead is how many collectives a rank's calls may run ahead of its
// data phases. The device's streams hold a bounded number of tasks and a
// launch waits for room; here it also bounds the descriptors a rank posts
// to its peers before they are consumed.
const maxAhead = 256

// collRec is one collective of a rank, from its call to the end of its
// data phase.
type collRec struct {
	c *comm
	// The call's arguments; counts backs d's AlltoAllV slices.
	d                    opDesc
	counts               []uint64
	send, recv           unsafe.Pointer
	sendBytes, recvBytes uint64

	// Set by the call before it opens the gate; read by the task after.
	seq     uint64
	tk      ticket
	postErr error
	ds      []*opDesc // collected at the call (first operation)
	verdict error     // of the first operation, inconsistent_check off
	callErr error     // the first operation failed at its call: no data phase
	prev    *collRec  // the communicator's previous collective on this rank
	prevSeq uint64
	// shared: d was handed to the peers (a meeting, a message), which may
	// still read it after this rank is done, so the record is never reused.
	shared bool
	// gate holds the call's token once the fields above are set: the task
	// is queued before the call knows its sequence number.
	gate chan struct{}

	qt   queuedTask
	run  func() error // the stream task (r.exec), made once per record
	refs atomic.Int32 // the call and the task each drop one; the last frees it

	// Under c.mu: whether the data phase ended (or will never run), and
	// the channel of a waiter for that (made only when one waits).
	finished bool
	doneCh   chan struct{}
}

// aheadSlot is a collective still in flight: record r serving sequence
// number seq.
type aheadSlot struct {
	r   *collRec
	seq uint64
}

// collFreeMax bounds the records a communicator keeps for reuse: one per
// collective that may be in flight.
const collFreeMax = maxAhead

// getColl returns a record for a collective call holding two references
// (the call's and the task's), or an error if the communicator was
// destroyed.
func (c *comm) getColl() (*collRec, error) {
	c.mu.Lock()
	if c.destroyed {
		c.mu.Unlock()
		return nil, errf(codePara, "communicator destroyed")
	}
	var r *collRec
	if n := len(c.collFree); n > 0 {
		r = c.collFree[n-1]
		c.collFree[n-1] = nil
		c.collFree = c.collFree[:n-1]
	}
	c.mu.Unlock()
	if r == nil {
		r = &collRec{c: c, gate: make(chan struct{}, 1), finished: true}
		r.run = r.exec
	}
	r.refs.Store(2)
	return r, nil
}

// release drops one reference to r; the last returns it for reuse.
func (r *collRec) release() {
	if r.refs.Add(-1) == 0 && !r.shared {
		r.c.mu.Lock()
		r.c.putCollLocked(r)
		r.c.mu.Unlock()
	}
}

// putCollLocked keeps r for reuse; c.mu held. Waiters on the record's last
// collective find it finished until a new sequence number is assigned.
func (c *comm) putCollLocked(r *collRec) {
	c.finishLocked(r)
	counts := r.counts[:0]
	*r = collRec{c: c, counts: counts, gate: r.gate, run: r.run, seq: r.seq, finished: true}
	if len(c.collFree) < collFreeMax {
		c.collFree = append(c.collFree, r)
	}
}

// setArgs copies the call's arguments into r. The descriptor's slices are
// copied (HCCL takes the counts at the call) into r's own storage; no
// reference to d is kept, so callers may build it on their stack.
func (r *collRec) setArgs(d *opDesc, send, recv unsafe.Pointer, sendBytes, recvBytes uint64) {
	r.d = opDesc{Kind: d.Kind, Count: d.Count, DT: d.DT, Op: d.Op, Root: d.Root, RecvDT: d.RecvDT}
	if d.SendCounts != nil || d.SDispls != nil || d.RecvCounts != nil || d.RDispls != nil {
		cp := r.counts[:0]
		part := func(s []uint64) []uint64 {
			lo := len(cp)
			cp = append(cp, s...)
			return cp[lo:len(cp):len(cp)]
		}
		// Four appends may each reallocate: size the storage first, so
		// that all four parts share it.
		if need := len(d.SendCounts) + len(d.SDispls) + len(d.RecvCounts) + len(d.RDispls); cap(cp) < need {
			cp = make([]uint64, 0, need)
		}
		r.d.SendCounts, r.d.SDispls = part(d.SendCounts), part(d.SDispls)
		r.d.RecvCounts, r.d.RDispls = part(d.RecvCounts), part(d.RDispls)
		r.counts = cp
	}
	r.send, r.recv, r.sendBytes, r.recvBytes = send, recv, sendBytes, recvBytes
}

// open hands the record to the task and drops the call's reference; the
// call must not touch r after.
func (r *collRec) open() {
	r.gate <- struct{}{}
	r.release()
}

// finishLocked marks r's collective ended and wakes its waiters; c.mu held.
func (c *comm) finishLocked(r *collRec) {
	if r.finished {
		return
	}
	r.finished = true
	if r.doneCh != nil {
		close(r.doneCh)
		r.doneCh = nil
	}
}

func (c *comm) finish(r *collRec) {
	c.mu.Lock()
	c.finishLocked(r)
	c.mu.Unlock()
}

// pending reports whether collective seq (record r) is still in flight,
// and if so returns a channel closed when it ends and its task's stream
// state (nil while it is being queued).
func (c *comm) pending(r *collRec, seq uint64) (chan struct{}, streamState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pendingLocked(r, seq)
}

func (c *comm) pendingLocked(r *collRec, seq uint64) (chan struct{}, streamState, bool) {
	if r.seq != seq || r.finished {
		return nil, nil, false
	}
	if r.doneCh == nil {
		r.doneCh = make(chan struct{})
	}
	return r.doneCh, r.qt.state, true
}

// enqueue queues r's data phase on stream s, tracked for destroy. On
// failure the record is returned and the call must not use it.
func (r *collRec) enqueue(s acl.StreamHandle) error {
	c := r.c
	c.trackTask(&r.qt)
	state, err := c.sim.env.enqueue(c.dev, s, r.run)
	if err != nil {
		c.mu.Lock()
		c.untrackLocked(&r.qt)
		r.refs.Store(0)
		c.putCollLocked(r)
		c.mu.Unlock()
		return errf(codePara, "stream: %v", err)
	}
	c.setSkipped(&r.qt, state)
	return nil
}

// taskEnd is the end of r's stream task: untracked, finished, released.
func (c *comm) taskEnd(r *collRec) {
	c.mu.Lock()
	c.untrackLocked(&r.qt)
	c.finishLocked(r)
	r.prev = nil
	if r.refs.Add(-1) == 0 && !r.shared {
		c.putCollLocked(r)
	}
	c.mu.Unlock()
}

// waitRoom waits until the collective maxAhead calls back has left the
// stream (finished, or skipped by a failed stream), or destroy.
func (c *comm) waitRoom(old aheadSlot) {
	if old.r == nil {
		return
	}
	done, state, ok := c.pending(old.r, old.seq)
	if ok && !stateFailed(state) {
		poll := time.NewTicker(queuePoll)
		defer poll.Stop()
	wait:
		for {
			select {
			case <-done:
				return
			case <-c.stop:
				return
			case <-poll.C:
				if _, state, ok = c.pending(old.r, old.seq); !ok || stateFailed(state) {
					break wait
				}
			}
		}
	}
	if ok {
		// Skipped: its task never runs, so nothing needs the collective
		// before it; unlinking bounds what skipped records keep alive.
		c.mu.Lock()
		if old.r.seq == old.seq {
			old.r.prev = nil
		}
		c.mu.Unlock()
	}
}

// stateFailed reports whether a task's stream (state, nil while it is
// being queued) failed, so that it will never run.
func stateFailed(state streamState) bool {
	qt := queuedTask{state}
	return qt.skipped()
}

// assignSeq gives r the communicator's next sequence number, makes it the
// last collective (r.prev is the one before) and, with ring, the occupant
// of its ring slot (a collective on the stream already, runInPlace, takes
// none). It returns whether the rank is still to build its links (first
// operation), the slot's previous occupant, and the communicator's
// failure, if any.
func (c *comm) assignSeq(r *collRec, ring bool) (first bool, old aheadSlot, broken error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	first = !c.linked
	r.seq, r.finished = c.nextSeq, false
	r.prev, r.prevSeq = c.last, c.lastSeq
	c.nextSeq++
	c.last, c.lastSeq = r, r.seq
	if ring {
		slot := &c.ahead[r.seq%maxAhead]
		old = *slot
		*slot = aheadSlot{r: r, seq: r.seq}
	}
	return first, old, c.broken
}

// runCollective is the common path of every collective call (local
// argument checks are the caller's; d is copied, not kept). The data
// phase is queued on the stream first, so a bad stream fails before the
// sequence number is taken and before any peer waits; then the call posts
// its descriptor. The first operation of a communicator waits at the call
// for every rank (within the connect timeout: it builds the links) and
// checks that all issued the same operation; later calls return at once,
// and the stream task collects the descriptors, compares them and moves
// the data, or fails after the exec timeout (execFail).
func (c *comm) runCollective(s acl.StreamHandle, d *opDesc, send, recv unsafe.Pointer, sendBytes, recvBytes uint64) error {
	r, err := c.getColl()
	if err != nil {
		return err
	}
	r.setArgs(d, send, recv, sendBytes, recvBytes)
	if err := r.enqueue(s); err != nil {
		return err
	}
	first, old, broken := c.assignSeq(r, true)
	if !first {
		c.waitRoom(old)
		rt, round := c.tr.(roundTransport)
		switch {
		case broken != nil:
			r.postErr = broken // peers are not waiting for this rank any more
		case round && rt.allLinked():
			// No rank waits at its call for this descriptor any more (only
			// a first operation does), and the round agrees the
			// descriptors on the streams: nothing to post.
		default:
			r.shared = true
			r.tk, r.postErr = c.tr.post(c, r.seq, &r.d, c.timeout)
		}
		r.open()
		return nil
	}
	r.shared = true
	r.ds, err = c.join(r.seq, &r.d, c.connect)
	if err == nil {
		c.setLinked()
		r.verdict = agree(r.ds)
		err = c.inconsistent(r.verdict)
	}
	if err != nil {
		r.callErr = err
		c.finish(r) // the data phase will not run
	}
	r.open()
	return err
}

// exec is the stream task of a collective: once the call has opened the
// gate, it waits for the communicator's previous data phase and runs its
// own.
func (r *collRec) exec() error {
	c := r.c
	<-r.gate
	defer c.taskEnd(r)
	if r.callErr != nil {
		return nil // the call already reported it
	}
	if err := c.usable(); err != nil {
		return err
	}
	start := time.Now()
	if err := c.afterPrev(r, start); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return c.execFail(start, err)
	}
	ds, verdict := r.ds, r.verdict
	if r.postErr != nil {
		return c.execFail(start, r.postErr)
	}
	if rt, ok := c.tr.(roundTransport); ok && verdict == nil {
		met, err := c.runRound(rt, r.seq, &r.d, start, r.send, r.recv, r.sendBytes, r.recvBytes)
		if ds == nil {
			// The call's post only let a rank still building its links
			// join this collective at its call. Every rank has reached the
			// round by now (or it timed out after the post's deadline), so
			// this returns at once.
			rt.settle(c, r.tk, met)
		}
		return err
	}
	if ds == nil {
		var err error
		if ds, err = c.tr.collect(c, r.tk); err != nil {
			return c.execFail(start, err)
		}
		if verdict = agree(ds); verdict != nil {
			return c.laterMismatch(start, verdict)
		}
	} else if verdict != nil {
		return c.execFail(start, verdict)
	}
	bufs := opBufs{}
	bufs.send, bufs.err = c.view(r.send, r.sendBytes)
	if bufs.err == nil {
		bufs.recv, bufs.err = c.view(r.recv, r.recvBytes)
	}
	if err := c.exclusive(func() error { return c.tr.collective(c, r.seq, ds, bufs, c.timeout) }); err != nil {
		return c.execFail(start, err)
	}
	return nil
}

// afterPrev waits until the communicator's data phase before r's has
// ended: data phases of one communicator run in call order on each rank.
// A timer is armed only if it has not ended yet.
func (c *comm) afterPrev(r *collRec, start time.Time) error {
	c.mu.Lock()
	var done chan struct{}
	ok := false
	if r.prev != nil {
		done, _, ok = c.pendingLocked(r.prev, r.prevSeq)
		r.prev = nil
	}
	c.mu.Unlock()
	if !ok {
		return nil
	}
	t := time.NewTimer(c.timeout)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return c.execFail(start, errf(codeTimeout, "%v: the previous collective did not finish", r.d.Kind))
	case <-c.stop:
		return errf(codePara, "communicator destroyed")
	}
}
