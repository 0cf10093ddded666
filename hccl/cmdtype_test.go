package hccl_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ascend-go/cann/hccl"
)

// TestCmdType: HcclCMDType's values and names as hccl_types.h defines
// them, including the gap at 19 and the explicit 20 and 100.
func TestCmdType(t *testing.T) {
	want := map[int32]string{
		0: "HCCL_CMD_INVALID", 1: "HCCL_CMD_BROADCAST", 2: "HCCL_CMD_ALLREDUCE", 8: "HCCL_CMD_ALLTOALLV",
		13: "HCCL_CMD_BATCH_SEND_RECV", 14: "HCCL_CMD_BATCH_PUT", 15: "HCCL_CMD_BATCH_GET",
		18: "HCCL_CMD_BATCH_WRITE", 20: "HCCL_CMD_HALF_ALLTOALLV", 21: "HCCL_CMD_ALL",
		100: "HCCL_CMD_FINALIZE", 103: "HCCL_CMD_BARRIER", 104: "HCCL_CMD_MAX",
	}
	for v, name := range want {
		c := hccl.CmdType(v)
		assert.True(t, c.Valid(), "%d", v)
		assert.Equal(t, name, c.String())
	}
	for _, v := range []int32{-1, 19, 22, 99, 105} {
		assert.False(t, hccl.CmdType(v).Valid(), "%d", v)
	}
	assert.Equal(t, "HcclCMDType(19)", hccl.CmdType(19).String())
	assert.Equal(t, hccl.CmdType(7), hccl.CmdReduceScatter)
	assert.Equal(t, hccl.CmdType(102), hccl.CmdInit)
}
