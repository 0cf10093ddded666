package hcclsim

import (
	"sync"
	"time"
)

// localWorld is a communicator whose ranks all live in this process: each
// rank reads and writes its peers' device memory directly, so a collective
// costs one pass over the data split across the ranks' goroutines. It is
// safe for concurrent use.
type localWorld struct {
	n     int
	place *meetingPlace

	mu    sync.Mutex
	comms []*comm // by rank; nil once the rank is destroyed
}

func newLocalWorld(n int) *localWorld {
	return &localWorld{n: n, place: newMeetingPlace(), comms: make([]*comm, n)}
}

var allRanks = meetKey{lo: -1, hi: -1}

func (w *localWorld) key(kind uint8, seq uint64) meetKey {
	k := allRanks
	k.kind, k.seq = kind, seq
	return k
}

// wait wraps a meeting; a timeout aborts the whole world, so the other
// ranks fail at once instead of each waiting out its own timer.
func (w *localWorld) wait(k meetKey, slot, need int, v any, deadline time.Time) ([]any, error) {
	vals, err := w.place.meet(k, slot, need, v, deadline)
	if err != nil && codeOf(err) == codeTimeout {
		w.place.abort(err)
	}
	return vals, err
}

func (w *localWorld) join(c *comm, seq uint64, d *opDesc, deadline time.Time) ([]*opDesc, error) {
	vals, err := w.wait(w.key(meetJoin, seq), c.rank, w.n, d, deadline)
	if err != nil {
		return nil, err
	}
	ds := make([]*opDesc, len(vals))
	for i, v := range vals {
		ds[i] = v.(*opDesc)
	}
	return ds, nil
}

func (w *localWorld) collective(c *comm, seq uint64, ds []*opDesc, bufs opBufs, deadline time.Time) error {
	vals, err := w.wait(w.key(meetStart, seq), c.rank, w.n, bufs, deadline)
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
	localCompute(c, d, ds, all)
	_, err = w.wait(w.key(meetEnd, seq), c.rank, w.n, nil, deadline)
	return err
}

// localCompute is rank c.rank's share of a collective over the views of all
// ranks. Every rank writes only what no other rank writes or reads in the
// same collective: its own output (pull), or, for AllReduce, its own chunk
// of every rank's output (push).
func localCompute(c *comm, d *opDesc, ds []*opDesc, all []opBufs) {
	r, n := c.rank, len(all)
	me := all[r]
	esz := d.DT.size()
	switch d.Kind {
	case kindAllReduce:
		lo, hi := span(d.Count, n, r)
		if lo == hi {
			return
		}
		srcs := make([][]byte, n)
		dsts := make([][]byte, n)
		for k, b := range all {
			srcs[k] = b.send[lo*esz : hi*esz]
			dsts[k] = b.recv[lo*esz : hi*esz]
		}
		c.reducer().reduceBlocks(d.DT, d.Op, dsts, srcs)
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
		if sz == 0 {
			return
		}
		srcs := make([][]byte, n)
		for k, b := range all {
			srcs[k] = b.send[uint64(r)*sz : uint64(r+1)*sz]
		}
		c.reducer().reduceBlocks(d.DT, d.Op, [][]byte{me.recv[:sz]}, srcs)
	case kindAlltoAllV:
		for k, b := range all {
			cnt := ds[k].SendCounts[r] * esz
			if cnt == 0 {
				continue
			}
			src := b.send[ds[k].SDispls[r]*esz:][:cnt]
			copy(me.recv[d.RDispls[k]*esz:][:cnt], src)
		}
	}
}

func (w *localWorld) p2p(c *comm, items []p2pItem, deadline time.Time) error {
	keys := make([]meetKey, len(items))
	mts := make([]*meeting, len(items))
	for i := range items {
		it := &items[i]
		src, dst, slot := c.rank, it.peer, 0
		if !it.send {
			src, dst, slot = it.peer, c.rank, 1
		}
		keys[i] = meetKey{kind: meetP2P, seq: it.seq, lo: int32(src), hi: int32(dst)}
		mt, err := w.place.enter(keys[i], slot, 2, it)
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
		vals, err := w.place.await(keys[i], mts[i], 2, deadline)
		if err != nil {
			if codeOf(err) == codeTimeout {
				w.place.abort(err)
			}
			return err
		}
		s, r := vals[0].(*p2pItem), vals[1].(*p2pItem)
		switch {
		case s.err != nil && it.send || r.err != nil && !it.send:
			keep(it.err)
		case s.err != nil:
			keep(errf(codeRemote, "sending rank %d failed: %v", it.peer, s.err))
		case r.err != nil:
			keep(errf(codeRemote, "receiving rank %d failed: %v", it.peer, r.err))
		case s.count != r.count || s.dt != r.dt:
			keep(errf(codePara, "rank %d sends %d × %v, rank %d receives %d × %v",
				keys[i].lo, s.count, s.dt, keys[i].hi, r.count, r.dt))
		case !it.send:
			copy(it.view, s.view)
		}
	}
	// The sender's buffer stays in use until the receiver has copied.
	for i := range items {
		k := keys[i]
		k.kind = meetP2PEnd
		slot := 0
		if !items[i].send {
			slot = 1
		}
		mt, err := w.place.enter(k, slot, 2, nil)
		if err != nil {
			return err
		}
		keys[i], mts[i] = k, mt
	}
	for i := range items {
		if _, err := w.place.await(keys[i], mts[i], 2, deadline); err != nil {
			if codeOf(err) == codeTimeout {
				w.place.abort(err)
			}
			return err
		}
	}
	return first
}

func (w *localWorld) exchangeDescs(c *comm, peer int, seq uint64, local [][]byte, deadline time.Time) ([][]byte, error) {
	if peer == c.rank {
		return local, nil
	}
	lo, hi, slot := c.rank, peer, 0
	if peer < c.rank {
		lo, hi, slot = peer, c.rank, 1
	}
	vals, err := w.wait(meetKey{kind: meetXchg, seq: seq, lo: int32(lo), hi: int32(hi)}, slot, 2, local, deadline)
	if err != nil {
		return nil, err
	}
	return vals[1-slot].([][]byte), nil
}

func (w *localWorld) oneSided(c *comm, peer int, get bool, xs []xfer, deadline time.Time) error {
	w.mu.Lock()
	owner := w.comms[peer]
	w.mu.Unlock()
	if owner == nil {
		return errf(codeRemote, "rank %d has destroyed its communicator", peer)
	}
	for _, x := range xs {
		mem, err := owner.os.resolve(owner, c.rank, x.remote, x.n)
		if err != nil {
			return err
		}
		if get {
			copy(x.local, mem)
		} else {
			copy(mem, x.local)
		}
	}
	return nil
}

func (w *localWorld) close(c *comm) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.comms[c.rank] == c {
		w.comms[c.rank] = nil
	}
}
