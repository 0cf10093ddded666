package hccl

import "unsafe"

// MemDescBytes is the size of an HcclMemDesc (HCCL_MEM_DESC_LENGTH + 1).
const MemDescBytes = 512

// MemDesc is an HcclMemDesc: the opaque description of memory a rank
// registered for one peer (HcclRegisterMem), sent to that peer with
// HcclExchangeMemDesc and turned into access by HcclEnableMemAccess. Only
// the backend that produced it can interpret it. A plain value.
type MemDesc [MemDescBytes]byte

// MemDescs is the C HcclMemDescs {HcclMemDesc *array; u32 arrayLength}
// (16 bytes), kept for ABI documentation and layout tests; the Backend
// methods take slices and backends build this struct themselves. A plain
// value.
type MemDescs struct {
	Array       *MemDesc
	ArrayLength uint32
	_           [4]byte
}

// OneSideOpDesc is an HcclOneSideOpDesc, one transfer of BatchGet or
// BatchPut, with the C layout (32 bytes: localAddr @0, remoteAddr @8, count
// @16, dataType @24). LocalAddr is this rank's buffer; RemoteAddr is an
// address inside a CommMem the peer registered and this rank enabled, so it
// is a uintptr (it may not be mapped in this process). A plain value.
type OneSideOpDesc struct {
	LocalAddr  unsafe.Pointer
	RemoteAddr uintptr
	Count      uint64
	DataType   DataType
	_          [4]byte
}

// Bytes is Count × the element size (0 for an undefined data type).
func (d OneSideOpDesc) Bytes() uint64 { return d.Count * uint64(d.DataType.Size()) }

// MaxOneSideDescs is the most descriptors one BatchGet or BatchPut takes:
// more is HCCL_E_PARA (MAX_DESC_NUM; hcomm legacy tree,
// one_sided_service/one_sided_service_adapt.cc:47, checked at :410-413).
const MaxOneSideDescs = 256
