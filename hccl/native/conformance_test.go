package native_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/hccl/hccltest"
)

// TestConformance runs the HCCL conformance suite on the native binding
// over the C stub.
func TestConformance(t *testing.T) {
	b := openStub(t)
	const timeout = time.Second
	setTimeout(t, b, timeout)
	hccltest.Run(t, &stubEnv{t: t, b: b}, hccltest.Options{Timeout: timeout})
}

// TestConformanceWithoutOneSided runs the suite over a library that lacks
// the optional one-sided and window symbols, declared so: those subtests
// skip — the test checks that they did, and that nothing else did — and
// the rest pass.
func TestConformanceWithoutOneSided(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	b := openStub(t, "STUB_NO_ONESIDED")
	setTimeout(t, b, time.Second)
	var mu sync.Mutex
	skipped := map[string]string{}
	hccltest.Run(t, &stubEnv{t: t, b: b}, hccltest.Options{Timeout: time.Second, Short: true,
		Lacks: []hccltest.Feature{hccltest.OneSided, hccltest.Windows},
		Skipped: func(name, reason string) {
			mu.Lock()
			defer mu.Unlock()
			skipped[name] = reason
		}})
	top := map[string]int{}
	for name, reason := range skipped {
		parts := strings.Split(name, "/")
		require.GreaterOrEqual(t, len(parts), 2, name)
		if parts[1] == "Large" && strings.Contains(reason, "Options.Short") {
			continue // Short: true
		}
		top[parts[1]]++
		assert.Contains(t, []string{"OneSided", "OneSidedErrors", "Windows"}, parts[1], "%s skipped: %s", name, reason)
		assert.Contains(t, reason, "the backend declares it lacks", name)
	}
	for _, want := range []string{"OneSided", "OneSidedErrors", "Windows"} {
		assert.Positive(t, top[want], "no %s subtest skipped", want)
	}
}
