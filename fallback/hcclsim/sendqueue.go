package hcclsim

import (
	"sync"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// Send queues of one-sided reads, per channel, as the device has them.
//
// A device kernel that reads one-sidedly (Engram's fetch) posts work
// requests on the send queue of a channel (one of several per peer); a
// request stays in the queue until the channel is drained, and a drain
// completes only on a request that asked for a completion (CQE). The
// queue holds HCOMM_SQ_MAX_PENDING = 32767 requests
// (hicann/ops-transformer mc2/engram_fetch/op_kernel/engram_fetch_utils.h);
// posting one more overflows it, which on the device is a fatal stream
// error. BatchGetPosted and DrainSendQueues let a host-driven model of
// such a kernel post through this accounting, so that a kernel bug that
// overflows a queue (seed 003: one in-flight counter shared by the
// channels of a core) fails here as it would on the device.

// SQDepth is the depth of one channel's send queue.
const SQDepth = 32767

// Wire word of a posted read (BatchGetPosted): bit 0 asks for a
// completion, bit 1 drains the channel after the read, bit 2 commits the
// batch (counted only), bits 8.. the channel index.
const (
	PostSignal       = 1 << 0
	PostDrain        = 1 << 1
	PostCommit       = 1 << 2
	PostChannelShift = 8
)

type sqKey struct{ peer, ch uint32 }

type sqChan struct {
	n      int  // requests posted since the last drain
	signal bool // the last request asked for a completion
}

// sendQueues is a communicator's send-queue state (call-time accounting:
// one host thread posts a kernel's requests in order).
type sendQueues struct {
	mu sync.Mutex
	q  map[sqKey]*sqChan
}

func (s *sendQueues) post(peer uint32, posts []uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.q == nil {
		s.q = map[sqKey]*sqChan{}
	}
	var (
		k  sqKey
		q  *sqChan
		ok bool
	)
	for i, w := range posts {
		// Posts come in runs per channel: look the queue up on a change.
		if nk := (sqKey{peer, w >> PostChannelShift}); !ok || nk != k {
			k, ok = nk, true
			if q = s.q[k]; q == nil {
				q = &sqChan{}
				s.q[k] = q
			}
		}
		q.n++
		q.signal = w&PostSignal != 0
		if q.n > SQDepth {
			return errf(codeInternal, "send queue of channel %d to rank %d overflowed at request %d: %d requests posted since its last drain, depth %d",
				k.ch, peer, i, q.n, SQDepth)
		}
		if w&PostDrain != 0 {
			if !q.signal {
				return errf(codeInternal, "drain of channel %d to rank %d after request %d, which asked for no completion: the drain would never finish", k.ch, peer, i)
			}
			q.n = 0
		}
	}
	return nil
}

func (s *sendQueues) drainAll() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	for k, q := range s.q {
		if q.n > 0 && !q.signal && err == nil {
			err = errf(codeInternal, "drain of channel %d to rank %d: its last of %d requests asked for no completion, the drain would never finish", k.ch, k.peer, q.n)
		}
		q.n, q.signal = 0, false
	}
	return err
}

// BatchGetPosted is BatchGet whose descriptors are posted on send queues:
// posts[i] is the wire word of descs[i] (channel and flags). The requests
// are accounted per (peer, channel); an overflow, or a drain after a
// request that asked for no completion, fails the stream (the transfer is
// not made) with HCCL_E_INTERNAL.
func (s *Sim) BatchGetPosted(h hccl.CommHandle, remoteRank uint32, descs []hccl.OneSideOpDesc, posts []uint32, st acl.StreamHandle) error {
	const op = "HcclBatchGet"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if len(posts) != len(descs) {
		return hccl.Errorf(op, hccl.EPara, "%d send-queue words for %d descriptors", len(posts), len(descs))
	}
	if len(descs) > hccl.MaxOneSideDescs {
		// Refused before the queues count the posts, as BatchGet refuses it.
		return hccl.Errorf(op, hccl.EPara, "%d descriptors: at most %d per batch", len(descs), hccl.MaxOneSideDescs)
	}
	if int(remoteRank) >= c.n {
		return hccl.Errorf(op, hccl.EPara, "remote rank %d (this rank %d of %d)", remoteRank, c.rank, c.n)
	}
	if err := c.sq.post(remoteRank, posts); err != nil {
		return s.failStream(c, op, st, err)
	}
	return s.BatchGet(h, remoteRank, descs, st)
}

// DrainSendQueues drains every channel of the communicator (the wait
// kernel of a fetch); a channel whose last request asked for no
// completion fails the stream.
func (s *Sim) DrainSendQueues(h hccl.CommHandle, st acl.StreamHandle) error {
	const op = "HcclDrain"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if err := c.sq.drainAll(); err != nil {
		return s.failStream(c, op, st, err)
	}
	return nil
}

// failStream queues a task that fails the stream with err, as a device
// error surfaces at the stream's synchronisation.
func (s *Sim) failStream(c *comm, op string, st acl.StreamHandle, err error) error {
	c.fail(err)
	herr := herr(op, err)
	_, qerr := s.env.enqueue(c.dev, st, func() error { return herr })
	return qerr
}
