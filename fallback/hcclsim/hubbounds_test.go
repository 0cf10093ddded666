package hcclsim

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ranks that speak the rendezvous protocol by hand, so that one can break
// it: rank 1 is a holder of the root info that sends what no honest rank
// sends; rank 0 only reads, and learns from the rendezvous whether rank 1
// was dropped.

type rawRank struct {
	conn net.Conn
	r    *bufio.Reader
	got  chan *msg // what the rendezvous sends, once running
}

func (x *rawRank) send(t *testing.T, m *msg) {
	t.Helper()
	require.NoError(t, writeFrame(x.conn, m))
}

func (x *rawRank) recv(t *testing.T) *msg {
	t.Helper()
	_ = x.conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a bound on a hang only
	m, err := readFrame(x.r, maxFrame)
	require.NoError(t, err)
	return m
}

// rawWorld starts a rendezvous and forms a two-rank shared-memory world
// of raw ranks that state the given longest waits at admission; the ranks
// named in deaf never read what the rendezvous sends them once formed.
func rawWorld(t *testing.T, waits [2]time.Duration, deaf ...int) (*hub, [2]*rawRank) {
	t.Helper()
	id, secret := newWorldID(), newSecret()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := newHub(id, secret, t.TempDir(), ln, 30*time.Second)
	t.Cleanup(func() { h.close(); <-h.done })
	var rs [2]*rawRank
	for i := range rs {
		c, err := net.Dial("tcp", h.addr())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		rs[i] = &rawRank{conn: c, r: bufio.NewReader(c), got: make(chan *msg, 1<<16)}
		ch := rs[i].recv(t)
		require.Equal(t, mChallenge, ch.Kind)
		nonce := newNonce()
		rs[i].send(t, &msg{Kind: mHello, N: 2, Rank: i, Pid: os.Getpid(), StageBytes: 64 << 10, Timeout: waits[i],
			Nonce: nonce, Proof: secret.helloProof(ch.Nonce, nonce, 2, i)})
	}
	for _, kind := range []msgKind{mFormed, mPeers, mGo} {
		for _, x := range rs {
			m := x.recv(t)
			require.Equal(t, kind, m.Kind, "%+v", m)
			switch kind {
			case mFormed:
				x.send(t, &msg{Kind: mSeg})
			case mPeers:
				x.send(t, &msg{Kind: mMapped})
			}
		}
	}
	for i, x := range rs {
		if slices.Contains(deaf, i) {
			continue
		}
		go func() {
			for {
				_ = x.conn.SetReadDeadline(time.Time{})
				m, err := readFrame(x.r, maxFrame)
				if err != nil {
					close(x.got)
					return
				}
				x.got <- m
			}
		}()
	}
	return h, rs
}

// await returns the first message of kind (any kind for 0) from x within the wait (a bound
// on a hang only), or nil.
func (x *rawRank) await(kind msgKind, wait time.Duration) *msg {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case m, ok := <-x.got:
			if !ok {
				return nil
			}
			if m.Kind == kind || kind == 0 {
				return m
			}
		case <-t.C:
			return nil
		}
	}
}

// dropped checks that rank 0 learns that rank 1 was dropped or lost.
func dropped(t *testing.T, rs [2]*rawRank) {
	t.Helper()
	m := rs[0].await(mAbort, 20*time.Second)
	require.NotNil(t, m, "rank 1 was not dropped")
	assert.Contains(t, m.Text, "rank 1")
}

func barrierDesc() *opDesc { return &opDesc{Kind: kindBarrier, DT: dtFP32} }

// TestHubBounds: what an admitted rank can make the rendezvous hold is
// bounded. A rank that names collectives far beyond the ones open (fresh
// sequence numbers), keeps too many pairings or too many offer bytes
// waiting, or sends a frame larger than any honest message, is dropped
// (the others hear of it); a rank's long timeouts are cut to the world's.
// Before, the rendezvous kept every such arrival until its timeout (a
// rank could grow it by hundreds of MB), and 16 MiB frames.
func TestHubBounds(t *testing.T) {
	const hour = time.Hour
	t.Run("honest ranks inside the window", func(t *testing.T) {
		h, rs := rawWorld(t, [2]time.Duration{hour, hour})
		// Each rank calls 3·maxAhead collectives, maxAhead ahead of its
		// data phases, as the ring lets it: collective s+maxAhead once s
		// is over.
		const total = 3 * maxAhead
		errs := make(chan error, 2)
		for _, x := range rs {
			go func() {
				for s := uint64(0); s < maxAhead; s++ {
					_ = writeFrame(x.conn, &msg{Kind: mJoin, Seq: s, Desc: barrierDesc(), Timeout: hour})
				}
				for done := 0; done < total; done++ {
					m := x.await(mJoined, 20*time.Second)
					switch {
					case m == nil:
						errs <- fmt.Errorf("collective %d: no answer", done)
						return
					case m.Code != int32(codeSuccess):
						errs <- fmt.Errorf("collective %d: %s", m.Seq, m.Text)
						return
					}
					if next := m.Seq + maxAhead; next < total {
						_ = writeFrame(x.conn, &msg{Kind: mJoin, Seq: next, Desc: barrierDesc(), Timeout: hour})
					}
				}
				errs <- nil
			}()
		}
		require.NoError(t, <-errs)
		require.NoError(t, <-errs)
		h.mu.Lock()
		defer h.mu.Unlock()
		assert.Empty(t, h.joins)
	})
	t.Run("fresh sequence numbers", func(t *testing.T) {
		h, rs := rawWorld(t, [2]time.Duration{hour, hour})
		for s := uint64(0); s < 20_000; s++ {
			if writeFrame(rs[1].conn, &msg{Kind: mJoin, Seq: s * 7, Desc: barrierDesc(), Timeout: hour}) != nil {
				break // dropped
			}
		}
		dropped(t, rs)
		h.mu.Lock()
		defer h.mu.Unlock()
		assert.LessOrEqual(t, len(h.joins), 4*maxAhead, "the window the docs promise, with room")
	})
	t.Run("pairings waiting", func(t *testing.T) {
		_, rs := rawWorld(t, [2]time.Duration{hour, hour})
		for id := uint64(1); id <= 3*maxWorldRanks; id++ {
			if writeFrame(rs[1].conn, &msg{Kind: mPair, Id: id, PairKind: pairP2P, Peer: 0, Side: 0, Timeout: hour}) != nil {
				break
			}
		}
		dropped(t, rs)
	})
	t.Run("offer bytes waiting", func(t *testing.T) {
		_, rs := rawWorld(t, [2]time.Duration{hour, hour})
		descs := make([][]byte, maxRegs)
		for i := range descs {
			descs[i] = make([]byte, 64) // a memory descriptor
		}
		for id := uint64(1); id <= 100; id++ { // 6.4 MiB in all
			if writeFrame(rs[1].conn, &msg{Kind: mPair, Id: id, PairKind: pairXchg, Peer: 0, Side: 1, Timeout: hour,
				Offer: pairOffer{Payload: descs}}) != nil {
				break
			}
		}
		dropped(t, rs)
	})
	t.Run("large frame", func(t *testing.T) {
		_, rs := rawWorld(t, [2]time.Duration{hour, hour})
		_ = writeFrame(rs[1].conn, &msg{Kind: mPair, Id: 1, PairKind: pairXchg, Peer: 0, Side: 1, Timeout: hour,
			Offer: pairOffer{Payload: [][]byte{make([]byte, 1<<20)}}})
		dropped(t, rs)
	})
	t.Run("a rank that stops reading", func(t *testing.T) {
		// Rank 1 pairs exchanges with rank 0 but never reads what the
		// rendezvous sends it, each answer carrying rank 0's 64 KiB of
		// descriptors: the answers pile up (once the socket's buffers
		// are full) until rank 1 is dropped, instead of growing with
		// every exchange for as long as the world runs.
		_, rs := rawWorld(t, [2]time.Duration{hour, hour}, 1)
		descs := make([][]byte, maxRegs)
		for i := range descs {
			descs[i] = make([]byte, 64) // a memory descriptor
		}
		var abort *msg
		for id := uint64(1); id <= 3000 && abort == nil; id++ { // 3000 × 64 KiB
			if writeFrame(rs[1].conn, &msg{Kind: mPair, Id: id, PairKind: pairXchg, Peer: 0, Side: 1, Timeout: hour}) != nil {
				break
			}
			rs[0].send(t, &msg{Kind: mPair, Id: id, PairKind: pairXchg, Peer: 1, Side: 0, Timeout: hour,
				Offer: pairOffer{Payload: descs}})
			m := rs[0].await(0, 20*time.Second)
			require.NotNil(t, m, "no answer to exchange %d", id)
			if m.Kind == mAbort {
				abort = m
			}
		}
		require.NotNil(t, abort, "rank 1 was not dropped")
		assert.Contains(t, abort.Text, "rank 1")
	})
	t.Run("timeouts cut to the world's", func(t *testing.T) {
		_, rs := rawWorld(t, [2]time.Duration{200 * time.Millisecond, hour})
		rs[1].send(t, &msg{Kind: mJoin, Seq: 0, Desc: barrierDesc(), Timeout: hour})
		rs[1].send(t, &msg{Kind: mPair, Id: 1, PairKind: pairP2P, Peer: 0, Side: 0, Timeout: hour})
		got := map[msgKind]*msg{}
		for len(got) < 2 {
			m := rs[1].await(0, 20*time.Second)
			require.NotNil(t, m, "the collective or the pairing did not time out at the world's timeout")
			got[m.Kind] = m
		}
		for _, k := range []msgKind{mJoined, mPaired} {
			require.NotNil(t, got[k], "kind %d", k)
			assert.Equal(t, int32(codeTimeout), got[k].Code)
		}
	})
}
