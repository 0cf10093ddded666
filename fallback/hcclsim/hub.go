package hcclsim

import (
	"errors"
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
//
// Nothing a connection sends is trusted before the connection has proved
// it holds the root info's secret (auth.go): until then it may send one
// small hello within helloWait, and a connection that sends anything else
// is dropped. A member that breaks the protocol (a message of the wrong
// kind or phase, a value out of range) is dropped too, and the world
// learns it was lost. The hub never takes a file name or an address from a
// peer: it assigns the segment names itself (segment.go).
type hub struct {
	id       [16]byte
	secret   worldSecret
	dir      string
	ln       net.Listener
	pid      int
	deadline time.Time

	mu         sync.Mutex
	n          int
	members    []*member
	live       int // members still connected
	admitted   int
	stage      int
	segs       []string // names the hub assigned, by rank
	formed     bool     // every rank admitted; mFormed sent
	failing    bool     // formation failed: nothing more is handled
	segsGot    int
	mappedGot  int
	phase      int
	joins      map[uint64]*hubJoin
	seqBase    uint64          // every collective below it is over (completed or abandoned)
	over       map[uint64]bool // collectives at or above seqBase that are over
	waitCap    time.Duration   // the shortest longest-wait a rank stated (clamp)
	pending    map[pairKey][]*hubPending
	pairSeq    map[pairKey]uint64
	links      map[*link]*hubConn
	strangers  int // connections not yet admitted
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

// Bounds on what a joiner may ask for. maxWorldRanks keeps every per-rank
// table and the largest control frame small (wire.go); it is the
// fallback's own limit, not the device's. maxStrangers bounds connections
// that have not proved anything yet; helloWait is how long one may take.
const (
	maxWorldRanks = 512
	maxStrangers  = 64
	helloWait     = 10 * time.Second
	minStageBytes = 64 << 10
	maxStageBytes = 16 << 30
	maxPid        = 1 << 22 // the kernel's PID_MAX_LIMIT
)

// hubConn is the hub's state of one connection.
type hubConn struct {
	nonce []byte // the challenge sent on it
	local bool   // an in-memory pipe from this process
	m     *member
}

type member struct {
	l        *link
	joins    int // open collectives it joined
	pairs    int // its pairings waiting for a partner
	payload  int // their offers' payload bytes
	rank     int
	pid      int
	local    bool
	bye      bool
	segDone  bool
	mapped   bool
	violated string // why the hub dropped it
	hubNonce []byte
	nonce    []byte
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
	bytes int // the offer's payload
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
func startHub(id [16]byte, secret worldSecret, dir string, connectTimeout time.Duration) (*hub, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errf(codeTCPConnect, "listen on loopback: %v", err)
	}
	return newHub(id, secret, dir, ln, connectTimeout), nil
}

// newHub serves the rendezvous on ln.
func newHub(id [16]byte, secret worldSecret, dir string, ln net.Listener, connectTimeout time.Duration) *hub {
	h := &hub{id: id, secret: secret, dir: dir, ln: ln, pid: os.Getpid(), deadline: time.Now().Add(connectTimeout),
		joins: make(map[uint64]*hubJoin), over: make(map[uint64]bool), pending: make(map[pairKey][]*hubPending), pairSeq: make(map[pairKey]uint64),
		links: make(map[*link]*hubConn), done: make(chan struct{}),
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
	return h
}

func (h *hub) addr() string { return h.ln.Addr().String() }

// accept admits connections until the listener closes. Other Accept
// errors (out of file descriptors, a connection aborted before it was
// accepted) are transient: back off and keep serving.
func (h *hub) accept() {
	defer close(h.acceptDone)
	var delay time.Duration
	for {
		conn, err := h.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
			continue
		}
		delay = 0
		h.attach(conn, false)
	}
}

// attach serves one joiner connection (local: an in-memory pipe from this
// process). It sends the challenge; the joiner has helloWait to answer.
func (h *hub) attach(conn net.Conn, local bool) {
	l := newLink(conn)
	hc := &hubConn{nonce: newNonce(), local: local}
	h.mu.Lock()
	// A running world still answers a pipe from this process (a late
	// joiner learns it is formed); TCP no longer reaches it.
	if h.phase == phaseDone || h.strangers >= maxStrangers {
		h.mu.Unlock()
		_ = conn.Close()
		return
	}
	h.links[l] = hc
	h.strangers++
	h.mu.Unlock()
	_ = conn.SetReadDeadline(time.Now().Add(helloWait))
	l.send(&msg{Kind: mChallenge, Nonce: hc.nonce})
	l.start(func(m *msg) { h.handle(l, m) }, func(err error) { h.lost(l) })
}

// drop refuses a connection: it gets the reason, then is closed. h.mu held.
func (h *hub) drop(l *link, c code, text string) {
	l.send(&msg{Kind: mReject, Code: int32(c), Text: text})
	go l.flushClose() // not on l's own reader, which flushClose waits for
}

// violation drops member me for breaking the protocol; lost tells the
// others. h.mu held.
func (h *hub) violation(me *member, why string) {
	me.violated = why
	me.l.shut()
}

func (h *hub) handle(l *link, m *msg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hc := h.links[l]
	if hc == nil || h.failing {
		return // already dropped, or the world is failing
	}
	me := hc.m
	if me == nil {
		if m.Kind != mHello {
			l.shut() // a stranger gets no answer
			return
		}
		h.hello(l, hc, m)
		return
	}
	switch {
	case m.Kind == mSeg && m.Code != 0 && h.formed && h.phase == phaseForming && !me.segDone:
		// The rank could not create its segment (a full shared-memory
		// directory): every rank fails with HCCL_E_SYSCALL, whatever code
		// the rank named.
		h.failing = true
		text := "rank " + itoa(me.rank) + " could not create its shared-memory segment: " + clip(m.Text, maxReasonBytes)
		for l := range h.links {
			l.send(&msg{Kind: mReject, Code: int32(codeSyscall), Text: text})
		}
		go h.close()
	case m.Kind == mSeg && h.formed && h.phase == phaseForming && !me.segDone:
		me.segDone = true
		h.segsGot++
		if h.segsGot == h.n {
			for _, x := range h.members {
				if x != nil {
					x.l.send(&msg{Kind: mPeers, Segs: h.segs})
				}
			}
		}
	case m.Kind == mMapped && h.segsGot == h.n && h.phase == phaseForming && !me.mapped:
		me.mapped = true
		h.mappedGot++
		if h.mappedGot == h.n {
			// Every rank holds every mapping: the names can go.
			for _, s := range h.segs {
				unlinkSegment(h.dir, s)
			}
			h.running()
			for _, x := range h.members {
				if x != nil {
					x.l.send(&msg{Kind: mGo})
				}
			}
		}
	case m.Kind == mJoin && h.phase == phaseRunning:
		if err := checkDesc(m.Desc, h.n); err != nil {
			h.violation(me, "collective arguments: "+err.Error())
		} else if m.Timeout <= 0 {
			h.violation(me, "collective timeout "+m.Timeout.String())
		} else {
			h.join(me.rank, m)
		}
	case m.Kind == mPair && h.phase == phaseRunning:
		if why := badPairing(m, h.n); why != "" {
			h.violation(me, "pairing request: "+why)
		} else {
			h.pair(me.rank, m)
		}
	case m.Kind == mBye:
		me.bye = true
	default:
		h.violation(me, "unexpected message of kind "+itoa(int(m.Kind)))
	}
}

// running ends formation: no one else can join, and connections that never
// became members are dropped. h.mu held.
func (h *hub) running() {
	h.phase = phaseRunning
	h.timer.Stop()
	_ = h.ln.Close()
	for l, hc := range h.links {
		if hc.m == nil {
			l.shut()
		}
	}
}

// join records rank's call of collective m.Seq; h.mu held.
func (h *hub) join(rank int, m *msg) {
	me := h.members[rank]
	j := h.joins[m.Seq]
	if (j == nil || !j.abandoned && j.descs[rank] == nil) && me.joins >= maxOpenJoins {
		h.violation(me, "more than "+itoa(maxOpenJoins)+" open collectives")
		return
	}
	if j == nil {
		switch {
		case m.Seq < h.seqBase || h.over[m.Seq]:
			h.violation(me, "collective "+utoa(m.Seq)+" is over and every rank came by")
			return
		case m.Seq-h.seqBase >= seqWindow:
			h.violation(me, "collective "+utoa(m.Seq)+" is beyond the window ["+utoa(h.seqBase)+", +"+itoa(seqWindow)+")")
			return
		}
		j = &hubJoin{descs: make([]*opDesc, h.n)}
		h.joins[m.Seq] = j
		seq, timeout := m.Seq, h.clamp(m.Timeout)
		j.timer = time.AfterFunc(timeout, func() { h.abandonJoin(seq, timeout) })
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
		me.joins++
	}
	if j.got == h.n {
		j.timer.Stop()
		delete(h.joins, m.Seq)
		h.joinOver(m.Seq, j)
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
	h.joinOver(seq, j)
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
	me := h.members[rank]
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
		h.unpend(o)
		seq := h.pairSeq[k]
		h.pairSeq[k] = seq + 1
		if h.members[o.rank] != nil {
			h.members[o.rank].l.send(&msg{Kind: mPaired, Id: o.id, PairSeq: seq, Offer: m.Offer})
		}
		h.members[rank].l.send(&msg{Kind: mPaired, Id: m.Id, PairSeq: seq, Offer: o.offer})
		return
	}
	p := &hubPending{rank: rank, id: m.Id, side: side, offer: m.Offer, bytes: payloadBytes(m.Offer)}
	if me.pairs >= maxPendingPairs || me.payload+p.bytes > maxPendingPayload {
		h.violation(me, "more than "+itoa(maxPendingPairs)+" pairings or "+itoa(maxPendingPayload)+" bytes of offers waiting")
		return
	}
	me.pairs++
	me.payload += p.bytes
	h.pending[k] = append(q, p)
	timeout := m.Timeout
	if m.PairKind != pairXchg {
		// A Send/Recv or a window waits as a collective does; an
		// exchange waits as long as its caller asked (seconds, or
		// never), and maxPendingPairs bounds how many do.
		timeout = h.clamp(timeout)
	}
	p.timer = time.AfterFunc(timeout, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		q := h.pending[k]
		for i, x := range q {
			if x == p {
				h.unpend(p)
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

func utoa(u uint64) string { return strconv.FormatUint(u, 10) }

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

// hello admits a rank; called with h.mu held. The proof is checked before
// anything else the hello says is looked at.
func (h *hub) hello(l *link, hc *hubConn, m *msg) {
	if len(m.Nonce) != nonceBytes || !verify(m.Proof, h.secret.helloProof(hc.nonce, m.Nonce, m.N, m.Rank)) {
		h.drop(l, codePara, "the root info does not admit this rank (not the secret of this world)")
		return
	}
	switch {
	case h.phase != phaseForming || h.formed:
		h.drop(l, codePara, "the communicator of this root info is already formed")
		return
	case m.N <= 0 || m.N > maxWorldRanks:
		h.drop(l, codePara, "nRanks "+itoa(m.N)+" (this backend forms at most "+itoa(maxWorldRanks)+" ranks)")
		return
	case h.n != 0 && m.N != h.n:
		h.abortInit(l, "rank "+itoa(m.Rank)+" joins with nRanks "+itoa(m.N)+", others with "+itoa(h.n))
		return
	case m.Rank < 0 || m.Rank >= m.N:
		h.drop(l, codePara, "rank "+itoa(m.Rank)+" of "+itoa(m.N))
		return
	case m.Pid <= 0 || m.Pid > maxPid:
		h.drop(l, codePara, "pid "+itoa(m.Pid))
		return
	case m.StageBytes < minStageBytes || m.StageBytes > maxStageBytes || m.StageBytes%4096 != 0:
		h.drop(l, codePara, "staging size "+itoa(m.StageBytes))
		return
	case m.Timeout < 0:
		h.drop(l, codePara, "timeout "+m.Timeout.String())
		return
	}
	if h.n == 0 {
		h.n = m.N
		h.members = make([]*member, m.N)
		h.segs = make([]string, m.N)
		h.stage = m.StageBytes
	}
	if h.members[m.Rank] != nil {
		h.abortInit(l, "rank "+itoa(m.Rank)+" joined twice")
		return
	}
	me := &member{l: l, rank: m.Rank, pid: m.Pid, local: hc.local, hubNonce: hc.nonce, nonce: m.Nonce}
	hc.m = me
	h.strangers--
	h.members[m.Rank] = me
	h.live++
	_ = l.conn.SetReadDeadline(time.Time{})
	l.setLimit(maxRankFrame)
	l.capQueue(maxQueued, maxQueuedBytes)
	h.stage = min(h.stage, m.StageBytes)
	if m.Timeout > 0 && (h.waitCap == 0 || m.Timeout < h.waitCap) { // 0: not stated
		h.waitCap = m.Timeout
	}
	h.admitted++
	if h.admitted < h.n {
		return
	}
	h.formed = true
	// An in-process world only when every rank came through this
	// process's pipe: a pid is a peer's word, a pipe is not.
	mode := modeLocal
	for _, x := range h.members {
		if !x.local {
			mode = modeShm
		}
	}
	if mode == modeLocal {
		h.local = newLocalWorld(h.n)
	}
	for _, x := range h.members {
		seg := ""
		if mode == modeShm {
			seg = segName(h.id, x.rank, x.pid)
			h.segs[x.rank] = seg
		}
		x.l.send(&msg{Kind: mFormed, Mode: mode, StageBytes: h.stage, Seg: seg,
			Proof: h.secret.formedProof(x.hubNonce, x.nonce, mode, h.stage, seg)})
	}
	if mode == modeLocal {
		// Nothing more to relay: the ranks close their ends, which ends
		// the hub (lost sees every member gone).
		h.running()
		for _, x := range h.members {
			x.bye = true
		}
	}
}

// abortInit fails the world's formation because a joiner that holds the
// secret disagrees with the ranks admitted before it (a rank id already
// taken, another nRanks). The device's root server accepts a joiner's
// socket, finds its agent id already connected
// (topoinfo_exchange_server.cc:490-496) or its rank count different from
// the others' (VerifyRemoteRankNum, :640-652), and returns HCCL_E_INTERNAL
// from its setup; the root's init reports that failure
// (topoinfo_detect.cc:458-460, WaitTopoExchangeServerCompelte) and the
// server closes every agent's socket and stops listening
// (topoinfo_exchange_server.cc:132-135), so the other ranks fail on their
// sockets. Here every admitted rank and the joiner get HCCL_E_INTERNAL
// with the reason; a rank arriving later finds nothing listening
// (HCCL_E_TCP_CONNECT). A stranger without the secret never gets here:
// hello drops it before it can claim anything. h.mu held.
func (h *hub) abortInit(l *link, why string) {
	h.failing = true
	text := "the root aborted the communicator's initialisation: " + why
	for _, x := range h.members {
		if x != nil {
			x.l.send(&msg{Kind: mReject, Code: int32(codeInternal), Text: text})
		}
	}
	l.send(&msg{Kind: mReject, Code: int32(codeInternal), Text: text})
	go h.close() // takes h.mu; closes every link after sending what is queued
}

// lost runs when a connection ends. A member that leaves without a goodbye
// was lost (killed, crashed, or dropped for breaking the protocol): every
// other rank is told, so their waits end now rather than at their timeout.
// A member lost while the world forms fails the world. The hub ends when
// its last member has left.
func (h *hub) lost(l *link) {
	h.mu.Lock()
	hc := h.links[l]
	delete(h.links, l)
	var formErr *simError
	if hc != nil && hc.m == nil {
		h.strangers--
	}
	if hc != nil && hc.m != nil {
		me := hc.m
		h.members[me.rank] = nil
		h.live--
		c, text := codeTimeout, "rank "+itoa(me.rank)+" was lost"
		if me.violated == "" && l.overflowed() {
			me.violated = "it stopped reading the rendezvous's messages"
		}
		if me.violated != "" {
			c, text = codeRemote, "rank "+itoa(me.rank)+" broke the rendezvous protocol ("+me.violated+")"
		}
		switch {
		case h.phase == phaseForming && !h.failing:
			formErr = errf(c, "%s before the communicator formed", text)
			h.failing = true
		case !me.bye && h.phase == phaseRunning:
			for _, x := range h.members {
				if x != nil {
					x.l.send(&msg{Kind: mAbort, Code: int32(c), Text: text})
				}
			}
		}
	}
	finished := h.phase == phaseRunning && h.live == 0
	h.mu.Unlock()
	switch {
	case formErr != nil:
		h.fail(formErr)
	case finished:
		h.close()
	}
}

// fail ends formation: every connected rank gets the error.
func (h *hub) fail(err *simError) {
	h.mu.Lock()
	h.failing = true
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
