package hcclsim

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/ascend-go/cann/hccl"
)

// getRootInfo starts a rendezvous and returns its root info.
func (s *Sim) getRootInfo() ([rootInfoBytes]byte, error) {
	if s == nil {
		return [rootInfoBytes]byte{}, hccl.NilHandle("HcclGetRootInfo", "hcclsim.Sim")
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return [rootInfoBytes]byte{}, errf(codePara, "backend closed")
	}
	id, secret := newWorldID(), newSecret()
	h, err := startHub(id, secret, s.opts.ShmDir, s.opts.ConnectTimeout)
	if err != nil {
		return [rootInfoBytes]byte{}, err
	}
	s.mu.Lock()
	// Forget hubs that have ended, keep the live ones for Close.
	live := s.hubs[:0]
	for _, x := range s.hubs {
		select {
		case <-x.done:
		default:
			live = append(live, x)
		}
	}
	s.hubs = append(live, h)
	s.mu.Unlock()
	return rootInfo{id: id, pid: os.Getpid(), secret: secret, addr: h.addr()}.encode(), nil
}

// joinWorld is CommInitRootInfo: it reaches the rendezvous of root (an
// in-memory pipe when the rendezvous runs in this process, loopback TCP
// otherwise), proves it holds the root info (auth.go) and checks that the
// rendezvous does too, waits until all n ranks are in, and sets up the
// transport the rendezvous chose.
func (s *Sim) joinWorld(n, rank int, raw []byte, dev int32, name string, timeout time.Duration, stage int) (*comm, error) {
	root, ok := decodeRootInfo(raw)
	if !ok {
		return nil, errf(codePara, "root info was not produced by this backend's GetRootInfo")
	}
	deadline := time.Now().Add(s.opts.ConnectTimeout)
	var conn net.Conn
	h := lookupHub(root.id)
	if h != nil && root.pid == os.Getpid() {
		a, b := net.Pipe()
		h.attach(b, true)
		conn = a
	} else {
		if root.pid == os.Getpid() {
			return nil, errf(codePara, "root info of a rendezvous that has ended")
		}
		var err error
		for {
			conn, err = net.DialTimeout("tcp", root.addr, time.Until(deadline))
			if err == nil {
				break
			}
			// Refused: nothing listens there any more (the world formed or
			// failed); waiting would not change that.
			if time.Now().After(deadline) || errors.Is(err, syscall.ECONNREFUSED) {
				return nil, errf(codeTCPConnect, "connect to the rendezvous at %s: %v", root.addr, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	_ = conn.SetDeadline(deadline)
	l := newLink(conn)
	fail := func(err error) (*comm, error) {
		l.flushClose()
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return nil, errf(codeTimeout, "not all %d ranks joined within %v", n, s.opts.ConnectTimeout)
		}
		if _, ok := err.(*simError); !ok {
			return nil, errf(codeTimeout, "rendezvous: %v", err)
		}
		return nil, err
	}
	m, err := l.recv()
	if err != nil {
		return fail(err)
	}
	if err := refusal(m); err != nil {
		return fail(err)
	}
	if m.Kind != mChallenge || len(m.Nonce) != nonceBytes {
		return fail(errf(codeTCPConnect, "%s is not a rendezvous of this backend", root.addr))
	}
	hubNonce, nonce := m.Nonce, newNonce()
	// The longest wait this rank's collectives ask of the rendezvous: it
	// bounds, with the other ranks', how long the rendezvous keeps a
	// collective's arrivals (hub.clamp).
	hello := &msg{Kind: mHello, N: n, Rank: rank, Pid: os.Getpid(), StageBytes: stage, Timeout: max(timeout, s.opts.ConnectTimeout),
		Nonce: nonce, Proof: root.secret.helloProof(hubNonce, nonce, n, rank)}
	if err := l.sendSync(hello); err != nil {
		return fail(err)
	}
	if m, err = l.recv(); err != nil {
		return fail(err)
	}
	if err := refusal(m); err != nil {
		return fail(err)
	}
	if m.Kind != mFormed || !verify(m.Proof, root.secret.formedProof(hubNonce, nonce, m.Mode, m.StageBytes, m.Seg)) {
		return fail(errf(codeTCPConnect, "the rendezvous at %s does not hold this root info", root.addr))
	}
	// From here on the other end is the world's rendezvous.
	l.setLimit(maxFrame)
	if m.Mode == modeLocal {
		if h == nil || h.local == nil {
			return fail(errf(codeInternal, "rendezvous: an in-process world for a rank in another process"))
		}
		// Every rank is in this process: data moves directly.
		w := h.local
		l.flushClose()
		c := s.newComm(w, root.id, n, rank, dev, name, timeout)
		w.mu.Lock()
		w.comms[rank] = c
		w.mu.Unlock()
		return c, nil
	}
	if m.Mode != modeShm || m.StageBytes < minStageBytes || m.StageBytes > maxStageBytes || m.StageBytes%4096 != 0 ||
		!validSegName(root.id, rank, m.Seg) {
		return fail(errf(codeInternal, "rendezvous: malformed admission"))
	}
	return s.joinShm(l, root, n, rank, dev, name, timeout, m.StageBytes, m.Seg, fail)
}

// refusal turns the hub's refusal of an init (mReject) or its abort of the
// forming communicator because a rank was lost (mAbort) into the error the
// hub names; other messages give nil.
func refusal(m *msg) error {
	if m.Kind == mReject || m.Kind == mAbort {
		return errf(code(m.Code), "%s", m.Text)
	}
	return nil
}
