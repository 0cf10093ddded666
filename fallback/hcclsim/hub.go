package hcclsim

import (
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// hub is the rendezvous of one root info: it listens on a loopback port
// (the address travels in the root info), admits the ranks, decides whether
// they all live in this process (an in-process world) or not (a
// shared-memory world), and for a shared-memory world relays the small
// control messages for the communicator's life: the arguments of each
// collective, descriptor exchanges, and the news that a rank was lost (its
// connection closed without a goodbye). It runs in the process that called
// GetRootInfo and ends when every rank has left. Safe for concurrent use.
type hub struct {
	id       [16]byte
	dir      string
	ln       net.Listener
	pid      int
	deadline time.Time

	mu         sync.Mutex
	n          int
	members    []*member
	admitted   int
	stage      int
	segs       []string
	pids       []int
	segsGot    int
	mappedGot  int
	phase      int
	joins      map[uint64]*hubJoin
	pending    map[pairKey][]*hubPending
	pairSeq    map[pairKey]uint64
	links      map[*link]bool
	local      *localWorld
	timer      *time.Timer
	done       chan struct{}
	acceptDone chan struct{}
}

const (
	phaseForming = iota
	phaseRunning
	phaseDone
)

type member struct {
	l    *link
	rank int
	bye  bool
}

// hubJoin is one collective's call on the ranks; the hub decides when it
// is abandoned (its first arrival's timeout), so every rank gets the same
// verdict, and keeps it as a tombstone until every rank has come by.
type hubJoin struct {
	descs     []*opDesc
	got       int
	touched   int
	abandoned bool
	timer     *time.Timer
}

// hubPending is one side of a pairing waiting for the other.
type hubPending struct {
	rank  int
	id    uint64
	side  int
	offer pairOffer
	timer *time.Timer
}

// hubs maps world ids to the hubs of this process, so that a rank joining
// from the process that created the root info reaches its hub through an
// in-memory pipe.
var hubs = struct {
	sync.Mutex
	m map[[16]byte]*hub
}{m: make(map[[16]byte]*hub)}

func lookupHub(id [16]byte) *hub {
	hubs.Lock()
	defer hubs.Unlock()
	return hubs.m[id]
}

// startHub listens and admits ranks until the connect timeout.
func startHub(id [16]byte, dir string, connectTimeout time.Duration) (*hub, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errf(codeTCPConnect, "listen on loopback: %v", err)
	}
	h := &hub{id: id, dir: dir, ln: ln, pid: os.Getpid(), deadline: time.Now().Add(connectTimeout),
		joins: make(map[uint64]*hubJoin), pending: make(map[pairKey][]*hubPending), pairSeq: make(map[pairKey]uint64),
		links: make(map[*link]bool), done: make(chan struct{}),
		acceptDone: make(chan struct{})}
	hubs.Lock()
	hubs.m[id] = h
	hubs.Unlock()
	// The timer is set under h.mu: a tiny timeout fires at once, and its
	// callback (which takes h.mu) must find h.timer set when it closes
	// the hub.
	h.mu.Lock()
	h.timer = time.AfterFunc(connectTimeout, func() {
		h.mu.Lock()
		forming := h.phase == phaseForming
		h.mu.Unlock()
		if forming {
			h.fail(errf(codeTimeout, "not all ranks joined within %v", connectTimeout))
		}
	})
	h.mu.Unlock()
	go h.accept()
	return h, nil
}

func (h *hub) addr() string { return h.ln.Addr().String() }

func (h *hub) accept() {
	defer close(h.acceptDone)
	for {
		conn, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.attach(conn)
	}
}

// attach serves one joiner connection.
func (h *hub) attach(conn net.Conn) {
	l := newLink(conn)
	h.mu.Lock()
	if h.phase == phaseDone {
		h.mu.Unlock()
		_ = conn.Close()
		return
	}
	h.links[l] = true
	h.mu.Unlock()
	l.start(func(m *msg) { h.handle(l, m) }, func(err error) { h.lost(l) })
}

// memberOf returns the member of link l (nil before its hello).
func (h *hub) memberOf(l *link) *member {
	for _, m := range h.members {
		if m != nil && m.l == l {
			return m
		}
	}
	return nil
}

func (h *hub) handle(l *link, m *msg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch m.Kind {
	case mHello:
		h.hello(l, m)
	case mSeg:
		if me := h.memberOf(l); me != nil && h.segs[me.rank] == "" {
			h.segs[me.rank] = m.Seg
			h.segsGot++
			if h.segsGot == h.n {
				for _, x := range h.members {
					x.l.send(&msg{Kind: mPeers, Segs: h.segs})
				}
			}
		}
	case mMapped:
		h.mappedGot++
		if h.mappedGot == h.n {
			// Every rank holds every mapping: the names can go.
			for _, s := range h.segs {
				unlinkSegment(h.dir, s)
			}
			h.phase = phaseRunning
			h.timer.Stop()
			_ = h.ln.Close()
			for _, x := range h.members {
				x.l.send(&msg{Kind: mGo})
			}
		}
	case mJoin:
		if me := h.memberOf(l); me != nil && m.Desc != nil {
			h.join(me.rank, m)
		}
	case mPair:
		if me := h.memberOf(l); me != nil {
			h.pair(me.rank, m)
		}
	case mBye:
		if me := h.memberOf(l); me != nil {
			me.bye = true
		}
	}
}

// join records rank's call of collective m.Seq; h.mu held.
func (h *hub) join(rank int, m *msg) {
	j := h.joins[m.Seq]
	if j == nil {
		j = &hubJoin{descs: make([]*opDesc, h.n)}
		h.joins[m.Seq] = j
		seq := m.Seq
		j.timer = time.AfterFunc(m.Timeout, func() { h.abandonJoin(seq, m.Timeout) })
	}
	j.touched++
	if j.abandoned {
		h.members[rank].l.send(&msg{Kind: mJoined, Seq: m.Seq, Code: int32(codeTimeout),
			Text: "the other ranks gave up on this collective before this rank called it"})
		if j.touched >= h.n {
			delete(h.joins, m.Seq)
		}
		return
	}
	if j.descs[rank] == nil {
		j.descs[rank] = m.Desc
		j.got++
	}
	if j.got == h.n {
		j.timer.Stop()
		delete(h.joins, m.Seq)
		for _, x := range h.members {
			if x != nil {
				x.l.send(&msg{Kind: mJoined, Seq: m.Seq, Descs: j.descs})
			}
		}
	}
}

// abandonJoin gives up on collective seq if a rank is still missing.
func (h *hub) abandonJoin(seq uint64, timeout time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	j := h.joins[seq]
	if j == nil || j.got == h.n || j.abandoned {
		return
	}
	j.abandoned = true
	missing := []int{}
	for r, d := range j.descs {
		if d == nil {
			missing = append(missing, r)
		}
	}
	for r, d := range j.descs {
		if d != nil && h.members[r] != nil {
			h.members[r].l.send(&msg{Kind: mJoined, Seq: seq, Code: int32(codeTimeout),
				Text: "ranks " + fmtInts(missing) + " did not call the collective within " + timeout.String()})
		}
	}
	if j.touched >= h.n {
		delete(h.joins, seq)
	}
}

// pair matches rank's pairing request with the oldest waiting one of the
// other side; h.mu held.
func (h *hub) pair(rank int, m *msg) {
	if m.Peer < 0 || m.Peer >= h.n {
		h.members[rank].l.send(&msg{Kind: mPaired, Id: m.Id, Code: int32(codePara), Text: "peer out of range"})
		return
	}
	k, side := keyFor(m.PairKind, rank, m.Peer, m.Side == 0)
	q := h.pending[k]
	if len(q) > 0 && q[0].side != side {
		o := q[0]
		o.timer.Stop()
		if len(q) == 1 {
			delete(h.pending, k)
		} else {
			h.pending[k] = q[1:]
		}
		seq := h.pairSeq[k]
		h.pairSeq[k] = seq + 1
		if h.members[o.rank] != nil {
			h.members[o.rank].l.send(&msg{Kind: mPaired, Id: o.id, PairSeq: seq, Offer: m.Offer})
		}
		h.members[rank].l.send(&msg{Kind: mPaired, Id: m.Id, PairSeq: seq, Offer: o.offer})
		return
	}
	p := &hubPending{rank: rank, id: m.Id, side: side, offer: m.Offer}
	h.pending[k] = append(q, p)
	timeout := m.Timeout
	p.timer = time.AfterFunc(timeout, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		q := h.pending[k]
		for i, x := range q {
			if x == p {
				q = append(q[:i:i], q[i+1:]...)
				if len(q) == 0 {
					delete(h.pending, k)
				} else {
					h.pending[k] = q
				}
				if h.members[rank] != nil {
					h.members[rank].l.send(&msg{Kind: mPaired, Id: p.id, Code: int32(codeTimeout),
						Text: "rank " + itoa(k.other(side)) + " did not arrive within " + timeout.String()})
				}
				return
			}
		}
	})
}

func fmtInts(xs []int) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += itoa(x)
	}
	return s
}

// hello admits a rank; called with h.mu held.
func (h *hub) hello(l *link, m *msg) {
	reject := func(c code, text string) {
		l.send(&msg{Kind: mReject, Code: int32(c), Text: text})
	}
	switch {
	case h.phase != phaseForming:
		reject(codePara, "the communicator of this root info is already formed")
		return
	case h.n != 0 && m.N != h.n:
		reject(codePara, "rank joins with nRanks "+itoa(m.N)+", others with "+itoa(h.n))
		return
	case m.Rank < 0 || m.N <= 0 || m.Rank >= m.N:
		reject(codePara, "rank "+itoa(m.Rank)+" of "+itoa(m.N))
		return
	}
	if h.n == 0 {
		h.n = m.N
		h.members = make([]*member, m.N)
		h.segs = make([]string, m.N)
		h.pids = make([]int, m.N)
		h.stage = m.StageBytes
	}
	if h.members[m.Rank] != nil {
		reject(codePara, "rank "+itoa(m.Rank)+" joined twice")
		return
	}
	h.members[m.Rank] = &member{l: l, rank: m.Rank}
	h.pids[m.Rank] = m.Pid
	h.stage = min(h.stage, m.StageBytes)
	h.admitted++
	if h.admitted < h.n {
		return
	}
	mode := modeLocal
	for _, p := range h.pids {
		if p != h.pid {
			mode = modeShm
		}
	}
	if mode == modeLocal {
		h.local = newLocalWorld(h.n)
	}
	for _, x := range h.members {
		x.l.send(&msg{Kind: mFormed, Mode: mode, StageBytes: h.stage})
	}
	if mode == modeLocal {
		// Nothing more to relay: the ranks close their ends, which ends
		// the hub (lost sees every member gone).
		h.phase = phaseRunning
		h.timer.Stop()
		_ = h.ln.Close()
		for _, x := range h.members {
			x.bye = true
		}
	}
}

// lost runs when a connection ends. A member that leaves without a goodbye
// was lost (killed, crashed): every other rank is told, so their waits end
// now rather than at their timeout.
func (h *hub) lost(l *link) {
	h.mu.Lock()
	delete(h.links, l)
	me := h.memberOf(l)
	if me != nil {
		h.members[me.rank] = nil
		if !me.bye && h.phase != phaseDone {
			for _, x := range h.members {
				if x != nil {
					x.l.send(&msg{Kind: mAbort, Code: int32(codeTimeout), Text: "rank " + itoa(me.rank) + " was lost"})
				}
			}
		}
	}
	empty := len(h.links) == 0
	running := h.phase == phaseRunning
	h.mu.Unlock()
	if empty && running {
		h.close()
	}
}

// fail ends formation: every connected rank gets the error.
func (h *hub) fail(err *simError) {
	h.mu.Lock()
	for l := range h.links {
		l.send(&msg{Kind: mReject, Code: int32(err.code), Text: err.msg})
	}
	h.mu.Unlock()
	h.close()
}

// close stops the hub: listener, connections, leftover segment names.
// Idempotent; never called from a link callback's own goroutine for that
// link's wait (flushClose happens on a fresh goroutine set).
func (h *hub) close() {
	h.mu.Lock()
	if h.phase == phaseDone {
		h.mu.Unlock()
		return
	}
	h.phase = phaseDone
	h.timer.Stop()
	for _, j := range h.joins {
		j.timer.Stop()
	}
	for _, q := range h.pending {
		for _, p := range q {
			p.timer.Stop()
		}
	}
	links := make([]*link, 0, len(h.links))
	for l := range h.links {
		links = append(links, l)
	}
	segs := append([]string(nil), h.segs...)
	h.mu.Unlock()
	_ = h.ln.Close()
	hubs.Lock()
	if hubs.m[h.id] == h {
		delete(hubs.m, h.id)
	}
	hubs.Unlock()
	for _, s := range segs {
		if s != "" {
			unlinkSegment(h.dir, s)
		}
	}
	// Closing links waits for their goroutines, which may be the caller's
	// own (lost runs on a link reader): do it on a goroutine of its own.
	go func() {
		for _, l := range links {
			l.flushClose()
		}
		<-h.acceptDone
		close(h.done)
	}()
}

func itoa(i int) string { return strconv.Itoa(i) }
