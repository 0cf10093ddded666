package hcclsim

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// CopyLocal queues on stream st a batch of copies within the rank's own
// memory, as one stream task: copies[i] moves Count elements of DataType
// from RemoteAddr (device memory of the rank, or host memory registered
// with the NPU) to LocalAddr (device memory of the rank). It is the local
// path of a device kernel that gathers rows (Engram's fetch copies the
// rows the rank owns through its cores' local memory, never through a
// one-sided batch, which HCCL refuses for the own rank), for a host-driven
// model of such a kernel; a backend without it copies with
// aclrtMemcpyAsync. Every range is checked at the call (HCCL_E_PARA for
// memory that is not the rank's) and again when the task runs (the memory
// may have been freed since: the stream fails).
func (s *Sim) CopyLocal(h hccl.CommHandle, copies []hccl.OneSideOpDesc, st acl.StreamHandle) error {
	const op = "CopyLocal"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return herr(op, err)
	}
	if len(copies) == 0 {
		return nil
	}
	// The error is the first bad copy's: first what needs no memory
	// lookup, then, for the copies before it, destinations and sources
	// against the allocations the batch falls in (regions.go): one NPU
	// lookup per allocation, a compare per copy (inlined: two tight loops
	// rather than one).
	t := getOSTask(true)
	var badErr error
	for i := range copies {
		d := &copies[i]
		n, err := elemBytes(op, d.Count, d.DataType)
		if err != nil {
			badErr = err
			break
		}
		if n == 0 {
			continue
		}
		if d.LocalAddr == nil || d.RemoteAddr == 0 {
			badErr = hccl.Errorf(op, hccl.EPtr, "copy %d: null address", i)
			break
		}
		t.xs = append(t.xs, xfer{lptr: d.LocalAddr, remote: d.RemoteAddr, n: n, desc: i})
	}
	t.lregs.reset()
	t.sregs.reset()
	for k := range t.xs {
		x := &t.xs[k]
		if t.lregs.hit(uintptr(x.lptr), x.n) && t.sregs.hit(x.remote, x.n) {
			continue
		}
		if err := t.checkCopy(c, x); err != nil {
			putOSTask(t)
			return herr(op, err)
		}
	}
	if badErr != nil {
		putOSTask(t)
		return badErr
	}
	if len(t.xs) == 0 {
		putOSTask(t)
		return nil
	}
	t.s, t.c, t.peer = s, c, c.rank
	if err := t.enqueue(st); err != nil {
		return herr(op, err)
	}
	return nil
}

// checkCopy checks a local copy's destination (device memory of the
// rank) and source (device memory of the rank or registered host memory)
// against the allocations in t.lregs and t.sregs.
func (t *osTask) checkCopy(c *comm, x *xfer) error {
	if err := c.checkLocal(x, &t.lregs); err != nil {
		return err
	}
	if x.n > uint64(^uintptr(0)-x.remote) {
		return errf(codePara, "copy %d: source %#x + %d bytes wraps the address space", x.desc, x.remote, x.n)
	}
	if t.sregs.hit(x.remote, x.n) {
		return nil
	}
	if t.sregs.lookup(c, memOwn, x.remote, x.n) {
		return nil
	}
	if _, err := c.ownView(x.remote, x.n); err != nil {
		return errf(codeOf(err), "copy %d: %s", x.desc, err.(*simError).msg)
	}
	t.sregs.complete = false // valid, but in no region of sregs
	return nil
}

// ownView is a view of [a, a+n) in the rank's device memory or in host
// memory registered with the NPU.
func (c *comm) ownView(a uintptr, n uint64) ([]byte, error) {
	b, err := c.sim.env.view(c.dev, memOwn, ptrOf(a), n)
	if err != nil {
		return nil, errf(codePara, "source [%#x, +%d) is neither device memory of this rank nor registered host memory: %v", a, n, err)
	}
	return b, nil
}

// copyLocal runs a local batch on the stream: the copies are checked
// again (the memory may have been freed since the call), once per
// allocation when that settles it, before any moves.
func (t *osTask) copyLocal() error {
	c := t.c
	if !t.lregs.recheck(c, memDevice) || !t.sregs.recheck(c, memOwn) {
		t.lregs.reset()
		t.sregs.reset()
		for i := range t.xs {
			if err := t.checkCopy(c, &t.xs[i]); err != nil {
				return err
			}
		}
	}
	for i := range t.xs {
		x := &t.xs[i]
		// The source is checked memory the device reaches, as the
		// NPU's own views are made (fallback.NPU.bytes).
		copy(x.local(), unsafe.Slice((*byte)(ptrOf(x.remote)), x.n))
	}
	return nil
}
