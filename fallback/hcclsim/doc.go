// Package hcclsim is the HCCL model of the host-memory NPU (package
// fallback): an hccl.Backend (New) whose ranks are devices of a fallback
// NPU, driven by goroutines of one process or living in separate
// processes, with the argument checks, agreement rules, timeouts and
// result codes of docs/misuse.md (section HCCL).
//
// # Operations
//
// Every operation is stream-ordered and asynchronous like any other stream
// task, and surfaces failures where HCCL does (docs/misuse.md, HCCL). The
// first operation of a communicator builds its links: its call waits for
// every peer (HCCL_E_TIMEOUT after the connect timeout) and compares the
// ranks' arguments (count, data type, reduce op, root, AlltoAllV counts and
// types, a Send's and its Recv's count and type); with HCCL_DFS_CONFIG
// inconsistent_check first (the default) or on a disagreement fails the
// call with HCCL_E_INTERNAL on every rank. Every later call checks its
// own arguments, posts its descriptor and returns; its stream task
// collects the peers' descriptors, compares them and moves the data. A
// disagreement, a rank that never calls, or a lost rank makes the task
// wait out the exec timeout (counted from when it started) and fail the
// stream with ACL_ERROR_RT_FFTS_PLUS_TIMEOUT 507048, the message naming
// what differed or which rank was missing; GetCommAsyncError reports
// HCCL_E_PARA for a disagreement under inconsistent_check on and nothing
// else; the communicator is unusable after it: later tasks fail the same
// way, at once (only the task that broke it waits out the timeout). A rank's calls run at most 256 collectives ahead of its stream.
// Send/Recv pairs match in call order per peer and direction.
//
// Reductions cover every integer type (wrapping like C), fp16 and bf16
// (accumulated in float32 over all ranks in rank order, rounded once), fp32
// and fp64; MAX and MIN propagate NaN. int128 and the 8-bit float types
// move as bytes but are not reduced (HCCL_E_NOT_SUPPORT, as on the device).
// SUM of every type and PROD of floats (fp16 and bf16 included: widened,
// combined and rounded in the vector registers, F16C for fp16) use AVX2
// kernels on amd64; a large reduction reads every source once and writes
// every destination once, in one pass with non-temporal stores. Results
// are bit-identical to the scalar path.
//
// One-sided memory (RegisterMem, ExchangeMemDesc, EnableMemAccess,
// BatchGet, BatchPut) checks every descriptor of a batch at the call: the
// local buffer, access enabled on this rank (else HCCL_E_NOT_FOUND), the
// range inside the enabled memory (else HCCL_E_PARA), the owner still
// holding the registration (else HCCL_E_REMOTE); the owner checks again
// when the transfer runs, and one bad descriptor moves no byte at all.
//
// # Ranks in one process
//
// When every rank of a communicator lives in this process (CommInitAll,
// or root-info and rank-table ranks that all joined from here), ranks
// read and write each other's device memory directly: an AllReduce is one
// pass in which rank r reduces its share of every rank's input and writes
// it to every rank's output, the shares computed concurrently on the ranks'
// streams.
//
// # Ranks as processes
//
// GetRootInfo starts a rendezvous on a loopback TCP port; the root info
// carries its address. Ranks in other processes (or a mix) join over TCP;
// the rendezvous then carries only control messages: each collective's
// arguments, Send/Recv and exchange pairings, and the news that a rank was
// lost (its connection closed without a goodbye, as when the process is
// killed), which fails the others at once. Each rank maps a small segment
// in /dev/shm for every rank (golang.org/x/sys/unix Mmap) holding the
// futex-based barriers and doorbells the ranks wait on, and all segment
// names are unlinked as soon as every rank has mapped them, so nothing is
// left behind even if a process is killed.
//
// Data moves directly between device memories when it can: a rank whose
// NPU keeps device memory in a memory file (fallback.WithShareableDeviceMemory,
// which package procs uses) announces (pid, fd, base, size) in its segment,
// and every rank maps every peer's file through /proc/<pid>/fd/<fd>
// (MAP_SHARED), translating peer addresses by offset. A collective then
// runs exactly as in one process, each rank computing its share from and
// into every rank's buffers (whose addresses the ranks publish at the
// start barrier), between a start and an end barrier; a receive copies
// straight from the sender's buffer; a one-sided request names the
// requester's buffer, and the owner's server checks the registration and
// copies between its memory and that buffer. A peer's mapping stays valid
// after the peer dies (the file is sealed: it can neither shrink nor
// grow), so a lost rank is a timeout, not a fault; mappings go at
// CommDestroy. Segments are reserved whole when created (fallocate), so a
// full /dev/shm fails initialisation with HCCL_E_SYSCALL on every rank;
// segments cannot be sealed, and a fault in one (a truncated file) fails
// the operation with HCCL_E_REMOTE instead of killing the process
// (fault.go).
//
// When any rank cannot be mapped (its memory is not shareable, or /proc
// is not permitted), the whole communicator stages its data, as every
// rank learns at formation: a rank copies its data into its segment's
// staging area in pieces (Options.BufferBytes, HCCL_BUFFSIZE), ranks meet
// at barriers, and each computes its share from the peers' staging areas;
// one-sided requests are served by the owner copying between its
// registered memory and the requester's staging area. ReadTraffic counts
// the bytes each path moved.
//
// Package procs starts rank processes for tests, benchmarks and tools.
//
// # Who may join
//
// The root info carries a random secret besides the rendezvous address.
// A connection to the rendezvous must prove it holds the secret (an HMAC
// over fresh nonces, compared in constant time) before it can claim a
// rank, and the rendezvous proves it back; control messages travel in
// bounded binary frames; segment names are made by the rendezvous, opened
// without following links and only when they are private files of this
// user; device memory announced by a peer is mapped only when it is a
// sealed fallback device memory file of this user that is no other rank's,
// and never used at the address the peer names; what a rank makes the
// rendezvous hold (open collectives within a window of sequence numbers,
// waiting pairings, frame sizes, how long it waits) is bounded. In direct
// mode every rank maps every peer's whole device memory read-write, so a
// holder of the root info can read and write it all: hand the root info to
// rank processes over an inherited pipe, never in the environment.
// docs/hcclsim-threat-model.md says what the fallback trusts and what it
// does not.
//
// # Limits
//
// CommInitClusterInfo forms a world from ranks in this process or in
// others (rank 0 hands its root info to the others sealed in the job
// directory, ranktable_key.go). A
// root info forms a world of at most 512 ranks. A multi-process rank
// holds at most 1024 registrations. Timeouts come from Options, then
// HCCL_EXEC_TIMEOUT / HCCL_CONNECT_TIMEOUT, then the device's defaults
// (1836 s and 120 s; 30 s each with Options.ShortDefaults or
// CANN_HCCLSIM_SHORT_TIMEOUTS=1).
package hcclsim
