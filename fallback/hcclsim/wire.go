package hcclsim

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// The control plane of a multi-process communicator: small messages over a
// loopback TCP connection (or an in-memory pipe for a rank in the
// rendezvous process). No buffer data ever crosses it. Messages travel in
// length-prefixed frames of a fixed binary layout (wire_codec.go), so a
// peer can make the reader allocate no more than the frame cap of the
// link: a small one until the peer has proved it holds the root info
// (auth.go), a larger one after.

type msgKind uint8

const (
	mHello     msgKind = iota + 1 // joiner → hub: N, Rank, Pid, StageBytes, Nonce, Proof
	mReject                       // hub → joiner: Code, Text (init refused)
	mFormed                       // hub → joiner: Mode, StageBytes, Seg (the name to create), Proof
	mSeg                          // joiner → hub: its segment exists
	mPeers                        // hub → joiner: Segs
	mMapped                       // joiner → hub: every peer segment mapped
	mGo                           // hub → joiner: names unlinked, start
	mJoin                         // joiner → hub: Seq, Desc, Timeout (a collective's call)
	mJoined                       // hub → joiner: Seq, Descs, or Code (abandoned)
	mPair                         // joiner → hub: Id, PairKind, Peer, Side, Offer, Timeout
	mPaired                       // hub → joiner: Id, PairSeq, Offer (the peer's), or Code
	mBye                          // joiner → hub: orderly leave
	mAbort                        // hub → joiner: Code, Text (a rank was lost)
	mChallenge                    // hub → joiner: Nonce (first message of every connection)
	mLastKind  = mChallenge
)

// World modes.
const (
	modeLocal uint8 = iota + 1 // every rank in one process
	modeShm                    // ranks in several processes
)

// msg is every control message; unused fields stay zero.
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
	Nonce      []byte
	Proof      []byte
}

// Frame caps. Before admission a peer sends one hello (a few dozen bytes);
// after, the largest message is the hub's answer to an AlltoAllV: four
// counts per rank pair (at most 10 bytes each as varints) for at most
// maxWorldRanks ranks.
const (
	maxHelloFrame = 4 << 10
	maxFrame      = 16 << 20
)

// link is one end of a control connection: a reader goroutine hands every
// message to onMsg, and a writer goroutine drains an unbounded queue, so
// that sending never blocks the caller (two ends that both send while
// neither reads cannot deadlock). Safe for concurrent use.
type link struct {
	conn  net.Conn
	r     *bufio.Reader
	limit atomic.Int64 // largest frame accepted from the other end

	mu       sync.Mutex
	cond     *sync.Cond
	queue    []*msg
	closed   bool
	started  bool
	queueCap int  // most messages queued at once (0: no cap)
	byteCap  int  // most bytes (msgCost) queued at once
	queued   int  // bytes queued
	overflow bool // a cap was hit: the other end stopped reading

	wg sync.WaitGroup
}

// newLink wraps conn; frames from the other end are capped at
// maxHelloFrame until setLimit raises the cap.
func newLink(conn net.Conn) *link {
	l := &link{conn: conn, r: bufio.NewReader(conn)}
	l.limit.Store(maxHelloFrame)
	l.cond = sync.NewCond(&l.mu)
	return l
}

// setLimit sets the largest frame accepted from now on.
func (l *link) setLimit(n int) { l.limit.Store(int64(n)) }

// recv reads one message synchronously (before start is called).
func (l *link) recv() (*msg, error) { return readFrame(l.r, int(l.limit.Load())) }

// readFrame reads one frame of at most limit bytes and decodes it.
func readFrame(r io.Reader, limit int) (*msg, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if uint64(n) > uint64(limit) {
		return nil, errf(codePara, "control frame of %d bytes exceeds the limit of %d", n, limit)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return decodeMsg(buf)
}

// writeFrame encodes m as one frame and writes it.
func writeFrame(w io.Writer, m *msg) error {
	b := encodeMsg(make([]byte, 4, 64), m)
	binary.LittleEndian.PutUint32(b, uint32(len(b)-4))
	_, err := w.Write(b)
	return err
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
			m, err := l.recv()
			if err != nil {
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
			l.queued -= msgCost(m)
			l.mu.Unlock()
			if err := writeFrame(l.conn, m); err != nil {
				l.shut()
				return
			}
		}
	}()
}

// send queues m (dropped once the link is closed). A link with a queue
// cap whose queue is full is closed instead: the other end has stopped
// reading, and the queue would otherwise grow with every message.
func (l *link) send(m *msg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	cost := msgCost(m)
	if l.queueCap > 0 && (len(l.queue) >= l.queueCap || l.queued+cost > l.byteCap) {
		l.overflow, l.closed, l.queue = true, true, nil
		l.cond.Broadcast()
		_ = l.conn.Close() // the reader ends, and onEnd runs
		return
	}
	l.queue = append(l.queue, m)
	l.queued += cost
	l.cond.Signal()
}

// msgCost is about the bytes m holds beyond its fixed fields: what a
// queue of them keeps alive.
func msgCost(m *msg) int {
	n := 64 + len(m.Text) + len(m.Seg) + len(m.Nonce) + len(m.Proof)
	for _, s := range m.Segs {
		n += len(s)
	}
	for _, p := range m.Offer.Payload {
		n += 24 + len(p)
	}
	n += descCost(m.Desc)
	for _, d := range m.Descs {
		n += descCost(d)
	}
	return n
}

func descCost(d *opDesc) int {
	if d == nil {
		return 0
	}
	return 64 + 8*(len(d.SendCounts)+len(d.SDispls)+len(d.RecvCounts)+len(d.RDispls))
}

// capQueue bounds the messages, and their bytes, queued for the other
// end.
func (l *link) capQueue(msgs, bytes int) {
	l.mu.Lock()
	l.queueCap, l.byteCap = msgs, bytes
	l.mu.Unlock()
}

// overflowed reports whether the queue cap closed the link.
func (l *link) overflowed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.overflow
}

// sendSync writes m before start, on the caller's goroutine.
func (l *link) sendSync(m *msg) error { return writeFrame(l.conn, m) }

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

// shut closes the connection from inside (error path); the link's
// goroutines end by themselves.
func (l *link) shut() {
	l.mu.Lock()
	l.closed = true
	l.queue = nil
	l.cond.Broadcast()
	l.mu.Unlock()
	_ = l.conn.Close()
}
