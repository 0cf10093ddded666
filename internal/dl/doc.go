// Package dl finds, opens and resolves the vendor shared libraries (ACL,
// HCCL) through purego, without cgo.
//
// Discovery. [Open] tries, in order:
//
//  1. the explicit path of the caller's option (Spec.Path), a file or a
//     directory;
//  2. the environment override named by Spec.EnvVar (CANN_ACL_LIB for ACL,
//     CANN_HCCL_LIB for HCCL), a file or a directory;
//  3. $ASCEND_HOME_PATH/lib64, then $ASCEND_TOOLKIT_HOME/lib64;
//  4. the dynamic loader's own search path (bare soname).
//
// An explicit path or an environment override is authoritative: when it is
// set and nothing loads from it, Open fails instead of silently picking up
// another installation. The directories of step 3 and the loader path are
// tried one after another until one yields a library.
//
// In every location the names of Spec.Names are tried in order (for ACL the
// monolithic libascendcl.so first, then the split libacl_rt.so); the first
// that loads is the primary library. The libraries of Spec.Extras (for ACL
// libacl_mdl.so) are then loaded from the same place when present, and a
// symbol lookup falls through every loaded library in order.
//
// Symbols. [Library.Resolve] fills one uintptr slot per name: a missing
// required name fails with a [*MissingSymbolsError] naming all of them, a
// missing optional name leaves its slot 0 for the caller to report as
// unsupported. dlerror is per OS thread, so every Dlopen/Dlsym sequence runs
// under runtime.LockOSThread.
//
// Lifetime. A Library holds one reference for its opener; [Library.Acquire]
// hands out more. The libraries are dlclosed when the last reference is
// released. Close is idempotent.
//
// Calls. Both bindings call C the same way: arguments in a pooled [Frame]
// (no allocation per call), [Call] for status-returning functions and
// [CallPtr] for constructors, each reading the library's per-thread error
// message on the calling OS thread when the call fails, [CallRaw] for
// value-returning functions, and [Escape] to keep caller memory off the
// goroutine stack while C holds it as a uintptr.
//
// Concurrency. A Library is safe for concurrent use; Spec, Attempt and the
// errors are plain values, not changed after Open returns.
package dl
