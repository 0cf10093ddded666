// Package hccl is the Go API of HCCL, the collective communication library of
// Ascend NPUs: result codes, data types, the ABI structs that cross the C
// boundary, the Backend interface (one method per C function) and idiomatic
// handles over it (Comm, Window, LocalMem, RemoteMem, Registration).
//
// The package never loads a library and never imports purego, so a program
// that uses only the pure-Go fallback builds fully static. Two backends
// implement Backend: the purego binding of libhccl (package hccl/native) and
// the host-memory model in package fallback. Package hccl/hccltest holds the
// conformance suite both pass.
//
// A communicator is a set of ranks; rank r of a communicator of size n talks
// to the others through collectives (AllReduce, Broadcast, AllGather,
// ReduceScatter, AlltoAllV, Barrier), point-to-point transfers (Send, Recv,
// BatchSendRecv) and one-sided reads and writes of memory a peer registered
// for it (RegisterMem, ExchangeMemDesc, EnableMemAccess, BatchGet, BatchPut).
// Every rank must issue the collectives of one communicator in the same
// order; ranks that disagree on an argument get HCCL_E_PARA and a rank that
// never arrives makes the others fail with HCCL_E_TIMEOUT (see
// docs/misuse.md, section HCCL).
//
// On the acl types: a Comm created OnStream(s) binds s's device context
// itself for every call (any goroutine may drive it), its *Mem methods
// (AllReduceMem, BroadcastMem, AllGatherMem, ReduceScatterMem, SendMem,
// RecvMem) take acl.DeviceBuffer or acl.HostBuffer and keep them open
// while queued work uses them (their Close waits for it), and a context
// with a deadline or cancel ends a wait for peers with an HCCL_E_TIMEOUT
// *Error that wraps ctx.Err(). Comm.Wait reports the stream's result. The
// raw forms (unsafe.Pointer buffers, WithStream handles) remain for
// callers that bind contexts themselves.
package hccl
