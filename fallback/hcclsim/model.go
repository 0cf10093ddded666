package hcclsim

import (
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/npuhook"
)

// RegisterModelComm makes communicator h the communicator of group for the
// models loaded on the device of h's rank (npuhook.NPU.RegisterCollective):
// their collective tasks of that group (ge.OpHcclAllReduce) then run on h
// when the models execute. An empty group is ge.DefaultGroup. Errors:
// HCCL_E_PTR for a null handle, HCCL_E_PARA for an unknown or destroyed one,
// HCCL_E_NOT_SUPPORT when the Sim does not run over a fallback NPU,
// HCCL_E_PARA wrapping the NPU's refusal (group already registered on that
// device).
//
// A model's collective takes its place in the communicator's order when the
// execution reaches the task (on the model's stream), not when it is queued:
// do not interleave direct collectives on h with executions that are still
// queued. Unregister with UnregisterModelComm; destroying h first makes the
// tasks fail (HCCL_E_PARA, unknown communicator), never hang.
func (s *Sim) RegisterModelComm(group string, h hccl.CommHandle) error {
	const op = "hcclsim.RegisterModelComm"
	npu, c, err := s.modelTarget(op, h)
	if err != nil {
		return err
	}
	if err := npu.RegisterCollective(c.dev, group, modelComm{s: s, h: uintptr(h)}); err != nil {
		return hccl.Errorf(op, hccl.EPara, "%v", err)
	}
	return nil
}

// UnregisterModelComm removes the registration RegisterModelComm made for
// group on the device of h's rank. Errors as RegisterModelComm; a group
// with no registration gives HCCL_E_PARA.
func (s *Sim) UnregisterModelComm(group string, h hccl.CommHandle) error {
	const op = "hcclsim.UnregisterModelComm"
	npu, c, err := s.modelTarget(op, h)
	if err != nil {
		return err
	}
	if err := npu.UnregisterCollective(c.dev, group); err != nil {
		return hccl.Errorf(op, hccl.EPara, "%v", err)
	}
	return nil
}

func (s *Sim) modelTarget(op string, h hccl.CommHandle) (npuhook.NPU, *comm, error) {
	if h == 0 {
		return nil, nil, hccl.Errorf(op, hccl.EPtr, "null communicator")
	}
	c, err := s.comm(op, h)
	if err != nil {
		return nil, nil, err
	}
	e, ok := s.env.(npuEnv)
	if !ok {
		return nil, nil, hccl.Errorf(op, hccl.ENotSupport, "the simulator does not run over a fallback NPU")
	}
	return e.n, c, nil
}

// modelComm is a communicator as the fallback's model executor calls it
// (ge.Collective). It holds the handle, not the rank, so a destroyed
// communicator fails cleanly. Safe for concurrent use.
type modelComm struct {
	s *Sim
	h uintptr
}

// AllReduce runs one rank's share of an AllReduce on memory the executor
// resolved, and returns when it is complete on this rank. It is called from
// the model's execution (a stream task), so it does not queue a stream task
// of its own: it joins the peers, waits for the communicator's previous
// collective and runs the data phase in place, with the same checks,
// agreement rules and timeouts as HcclAllReduce.
func (m modelComm) AllReduce(send, recv []byte, count uint64, dt acl.DataType, rop hccl.ReduceOp) error {
	const op = "HcclAllReduce"
	c, err := m.s.comm(op, hccl.CommHandle(m.h))
	if err != nil {
		return err
	}
	d, ok := aclTypes[dt]
	if !ok {
		return hccl.Errorf(op, hccl.EPara, "data type %s has no HCCL counterpart", dt)
	}
	if !rop.Valid() {
		return hccl.Errorf(op, hccl.EPara, "undefined reduce op %d", int32(rop))
	}
	if err := reduceArgs(op, hccl.DataType(d), hccl.ReduceOp(rop)); err != nil {
		return err
	}
	n, err := elemBytes(op, count, hccl.DataType(d))
	if err != nil || count == 0 {
		return err
	}
	if uint64(len(send)) < n || uint64(len(recv)) < n {
		return hccl.Errorf(op, hccl.EPara, "buffers of %d and %d bytes for %d × %v", len(send), len(recv), count, d)
	}
	desc := &opDesc{Kind: kindAllReduce, Count: count, DT: d, Op: redOp(rop)}
	return herr(op, c.runInPlace(desc, send[:n], recv[:n]))
}

// aclTypes maps the ACL types a model's collective may carry to HCCL's.
var aclTypes = map[acl.DataType]dtype{
	acl.Int8: dtInt8, acl.Int16: dtInt16, acl.Int32: dtInt32, acl.Int64: dtInt64,
	acl.Uint8: dtUint8, acl.Uint16: dtUint16, acl.Uint32: dtUint32, acl.Uint64: dtUint64,
	acl.Float16: dtFP16, acl.Float32: dtFP32, acl.Float64: dtFP64, acl.BFloat16: dtBF16,
}

// runInPlace is runCollective for a caller that already is the stream: it
// takes the next sequence number, joins and agrees with the peers, waits
// for the communicator's previous data phase, then runs its own on the
// given views. Every wait is bounded by the communicator's timeout.
func (c *comm) runInPlace(d *opDesc, send, recv []byte) error {
	if err := c.check(); err != nil {
		return err
	}
	// Destroy waits for work in flight, as for queued collectives; the
	// record orders this data phase after the communicator's previous one.
	r, err := c.getColl()
	if err != nil {
		return err
	}
	r.refs.Store(1) // no separate task: this is it
	c.trackTask(&r.qt)
	c.setSkipped(&r.qt, running{}) // running on its stream now
	defer c.taskEnd(r)
	c.assignSeq(r, false)
	seq := r.seq
	ds, err := c.join(seq, d, c.timeout)
	if err == nil {
		err = agree(ds)
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	var prev chan struct{}
	waits := false
	if r.prev != nil {
		prev, _, waits = c.pendingLocked(r.prev, r.prevSeq)
		r.prev = nil
	}
	c.mu.Unlock()
	if waits {
		t := time.NewTimer(c.timeout)
		select {
		case <-prev:
			t.Stop()
		case <-t.C:
			err := errf(codeTimeout, "%v: the previous collective did not finish", d.Kind)
			c.fail(err)
			return err
		}
	}
	err = c.exclusive(func() error { return c.tr.collective(c, seq, ds, opBufs{send: send, recv: recv}, c.timeout) })
	c.fail(err)
	return err
}
