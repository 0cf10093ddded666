package fallback_test

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/internal/npuhook"
)

// TestNPUSurface: *NPU's exported methods are acl.Backend and
// acl.ModelBackend and acl.OpBackend plus the few a user calls (counters to read, leaks,
// fault injection, the device-time profile) and the optional interfaces acl looks for. The machinery the
// fallback's subsystems share (queueing arbitrary stream work, raw device
// views, copy counting) is only reachable through internal/npuhook, so a
// caller cannot fake the counters that prove zero copy.
func TestNPUSurface(t *testing.T) {
	api := map[string]bool{}
	for _, it := range []reflect.Type{reflect.TypeFor[acl.Backend](), reflect.TypeFor[acl.ModelBackend](), reflect.TypeFor[acl.OpBackend](),
		// Optional interfaces acl looks for: the context-bounded and the unbound synchronize.
		reflect.TypeFor[acl.ContextSyncer](), reflect.TypeFor[acl.StreamDrainer]()} {
		for i := range it.NumMethod() {
			api[it.Method(i).Name] = true
		}
	}
	user := map[string]bool{
		"Close": true, "Counters": true, "ResetCounters": true, "Leaks": true, "ClearLeaks": true,
		"FailAllocation": true, "FailTask": true, "ModelStats": true,
		// The device-time profile (WithDeviceProfile) a user writes for pprof.
		"WriteDeviceProfile": true, "ResetDeviceProfile": true,
	}
	nt := reflect.TypeFor[*fallback.NPU]()
	var extra []string
	for i := range nt.NumMethod() {
		if m := nt.Method(i).Name; !api[m] && !user[m] {
			extra = append(extra, m)
		}
	}
	assert.Empty(t, extra, "methods beyond the ACL interfaces and the user surface")
	for _, hook := range []string{"CountCopy", "CountLaunch", "Enqueue", "DeviceBytes", "Classify", "RegisterCollective"} {
		_, ok := nt.MethodByName(hook)
		assert.False(t, ok, "%s must not be exported on *NPU", hook)
	}
}

// TestHooksOf: the hooks reach an *NPU and nothing else.
func TestHooksOf(t *testing.T) {
	npu, err := fallback.New(fallback.WithDevices(2), fallback.WithDeviceMemory(1<<20))
	require.NoError(t, err)
	t.Cleanup(func() { _ = npu.Close() })
	h := npuhook.Of(npu)
	require.NotNil(t, h)
	assert.Equal(t, 2, h.DeviceCount())
	assert.Nil(t, npuhook.Of(nil))
	assert.Nil(t, npuhook.Of((*fallback.NPU)(nil)))
	assert.Nil(t, npuhook.Of("not an NPU"))
}
