package native_test

import (
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/native"
)

// stubRanks forms an n-rank communicator over the stub, each rank with a
// stub stream and a buffer of 4 KiB.
func stubRanks(t *testing.T, b *native.Backend, n int) ([]hccl.CommHandle, []*plainRank, []unsafe.Pointer) {
	t.Helper()
	root, err := b.GetRootInfo()
	require.NoError(t, err)
	hs := make([]hccl.CommHandle, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hs[r], errs[r] = b.CommInitRootInfo(uint32(n), &root, uint32(r))
		}()
	}
	wg.Wait()
	ranks := make([]*plainRank, n)
	bufs := make([]unsafe.Pointer, n)
	for r := 0; r < n; r++ {
		require.NoError(t, errs[r])
		ranks[r] = &plainRank{t: t, b: b, s: acl.StreamHandle(stubCall(t, b, "HcclStubStreamCreate"))}
		bufs[r], err = ranks[r].Alloc(4096)
		require.NoError(t, err)
		h, pr := hs[r], ranks[r]
		t.Cleanup(func() { _ = b.CommDestroy(h); _ = pr.Close() })
	}
	return hs, ranks, bufs
}

// allRanks runs f on every rank concurrently.
func allRanks(n int, f func(r int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs[r] = f(r) }()
	}
	wg.Wait()
	return errs
}

// TestStubInconsistentCheck: the stub follows HCCL_DFS_CONFIG
// inconsistent_check (stream.c): on — a later mismatch returns success,
// fails the stream with 507048 and GetCommAsyncError reports HCCL_E_PARA
// (heartbeat.cc:2082-2106); off — even the first operation's mismatch
// reaches the stream.
func TestStubInconsistentCheck(t *testing.T) {
	const n = 2
	mismatch := func(b *native.Backend, hs []hccl.CommHandle, ranks []*plainRank, bufs []unsafe.Pointer) []error {
		return allRanks(n, func(r int) error {
			return b.AllReduce(bufs[r], bufs[r], uint64(16+r), hccl.Float32, hccl.Sum, hs[r], ranks[r].Stream())
		})
	}
	t.Run("on", func(t *testing.T) {
		b := openStub(t)
		setTimeout(t, b, 300*time.Millisecond)
		stubCall(t, b, "HcclStubSetInconsistentCheck", 1)
		t.Cleanup(func() { stubCall(t, b, "HcclStubSetInconsistentCheck", uintptr(^uint(1))) }) // -2: the environment again
		hs, ranks, bufs := stubRanks(t, b, n)
		for r, err := range allRanks(n, func(r int) error {
			return b.AllReduce(bufs[r], bufs[r], 16, hccl.Float32, hccl.Sum, hs[r], ranks[r].Stream())
		}) {
			require.NoError(t, err, "first AllReduce, rank %d", r)
		}
		start := time.Now()
		for r, err := range mismatch(b, hs, ranks, bufs) {
			require.NoError(t, err, "later mismatched AllReduce only enqueues, rank %d", r)
		}
		for r := 0; r < n; r++ {
			err := ranks[r].Sync()
			assert.Equal(t, acl.CodeRTFftsPlusTimeout, acl.CodeOf(err), "rank %d: %v", r, err)
			a, err := b.GetCommAsyncError(hs[r])
			require.NoError(t, err)
			assert.Equal(t, hccl.EPara, a, "rank %d", r)
		}
		assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	})
	t.Run("off", func(t *testing.T) {
		b := openStub(t)
		setTimeout(t, b, 300*time.Millisecond)
		stubCall(t, b, "HcclStubSetInconsistentCheck", uintptr(^uint(0))) // -1
		t.Cleanup(func() { stubCall(t, b, "HcclStubSetInconsistentCheck", uintptr(^uint(1))) })
		hs, ranks, bufs := stubRanks(t, b, n)
		for r, err := range mismatch(b, hs, ranks, bufs) {
			require.NoError(t, err, "first mismatched AllReduce with the check off, rank %d", r)
		}
		for r := 0; r < n; r++ {
			err := ranks[r].Sync()
			assert.Equal(t, acl.CodeRTFftsPlusTimeout, acl.CodeOf(err), "rank %d: %v", r, err)
		}
	})
}
