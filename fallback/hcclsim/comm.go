package hcclsim

import (
	"sync"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// transport moves a communicator's data: directly between the device
// memories of ranks in one process (localWorld), or through shared-memory
// segments between processes (shmWorld).
type transport interface {
	// join is the call-time half of a collective: it exchanges the
	// descriptors of collective seq among all ranks and returns them by
	// rank. It blocks until every rank has called (or the deadline).
	join(c *comm, seq uint64, d *opDesc, deadline time.Time) ([]*opDesc, error)
	// collective is the data phase, run on the rank's stream. bufs holds
	// this rank's views (or the error that prevented taking them, which the
	// transport reports to the peers so that none waits for this rank).
	collective(c *comm, seq uint64, ds []*opDesc, bufs opBufs, deadline time.Time) error
	// p2p runs a group of sends and receives on the stream; all items make
	// progress together, so a batch never deadlocks on its own order.
	p2p(c *comm, items []p2pItem, deadline time.Time) error
	// exchangeDescs swaps registration descriptors with peer (ExchangeMemDesc).
	exchangeDescs(c *comm, peer int, seq uint64, local [][]byte, deadline time.Time) ([][]byte, error)
	// oneSided runs the transfers of a BatchGet (get) or BatchPut to peer.
	oneSided(c *comm, peer int, get bool, xs []xfer, deadline time.Time) error
	// close releases the rank's share of the transport (idempotent).
	close(c *comm)
}

// opBufs are one rank's views of its buffers for a collective.
type opBufs struct {
	send, recv []byte
	err        error
}

// p2pItem is one send or receive of a Send, Recv or BatchSendRecv.
type p2pItem struct {
	send  bool
	peer  int
	seq   uint64 // per ordered pair, in call order
	count uint64
	dt    dtype
	ptr   unsafe.Pointer
	view  []byte // taken on the stream
	err   error  // view failure, reported to the peer
}

// xfer is one BatchGet/BatchPut transfer: local bytes and the remote
// address range (in the owner's address space).
type xfer struct {
	local  []byte
	remote uintptr
	n      uint64
	lptr   unsafe.Pointer
}

// comm is one rank of a communicator. Its methods are safe for concurrent
// use; calls of one collective sequence must come in the same order on every
// rank (the HCCL rule).
type comm struct {
	sim     *Sim
	handle  uintptr
	rank, n int
	dev     int32
	name    string
	timeout time.Duration
	tr      transport

	mu        sync.Mutex
	nextSeq   uint64   // collectives issued at call time
	sendSeq   []uint64 // per peer, sends issued
	recvSeq   []uint64 // per peer, receives issued
	xchgSeq   []uint64 // per peer, descriptor exchanges
	lastDone  chan struct{}
	asyncErr  code
	broken    error // sticky: a rank was lost or timed out
	destroyed bool
	inflight  sync.WaitGroup
	execMu    sync.Mutex // serialises data phases that use the rank's staging memory

	os oneSidedState
}

// deadline is the end of a wait that starts now.
func (c *comm) deadline() time.Time { return time.Now().Add(c.timeout) }

// check fails when the communicator can no longer run operations.
func (c *comm) check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.destroyed {
		return errf(codePara, "communicator destroyed")
	}
	return c.broken
}

// fail records a failure of asynchronous work (HcclGetCommAsyncError);
// timeouts and lost ranks also break the communicator for good, as on the
// device.
func (c *comm) fail(err error) {
	if err == nil {
		return
	}
	c.mu.Lock()
	if c.asyncErr == codeSuccess {
		c.asyncErr = codeOf(err)
	}
	c.mu.Unlock()
	if k := codeOf(err); k == codeTimeout || k == codeRemote || k == codeTCPXfer {
		c.breakWith(err)
	}
}

// breakWith makes every later operation fail with err.
func (c *comm) breakWith(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == nil {
		c.broken = err
	}
}

// runCollective is the common path of every collective call (local
// argument checks are the caller's): the data phase is queued on the
// stream first, so a bad stream fails before the sequence number is taken
// and before any peer waits; then the ranks agree at the call (HCCL_E_PARA
// on every rank if they do not), and the call returns once all have
// joined, leaving the data phase to the stream.
func (c *comm) runCollective(s acl.StreamHandle, d *opDesc, send, recv unsafe.Pointer, sendBytes, recvBytes uint64) error {
	if err := c.check(); err != nil {
		return err
	}
	type joined struct {
		seq        uint64
		ds         []*opDesc
		prev, done chan struct{}
		err        error
	}
	result := make(chan joined, 1)
	c.inflight.Add(1)
	task := func() error {
		defer c.inflight.Done()
		j := <-result
		if j.err != nil {
			close(j.done)
			return nil // the call already reported it
		}
		defer close(j.done)
		deadline := c.deadline()
		if j.prev != nil {
			// Data phases of one communicator run in call order on each rank.
			t := time.NewTimer(time.Until(deadline))
			select {
			case <-j.prev:
				t.Stop()
			case <-t.C:
				err := errf(codeTimeout, "%v: the previous collective did not finish", d.Kind)
				c.fail(err)
				return err
			}
		}
		bufs := opBufs{}
		bufs.send, bufs.err = c.view(send, sendBytes)
		if bufs.err == nil {
			bufs.recv, bufs.err = c.view(recv, recvBytes)
		}
		c.execMu.Lock()
		err := c.tr.collective(c, j.seq, j.ds, bufs, deadline)
		c.execMu.Unlock()
		c.fail(err)
		return err
	}
	if err := c.sim.env.enqueue(c.dev, s, task); err != nil {
		c.inflight.Done()
		return errf(codePara, "stream: %v", err)
	}
	c.mu.Lock()
	j := joined{seq: c.nextSeq, prev: c.lastDone, done: make(chan struct{})}
	c.nextSeq++
	c.lastDone = j.done
	c.mu.Unlock()
	j.ds, j.err = c.tr.join(c, j.seq, d, c.deadline())
	if j.err == nil {
		j.err = agree(j.ds)
	}
	result <- j
	if k := codeOf(j.err); k == codeTimeout || k == codeRemote || k == codeTCPXfer {
		c.breakWith(j.err)
	}
	return j.err
}

// view checks a buffer of this rank and returns its bytes; a null pointer
// with zero bytes is an empty view.
func (c *comm) view(p unsafe.Pointer, n uint64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	b, err := c.sim.env.view(c.dev, memDevice, p, n)
	if err != nil {
		return nil, errf(codePara, "buffer %p (+%d bytes): %v", p, n, err)
	}
	return b, nil
}
