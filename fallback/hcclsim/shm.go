package hcclsim

import (
	"sync"
	"sync/atomic"
	"time"
)

// shmWorld is one rank of a communicator whose ranks live in several
// processes. Control goes through the hub (collective arguments,
// descriptor exchanges, loss of a rank); ranks wait for each other on
// futex doorbells in their shared-memory segments. Buffer data moves
// directly between the ranks' device memories when every rank mapped
// every rank's (peers, peermap.go; data phases in shm_direct.go), and
// through the segments' staging areas otherwise.
//
// Staged, a rank's staging area is split in two halves ("in" and "out"). A
// collective moves its data in pieces that fit: each rank copies its piece
// into its own staging, all ranks meet at a barrier, each computes its
// share reading the peers' staging, and so on. Data phases of one rank are
// serialised (comm.execMu), so the staging area has one user at a time.
type shmWorld struct {
	sim  *Sim
	c    *comm
	rs   resolver // the one-sided server's scratch (its goroutine only)
	n    int
	me   int
	own  *segment
	segs []*segment
	l    *link
	// peers maps every rank's device memory, by rank; nil when the
	// communicator stages its data. Fixed at formation, unmapped at close.
	peers []peerMem

	mu       sync.Mutex
	abortErr error
	aborted  chan struct{}
	joins    map[uint64]chan *msg
	pairs    map[uint64]chan *msg
	nextID   uint64

	// Data-phase state, used under c.execMu only.
	epoch    uint32
	sendBase []uint32  // pieces sent to each peer so far
	recvBase []uint32  // pieces received from each peer so far
	msgSeq   []uint32  // messages sent to each peer so far
	reqSeq   uint32    // one-sided requests issued
	osPieces []osPiece // one-sided scratch: a batch's pieces (shm_onesided.go)
	osEnds   []int     // one-sided scratch: where each round of osPieces ends

	// The one-sided server.
	served     []uint32
	stopServer atomic.Bool
	serverDone chan struct{}
}

// Per-peer words in a segment (segment.p2pWord(peer, i)).
const (
	pwSent     = 0  // sender's segment, index dest: pieces posted to dest
	pwAcked    = 1  // receiver's segment, index src: pieces consumed from src
	pwVerdict  = 2  // receiver's segment, index src: message seq+1 the verdict is about
	pwVerdCode = 3  // receiver's segment, index src: the verdict code
	pwDT       = 4  // sender's segment, index dest: data type of the message
	pwPieces   = 5  // sender's segment, index dest: pieces of the message
	pwMsgSeq   = 6  // sender's segment, index dest: message seq
	pwErr      = 7  // sender's segment, index dest: the sender's own failure code
	pwCountLo  = 4  // dword index (bytes 32..39): element count of the message
	pwReqFor   = 10 // requester's segment, index target: one-sided request seq
	pwAddrDw   = 6  // dword index (bytes 48..55), sender's segment, index dest: the message's buffer address (direct path)
)

func newShmWorld(sim *Sim, n, me int, own *segment, segs []*segment, l *link) *shmWorld {
	w := &shmWorld{sim: sim, n: n, me: me, own: own, segs: segs, l: l,
		aborted: make(chan struct{}), joins: make(map[uint64]chan *msg), pairs: make(map[uint64]chan *msg),
		sendBase: make([]uint32, n), recvBase: make([]uint32, n), msgSeq: make([]uint32, n),
		served: make([]uint32, n), serverDone: make(chan struct{})}
	return w
}

// start begins serving control messages and one-sided requests.
func (w *shmWorld) start(c *comm) {
	w.c = c
	w.l.start(w.onMsg, func(err error) {
		w.abort(errf(codeTimeout, "lost the connection to the rendezvous process"))
	})
	go w.serve()
}

func (w *shmWorld) onMsg(m *msg) {
	// A reply channel holds one answer; a second answer to the same
	// request (a confused rendezvous) is dropped rather than block the
	// link's reader, which every later wait of this rank depends on.
	deliver := func(ch chan *msg) {
		select {
		case ch <- m:
		default:
		}
	}
	switch m.Kind {
	case mJoined:
		w.mu.Lock()
		ch := w.joins[m.Seq]
		w.mu.Unlock()
		if ch != nil {
			deliver(ch)
		}
	case mPaired:
		w.mu.Lock()
		ch := w.pairs[m.Id]
		w.mu.Unlock()
		if ch != nil {
			deliver(ch)
		}
	case mAbort:
		w.abort(errf(code(m.Code), "%s", m.Text))
	}
}

// abort fails every current and later wait of this rank with err.
func (w *shmWorld) abort(err error) {
	w.mu.Lock()
	if w.abortErr == nil {
		w.abortErr = err
		close(w.aborted)
	}
	w.mu.Unlock()
	ringSafe(w.own)
}

func (w *shmWorld) stop() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.abortErr
}

// waitChan waits for a reply on ch, the timeout, or an abort.
func (w *shmWorld) waitChan(ch chan *msg, timeout time.Duration, what string) (*msg, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-ch:
		if m.Code != int32(codeSuccess) {
			return nil, errf(code(m.Code), "%s", m.Text)
		}
		return m, nil
	case <-w.aborted:
		return nil, w.stop()
	case <-t.C:
		return nil, errf(codeTimeout, "no answer from the rendezvous process about %s", what)
	}
}

// hubGrace is how much longer than the hub a rank waits for the hub's
// verdict (the hub decides timeouts so that all ranks agree).
const hubGrace = 5 * time.Second

func (w *shmWorld) post(c *comm, seq uint64, d *opDesc, timeout time.Duration) (ticket, error) {
	if err := w.stop(); err != nil {
		return ticket{}, err
	}
	ch := make(chan *msg, 1)
	w.mu.Lock()
	w.joins[seq] = ch
	w.mu.Unlock()
	w.l.send(&msg{Kind: mJoin, Seq: seq, Desc: d, Timeout: timeout})
	return ticket{seq: seq, ch: ch, timeout: timeout}, nil
}

func (w *shmWorld) collect(c *comm, t ticket) ([]*opDesc, error) {
	m, err := w.waitChan(t.ch, t.timeout+hubGrace, "a collective")
	w.mu.Lock()
	delete(w.joins, t.seq)
	w.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// agree and the data phase index these by rank: their shape is
	// checked here, at the call, where a failure is an error and not a
	// broken data phase.
	if len(m.Descs) != w.n {
		return nil, errf(codeInternal, "rendezvous: %d descriptors for %d ranks", len(m.Descs), w.n)
	}
	for r, d := range m.Descs {
		if err := checkDesc(d, w.n); err != nil {
			return nil, errf(codeInternal, "rendezvous: rank %d's descriptor: %s", r, err.(*simError).msg)
		}
	}
	return m.Descs, nil
}

func (w *shmWorld) pair(c *comm, kind uint8, peer int, sending bool, offer pairOffer, timeout time.Duration) (pairResult, error) {
	if err := w.stop(); err != nil {
		return pairResult{}, err
	}
	if len(offer.Payload) > maxRegs {
		// The rendezvous takes no more from one rank (hub.go, badPairing).
		return pairResult{}, errf(codePara, "%d memory descriptors in one exchange: a multi-process communicator exchanges at most %d", len(offer.Payload), maxRegs)
	}
	ch := make(chan *msg, 1)
	w.mu.Lock()
	w.nextID++
	id := w.nextID
	w.pairs[id] = ch
	w.mu.Unlock()
	side := 1
	if sending {
		side = 0
	}
	w.l.send(&msg{Kind: mPair, Id: id, PairKind: kind, Peer: peer, Side: side, Offer: offer, Timeout: timeout})
	m, err := w.waitChan(ch, timeout+hubGrace, "a pairing with rank "+itoa(peer))
	w.mu.Lock()
	delete(w.pairs, id)
	w.mu.Unlock()
	if err != nil {
		return pairResult{}, err
	}
	return pairResult{seq: m.PairSeq, peer: m.Offer}, nil
}

// barrier is a data-phase barrier over shared memory. fail, when not
// success, is this rank's failure, published with the arrival so that
// every rank learns of it at the same barrier; the first failure (by rank)
// is returned on every rank, as the rank's own error or HCCL_E_REMOTE.
func (w *shmWorld) barrier(deadline time.Time, fail error) error {
	if deadline.IsZero() {
		deadline = time.Now().Add(w.c.timeout)
	}
	w.epoch++
	e := w.epoch
	if fail != nil {
		atomic.StoreUint32(w.own.word(offFailCode), uint32(codeOf(fail)))
		atomic.StoreUint32(w.own.word(offFailEpoch), e)
	}
	atomic.StoreUint32(w.own.word(offEpoch), e)
	for k, s := range w.segs {
		if k != w.me {
			s.bell().ring()
		}
	}
	missing := func() int {
		for k, s := range w.segs {
			if int32(atomic.LoadUint32(s.word(offEpoch))-e) < 0 {
				return k
			}
		}
		return -1
	}
	err := w.own.bell().waitUntil(func() bool { return missing() < 0 }, w.stop, deadline,
		func() string { return "rank " + itoa(missing()) + " at a collective's barrier" })
	if err != nil {
		// This rank arrived and then gave up: say so at this epoch, so a
		// late peer that now finds everyone arrived fails here too instead
		// of going on with buffers this rank no longer vouches for (its
		// caller may already reuse them).
		if fail == nil {
			atomic.StoreUint32(w.own.word(offFailCode), uint32(codeOf(err)))
			atomic.StoreUint32(w.own.word(offFailEpoch), e)
			for k, s := range w.segs {
				if k != w.me {
					s.bell().ring()
				}
			}
		}
		return err
	}
	for k, s := range w.segs {
		if atomic.LoadUint32(s.word(offFailEpoch)) == e {
			if k == w.me {
				return fail
			}
			return errf(codeRemote, "rank %d failed (code %d)", k, atomic.LoadUint32(s.word(offFailCode)))
		}
	}
	return nil
}

func (w *shmWorld) half() int { return w.own.l.stageLen / 2 / 64 * 64 }

func (w *shmWorld) collective(c *comm, seq uint64, ds []*opDesc, bufs opBufs, timeout time.Duration) error {
	return w.guarded("collective", func() error { return w.collectiveShared(c, ds, bufs) })
}

// collectiveShared is a collective's data phase over the segments (and
// mapped device memory), under guarded.
func (w *shmWorld) collectiveShared(c *comm, ds []*opDesc, bufs opBufs) error {
	if w.peers != nil {
		w.publishBufs(bufs)
	}
	// Each barrier may wait the full timeout: a slow peer is slow once.
	var deadline time.Time
	if err := w.barrier(deadline, bufs.err); err != nil {
		return err
	}
	d := ds[w.me]
	if d.Kind == kindBarrier {
		return nil
	}
	if w.peers != nil {
		return w.directCollective(c, d, ds, bufs, deadline)
	}
	esz := int(d.DT.size())
	n, me := w.n, w.me
	half := w.half()
	switch d.Kind {
	case kindAllReduce:
		per := max(1, half/esz)
		total := int(d.Count)
		for e0 := 0; e0 < total; e0 += per {
			e1 := min(e0+per, total)
			pb := (e1 - e0) * esz
			countStaged(copy(w.own.stage(0, pb), bufs.send[e0*esz:e1*esz]))
			if err := w.barrier(deadline, nil); err != nil {
				return err
			}
			lo, hi := share(uint64(e1-e0), n, me)
			if lo < hi {
				srcs := make([][]byte, n)
				dsts := make([][]byte, n)
				for k, s := range w.segs {
					srcs[k] = s.stage(int(lo)*esz, int(hi-lo)*esz)
					dsts[k] = s.stage(half+int(lo)*esz, int(hi-lo)*esz)
				}
				c.reducer().reduceBlocks(d.DT, d.Op, dsts, srcs)
			}
			if err := w.barrier(deadline, nil); err != nil {
				return err
			}
			copy(bufs.recv[e0*esz:e1*esz], w.own.stage(half, pb))
		}
	case kindBroadcast:
		root := int(d.Root)
		per := max(1, 2*half/esz)
		total := int(d.Count)
		for e0 := 0; e0 < total; e0 += per {
			e1 := min(e0+per, total)
			pb := (e1 - e0) * esz
			if me == root {
				countStaged(copy(w.own.stage(0, pb), bufs.send[e0*esz:e1*esz]))
			}
			if err := w.barrier(deadline, nil); err != nil {
				return err
			}
			if me != root {
				copy(bufs.recv[e0*esz:e1*esz], w.segs[root].stage(0, pb))
			}
			if err := w.barrier(deadline, nil); err != nil {
				return err
			}
		}
	case kindAllGather:
		per := max(1, 2*half/esz)
		total := int(d.Count)
		for e0 := 0; e0 < total; e0 += per {
			e1 := min(e0+per, total)
			pb := (e1 - e0) * esz
			countStaged(copy(w.own.stage(0, pb), bufs.send[e0*esz:e1*esz]))
			if err := w.barrier(deadline, nil); err != nil {
				return err
			}
			for k, s := range w.segs {
				copy(bufs.recv[(k*total+e0)*esz:(k*total+e1)*esz], s.stage(0, pb))
			}
			if err := w.barrier(deadline, nil); err != nil {
				return err
			}
		}
	case kindReduceScatter:
		per := max(1, 2*half/(n*esz))
		total := int(d.Count)
		for e0 := 0; e0 < total; e0 += per {
			e1 := min(e0+per, total)
			pb := (e1 - e0) * esz
			for j := 0; j < n; j++ {
				countStaged(copy(w.own.stage(j*pb, pb), bufs.send[(j*total+e0)*esz:(j*total+e1)*esz]))
			}
			if err := w.barrier(deadline, nil); err != nil {
				return err
			}
			srcs := make([][]byte, n)
			for k, s := range w.segs {
				srcs[k] = s.stage(me*pb, pb)
			}
			c.reducer().reduceBlocks(d.DT, d.Op, [][]byte{bufs.recv[e0*esz : e1*esz]}, srcs)
			if err := w.barrier(deadline, nil); err != nil {
				return err
			}
		}
	case kindAlltoAllV:
		return w.alltoallv(ds, bufs, esz)
	}
	return nil
}

// alltoallv runs n-1 shifted rounds: in round k every rank sends to
// rank+k and receives from rank-k, in pieces of the staging size; the
// number of pieces of a round is the largest over all ranks, which every
// rank computes from the agreed descriptors.
func (w *shmWorld) alltoallv(ds []*opDesc, bufs opBufs, esz int) error {
	var deadline time.Time
	n, me := w.n, w.me
	d := ds[me]
	// Round 0: own data, no staging.
	if cnt := int(d.SendCounts[me]) * esz; cnt > 0 {
		copy(bufs.recv[int(d.RDispls[me])*esz:][:cnt], bufs.send[int(d.SDispls[me])*esz:][:cnt])
	}
	stage := 2 * w.half()
	for k := 1; k < n; k++ {
		dst, src := (me+k)%n, (me-k+n)%n
		pieces := 0
		for r := 0; r < n; r++ {
			b := int(ds[r].SendCounts[(r+k)%n]) * esz
			pieces = max(pieces, (b+stage-1)/stage)
		}
		out := int(d.SendCounts[dst]) * esz
		in := int(d.RecvCounts[src]) * esz
		for p := 0; p < pieces; p++ {
			// A zero count may come with any displacement: touch nothing.
			if o0, o1 := min(p*stage, out), min((p+1)*stage, out); o1 > o0 {
				countStaged(copy(w.own.stage(0, o1-o0), bufs.send[int(d.SDispls[dst])*esz+o0:][:o1-o0]))
			}
			if err := w.barrier(deadline, nil); err != nil {
				return err
			}
			if i0, i1 := min(p*stage, in), min((p+1)*stage, in); i1 > i0 {
				copy(bufs.recv[int(d.RDispls[src])*esz+i0:][:i1-i0], w.segs[src].stage(0, i1-i0))
			}
			if err := w.barrier(deadline, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *shmWorld) stopWaits(c *comm) {
	w.abort(errf(codePara, "communicator destroyed"))
}

func (w *shmWorld) close(c *comm) {
	w.stopServer.Store(true)
	ringSafe(w.own)
	<-w.serverDone
	w.l.send(&msg{Kind: mBye})
	w.l.flushClose()
	w.abort(errf(codePara, "communicator destroyed"))
	unmapPeers(w.peers)
	for _, s := range w.segs {
		s.unmap()
	}
}

// The registration table in each rank's segment (segment.go): the owner
// publishes what it registered, so a peer checks at call time, without a
// round trip, that the memory it is about to access is still registered.

func (s *segment) regWords(i int) (state, peer *uint32, id, addr, size *uint64) {
	off := s.l.regs + i*regEntryBytes
	return s.word(off), s.word(off + 4), s.dword(off + 8), s.dword(off + 16), s.dword(off + 24)
}

func (w *shmWorld) publishReg(c *comm, r *registration, live bool) error {
	err := w.guarded("registration", func() error { return w.publishRegShared(r, live) })
	if !live {
		return nil // a withdrawal from a segment that is gone withdrew nothing
	}
	return err
}

func (w *shmWorld) publishRegShared(r *registration, live bool) error {
	for i := 0; i < maxRegs; i++ {
		state, peer, id, addr, size := w.own.regWords(i)
		st := atomic.LoadUint32(state)
		if live && st == 0 {
			atomic.StoreUint32(peer, uint32(r.info.peer))
			atomic.StoreUint64(id, r.info.id)
			atomic.StoreUint64(addr, uint64(r.info.addr))
			atomic.StoreUint64(size, r.info.size)
			atomic.StoreUint32(state, 1)
			return nil
		}
		if !live && st == 1 && atomic.LoadUint64(id) == r.info.id {
			atomic.StoreUint32(state, 0)
			return nil
		}
	}
	if live {
		return errf(codeMemory, "more than %d registrations on one rank of a multi-process communicator", maxRegs)
	}
	return nil
}

func (w *shmWorld) ownerHas(c *comm, owner int, id uint64) bool {
	has := false
	_ = w.guarded("registration check", func() error {
		s := w.segs[owner]
		for i := 0; i < maxRegs; i++ {
			state, _, rid, _, _ := s.regWords(i)
			if atomic.LoadUint32(state) == 1 && atomic.LoadUint64(rid) == id {
				has = true
				return nil
			}
		}
		return nil
	})
	return has
}

func (w *shmWorld) ownerSpans(out []span, c *comm, owner int) ([]span, error) {
	if err := w.stop(); err != nil {
		return out, err
	}
	err := w.guarded("registration check", func() error {
		s := w.segs[owner]
		for i := 0; i < maxRegs; i++ {
			state, peer, _, addr, size := s.regWords(i)
			if atomic.LoadUint32(state) == 1 && int(atomic.LoadUint32(peer)) == w.me {
				out = append(out, span{uintptr(atomic.LoadUint64(addr)), atomic.LoadUint64(size)})
			}
		}
		return nil
	})
	return out, err
}
