package hcclsim

import (
	"sync/atomic"
	"time"
)

// Values of a segment's offDirect word.
const (
	directMapped = 1 // the rank mapped every rank's device memory
	directFailed = 2 // it could not: the communicator stages its data
)

// joinShm sets up a rank of a multi-process communicator: create and map
// its segment under the name the rendezvous assigned (announcing where its
// device memory can be mapped from, under a tag only a holder of the
// world's secret can make), map the peers' segments (names of this world
// only, files of this user only, tags verified) and, if it can, their
// device memory; wait until all are mapped (the rendezvous then unlinks
// every name). The data path is
// direct when every rank mapped every rank's device memory, staged
// otherwise; each rank reads every rank's verdict from the segments after
// the rendezvous said go, so all decide alike.
func (s *Sim) joinShm(l *link, root rootInfo, n, rank int, dev int32, name string, timeout time.Duration, stage int,
	segName string, fail func(error) (*comm, error)) (*comm, error) {
	lay := layoutFor(n, stage)
	own, err := createSegment(s.opts.ShmDir, segName, lay)
	if err != nil {
		// Say why before leaving, so that every rank fails with the same
		// HCCL_E_SYSCALL (not the news that this rank was lost).
		serr := errf(codeSyscall, "%v", err)
		_ = l.sendSync(&msg{Kind: mSeg, Code: int32(codeSyscall), Text: clip(serr.msg, maxReasonBytes)})
		return fail(serr)
	}
	// Peers' segments are mapped from here on: a fault in one (a
	// truncated file) fails this rank's init, as does any other error.
	var c *comm
	cleanup := func() {}
	ferr, faulted := catchFault("communicator initialisation", func() error {
		c, err = s.joinShmMapped(l, root, n, rank, dev, name, timeout, lay, own, segName, &cleanup, fail)
		return nil
	})
	if faulted {
		cleanup()
		return fail(ferr)
	}
	return c, err
}

// maxReasonBytes bounds the reason a rank gives the rendezvous for failing
// to create its segment.
const maxReasonBytes = 512

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// joinShmMapped is joinShm once its own segment exists; *cleanup undoes
// what it has mapped so far (for a fault).
func (s *Sim) joinShmMapped(l *link, root rootInfo, n, rank int, dev int32, name string, timeout time.Duration, lay segLayout,
	own *segment, segName string, cleanupOut *func(), fail func(error) (*comm, error)) (*comm, error) {
	publishMem(own, s.env, dev)
	copy(own.tag(), root.secret.segTag(rank, segName, announcedMem(own)))
	segs := make([]*segment, n)
	var peers []peerMem
	cleanup := func() {
		unlinkSegment(s.opts.ShmDir, segName)
		unmapPeers(peers)
		for _, sg := range segs {
			if sg != own {
				sg.unmap()
			}
		}
		own.unmap()
	}
	*cleanupOut = cleanup
	if err := l.sendSync(&msg{Kind: mSeg}); err != nil {
		cleanup()
		return fail(err)
	}
	m, err := l.recv()
	if err == nil {
		err = refusal(m)
	}
	if err == nil && (m.Kind != mPeers || len(m.Segs) != n) {
		err = errf(codeInternal, "rendezvous: unexpected message %d", m.Kind)
	}
	for k := 0; err == nil && k < n; k++ {
		if !validSegName(root.id, k, m.Segs[k]) || (k == rank && m.Segs[k] != segName) {
			err = errf(codeInternal, "rendezvous: segment name %q for rank %d is not one of this world", m.Segs[k], k)
		}
	}
	if err != nil {
		cleanup()
		return fail(err)
	}
	for k, nm := range m.Segs {
		if k == rank {
			segs[k] = own
			continue
		}
		if segs[k], err = openSegment(s.opts.ShmDir, nm, lay); err != nil {
			cleanup()
			return fail(errf(codeSyscall, "%v", err))
		}
		// The segment was made by a rank of this world and says what
		// that rank wrote: nothing in it is used otherwise.
		if !verify(segs[k].tag(), root.secret.segTag(k, nm, announcedMem(segs[k]))) {
			cleanup()
			return fail(errf(codeRemote, "the segment of rank %d was not written by a rank of this world", k))
		}
	}
	// A rank that cannot map its peers (memory not shareable, /proc not
	// permitted) is no error: the communicator stages its data.
	// A rank whose own memory cannot be mapped stages too, so a world is
	// direct only when every rank's memory is shared (a one-rank world
	// included).
	verdict := uint32(directFailed)
	if peers, err = mapPeers(segs, rank); err == nil && shareable(announcedMem(own)) {
		verdict = directMapped
	}
	atomic.StoreUint32(own.word(offDirect), verdict)
	if err := l.sendSync(&msg{Kind: mMapped}); err != nil {
		cleanup()
		return fail(err)
	}
	m, err = l.recv()
	if err == nil {
		err = refusal(m)
	}
	if err == nil && m.Kind != mGo {
		err = errf(codeInternal, "rendezvous: unexpected message %d", m.Kind)
	}
	if err != nil {
		cleanup()
		return fail(err)
	}
	// The rendezvous unlinked every name; ours again in case it could not.
	unlinkSegment(s.opts.ShmDir, segName)
	_ = l.conn.SetDeadline(time.Time{})
	// Every rank wrote its verdict before it reported mapped, and the go
	// comes after every report.
	direct := true
	for _, sg := range segs {
		direct = direct && atomic.LoadUint32(sg.word(offDirect)) == directMapped
	}
	if !direct {
		unmapPeers(peers)
		peers = nil
	}
	w := newShmWorld(s, n, rank, own, segs, l)
	w.peers = peers
	c := s.newComm(w, root.id, n, rank, dev, name, timeout)
	w.start(c)
	return c, nil
}
