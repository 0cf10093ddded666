package fallback

import (
	"sync"
	"sync/atomic"

	"github.com/ascend-go/cann/acl"
)

// faults holds armed fault injections: absolute sequence numbers of
// allocations and stream work tasks that must fail, with their codes.
type faults struct {
	alloc, task faultSeq
}

type faultSeq struct {
	seq   atomic.Uint64 // events counted so far
	armed atomic.Int64  // entries in at, so the common path skips the lock
	mu    sync.Mutex
	at    map[uint64]acl.Code
}

// arm makes the k-th event from now (1 = the next) fail with code.
func (f *faults) arm(s *faultSeq, k int, code acl.Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = make(map[uint64]acl.Code)
	}
	target := s.seq.Load() + uint64(k)
	if _, ok := s.at[target]; !ok {
		s.armed.Add(1)
	}
	s.at[target] = code
}

// next counts one event and returns the code it must fail with, or 0.
func (f *faults) next(s *faultSeq, def acl.Code) acl.Code {
	n := s.seq.Add(1)
	if s.armed.Load() == 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	code, ok := s.at[n]
	if !ok {
		return 0
	}
	delete(s.at, n)
	s.armed.Add(-1)
	if code == 0 {
		code = def
	}
	return code
}

// FailAllocation arms a fault: the k-th allocation from now (1 = the next
// Malloc or MallocHost) fails with code (ACL_ERROR_RT_MEMORY_ALLOCATION
// when 0). k < 1 is ignored.
func (n *NPU) FailAllocation(k int, code acl.Code) {
	if k >= 1 {
		n.faults.arm(&n.faults.alloc, k, code)
	}
}

// FailTask arms a fault: the k-th stream work task queued from now
// (MemcpyAsync, MemsetAsync, a model or HCCL task, on any stream; 1 = the
// next) fails with code (ACL_ERROR_RT_TS_ERROR when 0) when its stream
// reaches it, making that stream's error sticky. k < 1 is ignored.
func (n *NPU) FailTask(k int, code acl.Code) {
	if k >= 1 {
		n.faults.arm(&n.faults.task, k, code)
	}
}
