package zcrt

import (
	"strconv"
	"strings"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/gert"
)

// SizeSlack is the number of bytes a caller's buffer may be smaller than
// the model's tensor: device allocations are padded (GE's "aligned 64
// bytes"), so only user + SizeSlack < model is an error.
const SizeSlack = 64

// OptionOutputReuseInputMemIndexes is the GE option, read from the model's
// attributes, listing output/input pairs that must share one address:
// "i,o|i,o".
const OptionOutputReuseInputMemIndexes = "ge.exec.outputReuseInputMemIndexes"

// BufferPlace says where a caller's buffer lives, in GE's placement
// vocabulary (gert.TensorPlacement, the module's one vocabulary):
// OnDeviceHbm is memory the model's device can address (its device memory,
// or host memory registered for device access); OnHost is host memory the
// device cannot address (plain or pinned), whose data is copied.
type BufferPlace = gert.TensorPlacement

// Buffer placements.
const (
	PlaceDevice = gert.OnDeviceHbm
	PlaceHost   = gert.OnHost
)

// UserBuffer is one caller buffer bound to a model input or output.
type UserBuffer struct {
	Addr  uintptr
	Size  uintptr
	Place BufferPlace
}

// ReusePair is one entry of outputReuseInputMemIndexes: output Out must
// have the same address as input In.
type ReusePair struct{ In, Out int }

// ParseReusePairs parses "i,o|i,o" as GE does: entries without a comma are
// skipped, and so are entries that are not two non-negative integers. It
// never fails.
func ParseReusePairs(s string) []ReusePair {
	var pairs []ReusePair
	for _, e := range strings.Split(s, "|") {
		a, b, ok := strings.Cut(e, ",")
		if !ok {
			continue
		}
		i, err1 := strconv.Atoi(strings.TrimSpace(a))
		o, err2 := strconv.Atoi(strings.TrimSpace(b))
		if err1 != nil || err2 != nil || i < 0 || o < 0 {
			continue
		}
		pairs = append(pairs, ReusePair{In: i, Out: o})
	}
	return pairs
}

// checkReusePairs is GE's CheckIoReuseAddrs: every pair must be in range
// and name equal addresses. Like every check of UpdateAllNodeArgs, a
// failure reaches the caller as ACL_ERROR_GE_FAILURE: CopyModelData wraps
// it in GE_ASSERT_SUCCESS (hicann/ge runtime/v1/graph/load/model_manager/
// davinci_model.cc:6673, 6705), whose generic failure ACL maps to 500002
// (api/acl/common/error_codes_inner.h:24-28); GE only logs its reason
// (base/common/util.cc:585-590).
func checkReusePairs(op string, pairs []ReusePair, in, out []UserBuffer) error {
	for _, p := range pairs {
		if p.In >= len(in) || p.Out >= len(out) {
			return acl.Errorf(op, acl.CodeGEFailure,
				"input index %d or output index %d of option '%s' is out of range: %d inputs, %d outputs",
				p.In, p.Out, OptionOutputReuseInputMemIndexes, len(in), len(out))
		}
		if in[p.In].Addr != out[p.Out].Addr {
			return acl.Errorf(op, acl.CodeGEFailure,
				"Output[%d] address(0x%x) must be same as Input[%d] address(0x%x) because the option '%s' is set with value containing '%d,%d', addr reuse check not pass",
				p.Out, out[p.Out].Addr, p.In, in[p.In].Addr, OptionOutputReuseInputMemIndexes, p.In, p.Out)
		}
	}
	return nil
}

// CheckIOCount is the IO count check of GE's UpdateAllNodeArgs: E13025
// (logged), ACL_ERROR_GE_FAILURE returned (see checkReusePairs) when the
// caller gives a different number of inputs or outputs than the model has. Prepare runs it first; a backend
// may run it before it looks at the buffers.
func CheckIOCount(op string, m *ge.CompiledModel, nin, nout int) error {
	if nin != len(m.Inputs) || nout != len(m.Outputs) {
		return acl.Errorf(op, acl.CodeGEFailure,
			"E13025: The number of inputs or outputs provided by the user is inconsistent with that required by the model: %d inputs and %d outputs given, model %q has %d inputs and %d outputs",
			nin, nout, m.Name, len(m.Inputs), len(m.Outputs))
	}
	return nil
}

// checkSize is GE's CheckUserAndModelSize: a buffer may be larger than the
// tensor, or smaller by at most SizeSlack bytes.
func checkSize(op string, r *IORecord, user uintptr) error {
	model := uint64(r.Size)
	if uint64(user)+SizeSlack < model {
		return acl.Errorf(op, acl.CodeGEFailure,
			"E13025: %s: The %s memory size set by the user is invalid.The provided %d bytes of buffer size plus the aligned %d bytes is less than the tensor size %d bytes required by the model",
			r.label(), r.Ref.Dir, user, SizeSlack, model)
	}
	return nil
}

// checkHostInReuseMode refuses a host buffer when the workspace excludes IO
// memory (WORKSPACE_MEM_OPTIMIZE): there is no model block to copy through.
func checkHostInReuseMode(op string, r *IORecord) error {
	return acl.Errorf(op, acl.CodeGEFailure,
		"E13025: Zero-copy memory reuse mode is enabled, requiring all I/O tensors to be allocated in device memory, but %s is located in host memory; allocate it with aclrtMalloc",
		r.label())
}
