package hcclsim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// TestTinyConnectTimeout is the regression test of a panic: with a connect
// timeout of a nanosecond the rendezvous timer fired before GetRootInfo had
// stored it, and closing the rendezvous dereferenced the nil timer in the
// timer's goroutine, killing the process. Now every rendezvous simply
// times out, and a rank that tries to join one gets an error, not a hang.
func TestTinyConnectTimeout(t *testing.T) {
	npu, err := fallback.New(fallback.WithDevices(1), fallback.WithDeviceMemory(1<<20), fallback.WithHostMemory(1<<20))
	require.NoError(t, err)
	defer npu.Close()
	sim := hcclsim.New(npu, hcclsim.Options{ConnectTimeout: time.Nanosecond, ExecTimeout: time.Nanosecond})
	defer sim.Close()
	for range 200 {
		root, err := sim.GetRootInfo()
		require.NoError(t, err)
		_, err = sim.CommInitRootInfo(2, &root, 0)
		require.Error(t, err)
		require.NotEqual(t, hccl.Success, hccl.ResultOf(err), "%v", err)
	}
}
