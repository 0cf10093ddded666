package hcclsim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl/hccltest"
)

const testTimeout = time.Second

// newNPU returns an initialised fallback NPU with n devices, closed at the
// end of the test.
func newNPU(t testing.TB, n int) *fallback.NPU {
	t.Helper()
	npu, err := fallback.New(fallback.WithDevices(n))
	require.NoError(t, err)
	require.NoError(t, npu.Init(""))
	t.Cleanup(func() { _ = npu.Close() })
	return npu
}

// TestConformanceInProcess runs the shared HCCL suite with every rank a
// device of one fallback NPU, driven by its own goroutine.
func TestConformanceInProcess(t *testing.T) {
	npu := newNPU(t, 8)
	sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: testTimeout, ConnectTimeout: testTimeout})
	t.Cleanup(func() { _ = sim.Close() })
	hccltest.Run(t, &npuEnv{npu: npu, sim: sim}, hccltest.Options{Timeout: testTimeout})
}
