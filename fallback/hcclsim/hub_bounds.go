package hcclsim

import "time"

// Bounds on what an admitted rank may make the rendezvous hold (a rank
// breaking one is dropped, and the others get HCCL_E_REMOTE).
//
// Collectives: a rank's calls run at most maxAhead collectives ahead of
// its stream (collective.go), and a rank's data phase ends only after
// every rank's call of it, so an honest rank never names a sequence
// number far beyond the oldest collective still open: seqWindow leaves it
// four times that room. maxOpenJoins bounds the open collectives one
// rank has joined (in-place calls, which take no ring slot, included).
//
// Pairings: a call waits for its pairing, so a rank has one per calling
// goroutine (BatchSendRecv pairs with every peer at once): at most
// maxPendingPairs, carrying at most maxPendingPayload bytes of exchange
// descriptors in all. An offer carries what its kind needs and no more:
// nothing for a Send/Recv, up to maxRegs descriptors of memDescBytes for
// an exchange, one size for a window.
//
// Frames: the largest message a rank sends is an AlltoAllV descriptor (4
// varints per rank, 20 KiB for maxWorldRanks) or an exchange of maxRegs
// descriptors (66 KiB); maxRankFrame is the cap on what a rank sends
// (the rendezvous's own answers, all ranks' descriptors at once, keep
// maxFrame).
const (
	seqWindow         = 4 * maxAhead
	maxOpenJoins      = 2 * maxAhead
	maxPendingPairs   = 2 * maxWorldRanks
	maxPendingPayload = 4 << 20
	maxRankFrame      = 256 << 10
	memDescBytes      = 64
	// maxQueued bounds the messages the rendezvous holds for a rank that
	// does not read them. It sends a rank one per collective and pairing
	// of that rank, which an honest rank's reader takes at once; even a
	// rank stopped in a debugger falls behind by little more than the
	// window, since the others cannot complete a collective without it.
	maxQueued = 1 << 14
	// maxQueuedBytes bounds their bytes: answers to exchanges carry the
	// other side's descriptors (up to 64 KiB), and the answers to a
	// collective every rank's descriptor.
	maxQueuedBytes = 64 << 20
)

// joinOver records that collective seq (j) is over: its arrivals no
// longer count against their ranks, and the window moves on past every
// collective that is over. h.mu held.
func (h *hub) joinOver(seq uint64, j *hubJoin) {
	for r, d := range j.descs {
		if d != nil && h.members[r] != nil {
			h.members[r].joins--
		}
	}
	h.over[seq] = true
	for h.over[h.seqBase] {
		delete(h.over, h.seqBase)
		h.seqBase++
	}
}

// unpend releases what a pairing that is no longer waiting held against
// its rank. h.mu held.
func (h *hub) unpend(p *hubPending) {
	if x := h.members[p.rank]; x != nil {
		x.pairs--
		x.payload -= p.bytes
	}
}

// clamp bounds a wait a rank asks for by the world's: the shortest of
// the longest waits the ranks stated at admission. A rank cannot make the
// rendezvous keep a collective's arrivals longer than the rank least
// willing to wait would wait for them.
func (h *hub) clamp(d time.Duration) time.Duration {
	if h.waitCap > 0 {
		return min(d, h.waitCap)
	}
	return d
}

// badPairing says what is wrong with a pairing request, "" if nothing.
func badPairing(m *msg, n int) string {
	switch {
	case m.PairKind < pairP2P || m.PairKind > pairWin:
		return "kind " + itoa(int(m.PairKind))
	case m.Side != 0 && m.Side != 1:
		return "side " + itoa(m.Side)
	case m.Timeout <= 0:
		return "timeout " + m.Timeout.String()
	case m.Peer < 0 || m.Peer >= n:
		return "peer " + itoa(m.Peer) + " of " + itoa(n)
	}
	p := m.Offer.Payload
	switch m.PairKind {
	case pairP2P:
		if len(p) != 0 {
			return "a send/recv offer with a payload"
		}
	case pairXchg:
		if len(p) > maxRegs {
			return itoa(len(p)) + " descriptors (at most " + itoa(maxRegs) + ")"
		}
		for _, b := range p {
			if len(b) != memDescBytes {
				return "a descriptor of " + itoa(len(b)) + " bytes"
			}
		}
	case pairWin:
		if len(p) != 1 || len(p[0]) != 8 {
			return "a window offer that is not one size"
		}
	}
	return ""
}

func payloadBytes(o pairOffer) int {
	n := 0
	for _, b := range o.Payload {
		n += len(b)
	}
	return n
}
