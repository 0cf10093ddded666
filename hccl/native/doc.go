// Package native is the purego binding of HCCL: an hccl.Backend over
// libhccl.so (and libhcomm.so, where newer CANN releases moved the
// communicator functions), loaded at run time without cgo.
//
// Open finds the library through internal/dl: an explicit WithLibraryPath,
// then $CANN_HCCL_LIB, then $ASCEND_HOME_PATH/lib64 and
// $ASCEND_TOOLKIT_HOME/lib64, then the loader path. Each symbol is looked
// up in libhccl.so first and then in libhcomm.so. The functions every CANN
// release since 5.x exports are required (Open fails naming the missing
// ones); the rest — HcclBarrier, HcclCommInitRootInfoConfig,
// HcclCommInitClusterInfoConfig, HcclCommInitAll,
// HcclAlltoAllV, HcclBatchSendRecv, the one-sided service of
// hccl_one_sided_services.h (a header the vendor does not promise stable)
// and the buffer windows — are optional: when missing, the method returns an
// error matching hccl.ErrNotSupported (HCCL_E_NOT_SUPPORT), never a crash.
//
// Every call goes through purego.SyscallN with uintptr arguments. Go memory
// reaches C only for the duration of a call (arguments, output parameters,
// descriptor arrays, pinned with runtime.Pinner where a struct points to
// another Go object); C never keeps it. Buffers are the caller's device
// memory.
//
// HCCL operations act on the device context current on the calling OS
// thread (ACL's rule): drive each rank from a goroutine locked to its
// thread. The package does not depend on the ACL binding; streams are
// acl.StreamHandle values from any ACL backend.
package native
