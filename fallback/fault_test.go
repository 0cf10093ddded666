package fallback

import (
	"sync"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllocFaults(t *testing.T) {
	n := newTestNPU(t, WithAllocFault(2, 0), WithAllocFault(4, acl.CodeRTDeviceOOM))
	p1, err := n.Malloc(64, 0)
	require.NoError(t, err)
	_, err = n.MallocHost(64)
	requireCode(t, acl.CodeRTMemoryAllocation, err, "2nd allocation (host) fails with the default code")
	assert.Contains(t, err.Error(), "injected")
	p3, err := n.Malloc(64, 0)
	require.NoError(t, err)
	_, err = n.Malloc(64, 0)
	requireCode(t, acl.CodeRTDeviceOOM, err)
	assert.ErrorIs(t, err, acl.ErrBadAlloc)

	// Armed at run time, relative to now.
	n.FailAllocation(2, acl.CodeBadAlloc)
	n.FailAllocation(0, acl.CodeBadAlloc) // ignored
	p5, err := n.Malloc(64, 0)
	require.NoError(t, err)
	_, err = n.Malloc(64, 0)
	requireCode(t, acl.CodeBadAlloc, err)
	p7, err := n.Malloc(64, 0)
	require.NoError(t, err)
	c := n.Counters()
	assert.Equal(t, uint64(4), c.Allocs, "failed allocations are not counted")
	require.NoError(t, n.Free(p1))
	require.NoError(t, n.Free(p3))
	require.NoError(t, n.Free(p5))
	require.NoError(t, n.Free(p7))
}

func TestTaskFaults(t *testing.T) {
	n := newTestNPU(t, WithTaskFault(3, 0))
	s1, err := n.CreateStream()
	require.NoError(t, err)
	s2, err := n.CreateStream()
	require.NoError(t, err)
	var mu sync.Mutex
	var ran []int
	task := func(i int) func() error {
		return func() error { mu.Lock(); ran = append(ran, i); mu.Unlock(); return nil }
	}
	require.NoError(t, n.enqueueTask(s1, task(1)))
	require.NoError(t, n.enqueueTask(s2, task(2)))
	require.NoError(t, n.enqueueTask(s1, task(3))) // the 3rd task: fails
	require.NoError(t, n.enqueueTask(s1, task(4))) // runs (ACL_CONTINUE_ON_FAILURE)
	require.NoError(t, n.SynchronizeStream(s2))
	err = n.SynchronizeStream(s1)
	requireCode(t, acl.CodeRTTSError, err)
	assert.ErrorIs(t, err, acl.ErrStreamTask)
	assert.ElementsMatch(t, []int{1, 2, 4}, ran)

	// Events and waits are not counted as tasks.
	e, err := n.CreateEvent()
	require.NoError(t, err)
	n.FailTask(2, acl.CodeRTAICoreTimeout)
	require.NoError(t, n.RecordEvent(e, s2))
	require.NoError(t, n.StreamWaitEvent(s2, e))
	require.NoError(t, n.enqueueTask(s2, task(5)))
	require.NoError(t, n.enqueueTask(s2, task(6))) // 2nd task from the arming
	requireCode(t, acl.CodeRTAICoreTimeout, n.SynchronizeStream(s2))
	assert.ElementsMatch(t, []int{1, 2, 4, 5}, ran)
	require.NoError(t, n.DestroyEvent(e))
	require.NoError(t, n.DestroyStream(s1))
	require.NoError(t, n.DestroyStream(s2))
}
