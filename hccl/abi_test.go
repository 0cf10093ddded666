package hccl

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The offsets are those of the C structs of hccl_types.h and
// hccl_one_sided_services.h on LP64.
func TestABILayout(t *testing.T) {
	var it SendRecvItem
	assert.EqualValues(t, 32, unsafe.Sizeof(it))
	assert.EqualValues(t, 0, unsafe.Offsetof(it.Type))
	assert.EqualValues(t, 8, unsafe.Offsetof(it.Buf))
	assert.EqualValues(t, 16, unsafe.Offsetof(it.Count))
	assert.EqualValues(t, 24, unsafe.Offsetof(it.DataType))
	assert.EqualValues(t, 28, unsafe.Offsetof(it.RemoteRank))

	var od OneSideOpDesc
	assert.EqualValues(t, 32, unsafe.Sizeof(od))
	assert.EqualValues(t, 0, unsafe.Offsetof(od.LocalAddr))
	assert.EqualValues(t, 8, unsafe.Offsetof(od.RemoteAddr))
	assert.EqualValues(t, 16, unsafe.Offsetof(od.Count))
	assert.EqualValues(t, 24, unsafe.Offsetof(od.DataType))

	var cm CommMem
	assert.EqualValues(t, 24, unsafe.Sizeof(cm))
	assert.EqualValues(t, 8, unsafe.Offsetof(cm.Addr))
	assert.EqualValues(t, 16, unsafe.Offsetof(cm.Size))

	assert.EqualValues(t, 512, unsafe.Sizeof(MemDesc{}))
	var mds MemDescs
	assert.EqualValues(t, 16, unsafe.Sizeof(mds))
	assert.EqualValues(t, 8, unsafe.Offsetof(mds.ArrayLength))
	assert.EqualValues(t, 4108, unsafe.Sizeof(RootInfo{}))

	var c CommConfig
	assert.EqualValues(t, 2232, unsafe.Sizeof(c))
	assert.EqualValues(t, 24, unsafe.Offsetof(c.BufferSize))
	assert.EqualValues(t, 28, unsafe.Offsetof(c.Deterministic))
	assert.EqualValues(t, 32, unsafe.Offsetof(c.CommName))
	assert.EqualValues(t, 160, unsafe.Offsetof(c.Udi))
	assert.EqualValues(t, 288, unsafe.Offsetof(c.OpExpansionMode))
	assert.EqualValues(t, 300, unsafe.Offsetof(c.WorldRankID))
	assert.EqualValues(t, 304, unsafe.Offsetof(c.JobID))
	assert.EqualValues(t, 312, unsafe.Offsetof(c.ACLGraphZeroCopyEnable))
	assert.EqualValues(t, 316, unsafe.Offsetof(c.ExecTimeOut))
	assert.EqualValues(t, 320, unsafe.Offsetof(c.Algo))
	assert.EqualValues(t, 1920, unsafe.Offsetof(c.RetryEnable))
	assert.EqualValues(t, 1970, unsafe.Offsetof(c.RetryParams))
	assert.EqualValues(t, 2098, unsafe.Offsetof(c.BufferName))
	assert.EqualValues(t, 2228, unsafe.Offsetof(c.Qos))
}

func TestCommConfigInit(t *testing.T) {
	c := NewCommConfig()
	raw := (*[CommConfigSize]byte)(unsafe.Pointer(c))
	assert.EqualValues(t, CommConfigSize, binary.LittleEndian.Uint64(raw[0:]))
	assert.EqualValues(t, uint32(0xf0f0f0f0), binary.LittleEndian.Uint32(raw[8:]))
	assert.EqualValues(t, 10, binary.LittleEndian.Uint32(raw[12:]))
	assert.EqualValues(t, 0, binary.LittleEndian.Uint64(raw[16:]))
	size, magic, ver := c.Header()
	assert.EqualValues(t, CommConfigSize, size)
	assert.EqualValues(t, CommConfigMagic, magic)
	assert.EqualValues(t, CommConfigVersion, ver)
	assert.True(t, c.Initialized())
	assert.Equal(t, ConfigNotSet, c.BufferSize)
	assert.Equal(t, ConfigNotSet, c.Deterministic)
	assert.Equal(t, ConfigNotSet, c.RdmaTrafficClass)
	assert.Equal(t, ConfigNotSet, c.RdmaServiceLevel)
	assert.Equal(t, ConfigNotSet, c.Qos)
	assert.Equal(t, ExecTimeoutNotSet, c.ExecTimeOut)
	assert.Zero(t, c.OpExpansionMode)
	assert.Zero(t, c.JobID)
	assert.Equal(t, "", c.Name())
	assert.False(t, new(CommConfig).Initialized())

	require.NoError(t, c.SetCommName("group_a"))
	assert.Equal(t, "group_a", c.Name())
	require.NoError(t, c.SetCommName("b"))
	assert.Equal(t, "b", c.Name(), "a shorter name must not keep the tail of the old one")
	long := make([]byte, CommNameMaxLength)
	for i := range long {
		long[i] = 'x'
	}
	err := c.SetCommName(string(long))
	assert.ErrorIs(t, err, ErrPara)
	assert.ErrorIs(t, c.SetCommName("a\x00b"), ErrPara)
	require.NoError(t, c.SetCommName(string(long[:CommNameMaxLength-1])))
}

func TestDataTypes(t *testing.T) {
	sizes := map[DataType]uintptr{Int8: 1, Int16: 2, Int32: 4, Float16: 2, Float32: 4, Int64: 8, Uint64: 8,
		Uint8: 1, Uint16: 2, Uint32: 4, Float64: 8, BFloat16: 2, Int128: 16, HiFloat8: 1, Float8E4M3: 1, Float8E5M2: 1, Float8E8M0: 1}
	assert.Len(t, DataTypes(), len(sizes))
	for _, d := range DataTypes() {
		assert.Equal(t, sizes[d], d.Size(), d.String())
		assert.True(t, d.Valid())
	}
	for _, v := range []int32{13, 18, -1, 255} {
		assert.False(t, DataType(v).Valid())
		assert.Zero(t, DataType(v).Size())
		assert.Contains(t, DataType(v).String(), "HcclDataType(")
	}
	assert.EqualValues(t, 12, Int128)
	assert.EqualValues(t, 14, HiFloat8)
	assert.EqualValues(t, 17, Float8E8M0)
	assert.True(t, BFloat16.Reducible())
	assert.False(t, Int128.Reducible())
	assert.False(t, Float8E4M3.Reducible())
	for _, op := range ReduceOps() {
		assert.True(t, op.Valid())
	}
	assert.False(t, ReduceReserved.Valid())
	assert.Equal(t, "max", Max.String())
}

func TestCommMemContains(t *testing.T) {
	m := CommMem{Addr: 1000, Size: 100}
	assert.True(t, m.Contains(1000, 100))
	assert.True(t, m.Contains(1099, 1))
	assert.True(t, m.Contains(1100, 0))
	assert.False(t, m.Contains(1099, 2))
	assert.False(t, m.Contains(999, 1))
	assert.False(t, m.Contains(1101, 0))
	assert.False(t, m.Contains(1050, ^uint64(0)))
}
