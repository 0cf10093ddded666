package native_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/acltest"
	"github.com/ascend-go/cann/acl/native"
)

// EnvRealLibDir names the lib64 directory of a real CANN installation on
// which the conformance suite also runs.
const EnvRealLibDir = "CANN_REAL_LIB_DIR"

// The conformance stub's per-device limits of streams and events (the
// fallback's conformance NPU has the same), small enough for the suite to
// fill a device.
const confStreams, confEvents = 40, 100

// TestConformanceStub runs the shared acl suite over the binding and the C
// stub. The stub instance is its own (a distinct build), so the suite finds
// it fresh whatever the other tests did.
func TestConformanceStub(t *testing.T) {
	s := openStub(t, "STUB_INSTANCE_CONFORMANCE", fmt.Sprintf("STUB_MAX_STREAMS=%d", confStreams), fmt.Sprintf("STUB_MAX_EVENTS=%d", confEvents))
	acltest.Run(t, s.Backend, acltest.Options{
		HoldStream: s.hold,
		FailNextTask: func(st acl.StreamHandle, code acl.Code) error {
			return s.failTask(st, 1, code)
		},
		Leaks:       s.leaks,
		StreamLimit: confStreams,
		EventLimit:  confEvents,
		Model:       func(ios []acltest.ModelIO) ([]byte, error) { return stubModel(ios, 64), nil },
		BatchModel: func(ios []acltest.ModelIO, gears []uint64) ([]byte, error) {
			// The stub's batch input needs an output twin of its format.
			batch := acltest.ModelIO{In: acl.DynamicTensorName, Out: "batch_out", DataType: acl.Int32, Format: acl.FormatND, Dims: []int64{1}}
			return stubModelGears(append(append([]acltest.ModelIO(nil), ios...), batch), 64, gears), nil
		},
		DynamicModel: func(ios []acltest.ModelIO) ([]byte, error) { return stubModel(ios, 64), nil },
	})
}

// TestConformanceReal runs the same suite on the hardware when
// CANN_REAL_LIB_DIR points at a CANN lib64 directory.
func TestConformanceReal(t *testing.T) {
	dir := os.Getenv(EnvRealLibDir)
	if dir == "" {
		t.Skip(EnvRealLibDir + " is not set; the suite runs on the stub only")
	}
	b, err := native.Open(native.WithLibraryPath(dir))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	t.Logf("loaded %v", b.Paths())
	acltest.Run(t, b, acltest.Options{SkipUndefined: true})
}
