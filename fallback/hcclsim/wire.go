package hcclsim

import (
	"encoding/gob"
	"net"
	"sync"
	"time"
)

// The control plane of a multi-process communicator: small gob messages
// over a loopback TCP connection (or an in-memory pipe for a rank in the
// rendezvous process). No buffer data ever crosses it.

type msgKind uint8

const (
	mHello  msgKind = iota + 1 // joiner → hub: N, Rank, Pid, StageBytes
	mReject                    // hub → joiner: Code, Text (init refused)
	mFormed                    // hub → joiner: Mode, StageBytes
	mSeg                       // joiner → hub: Seg (its segment name)
	mPeers                     // hub → joiner: Segs
	mMapped                    // joiner → hub: every peer segment mapped
	mGo                        // hub → joiner: names unlinked, start
	mJoin                      // joiner → hub: Seq, Desc, Timeout (a collective's call)
	mJoined                    // hub → joiner: Seq, Descs, or Code (abandoned)
	mPair                      // joiner → hub: Id, PairKind, Peer, Side, Offer, Timeout
	mPaired                    // hub → joiner: Id, PairSeq, Offer (the peer's), or Code
	mBye                       // joiner → hub: orderly leave
	mAbort                     // hub → joiner: Code, Text (a rank was lost)
)

// World modes.
const (
	modeLocal uint8 = iota + 1 // every rank in one process
	modeShm                    // ranks in several processes
)

// msg is every control message; unused fields stay zero and cost nothing
// on the wire.
type msg struct {
	Kind       msgKind
	N, Rank    int
	Pid        int
	Code       int32
	Text       string
	Mode       uint8
	StageBytes int
	Seg        string
	Segs       []string
	Seq        uint64
	Desc       *opDesc
	Descs      []*opDesc
	Timeout    time.Duration
	Id         uint64
	PairKind   uint8
	Peer       int
	Side       int
	PairSeq    uint64
	Offer      pairOffer
}

// link is one end of a control connection: a reader goroutine hands every
// message to onMsg, and a writer goroutine drains an unbounded queue, so
// that sending never blocks the caller (two ends that both send while
// neither reads cannot deadlock). Safe for concurrent use.
type link struct {
	conn net.Conn
	enc  *gob.Encoder
	dec  *gob.Decoder

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*msg
	closed  bool
	started bool

	wg sync.WaitGroup
}

func newLink(conn net.Conn) *link {
	l := &link{conn: conn, enc: gob.NewEncoder(conn), dec: gob.NewDecoder(conn)}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// recv reads one message synchronously (before start is called).
func (l *link) recv() (*msg, error) {
	m := new(msg)
	if err := l.dec.Decode(m); err != nil {
		return nil, err
	}
	return m, nil
}

// start runs the reader and the writer; onMsg gets every message and then
// onEnd(err) once when the connection ends (err is nil after close).
func (l *link) start(onMsg func(*msg), onEnd func(error)) {
	l.mu.Lock()
	l.started = true
	l.mu.Unlock()
	l.wg.Add(2)
	go func() {
		defer l.wg.Done()
		for {
			m := new(msg)
			if err := l.dec.Decode(m); err != nil {
				l.mu.Lock()
				closed := l.closed
				l.mu.Unlock()
				if closed {
					err = nil
				}
				l.shut()
				onEnd(err)
				return
			}
			onMsg(m)
		}
	}()
	go func() {
		defer l.wg.Done()
		for {
			l.mu.Lock()
			for len(l.queue) == 0 && !l.closed {
				l.cond.Wait()
			}
			if len(l.queue) == 0 {
				// Closed and drained: closing the connection ends the reader.
				l.mu.Unlock()
				_ = l.conn.Close()
				return
			}
			m := l.queue[0]
			l.queue[0] = nil
			l.queue = l.queue[1:]
			l.mu.Unlock()
			if err := l.enc.Encode(m); err != nil {
				l.shut()
				return
			}
		}
	}()
}

// send queues m (dropped once the link is closed).
func (l *link) send(m *msg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.queue = append(l.queue, m)
		l.cond.Signal()
	}
}

// sendSync writes m before start, on the caller's goroutine.
func (l *link) sendSync(m *msg) error { return l.enc.Encode(m) }

// flushClose sends what is queued, then closes the connection and waits
// for both goroutines. It must not be called from onMsg or onEnd.
func (l *link) flushClose() {
	l.mu.Lock()
	l.closed = true
	started := l.started
	l.cond.Broadcast()
	l.mu.Unlock()
	if !started {
		_ = l.conn.Close()
		return
	}
	// A peer that stopped reading must not hold us forever.
	_ = l.conn.SetWriteDeadline(time.Now().Add(time.Second))
	l.wg.Wait()
}

// shut closes the connection from inside (error path).
func (l *link) shut() {
	l.mu.Lock()
	l.closed = true
	l.queue = nil
	l.cond.Broadcast()
	l.mu.Unlock()
	_ = l.conn.Close()
}
