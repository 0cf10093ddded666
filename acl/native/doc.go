// Package native implements acl.Backend (and acl.ModelBackend) over the
// vendor AscendCL library, loaded at run time through purego: no cgo, so a
// program builds with CGO_ENABLED=0 and runs on a machine without CANN until
// it calls Open.
//
// # Which library is loaded
//
// Open looks for the library in this order (see internal/dl):
//
//  1. WithLibraryPath, a file or a directory;
//  2. $CANN_ACL_LIB, a file or a directory;
//  3. $ASCEND_HOME_PATH/lib64, then $ASCEND_TOOLKIT_HOME/lib64;
//  4. the dynamic loader's search path.
//
// An explicit option or $CANN_ACL_LIB is authoritative: if nothing loads
// from it, Open fails rather than pick up another installation. In each
// place the monolithic libascendcl.so is preferred; otherwise the split
// runtime libacl_rt.so is used, with libacl_mdl.so beside it supplying the
// model functions. (*Backend).Path reports the primary file that was loaded
// and (*Backend).Paths every file.
//
// Every symbol is resolved once, at Open. A missing required symbol makes
// Open fail with a *MissingSymbolsError that names all of them; a missing
// optional symbol (newer or deprecated functions, see OptionalSymbols)
// makes only its method fail, with an *acl.Error of code
// ACL_ERROR_API_NOT_SUPPORT that matches acl.ErrNotSupported.
//
// # Calls, errors and threads
//
// Every method is one C call with uintptr arguments, made through the call
// helper the HCCL binding shares (internal/dl: pooled frames, the error
// message read on the calling thread). A non-zero
// aclError becomes an *acl.Error whose Op is the C function and whose Msg is
// the text of aclGetRecentErrMsg, read on the same OS thread right after the
// failing call (the goroutine is locked to its thread for the call and that
// read only) and copied into a Go string at once.
//
// ACL keeps the current context per OS thread. Context-bound methods
// (streams, events, memory, GetDevice, ...) therefore need the caller to hold
// runtime.LockOSThread from SetDevice/SetCurrentContext until its last
// context-bound call; the idiomatic layer in package acl does this. A
// goroutine that migrated to a thread with no current context gets
// ACL_ERROR_RT_CONTEXT_NULL from the library, exactly as a C thread would.
//
// # Memory
//
// C never keeps a pointer into the Go heap: output parameters point at Go
// memory only for the duration of a call, and strings are copied in and out.
// Memory passed to asynchronous copies must outlive the copy and therefore
// must come from MallocHost or be registered (HostRegister), not be a Go
// slice.
//
// # Concurrency
//
// A *Backend is safe for concurrent use, as the C library is. Close must not
// race with calls still in flight; calls made after Close return an
// *acl.Error with code ACL_ERROR_UNINITIALIZE.
//
// # Tests
//
// The tests of this package build the stub library of testdata/stub with
// the system C compiler (skipped without one unless CANN_REQUIRE_STUB=1) and
// run the acl conformance suite over it. When CANN_REAL_LIB_DIR names the
// lib64 directory of a real CANN installation, the same suite also runs on
// the hardware.
package native
