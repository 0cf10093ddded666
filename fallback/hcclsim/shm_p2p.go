package hcclsim

import (
	"sync/atomic"
	"time"
)

// Point-to-point over shared memory. The sender copies a message, in
// pieces, into its staging slot for the receiver and counts the pieces in
// its segment (pwSent); the receiver copies each piece out and counts it in
// its own segment (pwAcked). A message header (count, type, pieces, seq and
// the sender's own failure) travels in the sender's segment; the receiver
// answers a disagreement with a verdict in its segment, so both fail with
// the same code. All items of a batch advance together in one loop.
//
// When the ranks map each other's device memory (w.peers), a message is one
// piece that never touches the staging area: the sender publishes its
// buffer's address with the header, the receiver copies straight from the
// sender's buffer and acknowledges, and the sender returns only then.

// after reports a ≥ b for wrapping 32-bit counters.
func after(a, b uint32) bool { return int32(a-b) >= 0 }

type p2pRun struct {
	it       *p2pItem
	started  bool
	finished bool
	pieces   uint32
	done     uint32
	base     uint32
	seq      uint32
	bytes    int
	src      []byte // direct: the sender's buffer, until copied
	err      error
}

// slot is the staging bytes reserved for messages to one peer.
func (w *shmWorld) slot() int { return 2 * w.half() / w.n / 64 * 64 }

func (w *shmWorld) p2p(c *comm, items []p2pItem, timeout time.Duration) error {
	return w.guarded("send/recv", func() error { return w.p2pShared(items, timeout) })
}

// p2pShared is p2p's data phase over the segments, under guarded.
func (w *shmWorld) p2pShared(items []p2pItem, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	runs := make([]p2pRun, len(items))
	for i := range items {
		runs[i].it = &items[i]
	}
	bell := w.own.bell()
	spins := 0
	for {
		v := bell.value()
		progress, pending := false, false
		busy := map[[2]int]bool{} // (peer, direction) already served this pass: keep order
		for i := range runs {
			r := &runs[i]
			if r.finished {
				continue
			}
			pending = true
			dir := 0
			if r.it.send {
				dir = 1
			}
			key := [2]int{r.it.peer, dir}
			if busy[key] {
				continue
			}
			busy[key] = true
			if r.it.send {
				progress = w.sendStep(r) || progress
			} else {
				progress = w.recvStep(r) || progress
			}
		}
		if !pending {
			break
		}
		if progress {
			spins = 0
			continue
		}
		if err := w.stop(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return errf(codeTimeout, "timed out waiting for a send/recv peer")
		}
		if spins < 64 {
			spins++
			if spins%8 == 0 {
				yield()
			}
			continue
		}
		bell.sleep(v, min(time.Until(deadline), 50*time.Millisecond))
	}
	for _, r := range runs {
		if r.err != nil {
			return r.err
		}
	}
	return nil
}

func (w *shmWorld) sendStep(r *p2pRun) bool {
	d := r.it.peer
	own, peer := w.own, w.segs[d]
	slot := w.slot()
	progress := false
	if !r.started {
		r.started = true
		progress = true
		r.bytes = int(r.it.count * r.it.dt.size())
		r.pieces = uint32(max(1, (r.bytes+slot-1)/slot))
		if r.it.err != nil || w.peers != nil {
			r.pieces = 1
		}
		atomic.StoreUint64(own.p2pDword(d, pwAddrDw), uint64(addrOf(r.it.view)))
		w.msgSeq[d]++
		r.seq = w.msgSeq[d]
		r.base = w.sendBase[d]
		atomic.StoreUint64(own.p2pDword(d, pwCountLo), r.it.count)
		atomic.StoreUint32(own.p2pWord(d, pwDT), uint32(r.it.dt))
		atomic.StoreUint32(own.p2pWord(d, pwPieces), r.pieces)
		atomic.StoreUint32(own.p2pWord(d, pwMsgSeq), r.seq)
		errCode := uint32(0)
		if r.it.err != nil {
			errCode = uint32(codeOf(r.it.err))
		}
		atomic.StoreUint32(own.p2pWord(d, pwErr), errCode)
	}
	finish := func(err error) {
		r.finished = true
		r.err = err
		w.sendBase[d] = r.base + r.pieces
		atomic.StoreUint32(own.p2pWord(d, pwSent), r.base+r.pieces)
	}
	verdict := func() error {
		if atomic.LoadUint32(peer.p2pWord(w.me, pwVerdict)) == r.seq {
			if c := code(atomic.LoadUint32(peer.p2pWord(w.me, pwVerdCode))); c != codeSuccess {
				if c == codePara {
					return errf(codePara, "rank %d receives a different count or data type than rank %d sends (%d × %v)",
						d, w.me, r.it.count, r.it.dt)
				}
				return errf(c, "receiving rank %d failed", d)
			}
		}
		return nil
	}
	if err := verdict(); err != nil {
		finish(err)
		return true
	}
	acked := atomic.LoadUint32(peer.p2pWord(w.me, pwAcked))
	for r.done < r.pieces && after(acked, r.base+r.done) {
		if r.it.err == nil && w.peers == nil {
			off := int(r.done) * slot
			n := min(slot, r.bytes-off)
			countStaged(copy(own.stage(d*slot, n), r.it.view[off:off+n]))
		}
		r.done++
		atomic.StoreUint32(own.p2pWord(d, pwSent), r.base+r.done)
		peer.bell().ring()
		progress = true
	}
	if r.done == r.pieces && after(atomic.LoadUint32(peer.p2pWord(w.me, pwAcked)), r.base+r.pieces) {
		err := verdict()
		if err == nil {
			err = r.it.err
		}
		finish(err)
		return true
	}
	return progress
}

func (w *shmWorld) recvStep(r *p2pRun) bool {
	s := r.it.peer
	own, peer := w.own, w.segs[s]
	slot := w.slot()
	sent := atomic.LoadUint32(peer.p2pWord(w.me, pwSent))
	progress := false
	if !r.started {
		r.base = w.recvBase[s]
		if !after(sent, r.base+1) {
			return false
		}
		r.started = true
		progress = true
		count := atomic.LoadUint64(peer.p2pDword(w.me, pwCountLo))
		dt := dtype(atomic.LoadUint32(peer.p2pWord(w.me, pwDT)))
		r.pieces = atomic.LoadUint32(peer.p2pWord(w.me, pwPieces))
		r.seq = atomic.LoadUint32(peer.p2pWord(w.me, pwMsgSeq))
		senderErr := atomic.LoadUint32(peer.p2pWord(w.me, pwErr))
		reject := func(c code, err error) bool {
			atomic.StoreUint32(own.p2pWord(s, pwVerdCode), uint32(c))
			atomic.StoreUint32(own.p2pWord(s, pwVerdict), r.seq)
			r.finished, r.err = true, err
			w.recvBase[s] = r.base + r.pieces
			atomic.StoreUint32(own.p2pWord(s, pwAcked), r.base+r.pieces)
			peer.bell().ring()
			return true
		}
		switch {
		case senderErr != 0:
			return reject(codeSuccess, errf(codeRemote, "sending rank %d failed (code %d)", s, senderErr))
		case r.it.err != nil:
			return reject(codeRemote, r.it.err)
		case count != r.it.count || dt != r.it.dt:
			return reject(codePara, errf(codePara, "rank %d sends %d × %v, rank %d receives %d × %v",
				s, count, dt, w.me, r.it.count, r.it.dt))
		}
		r.bytes = int(r.it.count * r.it.dt.size())
		// The pieces are the sender's word too: the message takes as
		// many as this rank computes from the agreed count (one when the
		// data moves directly), or the copy below would run past it.
		want := uint32(1)
		if w.peers == nil {
			want = uint32(max(1, (r.bytes+slot-1)/slot))
		}
		if r.pieces != want {
			return reject(codeInternal, errf(codeInternal, "rank %d announces %d pieces for a message of %d bytes, which takes %d",
				s, r.pieces, r.bytes, want))
		}
		if w.peers != nil {
			addr := uintptr(atomic.LoadUint64(peer.p2pDword(w.me, pwAddrDw)))
			src, ok := w.peers[s].view(addr, uint64(r.bytes))
			if !ok {
				return reject(codeInternal, errf(codeInternal, "rank %d's send buffer [%#x, +%d) is not in its device memory", s, addr, r.bytes))
			}
			r.src = src
		}
	}
	if r.src != nil {
		// Direct: one piece, straight from the sender's buffer.
		if r.done == 0 && after(sent, r.base+1) {
			countDirect(copy(r.it.view, r.src))
			r.done = 1
			r.src = nil
			atomic.StoreUint32(own.p2pWord(s, pwAcked), r.base+1)
			peer.bell().ring()
			progress = true
		}
	}
	for r.done < r.pieces && after(sent, r.base+r.done+1) {
		off := int(r.done) * slot
		n := min(slot, r.bytes-off)
		copy(r.it.view[off:off+n], peer.stage(w.me*slot, n))
		r.done++
		atomic.StoreUint32(own.p2pWord(s, pwAcked), r.base+r.done)
		peer.bell().ring()
		progress = true
	}
	if r.done == r.pieces {
		r.finished = true
		w.recvBase[s] = r.base + r.pieces
		return true
	}
	return progress
}
