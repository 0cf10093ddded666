package hcclsim

import (
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
	t := getOSTask(true)
	for i, d := range copies {
		n, err := elemBytes(op, d.Count, d.DataType)
		if err != nil {
			putOSTask(t)
			return err
		}
		if n == 0 {
			continue
		}
		if d.LocalAddr == nil || d.RemoteAddr == 0 {
			putOSTask(t)
			return hccl.Errorf(op, hccl.EPtr, "copy %d: null address", i)
		}
		t.xs = append(t.xs, xfer{lptr: d.LocalAddr, remote: d.RemoteAddr, n: n, desc: i})
	}
	if err := t.views(c); err != nil {
		putOSTask(t)
		return herr(op, err)
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

// views takes the views of a local batch: destinations in the rank's
// device memory, sources in its device or registered host memory (one
// check per batch when they fall in one allocation). The source views go
// to t.src.
func (t *osTask) views(c *comm) error {
	if _, err := c.localViews(t.xs); err != nil {
		return err
	}
	t.src = t.src[:0]
	lo, hi := ^uintptr(0), uintptr(0)
	for _, x := range t.xs {
		if x.n > uint64(^uintptr(0)-x.remote) {
			return errf(codePara, "copy %d: source %#x + %d bytes wraps the address space", x.desc, x.remote, x.n)
		}
		lo, hi = min(lo, x.remote), max(hi, x.remote+uintptr(x.n))
	}
	if v, err := c.ownView(lo, uint64(hi-lo)); err == nil {
		for _, x := range t.xs {
			off := x.remote - lo
			t.src = append(t.src, v[off:off+uintptr(x.n)])
		}
		return nil
	}
	for _, x := range t.xs {
		v, err := c.ownView(x.remote, x.n)
		if err != nil {
			return errf(codeOf(err), "copy %d: %s", x.desc, err.(*simError).msg)
		}
		t.src = append(t.src, v)
	}
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

// copyLocal runs a local batch on the stream.
func (t *osTask) copyLocal() error {
	if err := t.views(t.c); err != nil {
		return err
	}
	for i, x := range t.xs {
		copy(x.local, t.src[i])
	}
	return nil
}
