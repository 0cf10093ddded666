package hcclsim

import (
	"sync"
	"time"
)

// Pairings: two ranks meeting at the call of a Send and its Recv, or of
// two ExchangeMemDesc (or CommExchangeMem) calls naming each other. An
// arrival is matched with the oldest waiting arrival of the other side, so
// calls pair in call order; one that waits past its timeout withdraws and
// fails with HCCL_E_TIMEOUT, and a later call waits for a fresh partner.
// The in-process pairer below and the rendezvous process (hub) implement
// the same rules.

// Pairing kinds.
const (
	pairP2P  uint8 = iota + 1 // key (src, dst); side 0 sends, side 1 receives
	pairXchg                  // key (lo, hi); side 0 is lo
	pairWin                   // key (lo, hi); side 0 is lo
)

type pairKey struct {
	kind uint8
	a, b int
}

// pairOffer is what one side brings: for p2p its count and type, for an
// exchange its descriptors.
type pairOffer struct {
	Count   uint64
	DT      dtype
	Payload [][]byte
}

// pairResult is what a side learns: the pair's sequence number (per key,
// in match order) and the other side's offer.
type pairResult struct {
	seq  uint64
	peer pairOffer
}

// keyFor returns the pairing key and this side for rank me meeting peer.
func keyFor(kind uint8, me, peer int, sending bool) (pairKey, int) {
	switch kind {
	case pairP2P:
		if sending {
			return pairKey{kind, me, peer}, 0
		}
		return pairKey{kind, peer, me}, 1
	default:
		if me < peer {
			return pairKey{kind, me, peer}, 0
		}
		return pairKey{kind, peer, me}, 1
	}
}

type pairWaiter struct {
	side    int
	offer   pairOffer
	done    chan struct{}
	matched bool
	res     pairResult
}

// pairer matches the pairings of an in-process world. Safe for concurrent
// use.
type pairer struct {
	mu      sync.Mutex
	waiting map[pairKey][]*pairWaiter
	next    map[pairKey]uint64
}

func newPairer() *pairer {
	return &pairer{waiting: make(map[pairKey][]*pairWaiter), next: make(map[pairKey]uint64)}
}

// pair waits at most timeout for the other side of k.
func (p *pairer) pair(k pairKey, side int, offer pairOffer, timeout time.Duration) (pairResult, error) {
	p.mu.Lock()
	q := p.waiting[k]
	if len(q) > 0 && q[0].side != side {
		other := q[0]
		if len(q) == 1 {
			delete(p.waiting, k)
		} else {
			p.waiting[k] = q[1:]
		}
		seq := p.next[k]
		p.next[k] = seq + 1
		other.matched = true
		other.res = pairResult{seq: seq, peer: offer}
		close(other.done)
		p.mu.Unlock()
		return pairResult{seq: seq, peer: other.offer}, nil
	}
	w := &pairWaiter{side: side, offer: offer, done: make(chan struct{})}
	p.waiting[k] = append(q, w)
	p.mu.Unlock()

	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.matched {
		return w.res, nil
	}
	q = p.waiting[k]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(p.waiting, k)
	} else {
		p.waiting[k] = q
	}
	return pairResult{}, errf(codeTimeout, "rank %d did not arrive within %v", k.other(side), timeout)
}

// other is the rank on the other side of the key.
func (k pairKey) other(side int) int {
	if side == 0 {
		return k.b
	}
	return k.a
}
