// Package hccltest is the conformance suite of hccl.Backend: one entry
// point, Run, runs the same named subtests on any backend (the native
// binding over the C stub or a real CANN install, the fallback) and asserts
// the behaviour docs/misuse.md (section HCCL) specifies.
//
// The suite drives every rank from its own goroutine locked to its own OS
// thread (as a real program drives one NPU per thread), checks every
// collective against a reference computed in float64 on fresh random data,
// and takes all buffer memory from the Env, so the fallback can hand out
// device memory and the stub plain memory.
package hccltest

import (
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// Env is a backend under test and the per-rank resources it needs. The
// suite calls OpenRank from several goroutines at once (one per rank), so
// implementations must be safe for concurrent use.
type Env interface {
	// Backend is the implementation under test.
	Backend() hccl.Backend
	// MaxRanks is how many ranks the env can host at once (at least 2; the
	// suite uses up to min(8, MaxRanks)).
	MaxRanks() int
	// Devices returns the device ids of n ranks, for CommInitAll and
	// OpenRank.
	Devices(n int) []int32
	// OpenRank prepares the calling goroutine, which the suite has locked
	// to its OS thread, to act as rank `rank` on device dev (for the
	// fallback: set the device, create a stream) and returns its
	// resources. The suite calls every method of the returned Rank on the
	// same goroutine, then Close; the goroutine exits with its thread still
	// locked, so thread state set here dies with the thread.
	OpenRank(rank int, dev int32) (Rank, error)
}

// Rank is one rank's memory and stream. Used from one goroutine only.
type Rank interface {
	// Stream is the stream HCCL operations are issued to (0 is allowed).
	Stream() acl.StreamHandle
	// Sync waits until the operations issued to Stream completed and
	// returns the first error the stream reported.
	Sync() error
	// Alloc returns size bytes of memory HCCL can use as a buffer (device
	// memory for a device backend). size may be 0 (a non-nil pointer is
	// still returned).
	Alloc(size uintptr) (unsafe.Pointer, error)
	// Free releases memory from Alloc.
	Free(p unsafe.Pointer) error
	// MemType is the type of Alloc's memory for HcclRegisterMem.
	MemType() hccl.MemType
	// Write copies src to dst (memory from Alloc, possibly at an offset).
	Write(dst unsafe.Pointer, src []byte) error
	// Read copies len(dst) bytes from src (memory from Alloc) to dst.
	Read(dst []byte, src unsafe.Pointer) error
	// Close releases the rank's resources (streams, ...).
	Close() error
}

// LiveCounter is implemented by envs that can count the backend's live
// resources (communicators, registrations, accesses, windows, pending
// exchanges); the suite then checks that destroying communicators
// releases everything. Live is called from the test goroutine.
type LiveCounter interface {
	Live() int
}

// ConcurrentEnv is implemented by envs that host several groups of ranks
// at once, each group's calls independent of the others' (ranks on their
// own threads of one process do; rank processes that serve one call at a
// time do not: one group's blocking call would hold up another's). The
// suite then runs the subtests that mostly wait out a timeout
// (Timeout/*, Mismatch/Later/*) in parallel with each other.
type ConcurrentEnv interface {
	ConcurrentGroups() bool
}

// Options tune Run. A plain value.
type Options struct {
	// Timeout is both the connect and the exec timeout the env configured
	// on its backend (HCCL_CONNECT_TIMEOUT / HCCL_EXEC_TIMEOUT, a config,
	// or a backend option). The Timeout subtests check that a rank that
	// never arrives yields HCCL_E_TIMEOUT at initialisation and at the
	// first operation within it (plus slack), and a 507048 synchronize no
	// earlier than it for a later operation; Mismatch/Later waits it out
	// too. 0 skips those.
	Timeout time.Duration
	// Seed seeds the random data (0: a fresh seed, logged).
	Seed int64
	// Short runs fewer rank counts and sizes (testing.Short also does).
	Short bool
	// Watchdog bounds each step in which all ranks run; a step that takes
	// longer fails the test instead of hanging (default 2 minutes, or
	// 20 × Timeout when that is larger).
	Watchdog time.Duration
	// SkipOneSided skips the one-sided service subtests (for a library
	// known to lack them, or where they may crash).
	SkipOneSided bool
	// Lacks declares the optional features the backend may lack. A
	// subtest that meets ErrNotSupported from a declared feature skips,
	// saying so; from any other feature it fails: the fallback and the
	// stubs run every subtest, so an unsupported answer there is a
	// regression, not a reason to skip.
	Lacks []Feature
	// Skipped, when set, is called with the full name and the reason of
	// every subtest the suite skips, so a test can check that the skips
	// it expects happened (and no others).
	Skipped func(name, reason string)
}

// Feature is an optional part of HCCL that a backend may lack.
type Feature string

// The optional features the suite knows.
const (
	OneSided    Feature = "the one-sided service" // HcclRegisterMem … HcclBatchGet/Put
	Windows     Feature = "buffer windows"        // HcclCommRegister, HcclCommExchangeMem
	ClusterInfo Feature = "CommInitClusterInfo"   // communicators from a rank table
	SocSwitch   Feature = "another SoC (SocEnv)"  // Windows/OtherSoc: the env runs a non-A3 device
)
