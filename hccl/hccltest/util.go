package hccltest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/ascend-go/cann/hccl"
)

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// skip skips t with reason, reporting it to Options.Skipped.
func (s *suite) skip(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := sprintf(format, args...)
	if s.opts.Skipped != nil {
		s.opts.Skipped(t.Name(), reason)
	}
	t.Skip(reason)
}

// lacks reports whether the backend declared it lacks f.
func (s *suite) lacks(f Feature) bool { return slices.Contains(s.opts.Lacks, f) }

// unsupported skips t when err says the backend lacks f and the backend
// declared so (Options.Lacks); an undeclared ErrNotSupported fails t.
func (s *suite) unsupported(t testing.TB, f Feature, err error) {
	t.Helper()
	if !errors.Is(err, hccl.ErrNotSupported) {
		return
	}
	if s.lacks(f) {
		s.skip(t, "the backend declares it lacks %s: %v", f, err)
	}
	t.Fatalf("%s: ErrNotSupported from a backend that does not declare it lacks it (Options.Lacks): %v", f, err)
}

// allCode asserts that every listed rank's error carries want.
func allCode(t testing.TB, want hccl.Result, errs []error, ranks []int, what string) {
	t.Helper()
	if ranks == nil {
		for r := range errs {
			ranks = append(ranks, r)
		}
	}
	for _, r := range ranks {
		code(t, want, errs[r], "%s, rank %d", what, r)
	}
}

// subtest is a named subtest of t.
type subtest struct {
	name string
	f    func(t *testing.T)
}

// runAll runs the subtests of t: at the same time when the env hosts
// concurrent groups (ConcurrentEnv), else in order. Concurrent subtests
// are plain t.Run calls from goroutines of their own, not t.Parallel: a
// parallel subtest waits for one of go test's -parallel slots
// (GOMAXPROCS by default, 2 on a small machine), which the tests around
// it hold, and these subtests only wait on timeouts. runAll returns once
// every subtest has.
func (s *suite) runAll(t *testing.T, subs []subtest) {
	if c, ok := s.env.(ConcurrentEnv); !ok || !c.ConcurrentGroups() {
		for _, st := range subs {
			t.Run(st.name, st.f)
		}
		return
	}
	var wg sync.WaitGroup
	for _, st := range subs {
		wg.Go(func() { t.Run(st.name, st.f) })
	}
	wg.Wait()
}
