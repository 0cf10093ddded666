package zerocopy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/zerocopy"
)

func doubleModel(t *testing.T, n int64) []byte {
	g := ge.NewGraph("double")
	x := g.Data("x", 0, acl.Float32, []int64{n})
	g.Output(g.Add(x, x, ge.Name("y")))
	cm, err := ge.Compile(g)
	require.NoError(t, err)
	blob, err := cm.MarshalBinary()
	require.NoError(t, err)
	return blob
}

// TestFailedStreamDoesNotLeakIntoNextRun: after a run fails on stream 1 and
// its Synchronize reported it, a valid run on stream 2 succeeds in the
// default failure mode; with ACL_STOP_ON_FAILURE the failure stops the whole
// context, as on the device, and the run on stream 2 reports it.
func TestFailedStreamDoesNotLeakIntoNextRun(t *testing.T) {
	npu, err := fallback.New()
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	require.NoError(t, err)
	m, err := dev.LoadModel(doubleModel(t, 64))
	require.NoError(t, err)
	defer m.Close()
	b, err := zerocopy.Bind(m)
	require.NoError(t, err)
	defer b.Close()
	s2, err := dev.NewStream()
	require.NoError(t, err)
	for _, mode := range []acl.StreamFailureMode{acl.ContinueOnFailure, acl.StopOnFailure} {
		s1, err := dev.NewStream()
		require.NoError(t, err)
		require.NoError(t, s1.SetFailureMode(mode))
		npu.FailTask(1, acl.CodeRTAICoreException)
		require.NoError(t, b.RunAsync(s1))
		require.Error(t, s1.Synchronize())
		if mode == acl.StopOnFailure {
			assert.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(b.RunAsync(s2)), "the stopped context refuses new work")
			continue
		}
		require.NoError(t, b.RunAsync(s2), "a valid run on another stream")
		assert.NoError(t, s2.Synchronize())
	}
}

// TestNilBindingMethods: every method of a nil Binding returns an error or
// a zero value instead of panicking.
func TestNilBindingMethods(t *testing.T) {
	var b *zerocopy.Binding
	assert.NotPanics(t, func() {
		assert.Nil(t, b.Model())
		assert.Zero(t, b.NumInputs())
		assert.Zero(t, b.NumOutputs())
		assert.Nil(t, b.Input(0))
		assert.Nil(t, b.Output(0))
		assert.Error(t, b.RunAsync(nil))
		assert.Error(t, b.Run())
		assert.Error(t, b.SwapInput(0, nil))
		assert.Error(t, b.SwapOutput(0, nil))
		assert.Error(t, b.Wait(t.Context()))
		assert.NoError(t, b.Close())
	})
}

// TestAlwaysZeroCopy: GE's always_zero_copy needs every output from the
// caller (E13031 otherwise, no allocation) of at least the model's size;
// host memory and inputs are not checked. WithDeviceOnly is stricter.
func TestAlwaysZeroCopy(t *testing.T) {
	npu, err := fallback.New()
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	require.NoError(t, err)
	m, err := dev.LoadModel(doubleModel(t, 64))
	require.NoError(t, err)
	defer m.Close()

	allocs := npu.Counters().Allocs
	_, err = zerocopy.Bind(m, zerocopy.WithAlwaysZeroCopy())
	assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
	assert.ErrorContains(t, err, "E13031")
	assert.ErrorContains(t, err, `output 0 ("y:0")`)
	_, err = zerocopy.Bind(m, zerocopy.WithAlwaysZeroCopy(), zerocopy.WithOutputs(nil))
	assert.ErrorContains(t, err, "E13031")
	// Inputs are allocated before outputs are refused; the refused Bind
	// frees them again.
	c := npu.Counters()
	assert.Equal(t, c.Allocs-allocs, c.Frees, "a refused Bind keeps nothing")

	short, err := dev.Malloc(128, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	defer short.Close()
	_, err = zerocopy.Bind(m, zerocopy.WithAlwaysZeroCopy(), zerocopy.WithOutputs(short))
	assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
	assert.ErrorContains(t, err, "memory size[128] is smaller than the actual size[256]")

	// A host output and a host input are accepted, as in GE.
	hostOut, err := dev.MallocHost(256)
	require.NoError(t, err)
	defer hostOut.Close()
	hostIn, err := dev.MallocHost(256)
	require.NoError(t, err)
	defer hostIn.Close()
	b, err := zerocopy.Bind(m, zerocopy.WithAlwaysZeroCopy(), zerocopy.WithInputs(hostIn), zerocopy.WithOutputs(hostOut))
	require.NoError(t, err)
	require.NoError(t, b.Run())
	assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(b.SwapOutput(0, short)), "a swap keeps the rule")
	require.NoError(t, b.Close())

	_, err = zerocopy.Bind(m, zerocopy.WithDeviceOnly(), zerocopy.WithOutputs(hostOut))
	assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err), "device-only refuses host memory")
}
