// Package zcrt is the zero-copy runtime: GE's zero-copy model input/output
// at run time, which backends that execute compiled models (the fallback)
// build on. Users bind buffers with package zerocopy; nothing here is
// called by a user.
//
// A backend that executes compiled models (ge.CompiledModel) builds one Runtime per
// loaded model. The Runtime owns:
//
//   - the argument memory: every task's table of 8-byte address slots, with
//     the region bases of this load added (weights for Fixed slots, the
//     model memory region for feature-map and IO slots);
//   - one offset record per model input and output (IORecord, GE's
//     ZeroCopyOffset): every slot that refers to the IO with its offset
//     relative to the IO's basic offset, whether the IO can be refreshed
//     in place (zero copy) or must be copied, and the address its slots
//     hold now;
//   - the address classification of every slot (AddrFixed, AddrFeatureMap,
//     AddrModelIO) and each task's refresh flags (RefreshByModelIO,
//     RefreshByFM), as GE's MemoryAppTypeClassifier and
//     TaskArgsRefreshTypeClassifier compute them.
//
// Executing is two steps. Prepare checks the caller's buffers against the
// model with GE's rules and messages (IO count, the size rule
// user + 64 < model, outputReuseInputMemIndexes pairs, host buffers under
// WORKSPACE_MEM_OPTIMIZE) and decides per IO whether its slots point at the
// caller's buffer (refresh by model IO, no copy) or at the model's own block
// with a copy (a host buffer, an IO inside the feature map, an IO reached by
// a slot that cannot take an external address). Prepare only reads the
// Runtime, so it may run at call time while an earlier execution is still
// queued. Apply then patches the argument memory in stream order: only the
// slots of IOs whose address changed since the last execution are
// rewritten, and the count is kept (Stats) so tests can prove it.
//
// The package imports acl and ge only, never a backend; it neither
// allocates device memory nor copies data: the backend does both from what
// Prepare decided.
//
// # Concurrency
//
// A Runtime is safe for concurrent Prepare calls and Stats reads; Apply and
// the argument memory it mutates must be used by one execution at a time,
// which the ACL rule "one model id executes once at a time" guarantees.
package zcrt
