package hccl

import (
	"context"
	"math/bits"

	"github.com/ascend-go/cann/acl"
)

// The *Mem methods are the collectives and point-to-point operations on
// acl memory (acl.DeviceBuffer, acl.HostBuffer) for a Comm on an
// acl.Stream: each checks that count elements fit the buffers (else
// HCCL_E_PARA, before the backend sees an address), binds the stream's
// device context, keeps the buffers open while the call uses them and
// makes their Close wait for the queued work (acl.Stream.Do). A Comm on a
// raw stream refuses them with HCCL_E_PARA.

// fits checks that count elements of dt (times mul) fit in m.
func fits(op, what string, m acl.Memory, count uint64, dt DataType, mul int) error {
	if m == nil {
		return Errorf(op, EPtr, "%s: nil memory", what)
	}
	hi, n := bits.Mul64(count, uint64(dt.Size()))
	hi2, n2 := bits.Mul64(n, uint64(mul))
	if hi != 0 || hi2 != 0 || n2 > uint64(m.Size()) {
		return Errorf(op, EPara, "%s: %d × %d elements of %v do not fit its %d bytes", what, mul, count, dt, m.Size())
	}
	return nil
}

// AllReduceMem is AllReduce on acl memory (send may equal recv).
func (c *Comm) AllReduceMem(ctx context.Context, send, recv acl.Memory, count uint64, dt DataType, op ReduceOp) error {
	const name = "HcclAllReduce"
	if err := firstErr(fits(name, "send", send, count, dt, 1), fits(name, "recv", recv, count, dt, 1)); err != nil {
		return err
	}
	return c.issue(ctx, name, func(s acl.StreamHandle) error {
		return c.b.AllReduce(send.Ptr(), recv.Ptr(), count, dt, op, c.h, s)
	}, send, recv)
}

// BroadcastMem is Broadcast on acl memory.
func (c *Comm) BroadcastMem(ctx context.Context, buf acl.Memory, count uint64, dt DataType, root int) error {
	const name = "HcclBroadcast"
	if err := fits(name, "buf", buf, count, dt, 1); err != nil {
		return err
	}
	r, err := c.peer(name, root)
	if err != nil {
		return err
	}
	return c.issue(ctx, name, func(s acl.StreamHandle) error {
		return c.b.Broadcast(buf.Ptr(), count, dt, r, c.h, s)
	}, buf)
}

// AllGatherMem is AllGather on acl memory: recv holds Size × sendCount
// elements.
func (c *Comm) AllGatherMem(ctx context.Context, send, recv acl.Memory, sendCount uint64, dt DataType) error {
	if c == nil {
		return NilHandle("HcclAllGather", "communicator")
	}
	const name = "HcclAllGather"
	if err := firstErr(fits(name, "send", send, sendCount, dt, 1), fits(name, "recv", recv, sendCount, dt, c.size)); err != nil {
		return err
	}
	return c.issue(ctx, name, func(s acl.StreamHandle) error {
		return c.b.AllGather(send.Ptr(), recv.Ptr(), sendCount, dt, c.h, s)
	}, send, recv)
}

// ReduceScatterMem is ReduceScatter on acl memory: send holds Size ×
// recvCount elements.
func (c *Comm) ReduceScatterMem(ctx context.Context, send, recv acl.Memory, recvCount uint64, dt DataType, op ReduceOp) error {
	if c == nil {
		return NilHandle("HcclReduceScatter", "communicator")
	}
	const name = "HcclReduceScatter"
	if err := firstErr(fits(name, "send", send, recvCount, dt, c.size), fits(name, "recv", recv, recvCount, dt, 1)); err != nil {
		return err
	}
	return c.issue(ctx, name, func(s acl.StreamHandle) error {
		return c.b.ReduceScatter(send.Ptr(), recv.Ptr(), recvCount, dt, op, c.h, s)
	}, send, recv)
}

// SendMem is Send from acl memory.
func (c *Comm) SendMem(ctx context.Context, buf acl.Memory, count uint64, dt DataType, dest int) error {
	const name = "HcclSend"
	if err := fits(name, "buf", buf, count, dt, 1); err != nil {
		return err
	}
	r, err := c.peer(name, dest)
	if err != nil {
		return err
	}
	return c.issue(ctx, name, func(s acl.StreamHandle) error { return c.b.Send(buf.Ptr(), count, dt, r, c.h, s) }, buf)
}

// RecvMem is Recv into acl memory.
func (c *Comm) RecvMem(ctx context.Context, buf acl.Memory, count uint64, dt DataType, src int) error {
	const name = "HcclRecv"
	if err := fits(name, "buf", buf, count, dt, 1); err != nil {
		return err
	}
	r, err := c.peer(name, src)
	if err != nil {
		return err
	}
	return c.issue(ctx, name, func(s acl.StreamHandle) error { return c.b.Recv(buf.Ptr(), count, dt, r, c.h, s) }, buf)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// BatchGetMem is BatchGet into acl memory: every descriptor's local range
// lies inside local (else HCCL_E_PARA, before the backend sees an
// address), which stays open while the batch is queued and whose Close
// waits for it.
func (c *Comm) BatchGetMem(ctx context.Context, peer int, local acl.Memory, descs []OneSideOpDesc) error {
	if c == nil {
		return NilHandle("HcclBatchGet", "communicator")
	}
	return c.batchMem(ctx, "HcclBatchGet", peer, local, descs, c.b.BatchGet)
}

// BatchPutMem is BatchPut from acl memory (see BatchGetMem).
func (c *Comm) BatchPutMem(ctx context.Context, peer int, local acl.Memory, descs []OneSideOpDesc) error {
	if c == nil {
		return NilHandle("HcclBatchPut", "communicator")
	}
	return c.batchMem(ctx, "HcclBatchPut", peer, local, descs, c.b.BatchPut)
}

func (c *Comm) batchMem(ctx context.Context, op string, peer int, local acl.Memory, descs []OneSideOpDesc,
	call func(CommHandle, uint32, []OneSideOpDesc, acl.StreamHandle) error) error {
	if local == nil {
		return Errorf(op, EPtr, "nil local memory")
	}
	for i, d := range descs {
		if !inside(local, d.LocalAddr, d.Bytes()) {
			return Errorf(op, EPara, "descriptor %d: local [%p, +%d) is not inside the %d bytes at %p", i, d.LocalAddr, d.Bytes(), local.Size(), local.Ptr())
		}
	}
	r, err := c.peer(op, peer)
	if err != nil {
		return err
	}
	return c.issue(ctx, op, func(s acl.StreamHandle) error { return call(c.h, r, descs, s) }, local)
}

// RegisterBuffer is Register (HcclCommRegister) of acl memory, whole. The
// registration does not keep the memory open: close it first.
func (c *Comm) RegisterBuffer(m acl.Memory) (*Registration, error) {
	if _, err := memType("HcclCommRegister", m); err != nil {
		return nil, err
	}
	return c.Register(m.Ptr(), uint64(m.Size()))
}
