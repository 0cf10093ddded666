package hccl

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// Backend is HCCL, one method per C function, with the C semantics: the same
// argument checks, the same result codes, the same blocking behaviour (a
// communicator's first operation returns once every rank has joined it,
// or with HCCL_E_TIMEOUT / HCCL_E_INTERNAL; later ones only enqueue, and
// a peer that never comes or disagrees fails the stream's synchronize
// with ACL_ERROR_RT_FFTS_PLUS_TIMEOUT after HCCL_EXEC_TIMEOUT).
// The rules both implementations follow are in docs/misuse.md, section
// HCCL, and are asserted by package hccl/hccltest. Two implementations
// exist: the purego binding of libhccl/libhcomm (package hccl/native) and
// the host-memory model (package fallback). Programs normally use Comm and
// Window over a Backend instead of calling it directly.
//
// Errors are *Error values carrying the HcclResult. Buffers are
// unsafe.Pointer to device memory (plain memory for the test stub); a
// backend never keeps a pointer into the Go heap after a call returns.
// Output parameters of the C functions are results here; C arrays are
// slices (their length is the C count argument).
//
// Implementations are safe for concurrent use. Each rank of a communicator
// is normally driven by its own goroutine (locked to its OS thread when the
// device context matters), since a communicator's first operation blocks
// until all ranks arrive.
type Backend interface {
	// Name says which implementation this is ("native", "fallback").
	Name() string

	// Communicator setup and teardown.

	GetRootInfo() (RootInfo, error)                                                                         // HcclGetRootInfo
	CommInitRootInfo(nRanks uint32, root *RootInfo, rank uint32) (CommHandle, error)                        // HcclCommInitRootInfo
	CommInitRootInfoConfig(nRanks uint32, root *RootInfo, rank uint32, cfg *CommConfig) (CommHandle, error) // HcclCommInitRootInfoConfig
	CommInitClusterInfo(clusterInfo string, rank uint32) (CommHandle, error)                                // HcclCommInitClusterInfo (rank table file path)
	CommInitAll(devices []int32) ([]CommHandle, error)                                                      // HcclCommInitAll (ndev = len(devices))
	CommDestroy(c CommHandle) error                                                                         // HcclCommDestroy

	// Queries.

	GetRankSize(c CommHandle) (uint32, error)       // HcclGetRankSize
	GetRankId(c CommHandle) (uint32, error)         // HcclGetRankId
	GetCommName(c CommHandle) (string, error)       // HcclGetCommName
	GetCommAsyncError(c CommHandle) (Result, error) // HcclGetCommAsyncError

	// Collectives. count is in elements of dt.

	Barrier(c CommHandle, s acl.StreamHandle) error                                                                              // HcclBarrier
	AllReduce(send, recv unsafe.Pointer, count uint64, dt DataType, op ReduceOp, c CommHandle, s acl.StreamHandle) error         // HcclAllReduce
	Broadcast(buf unsafe.Pointer, count uint64, dt DataType, root uint32, c CommHandle, s acl.StreamHandle) error                // HcclBroadcast
	AllGather(send, recv unsafe.Pointer, sendCount uint64, dt DataType, c CommHandle, s acl.StreamHandle) error                  // HcclAllGather
	ReduceScatter(send, recv unsafe.Pointer, recvCount uint64, dt DataType, op ReduceOp, c CommHandle, s acl.StreamHandle) error // HcclReduceScatter
	// AlltoAllV: the four count/displacement slices (u64 arrays in C, in
	// elements) must each have rank-size entries, else HCCL_E_PARA.
	AlltoAllV(send unsafe.Pointer, sendCounts, sdispls []uint64, sendType DataType,
		recv unsafe.Pointer, recvCounts, rdispls []uint64, recvType DataType, c CommHandle, s acl.StreamHandle) error // HcclAlltoAllV

	// Point to point.

	Send(buf unsafe.Pointer, count uint64, dt DataType, destRank uint32, c CommHandle, s acl.StreamHandle) error // HcclSend
	Recv(buf unsafe.Pointer, count uint64, dt DataType, srcRank uint32, c CommHandle, s acl.StreamHandle) error  // HcclRecv
	BatchSendRecv(items []SendRecvItem, c CommHandle, s acl.StreamHandle) error                                  // HcclBatchSendRecv

	// One-sided service (hccl_one_sided_services.h, a header the vendor
	// does not promise stable): the native backend returns an error
	// matching ErrNotSupported when the library lacks these symbols.

	RegisterMem(c CommHandle, remoteRank uint32, typ MemType, addr unsafe.Pointer, size uint64) (MemDesc, error) // HcclRegisterMem
	DeregisterMem(c CommHandle, desc *MemDesc) error                                                             // HcclDeregisterMem
	// ExchangeMemDesc sends local to remoteRank and receives that peer's
	// descriptors into remote (its length is the capacity); it returns how
	// many were received (actualNum). timeout is passed through (HCCL
	// reserves it and uses its own).
	ExchangeMemDesc(c CommHandle, remoteRank uint32, local []MemDesc, timeout int32, remote []MemDesc) (uint32, error) // HcclExchangeMemDesc
	EnableMemAccess(c CommHandle, remoteDesc *MemDesc) (CommMem, error)                                                // HcclEnableMemAccess
	DisableMemAccess(c CommHandle, remoteDesc *MemDesc) error                                                          // HcclDisableMemAccess
	BatchGet(c CommHandle, remoteRank uint32, descs []OneSideOpDesc, s acl.StreamHandle) error                         // HcclBatchGet (remote → local)
	BatchPut(c CommHandle, remoteRank uint32, descs []OneSideOpDesc, s acl.StreamHandle) error                         // HcclBatchPut (local → remote)

	// Buffer windows (hccl.h / hccl_ex.h): register a buffer with the
	// communicator so collectives can use it in place, and exchange it with
	// peers. flag is reserved and must be 0.

	CommRegister(c CommHandle, addr unsafe.Pointer, size uint64, flag uint32) (RegistrationHandle, error) // HcclCommRegister
	CommDeregister(c CommHandle, w RegistrationHandle) error                                              // HcclCommDeregister
	CommExchangeMem(c CommHandle, w RegistrationHandle, peerRanks []uint32) error                         // HcclCommExchangeMem
}

// ClusterInfoConfigBackend is a Backend with HcclCommInitClusterInfoConfig
// (hccl.h): CommInitClusterInfo with a configuration, as
// CommInitRootInfoConfig is CommInitRootInfo with one. It is a separate
// interface because libhccl exports the function only in later releases;
// the native backend implements it and returns an error matching
// ErrNotSupported when the library lacks the symbol.
type ClusterInfoConfigBackend interface {
	CommInitClusterInfoConfig(clusterInfo string, rank uint32, cfg *CommConfig) (CommHandle, error) // HcclCommInitClusterInfoConfig
}
