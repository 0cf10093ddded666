package hccltest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ascend-go/cann/hccl"
)

// suite carries what every subtest needs.
type suite struct {
	env      Env
	b        hccl.Backend
	opts     Options
	seed     int64
	watchdog time.Duration
	maxRanks int
	short    bool
}

// Run runs the conformance suite against env. Subtests (each runs on 1 to
// 8 ranks as it needs; the names are the same on every env, and a rank
// count above env.MaxRanks skips):
//
//	Init/RootInfo, Init/RootInfoConfig, Init/All, Init/ClusterInfo,
//	Init/Errors, Barrier, AllReduce, Broadcast, AllGather, ReduceScatter,
//	AlltoAllV, CountZero, Large (buffers up to 64 MiB per rank; skipped
//	when short), SendRecv, BatchSendRecv, Mismatch/First,
//	Mismatch/Later/<case>, Errors, Timeout/{Init,Collective,Recv},
//	OneSided, OneSidedErrors, Windows/A3, Windows/OtherSoc (an env that
//	is a SocEnv, else declared lacking SocSwitch), Comm (the idiomatic
//	layer), Destroy.
func Run(t *testing.T, env Env, opts Options) {
	s := &suite{env: env, b: env.Backend(), opts: opts, seed: opts.Seed}
	if s.seed == 0 {
		s.seed = time.Now().UnixNano()
	}
	t.Logf("hccltest: backend %s, seed %d (Options.Seed reproduces the data)", s.b.Name(), s.seed)
	s.watchdog = opts.Watchdog
	if s.watchdog == 0 {
		s.watchdog = max(2*time.Minute, 20*opts.Timeout)
	}
	s.maxRanks = min(maxSuiteRanks, env.MaxRanks())
	if s.maxRanks < 2 {
		t.Fatalf("env.MaxRanks() = %d, the suite needs at least 2", env.MaxRanks())
	}
	s.short = opts.Short || testing.Short()
	// On a ConcurrentEnv, the subtests that mostly wait out a timeout
	// (Timeout/*, Mismatch/Later/*) run their independent groups in
	// parallel with each other (never with the subtests around them: their
	// parents return once all have finished).

	t.Run("Init", s.testInit)
	t.Run("Barrier", s.testBarrier)
	t.Run("AllReduce", s.testAllReduce)
	t.Run("Broadcast", s.testBroadcast)
	t.Run("AllGather", s.testAllGather)
	t.Run("ReduceScatter", s.testReduceScatter)
	t.Run("AlltoAllV", s.testAlltoAllV)
	t.Run("CountZero", s.testCountZero)
	t.Run("Large", s.testLarge)
	t.Run("SendRecv", s.testSendRecv)
	t.Run("BatchSendRecv", s.testBatchSendRecv)
	t.Run("Mismatch", s.testMismatch)
	t.Run("Errors", s.testErrors)
	t.Run("Timeout", s.testTimeout)
	t.Run("OneSided", s.testOneSided)
	t.Run("OneSidedErrors", s.testOneSidedErrors)
	t.Run("Windows", s.testWindows)
	t.Run("Comm", s.testComm)
	t.Run("Destroy", s.testDestroy)
}

// rng returns a generator seeded from the suite seed and the test name, so
// each subtest's data is reproducible on its own.
func (s *suite) rng(t testing.TB) *rand.Rand {
	var h uint64 = 14695981039346656037
	for _, c := range []byte(t.Name()) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return rand.New(rand.NewPCG(uint64(s.seed), h))
}

// maxSuiteRanks is the most ranks a subtest uses. Subtest names never
// depend on the env, so every backend runs the same names; a rank count
// the env cannot host is skipped (needRanks).
const maxSuiteRanks = 8

// needRanks skips t when the env hosts fewer than n ranks.
func (s *suite) needRanks(t *testing.T, n int) {
	t.Helper()
	if n > s.maxRanks {
		s.skip(t, "%d ranks: the env hosts at most %d", n, s.maxRanks)
	}
}

// rankCounts is every rank count from 1 to maxSuiteRanks (fewer when
// short); counts above the env's limit skip.
func (s *suite) rankCounts() []int {
	if s.short {
		return []int{1, 2, 3, 5}
	}
	out := make([]int, maxSuiteRanks)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// counts are the element counts each collective is checked with.
func (s *suite) counts() []int {
	if s.short {
		return []int{1, 33}
	}
	return []int{1, 3, 64, 1000}
}

// code asserts that err carries the HCCL result want.
func code(t testing.TB, want hccl.Result, err error, what string, args ...any) bool {
	t.Helper()
	got := hccl.ResultOf(err)
	if got != want {
		t.Errorf("%s: got %v (%v), want %v", sprintf(what, args...), got, err, want)
		return false
	}
	return true
}
