package native_test

import (
	"testing"
	"time"

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
// the optional one-sided and window symbols: those subtests skip, the rest
// pass.
func TestConformanceWithoutOneSided(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	b := openStub(t, "STUB_NO_ONESIDED")
	setTimeout(t, b, time.Second)
	hccltest.Run(t, &stubEnv{t: t, b: b}, hccltest.Options{Timeout: time.Second, Short: true})
}
