package hcclsim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// TestOneSocPerFallback: the HCCL model's devices are the NPU's SoC, so
// what aclrtGetSocName reports (examples/doctor prints it) is the SoC
// whose features HCCL has: by default both are an Atlas A3 with buffer
// windows; an NPU made an A2 gives an HCCL model without windows; an
// explicit Options.SocName still wins.
func TestOneSocPerFallback(t *testing.T) {
	for _, c := range []struct {
		npuSoc, simSoc string
		wantSoc        string
		windows        bool
	}{
		{"", "", hcclsim.DefaultSocName, true},
		{"Ascend910B1", "", "Ascend910B1", false},
		{"Ascend910B1", "Ascend910_9381", "Ascend910B1", true},
	} {
		opts := []fallback.Option{fallback.WithDevices(1), fallback.WithDeviceMemory(1 << 24), fallback.WithHostMemory(1 << 20)}
		if c.npuSoc != "" {
			opts = append(opts, fallback.WithSocName(c.npuSoc))
		}
		npu, err := fallback.New(opts...)
		require.NoError(t, err)
		require.NoError(t, npu.Init(""))
		require.NoError(t, npu.SetDevice(0))
		assert.Equal(t, c.wantSoc, npu.GetSocName())
		sim := hcclsim.New(npu, hcclsim.Options{SocName: c.simSoc})
		comms, err := sim.CommInitAll([]int32{0})
		require.NoError(t, err)
		p, err := npu.Malloc(4096, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		h, err := sim.CommRegister(comms[0], p, 4096, 0)
		if c.windows {
			require.NoError(t, err, "npu %q sim %q", c.npuSoc, c.simSoc)
			require.NoError(t, sim.CommDeregister(comms[0], h))
		} else {
			require.ErrorIs(t, err, hccl.ErrNotSupported, "npu %q sim %q", c.npuSoc, c.simSoc)
			assert.ErrorContains(t, err, c.npuSoc)
		}
		require.NoError(t, sim.CommDestroy(comms[0]))
		require.NoError(t, sim.Close())
		require.NoError(t, npu.Free(p))
		require.NoError(t, npu.Close())
	}
}
