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

// Request words (offReq + 4·i) and response words (offResp + 4·i).
const (
	rqGet     = 0
	rqEntries = 1
	rqCheck   = 2
	rsSeq     = 0
	rsCode    = 1
	rsMsgLen  = 2
	rsMsg     = 12 // byte offset of the message within the response
)

type osPiece struct {
	x     int    // index into xs
	off   uint64 // offset within the transfer
	n     uint64
	stage int
}

func (w *shmWorld) oneSided(c *comm, peer int, get bool, xs []xfer, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	stage := uint64(2 * w.half())
	// Cut the transfers into pieces and the pieces into rounds.
	var rounds [][]osPiece
	var cur []osPiece
	used := uint64(0)
	for i, x := range xs {
		for off := uint64(0); off < x.n || (x.n == 0 && off == 0); {
			if len(cur) == maxReqEntries || used == stage {
				rounds = append(rounds, cur)
				cur, used = nil, 0
			}
			n := min(x.n-off, stage-used)
			cur = append(cur, osPiece{x: i, off: off, n: n, stage: int(used)})
			used += n
			off += n
			if x.n == 0 {
				break
			}
		}
	}
	if len(cur) > 0 {
		rounds = append(rounds, cur)
	}
	if len(rounds) > 1 {
		for _, rd := range rounds {
			if err := w.request(peer, get, true, xs, rd, deadline); err != nil {
				return err
			}
		}
	}
	for _, rd := range rounds {
		if err := w.request(peer, get, false, xs, rd, deadline); err != nil {
			return err
		}
	}
	return nil
}

// request runs one round against peer's server.
func (w *shmWorld) request(peer int, get, checkOnly bool, xs []xfer, rd []osPiece, deadline time.Time) error {
	own := w.own
	ent := own.mem[own.l.entries:]
	for i, p := range rd {
		binary.LittleEndian.PutUint64(ent[i*reqEntryBytes:], uint64(xs[p.x].remote)+p.off)
		binary.LittleEndian.PutUint64(ent[i*reqEntryBytes+8:], p.n)
		binary.LittleEndian.PutUint64(ent[i*reqEntryBytes+16:], uint64(p.stage))
		if !get && !checkOnly {
			copy(own.stage(p.stage, int(p.n)), xs[p.x].local[p.off:p.off+p.n])
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
	if get && !checkOnly {
		for _, p := range rd {
			copy(xs[p.x].local[p.off:p.off+p.n], own.stage(p.stage, int(p.n)))
		}
	}
	return nil
}

// serve answers peers' one-sided requests until the rank closes.
func (w *shmWorld) serve() {
	defer close(w.serverDone)
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
	ent := s.mem[s.l.entries:]
	mems := make([][]byte, n)
	rs := w.c.os.resolver(w.c, p)
	var fail error
	for i := 0; i < n && i < maxReqEntries; i++ {
		addr := binary.LittleEndian.Uint64(ent[i*reqEntryBytes:])
		ln := binary.LittleEndian.Uint64(ent[i*reqEntryBytes+8:])
		st := binary.LittleEndian.Uint64(ent[i*reqEntryBytes+16:])
		if st > uint64(s.l.stageLen) || ln > uint64(s.l.stageLen)-st {
			fail = errf(codeInternal, "request entry %d outside the staging area", i)
			break
		}
		m, err := rs.resolve(uintptr(addr), ln)
		if err != nil {
			fail = err
			break
		}
		mems[i] = m
	}
	if fail == nil && !checkOnly {
		for i := 0; i < n; i++ {
			st := int(binary.LittleEndian.Uint64(ent[i*reqEntryBytes+16:]))
			if get {
				copy(s.stage(st, len(mems[i])), mems[i])
			} else {
				copy(mems[i], s.stage(st, len(mems[i])))
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
