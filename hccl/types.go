package hccl

import (
	"strconv"
	"unsafe"
)

// DataType is an HcclDataType: the element type of a buffer. A plain
// value, safe to share, like every enum of this package.
type DataType int32

// HcclDataType values (hccl_types.h). 12 and 14–17 exist from CANN 7.3 on.
const (
	Int8             DataType = 0
	Int16            DataType = 1
	Int32            DataType = 2
	Float16          DataType = 3
	Float32          DataType = 4
	Int64            DataType = 5
	Uint64           DataType = 6
	Uint8            DataType = 7
	Uint16           DataType = 8
	Uint32           DataType = 9
	Float64          DataType = 10
	BFloat16         DataType = 11
	Int128           DataType = 12
	HiFloat8         DataType = 14
	Float8E4M3       DataType = 15
	Float8E5M2       DataType = 16
	Float8E8M0       DataType = 17
	DataTypeReserved DataType = 255
)

var dataTypeInfo = map[DataType]struct {
	name string
	size uintptr
}{
	Int8: {"int8", 1}, Int16: {"int16", 2}, Int32: {"int32", 4}, Float16: {"fp16", 2},
	Float32: {"fp32", 4}, Int64: {"int64", 8}, Uint64: {"uint64", 8}, Uint8: {"uint8", 1},
	Uint16: {"uint16", 2}, Uint32: {"uint32", 4}, Float64: {"fp64", 8}, BFloat16: {"bf16", 2},
	Int128: {"int128", 16}, HiFloat8: {"hif8", 1}, Float8E4M3: {"fp8e4m3", 1}, Float8E5M2: {"fp8e5m2", 1},
	Float8E8M0: {"fp8e8m0", 1},
}

// Size is the element size in bytes; 0 for a value that is not a data type.
func (d DataType) Size() uintptr { return dataTypeInfo[d].size }

// Valid reports whether d is a defined data type.
func (d DataType) Valid() bool { return d.Size() != 0 }

// Reducible reports whether reductions (AllReduce, ReduceScatter) accept d
// with some operation: int8/16/32/64, fp16, bf16 and fp32. HCCL refuses
// the unsigned types and fp64 (HCCL_E_NOT_SUPPORT; hcomm legacy
// hccl_communicator_host.cc:1002-1006, CheckDataType), and int128, hif8 and
// the fp8 types move but are not reduced. See ReducibleBy for the
// operation.
func (d DataType) Reducible() bool {
	switch d {
	case Int8, Int16, Int32, Int64, Float16, BFloat16, Float32:
		return true
	}
	return false
}

// ReducibleBy reports whether op may reduce d: Reducible, except PROD of
// int16 and bf16 (A2/A3: hcomm legacy param_check.cc:327-345,
// HcomCheckReduceDataType).
func (d DataType) ReducibleBy(op ReduceOp) bool {
	if op == Prod && (d == Int16 || d == BFloat16) {
		return false
	}
	return d.Reducible() && op.Valid()
}

// String returns the short name ("fp16", "int32", …).
func (d DataType) String() string {
	if i, ok := dataTypeInfo[d]; ok {
		return i.name
	}
	return "HcclDataType(" + strconv.Itoa(int(d)) + ")"
}

// DataTypes returns every defined data type in ascending value order.
func DataTypes() []DataType {
	return []DataType{Int8, Int16, Int32, Float16, Float32, Int64, Uint64, Uint8, Uint16, Uint32, Float64, BFloat16,
		Int128, HiFloat8, Float8E4M3, Float8E5M2, Float8E8M0}
}

// ReduceOp is an HcclReduceOp.
type ReduceOp int32

// HcclReduceOp values.
const (
	Sum            ReduceOp = 0
	Prod           ReduceOp = 1
	Max            ReduceOp = 2
	Min            ReduceOp = 3
	ReduceReserved ReduceOp = 255
)

// Valid reports whether op is one of Sum, Prod, Max, Min.
func (op ReduceOp) Valid() bool { return op >= Sum && op <= Min }

// String returns "sum", "prod", "max" or "min".
func (op ReduceOp) String() string {
	switch op {
	case Sum:
		return "sum"
	case Prod:
		return "prod"
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return "HcclReduceOp(" + strconv.Itoa(int(op)) + ")"
}

// ReduceOps returns the four reduction operations.
func ReduceOps() []ReduceOp { return []ReduceOp{Sum, Prod, Max, Min} }

// RootInfoBytes is HCCL_ROOT_INFO_BYTES.
const RootInfoBytes = 4108

// RootInfo is an HcclRootInfo: the opaque bytes rank 0 gets from
// GetRootInfo and hands to every rank (by any transport) for
// CommInitRootInfo. A plain value, safe to copy and share.
type RootInfo [RootInfoBytes]byte

// CommNameMaxLength is COMM_NAME_MAX_LENGTH, the size of the buffer
// HcclGetCommName fills (including the terminating NUL).
const CommNameMaxLength = 128

// CommHandle is an HcclComm, the C communicator handle. Only the backend
// that returned it can interpret it; zero is the null handle. A plain value;
// what may be done with it concurrently is the backend's rule (see Backend).
type CommHandle uintptr

// RegistrationHandle is the handle HcclCommRegister returns for a registered
// buffer; zero is the null handle. A plain value.
type RegistrationHandle uintptr

// SendRecvType is an HcclSendRecvType.
type SendRecvType int32

// HcclSendRecvType values.
const (
	SendType SendRecvType = 0 // HCCL_SEND
	RecvType SendRecvType = 1 // HCCL_RECV
)

// SendRecvItem is an HcclSendRecvItem, one entry of BatchSendRecv, with the
// C layout (32 bytes: type @0, buf @8, count @16, dataType @24, remoteRank
// @28). A plain value; Buf must point to memory the backend can reach
// (device memory, or plain memory for the stub), never to the Go heap when
// the call is asynchronous.
type SendRecvItem struct {
	Type       SendRecvType
	_          [4]byte
	Buf        unsafe.Pointer
	Count      uint64
	DataType   DataType
	RemoteRank uint32
}

// MemType is the memory type of HcclRegisterMem (its int type argument) and
// of CommMem (CommMemType).
type MemType int32

// Memory types.
const (
	MemDevice MemType = 0 // HCCL_MEM_TYPE_DEVICE / COMM_MEM_TYPE_DEVICE
	MemHost   MemType = 1 // HCCL_MEM_TYPE_HOST / COMM_MEM_TYPE_HOST
)

// Valid reports whether t is MemDevice or MemHost.
func (t MemType) Valid() bool { return t == MemDevice || t == MemHost }

// String returns "device" or "host".
func (t MemType) String() string {
	switch t {
	case MemDevice:
		return "device"
	case MemHost:
		return "host"
	}
	return "MemType(" + strconv.Itoa(int(t)) + ")"
}

// CommMem is the C CommMem {CommMemType type; void *addr; uint64_t size}
// (24 bytes) that HcclEnableMemAccess fills with the peer memory a
// descriptor names. Addr is an address in the peer's address space as seen
// by the one-sided transport: it is only meaningful as the RemoteAddr of a
// OneSideOpDesc, so it is a uintptr and never dereferenced here. A plain
// value.
type CommMem struct {
	Type MemType
	_    [4]byte
	Addr uintptr
	Size uint64
}

// Contains reports whether [addr, addr+n) lies inside m.
func (m CommMem) Contains(addr uintptr, n uint64) bool {
	return addr >= m.Addr && uint64(addr-m.Addr) <= m.Size && n <= m.Size-uint64(addr-m.Addr)
}
