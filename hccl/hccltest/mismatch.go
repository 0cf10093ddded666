package hccltest

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// Where a disagreement between ranks surfaces (hccl-vs-source.md, "where
// failures surface"). The first operation of a communicator builds its
// links and, with HCCL_DFS_CONFIG inconsistent_check=first (the default),
// compares the ranks' operations: a disagreement fails that call with
// HCCL_E_INTERNAL on every rank (hcomm src/legacy/ascend910/common/health/
// rank_consistentcy_checker.cc:195-243, CheckFrameRecv returns
// HCCL_E_INTERNAL; env_config.h:107 default FIRST). Later calls only
// enqueue and return HCCL_SUCCESS; the ranks' tasks wait for each other
// in vain and the stream's synchronize fails with 507048
// (ACL_ERROR_RT_FFTS_PLUS_TIMEOUT) once HCCL_EXEC_TIMEOUT has passed;
// HcclGetCommAsyncError stays HCCL_SUCCESS unless inconsistent_check is on
// (op_base.cc:4828-4844, heartbeat.cc:2082-2106).

// mismatchCase is one way for ranks to disagree; f issues rank w's call.
type mismatchCase struct {
	name string
	f    func(g *group, w *worker, a, b unsafe.Pointer) error
}

func mismatchCases(n int) []mismatchCase {
	const count = 16
	last := n - 1
	return []mismatchCase{
		{"AllReduce count", func(g *group, w *worker, a, b unsafe.Pointer) error {
			c := uint64(count)
			if w.rank == last {
				c = count - 1
			}
			return g.b.AllReduce(a, b, c, hccl.Float32, hccl.Sum, w.comm, w.r.Stream())
		}},
		{"AllReduce data type", func(g *group, w *worker, a, b unsafe.Pointer) error {
			dt := hccl.Float32
			if w.rank == last {
				dt = hccl.Int32
			}
			return g.b.AllReduce(a, b, count, dt, hccl.Sum, w.comm, w.r.Stream())
		}},
		{"AllReduce op", func(g *group, w *worker, a, b unsafe.Pointer) error {
			op := hccl.Sum
			if w.rank == last {
				op = hccl.Max
			}
			return g.b.AllReduce(a, b, count, hccl.Float32, op, w.comm, w.r.Stream())
		}},
		{"Broadcast root", func(g *group, w *worker, a, b unsafe.Pointer) error {
			root := uint32(0)
			if w.rank == last {
				root = 1
			}
			return g.b.Broadcast(a, count, hccl.Int8, root, w.comm, w.r.Stream())
		}},
		{"ReduceScatter op", func(g *group, w *worker, a, b unsafe.Pointer) error {
			op := hccl.Min
			if w.rank == 0 {
				op = hccl.Prod
			}
			return g.b.ReduceScatter(a, b, 2, hccl.Int32, op, w.comm, w.r.Stream())
		}},
		{"AllGather count", func(g *group, w *worker, a, b unsafe.Pointer) error {
			c := uint64(4)
			if w.rank == 0 {
				c = 3
			}
			return g.b.AllGather(a, b, c, hccl.Int8, w.comm, w.r.Stream())
		}},
		{"operation", func(g *group, w *worker, a, b unsafe.Pointer) error {
			if w.rank == last {
				return g.b.AllGather(a, b, 4, hccl.Int8, w.comm, w.r.Stream())
			}
			return g.b.AllReduce(a, b, 4, hccl.Int8, hccl.Sum, w.comm, w.r.Stream())
		}},
		{"Barrier vs AllReduce", func(g *group, w *worker, a, b unsafe.Pointer) error {
			if w.rank == 0 {
				return g.b.Barrier(w.comm, w.r.Stream())
			}
			return g.b.AllReduce(a, b, 4, hccl.Int8, hccl.Sum, w.comm, w.r.Stream())
		}},
		{"AlltoAllV counts", func(g *group, w *worker, a, b unsafe.Pointer) error {
			sc, sd, rc, rd := make([]uint64, n), make([]uint64, n), make([]uint64, n), make([]uint64, n)
			for j := 0; j < n; j++ {
				sc[j], rc[j] = 2, 2
				sd[j], rd[j] = uint64(2*j), uint64(2*j)
			}
			if w.rank == 0 {
				sc[last] = 1 // rank last expects 2 from rank 0
			}
			return g.b.AlltoAllV(a, sc, sd, hccl.Int32, b, rc, rd, hccl.Int32, w.comm, w.r.Stream())
		}},
		{"AlltoAllV types", func(g *group, w *worker, a, b unsafe.Pointer) error {
			cnt, dsp := make([]uint64, n), make([]uint64, n)
			for j := range cnt {
				cnt[j], dsp[j] = 1, uint64(j)
			}
			return g.b.AlltoAllV(a, cnt, dsp, hccl.Int32, b, cnt, dsp, hccl.Float32, w.comm, w.r.Stream())
		}},
		{"Send/Recv count", func(g *group, w *worker, a, b unsafe.Pointer) error {
			switch w.rank {
			case 0:
				return g.b.Send(a, 8, hccl.Int32, 1, w.comm, w.r.Stream())
			case 1:
				return g.b.Recv(a, 7, hccl.Int32, 0, w.comm, w.r.Stream())
			}
			return nil
		}},
		{"Send/Recv type", func(g *group, w *worker, a, b unsafe.Pointer) error {
			switch w.rank {
			case 0:
				return g.b.Send(a, 8, hccl.Int32, 1, w.comm, w.r.Stream())
			case 1:
				return g.b.Recv(a, 8, hccl.Float32, 0, w.comm, w.r.Stream())
			}
			return nil
		}},
	}
}

// involved lists the ranks a case's call involves.
func (c mismatchCase) involved(n int) []int {
	if len(c.name) > 9 && c.name[:9] == "Send/Recv" {
		return []int{0, 1}
	}
	return nil
}

// runCase issues the case's calls on every rank with fresh buffers. The
// buffers stay allocated (the group frees them when it stops): a call
// that succeeds only enqueues, and a buffer freed under the queued task
// would fail it for that reason instead of the disagreement.
func (g *group) runCase(c mismatchCase) []error {
	return g.each(func(w *worker) error {
		a, err := w.alloc(1024)
		if err != nil {
			return err
		}
		b, err := w.alloc(1024)
		if err != nil {
			return err
		}
		return c.f(g, w, a, b)
	})
}

// allReduceSync is a good operation: every rank issues the same AllReduce
// and synchronizes.
func (g *group) allReduceSync() []error {
	return g.each(func(w *worker) error {
		a, err := w.alloc(64)
		if err != nil {
			return err
		}
		defer w.free(a)
		if err := g.b.AllReduce(a, a, 4, hccl.Int32, hccl.Max, w.comm, w.r.Stream()); err != nil {
			return err
		}
		return w.r.Sync()
	})
}

// testMismatch: a disagreement in the first operation fails the call with
// HCCL_E_INTERNAL on every rank; a later one returns success and fails
// every rank's synchronize with 507048 after the exec timeout.
func (s *suite) testMismatch(t *testing.T) {
	n := min(3, s.maxRanks)
	cases := mismatchCases(n)
	t.Run("First", func(t *testing.T) {
		g := s.newGroup(t, n)
		for _, c := range cases {
			g.mustInit()
			errs := g.runCase(c)
			// rank_consistentcy_checker.cc:235 (CompareFrame → HCCL_E_INTERNAL).
			allCode(t, hccl.EInternal, errs, c.involved(n), "first operation mismatched "+c.name)
			// The links are built: the communicator works on.
			g.noErr("AllReduce after mismatched "+c.name, g.allReduceSync())
			g.noErr("CommDestroy", g.destroy())
		}
	})
	t.Run("Later", func(t *testing.T) {
		if s.opts.Timeout <= 0 {
			t.Skip("Options.Timeout not set")
		}
		// Each case waits out the exec timeout (twice for the first, which
		// also shows the communicator stays unusable), so a few kinds
		// stand for all: the comparison itself is the one the first
		// operation's cases exercise. Each case is a subtest named after
		// it (the same names on every backend) with a group of its own;
		// they mostly wait, so on a ConcurrentEnv they run in parallel.
		later := map[string]bool{"AllReduce count": true, "operation": true, "AlltoAllV counts": true, "Send/Recv count": true}
		if s.short {
			later = map[string]bool{"AllReduce count": true, "Send/Recv count": true}
		}
		var subs []subtest
		for _, c := range cases {
			if !later[c.name] {
				continue
			}
			unusable := len(subs) == 0
			subs = append(subs, subtest{strings.ReplaceAll(c.name, "/", ""), func(t *testing.T) {
				// Fresh ranks: a failed stream stays failed.
				g := s.newGroup(t, n).mustInit()
				g.noErr("first AllReduce", g.allReduceSync())
				start := time.Now()
				errs := g.runCase(c)
				g.noErr("later mismatched "+c.name+" (the call only enqueues)", errs)
				s.syncFails(t, g, c.involved(n), start, "later mismatched "+c.name, unusable)
				g.noErr("CommDestroy", g.destroy())
				g.stop()
			}})
		}
		s.runAll(t, subs)
	})
}

// syncFails asserts that the listed ranks' (all when nil) synchronize
// fails with 507048 no earlier than the exec timeout after start, that
// GetCommAsyncError stays HCCL_SUCCESS (inconsistent_check first), and
// with after, that the communicator stays unusable: a later AllReduce is
// accepted and fails the stream again.
func (s *suite) syncFails(t *testing.T, g *group, ranks []int, start time.Time, what string, after bool) {
	t.Helper()
	to := s.opts.Timeout
	slack := 5*to + 2*time.Second
	errs := g.some(ranks, func(w *worker) error {
		err := w.r.Sync()
		el := time.Since(start)
		if acl.CodeOf(err) != acl.CodeRTFftsPlusTimeout {
			return fmt.Errorf("synchronize: got %v, want ACL_ERROR_RT_FFTS_PLUS_TIMEOUT", err)
		}
		if el < to*9/10 || el > slack {
			return fmt.Errorf("synchronize failed after %v, exec timeout %v", el, to)
		}
		r, err := g.b.GetCommAsyncError(w.comm)
		if err != nil || r != hccl.Success {
			return fmt.Errorf("GetCommAsyncError = %v, %v; want HCCL_SUCCESS (inconsistent_check first)", r, err)
		}
		return nil
	})
	for _, r := range orAll(ranks, len(g.ws)) {
		if errs[r] != nil {
			t.Errorf("%s: rank %d: %v", what, r, errs[r])
		}
	}
	if !after {
		return
	}
	// The communicator is unusable: the next operation is accepted and
	// fails its stream too.
	errs = g.some(ranks, func(w *worker) error {
		a, err := w.alloc(64)
		if err != nil {
			return err
		}
		defer w.free(a)
		if err := g.b.AllReduce(a, a, 4, hccl.Int32, hccl.Sum, w.comm, w.r.Stream()); err != nil {
			return fmt.Errorf("AllReduce on the failed communicator: %v (the call only enqueues)", err)
		}
		if err := w.r.Sync(); acl.CodeOf(err) != acl.CodeRTFftsPlusTimeout {
			return fmt.Errorf("synchronize after AllReduce on the failed communicator: got %v, want 507048", err)
		}
		return nil
	})
	for _, r := range orAll(ranks, len(g.ws)) {
		if errs[r] != nil {
			t.Errorf("%s: rank %d: %v", what, r, errs[r])
		}
	}
}

// orAll returns ranks, or every rank of n when ranks is nil.
func orAll(ranks []int, n int) []int {
	if ranks != nil {
		return ranks
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
