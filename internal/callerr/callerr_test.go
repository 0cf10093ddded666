package callerr

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMessage(t *testing.T) {
	assert.Equal(t, "aclrtMalloc: ACL_ERROR_BAD_ALLOC (200000): no room", Message("aclrtMalloc", "ACL_ERROR_BAD_ALLOC", 200000, true, "no room"))
	assert.Equal(t, "HcclAllReduce: HCCL_E_PARA (1)", Message("HcclAllReduce", "HCCL_E_PARA", 1, true, ""))
	assert.Equal(t, "op: aclError(-7): m", Message("op", "aclError(-7)", -7, false, "m"))
}
