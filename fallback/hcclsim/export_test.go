package hcclsim

import (
	"bufio"
	"io"
	"time"
)

// Hooks for the external tests that play a stranger (or a rogue rank) at a
// rendezvous over loopback.

// Message kinds a stranger sends or reads.
const (
	KindHello     = uint8(mHello)
	KindReject    = uint8(mReject)
	KindFormed    = uint8(mFormed)
	KindSeg       = uint8(mSeg)
	KindMapped    = uint8(mMapped)
	KindJoin      = uint8(mJoin)
	KindChallenge = uint8(mChallenge)
)

// WireMsg is the part of a control message the tests set or read.
type WireMsg struct {
	Kind                    uint8
	N, Rank, Pid, StageSize int
	Code                    int32
	Text, Seg               string
	Nonce, Proof            []byte
}

// EncodeFrame returns m as one frame.
func EncodeFrame(m WireMsg) []byte {
	w := &frameBuf{}
	_ = writeFrame(w, &msg{Kind: msgKind(m.Kind), N: m.N, Rank: m.Rank, Pid: m.Pid, StageBytes: m.StageSize,
		Code: m.Code, Text: m.Text, Seg: m.Seg, Nonce: m.Nonce, Proof: m.Proof})
	return w.b
}

type frameBuf struct{ b []byte }

func (f *frameBuf) Write(p []byte) (int, error) { f.b = append(f.b, p...); return len(p), nil }

// ReadFrame reads one frame (of at most maxFrame bytes).
func ReadFrame(r *bufio.Reader) (WireMsg, error) {
	m, err := readFrame(r, maxFrame)
	if err != nil {
		return WireMsg{}, err
	}
	return WireMsg{Kind: uint8(m.Kind), N: m.N, Rank: m.Rank, Pid: m.Pid, StageSize: m.StageBytes,
		Code: m.Code, Text: m.Text, Seg: m.Seg, Nonce: m.Nonce, Proof: m.Proof}, nil
}

var _ io.Writer = (*frameBuf)(nil)

// RootAddr is the rendezvous address in a root info ("" if malformed).
func RootAddr(root []byte) string {
	r, ok := decodeRootInfo(root)
	if !ok {
		return ""
	}
	return r.addr
}

// HelloProof is the proof a holder of root presents for rank of n.
func HelloProof(root []byte, hubNonce, nonce []byte, n, rank int) []byte {
	r, _ := decodeRootInfo(root)
	return r.secret.helloProof(hubNonce, nonce, n, rank)
}

// NonceBytes is the length of a joiner's nonce.
const NonceBytes = nonceBytes

// DeliverTwice hands a multi-process rank's reply handler two answers to
// one pending collective, as a confused rendezvous might, and reports
// whether both deliveries returned (the link's reader must never block).
func DeliverTwice() bool {
	w := &shmWorld{joins: map[uint64]chan *msg{7: make(chan *msg, 1)}, pairs: map[uint64]chan *msg{}}
	done := make(chan struct{})
	go func() {
		w.onMsg(&msg{Kind: mJoined, Seq: 7})
		w.onMsg(&msg{Kind: mJoined, Seq: 7})
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// RoundParks is how many times in-process ranks slept in a collective's
// round (round.go).
func RoundParks() uint64 { return roundParks.Load() }

// FakeLinkClock gives m a clock that stands still and records the waits
// the model asks for; the returned function reads them.
func FakeLinkClock(m *LinkModel) func() []time.Duration {
	fc := &fakeClock{t: time.Unix(100, 0)}
	m.now, m.wait = fc.now, fc.wait
	return func() []time.Duration {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		return append([]time.Duration(nil), fc.waits...)
	}
}

// MaxAhead is how many collectives a rank's calls may run ahead of its
// streams (collective.go).
const MaxAhead = maxAhead

// OpenMeetings counts the meetings still open (collecting, or abandoned
// and not yet touched by every participant) in the in-process worlds of
// s's communicators.
func OpenMeetings(s *Sim) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[*localWorld]bool{}
	n := 0
	for _, c := range s.comms {
		if w, ok := c.tr.(*localWorld); ok && !seen[w] {
			seen[w] = true
			w.place.mu.Lock()
			n += len(w.place.open)
			w.place.mu.Unlock()
		}
	}
	return n
}
