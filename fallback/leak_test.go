package fallback

import (
	"strings"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func leakKinds(ls []Leak) map[LeakKind]int {
	m := map[LeakKind]int{}
	for _, l := range ls {
		m[l.Kind]++
	}
	return m
}

// TestFinalizeReleasesAndReportsLeaks: everything left is released by
// aclFinalize, reported with where it was created, and the NPU can be
// initialized again from a clean state.
func TestFinalizeReleasesAndReportsLeaks(t *testing.T) {
	n := newTestNPU(t, WithDevices(2))
	dev := mustMalloc(t, n, 1000) // leak_test.go: this line is reported
	host := mustMallocHost(t, n, 2000)
	reg := pages(t, 1)
	_, err := n.HostRegister(ptrOf(reg), 4096, acl.HostRegisterMapped)
	require.NoError(t, err)
	_, err = n.CreateStream()
	require.NoError(t, err)
	_, err = n.CreateEvent()
	require.NoError(t, err)
	_, err = n.CreateContext(1)
	require.NoError(t, err)
	assert.Empty(t, n.Leaks(), "nothing is a leak before it is released")

	require.NoError(t, n.Finalize())
	leaks := n.Leaks()
	assert.Equal(t, map[LeakKind]int{
		LeakDeviceMemory: 1, LeakHostMemory: 1, LeakRegistration: 1,
		LeakStream: 1, LeakEvent: 1, LeakContext: 1,
	}, leakKinds(leaks))
	for _, l := range leaks {
		assert.Equal(t, "aclFinalize", l.At)
		switch l.Kind {
		case LeakDeviceMemory:
			assert.Equal(t, uintptr(dev), l.Addr)
			assert.Equal(t, uintptr(1000), l.Size)
			assert.Equal(t, int32(0), l.Device)
			assert.True(t, strings.HasSuffix(l.Where, "helpers_test.go:"+lineOf(t, "helpers_test.go", "p, err := n.Malloc(size")), l.Where)
		case LeakHostMemory:
			assert.Equal(t, uintptr(ptrOf(host)), l.Addr)
			assert.Equal(t, int32(-1), l.Device)
		case LeakContext:
			assert.Equal(t, int32(1), l.Device)
			assert.Contains(t, l.Where, "leak_test.go")
		}
		assert.NotEmpty(t, l.String())
	}
	c := n.Counters()
	assert.Equal(t, []uint64{0, 0}, c.LiveBytes)
	assert.Zero(t, c.LiveHostBytes)
	assert.Zero(t, c.Streams+c.Events+c.Contexts+c.Registrations)
	assert.Equal(t, npuhook.PlaceInvalid, n.classify(dev).Place)

	// aclFinalize released every context: calls after it are not refused
	// for the finalize (the runtime has no such check) but find no
	// current context. A new aclInit starts clean.
	_, err = n.Malloc(1, 0)
	requireCode(t, acl.CodeRTContextNull, err)
	requireCode(t, acl.CodeRepeatFinalize, n.Finalize())
	n.ClearLeaks()
	require.NoError(t, n.Init(""))
	_, err = n.GetCurrentContext()
	requireCode(t, acl.CodeRTContextNull, err, "bindings do not survive aclFinalize")
	require.NoError(t, n.SetDevice(0))
	p := mustMalloc(t, n, testMem) // the whole device is free again
	require.NoError(t, n.Free(p))
	require.NoError(t, n.ResetDevice(0))
	require.NoError(t, n.Finalize())
	assert.Empty(t, n.Leaks())
}

// lineOf finds the line number of the first line of file containing s.
func lineOf(t *testing.T, file, s string) string {
	t.Helper()
	b, err := readFile(file)
	require.NoError(t, err)
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			return itoa(i + 1)
		}
	}
	t.Fatalf("%q not in %s", s, file)
	return ""
}

// TestCleanProgramHasNoLeaks: a program that releases what it creates
// leaves nothing behind.
func TestCleanProgramHasNoLeaks(t *testing.T) {
	n := newTestNPU(t)
	ctx, err := n.CreateContext(0)
	require.NoError(t, err)
	s, err := n.CreateStream()
	require.NoError(t, err)
	e, err := n.CreateEvent()
	require.NoError(t, err)
	p := mustMalloc(t, n, 100)
	h := mustMallocHost(t, n, 100)
	require.NoError(t, n.MemcpyAsync(p, 100, ptrOf(h), 100, acl.MemcpyHostToDevice, s))
	require.NoError(t, n.RecordEvent(e, s))
	require.NoError(t, n.SynchronizeEvent(e))
	require.NoError(t, n.DestroyEvent(e))
	require.NoError(t, n.DestroyStream(s))
	require.NoError(t, n.Free(p))
	require.NoError(t, n.FreeHost(ptrOf(h)))
	require.NoError(t, n.DestroyContext(ctx))
	require.NoError(t, n.SetDevice(0))
	require.NoError(t, n.ResetDevice(0))
	require.NoError(t, n.ResetDevice(0))
	require.NoError(t, n.Finalize())
	assert.Empty(t, n.Leaks())
	c := n.Counters()
	assert.Equal(t, uint64(1), c.Allocs)
	assert.Equal(t, uint64(1), c.Frees)
	assert.Equal(t, uint64(1), c.HostAllocs)
	assert.Equal(t, uint64(1), c.HostFrees)
}

// TestDestroyContextReportsItsLeftovers: streams and events left in a
// destroyed context are released and reported, the context itself is not.
func TestDestroyContextReportsItsLeftovers(t *testing.T) {
	n := newTestNPU(t)
	ctx, err := n.CreateContext(0)
	require.NoError(t, err)
	_, err = n.CreateStream()
	require.NoError(t, err)
	_, err = n.CreateEvent()
	require.NoError(t, err)
	require.NoError(t, n.DestroyContext(ctx))
	assert.Equal(t, map[LeakKind]int{LeakStream: 1, LeakEvent: 1}, leakKinds(n.Leaks()))
	for _, l := range n.Leaks() {
		assert.Equal(t, "aclrtDestroyContext", l.At)
	}
	c := n.Counters()
	assert.Zero(t, c.Streams+c.Events+c.Contexts)
}

// TestFreeHostDropsRegistrations: registering pinned memory is allowed;
// freeing the block drops the registration and reports it.
func TestFreeHostDropsRegistrations(t *testing.T) {
	n := newTestNPU(t)
	h, err := n.MallocHost(3 * 4096)
	require.NoError(t, err)
	require.NoError(t, n.HostRegisterV2(h, 4096, acl.HostRegMapped))
	assert.Equal(t, npuhook.PlaceRegistered, n.classify(h).Place)
	require.NoError(t, n.FreeHost(h))
	assert.Equal(t, map[LeakKind]int{LeakRegistration: 1}, leakKinds(n.Leaks()))
	assert.Zero(t, n.Counters().Registrations)
}
