package hcclsim

import (
	"sync"
	"time"
)

// localWorld is a communicator whose ranks all live in this process: each
// rank reads and writes its peers' device memory directly, so a collective
// costs one pass over the data, split across the ranks' goroutines. It is
// safe for concurrent use.
type localWorld struct {
	n      int
	place  *meetingPlace
	pairs  *pairer
	rounds roundTable // the collectives' data phases (round.go)

	mu    sync.Mutex
	comms []*comm // by rank; nil once the rank is destroyed
}

func newLocalWorld(n int) *localWorld {
	return &localWorld{n: n, place: newMeetingPlace(), pairs: newPairer(), comms: make([]*comm, n)}
}

func allKey(kind uint8, seq uint64) meetKey { return meetKey{kind: kind, seq: seq, lo: -1, hi: -1} }

func (w *localWorld) post(c *comm, seq uint64, d *opDesc, timeout time.Duration) (ticket, error) {
	mt, err := w.place.enter(allKey(meetJoin, seq), c.rank, w.n, d, timeout)
	return ticket{seq: seq, mt: mt, timeout: timeout}, err
}

func (w *localWorld) collect(c *comm, t ticket) ([]*opDesc, error) {
	vals, err := w.place.await(allKey(meetJoin, t.seq), t.mt, c.stop)
	if err != nil {
		return nil, err
	}
	ds := make([]*opDesc, len(vals))
	for i, v := range vals {
		ds[i] = v.(*opDesc)
	}
	return ds, nil
}

func (w *localWorld) pair(c *comm, kind uint8, peer int, sending bool, offer pairOffer, timeout time.Duration) (pairResult, error) {
	k, side := keyFor(kind, c.rank, peer, sending)
	return w.pairs.pair(k, side, offer, timeout)
}

func (w *localWorld) collective(c *comm, seq uint64, ds []*opDesc, bufs opBufs, timeout time.Duration) error {
	vals, err := w.place.meet(allKey(meetStart, seq), c.rank, w.n, bufs, timeout, c.stop)
	if err != nil {
		return err
	}
	all := make([]opBufs, len(vals))
	for i, v := range vals {
		all[i] = v.(opBufs)
	}
	// A rank that could not take its views stops everyone before any
	// memory is touched; all ranks see the same list, so all stop.
	for k, b := range all {
		if b.err != nil {
			if k == c.rank {
				return b.err
			}
			return errf(codeRemote, "rank %d failed: %v", k, b.err)
		}
	}
	d := ds[c.rank]
	if d.Kind == kindBarrier {
		return nil
	}
	localCompute(c.reducer(), c.rank, d, ds, all, nil)
	_, err = w.place.meet(allKey(meetEnd, seq), c.rank, w.n, nil, timeout, c.stop)
	return err
}

// localCompute is rank r's share of a collective over the views of all
// ranks. Every rank writes only what no other rank writes or reads in the
// same collective: its own output (pull), or, for AllReduce, its own chunk
// of every rank's output (push). scratch, if not nil, has room for one
// slice per rank.
func localCompute(red *reducer, r int, d *opDesc, ds []*opDesc, all []opBufs, scratch [][]byte) {
	n := len(all)
	me := all[r]
	esz := d.DT.size()
	switch d.Kind {
	case kindAllReduce:
		lo, hi := share(d.Count, n, r)
		if lo == hi {
			return
		}
		srcs := make([][]byte, n)
		dsts := make([][]byte, n)
		for k, b := range all {
			srcs[k] = b.send[lo*esz : hi*esz]
			dsts[k] = b.recv[lo*esz : hi*esz]
		}
		red.reduceBlocks(d.DT, d.Op, dsts, srcs)
	case kindBroadcast:
		if uint32(r) != d.Root {
			copy(me.recv, all[d.Root].send)
		}
	case kindAllGather:
		sz := d.Count * esz
		for k, b := range all {
			copy(me.recv[uint64(k)*sz:], b.send[:sz])
		}
	case kindReduceScatter:
		sz := d.Count * esz
		srcs := scratch
		if srcs == nil {
			srcs = make([][]byte, n)
		}
		for k, b := range all {
			srcs[k] = b.send[uint64(r)*sz : uint64(r+1)*sz]
		}
		red.reduceBlocks(d.DT, d.Op, [][]byte{me.recv[:sz]}, srcs)
	case kindAlltoAllV:
		for k, b := range all {
			cnt := ds[k].SendCounts[r] * esz
			if cnt == 0 {
				continue
			}
			copy(me.recv[d.RDispls[k]*esz:][:cnt], b.send[ds[k].SDispls[r]*esz:][:cnt])
		}
	}
}

// p2p moves the data of matched sends and receives: both sides meet on
// their streams, the receiver copies from the sender's buffer, and the
// sender waits until it has.
func (w *localWorld) p2p(c *comm, items []p2pItem, timeout time.Duration) error {
	keys := make([]meetKey, len(items))
	mts := make([]*meeting, len(items))
	slotOf := func(it *p2pItem) int {
		if it.send {
			return 0
		}
		return 1
	}
	for i := range items {
		it := &items[i]
		src, dst := c.rank, it.peer
		if !it.send {
			src, dst = it.peer, c.rank
		}
		keys[i] = meetKey{kind: meetP2P, seq: it.seq, lo: int32(src), hi: int32(dst)}
		mt, err := w.place.enter(keys[i], slotOf(it), 2, it, timeout)
		if err != nil {
			return err
		}
		mts[i] = mt
	}
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for i := range items {
		it := &items[i]
		vals, err := w.place.await(keys[i], mts[i], c.stop)
		if err != nil {
			keep(err)
			continue
		}
		s, r := vals[0].(*p2pItem), vals[1].(*p2pItem)
		switch {
		case it.err != nil:
			keep(it.err)
		case s.err != nil:
			keep(errf(codeRemote, "sending rank %d failed: %v", it.peer, s.err))
		case r.err != nil:
			keep(errf(codeRemote, "receiving rank %d failed: %v", it.peer, r.err))
		case !it.send:
			copy(it.view, s.view)
		}
	}
	if first != nil && codeOf(first) == codeTimeout {
		return first
	}
	// The sender's buffer stays in use until the receiver has copied.
	for i := range items {
		keys[i].kind = meetP2PEnd
		mt, err := w.place.enter(keys[i], slotOf(&items[i]), 2, nil, timeout)
		if err != nil {
			return err
		}
		mts[i] = mt
	}
	for i := range items {
		if _, err := w.place.await(keys[i], mts[i], c.stop); err != nil {
			keep(err)
		}
	}
	return first
}

func (w *localWorld) owner(rank int) *comm {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.comms[rank]
}

func (w *localWorld) ownerHas(c *comm, owner int, id uint64) bool {
	o := w.owner(owner)
	return o != nil && o.os.registered(id)
}

func (w *localWorld) ownerSpans(dst []span, c *comm, owner int) ([]span, error) {
	o := w.owner(owner)
	if o == nil {
		return dst, errf(codeRemote, "rank %d has destroyed its communicator", owner)
	}
	return o.os.spansFor(dst, c.rank), nil
}

func (w *localWorld) publishReg(c *comm, r *registration, live bool) error { return nil }

func (w *localWorld) oneSided(c *comm, peer int, get bool, xs []xfer, timeout time.Duration) error {
	owner := w.owner(peer)
	if owner == nil {
		return errf(codeRemote, "rank %d has destroyed its communicator", peer)
	}
	return moveResolved(owner.os.resolver(&c.rs, owner, c.rank), get, xs) // c.rs: under c.exclusive
}

// moveResolved resolves every transfer's remote range before moving a
// byte (one bad descriptor moves nothing), then moves them all. Resolving
// twice is cheaper than keeping thousands of views: the resolver caches
// the few registrations' views.
func moveResolved(rs *resolver, get bool, xs []xfer) error {
	for _, x := range xs {
		if _, err := rs.resolve(x.remote, x.n); err != nil {
			return err
		}
	}
	for _, x := range xs {
		m, _ := rs.resolve(x.remote, x.n)
		if get {
			copy(x.local(), m)
		} else {
			copy(m, x.local())
		}
	}
	return nil
}

// stopWaits does nothing: the meeting place is shared by all ranks, and
// every wait in it is bounded by the timeout anyway.
func (w *localWorld) stopWaits(c *comm) {}

func (w *localWorld) close(c *comm) {
	w.mu.Lock()
	if w.comms[c.rank] == c {
		w.comms[c.rank] = nil
	}
	w.mu.Unlock()
}
