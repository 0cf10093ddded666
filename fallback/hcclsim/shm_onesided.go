package hcclsim

import (
	"encoding/binary"
	"sync/atomic"
	"time"
)

// One-sided transfers between processes. The requester writes a round of
// entries (remote address, length, staging offset) into its segment and
// raises its request word for the target; the target's server goroutine,
// woken by its doorbell, checks every entry against its registrations and
// then copies between its memory and the requester's staging area, and
// posts the result in the requester's segment. A batch larger than one
// round is first checked whole in check-only rounds, so that one bad
// descriptor moves no byte at all.
//
// When the ranks map each other's device memory (w.peers), an entry names
// the requester's local buffer (an address in the requester's process)
// instead of a staging offset, and the server, after the same checks,
// copies straight between its memory and the requester's buffer: no
// staging, and a round is bounded by the number of entries only.

// Request words (offReq + 4·i) and response words (offResp + 4·i).
const (
	rqGet     = 0
	rqEntries = 1
	rqCheck   = 2
	rqDirect  = 3 // entries carry the requester's buffer addresses
	rsSeq     = 0
	rsCode    = 1
	rsMsgLen  = 2
	rsMsg     = 12 // byte offset of the message within the response
)

type osPiece struct {
	x     int    // index into xs
	off   uint64 // offset within the transfer
	n     uint64
	stage int // staged: offset in the requester's staging area
}

func (w *shmWorld) oneSided(c *comm, peer int, get bool, xs []xfer, timeout time.Duration) error {
	return w.guarded("one-sided transfer", func() error { return w.oneSidedShared(peer, get, xs, timeout) })
}

// oneSidedShared is oneSided's data phase over the segments, under guarded.
func (w *shmWorld) oneSidedShared(peer int, get bool, xs []xfer, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	stage := uint64(2 * w.half())
	// Cut the transfers into pieces and the pieces into rounds: the
	// pieces in w.osPieces, round r ending at w.osEnds[r]. Both are
	// reused (the caller holds execMu), so a steady stream of batches
	// allocates nothing here.
	ps, ends := w.osPieces[:0], w.osEnds[:0]
	used := uint64(0)
	for i, x := range xs {
		if w.peers != nil {
			if len(ps)-last(ends) == maxReqEntries {
				ends = append(ends, len(ps))
			}
			ps = append(ps, osPiece{x: i, n: x.n})
			continue
		}
		for off := uint64(0); off < x.n || (x.n == 0 && off == 0); {
			if len(ps)-last(ends) == maxReqEntries || used == stage {
				ends = append(ends, len(ps))
				used = 0
			}
			n := min(x.n-off, stage-used)
			ps = append(ps, osPiece{x: i, off: off, n: n, stage: int(used)})
			used += n
			off += n
			if x.n == 0 {
				break
			}
		}
	}
	if len(ps) > last(ends) {
		ends = append(ends, len(ps))
	}
	w.osPieces, w.osEnds = ps, ends
	if len(ends) > 1 {
		lo := 0
		for _, hi := range ends {
			if err := w.request(peer, get, true, xs, ps[lo:hi], deadline); err != nil {
				return err
			}
			lo = hi
		}
	}
	lo := 0
	for _, hi := range ends {
		if err := w.request(peer, get, false, xs, ps[lo:hi], deadline); err != nil {
			return err
		}
		lo = hi
	}
	return nil
}

// last is the last element of ends, 0 when empty.
func last(ends []int) int {
	if len(ends) == 0 {
		return 0
	}
	return ends[len(ends)-1]
}

// request runs one round against peer's server.
func (w *shmWorld) request(peer int, get, checkOnly bool, xs []xfer, rd []osPiece, deadline time.Time) error {
	own := w.own
	ent := own.mem[own.l.entries:]
	direct := w.peers != nil
	moved := 0
	for i, p := range rd {
		binary.LittleEndian.PutUint64(ent[i*reqEntryBytes:], uint64(xs[p.x].remote)+p.off)
		binary.LittleEndian.PutUint64(ent[i*reqEntryBytes+8:], p.n)
		moved += int(p.n)
		if direct {
			binary.LittleEndian.PutUint64(ent[i*reqEntryBytes+16:], uint64(addrOf(xs[p.x].local()))+p.off)
			continue
		}
		binary.LittleEndian.PutUint64(ent[i*reqEntryBytes+16:], uint64(p.stage))
		if !get && !checkOnly {
			countStaged(copy(own.stage(p.stage, int(p.n)), xs[p.x].local()[p.off:p.off+p.n]))
		}
	}
	b2u := func(b bool) uint32 {
		if b {
			return 1
		}
		return 0
	}
	atomic.StoreUint32(own.word(offReq+4*rqGet), b2u(get))
	atomic.StoreUint32(own.word(offReq+4*rqEntries), uint32(len(rd)))
	atomic.StoreUint32(own.word(offReq+4*rqCheck), b2u(checkOnly))
	atomic.StoreUint32(own.word(offReq+4*rqDirect), b2u(direct))
	w.reqSeq++
	seq := w.reqSeq
	atomic.StoreUint32(own.p2pWord(peer, pwReqFor), seq)
	w.segs[peer].bell().ring()
	err := own.bell().waitUntil(func() bool { return atomic.LoadUint32(own.word(offResp+4*rsSeq)) == seq },
		w.stop, deadline, func() string { return "rank " + itoa(peer) + " to serve a one-sided request" })
	if err != nil {
		return err
	}
	if c := code(atomic.LoadUint32(own.word(offResp + 4*rsCode))); c != codeSuccess {
		n := min(int(atomic.LoadUint32(own.word(offResp+4*rsMsgLen))), respMsgBytes-rsMsg)
		return errf(c, "%s", own.mem[offResp+rsMsg:offResp+rsMsg+n])
	}
	switch {
	case checkOnly:
	case direct:
		countDirect(moved)
	case get:
		for _, p := range rd {
			copy(xs[p.x].local()[p.off:p.off+p.n], own.stage(p.stage, int(p.n)))
		}
	}
	return nil
}

// serve answers peers' one-sided requests until the rank closes.
func (w *shmWorld) serve() {
	defer close(w.serverDone)
	// A fault ends the server: the world is aborted (guarded), and a
	// requester then waits out its timeout.
	_ = w.guarded("one-sided server", func() error { w.serveShared(); return nil })
}

func (w *shmWorld) serveShared() {
	bell := w.own.bell()
	for !w.stopServer.Load() {
		v := bell.value()
		served := false
		for p, s := range w.segs {
			if p == w.me {
				continue
			}
			if seq := atomic.LoadUint32(s.p2pWord(w.me, pwReqFor)); seq != w.served[p] {
				w.handleRequest(p, s, seq)
				w.served[p] = seq
				served = true
			}
		}
		if !served {
			bell.sleep(v, 50*time.Millisecond)
		}
	}
}

func (w *shmWorld) handleRequest(p int, s *segment, seq uint32) {
	get := atomic.LoadUint32(s.word(offReq+4*rqGet)) == 1
	n := int(atomic.LoadUint32(s.word(offReq + 4*rqEntries)))
	checkOnly := atomic.LoadUint32(s.word(offReq+4*rqCheck)) == 1
	direct := atomic.LoadUint32(s.word(offReq+4*rqDirect)) == 1 && w.peers != nil
	n = min(n, maxReqEntries)
	ent := s.mem[s.l.entries:]
	rs := w.c.os.resolver(&w.rs, w.c, p) // w.rs: only the server goroutine uses it
	// The requester's side of entry i: its buffer (direct) or its staging
	// area.
	theirs := func(i int, ln uint64) ([]byte, error) {
		at := binary.LittleEndian.Uint64(ent[i*reqEntryBytes+16:])
		if direct {
			b, ok := w.peers[p].view(uintptr(at), ln)
			if !ok {
				return nil, errf(codeInternal, "request entry %d: [%#x, +%d) is not in rank %d's device memory", i, at, ln, p)
			}
			return b, nil
		}
		if at > uint64(s.l.stageLen) || ln > uint64(s.l.stageLen)-at {
			return nil, errf(codeInternal, "request entry %d outside the staging area", i)
		}
		return s.stage(int(at), int(ln)), nil
	}
	// Check every entry before moving a byte; then move them all,
	// resolving again (cheaper than keeping a view per entry).
	var fail error
	for i := 0; i < n && fail == nil; i++ {
		addr := binary.LittleEndian.Uint64(ent[i*reqEntryBytes:])
		ln := binary.LittleEndian.Uint64(ent[i*reqEntryBytes+8:])
		if _, err := theirs(i, ln); err != nil {
			fail = err
		} else if _, err := rs.resolve(uintptr(addr), ln); err != nil {
			fail = err
		}
	}
	if fail == nil && !checkOnly {
		for i := 0; i < n; i++ {
			addr := binary.LittleEndian.Uint64(ent[i*reqEntryBytes:])
			ln := binary.LittleEndian.Uint64(ent[i*reqEntryBytes+8:])
			mine, _ := rs.resolve(uintptr(addr), ln)
			other, _ := theirs(i, ln)
			if get {
				if !direct {
					countStaged(len(mine))
				}
				copy(other, mine)
			} else {
				copy(mine, other)
			}
		}
	}
	c, text := codeSuccess, ""
	if fail != nil {
		c, text = codeOf(fail), fail.Error()
		if e, ok := fail.(*simError); ok {
			text = e.msg
		}
	}
	msgLen := copy(s.mem[offResp+rsMsg:offResp+respMsgBytes], text)
	atomic.StoreUint32(s.word(offResp+4*rsMsgLen), uint32(msgLen))
	atomic.StoreUint32(s.word(offResp+4*rsCode), uint32(c))
	atomic.StoreUint32(s.word(offResp+4*rsSeq), seq)
	s.bell().ring()
}
