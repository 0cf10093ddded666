package fallback_test

import (
	"sync"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/acltest"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/stretchr/testify/require"
)

// TestConformance runs the shared ACL conformance suite on a fresh
// fallback NPU. The hooks use the NPU's test surface: a queued task (npuhook) to hold a
// stream busy, FailTask to fail the next stream task, Leaks for what
// reset and finalize had to release.
func TestConformance(t *testing.T) {
	npu, err := fallback.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = npu.Close() })
	acltest.Run(t, npu, acltest.Options{
		HoldStream: func(s acl.StreamHandle) (func(), error) {
			gate := make(chan struct{})
			var once sync.Once
			release := func() { once.Do(func() { close(gate) }) }
			if _, err := npuhook.Of(npu).Enqueue(s, "hold", func() error { <-gate; return nil }); err != nil {
				return nil, err
			}
			return release, nil
		},
		FailNextTask: func(s acl.StreamHandle, code acl.Code) error {
			npu.FailTask(1, code)
			return nil
		},
		Leaks: func() []string {
			var out []string
			for _, l := range npu.Leaks() {
				out = append(out, l.String())
			}
			return out
		},
	})
}
