package hccltest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ascend-go/cann/hccl"
)

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// skipUnsupported skips the test when err says the backend lacks the
// feature.
func skipUnsupported(t testing.TB, err error, what string) {
	t.Helper()
	if errors.Is(err, hccl.ErrNotSupported) {
		t.Skipf("%s not supported by this backend: %v", what, err)
	}
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
