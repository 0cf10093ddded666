package ge

import (
	"fmt"

	"github.com/ascend-go/cann/acl"
)

// RunTask executes one task on resolved argument memory: args[i] is the
// memory behind t.Args[i] (an executor resolves each 8-byte slot address to
// a byte slice of device memory) and must hold at least t.Args[i].Size
// bytes. Inputs and outputs must not overlap.
//
// The task is validated first (descriptors consistent with the op's
// inference, slot sizes matching), so a hand-built or corrupted task yields
// ACL_ERROR_INVALID_PARAM instead of out-of-range access; a short argument
// yields ACL_ERROR_RT_PARAM_INVALID; a failure inside the kernel (a Gather
// index out of range) yields ACL_ERROR_RT_AICORE_EXCEPTION; an op without a
// host kernel yields ACL_ERROR_FEATURE_UNSUPPORTED.
//
// RunTask is safe for concurrent use on distinct argument memory.
func RunTask(t *Task, args [][]byte) error {
	if t == nil {
		return acl.NilHandle("ge.RunTask", "task")
	}
	s, ok := opSpecs[t.Op]
	if !ok || s.kernel == nil {
		return acl.Errorf("ge.RunTask", acl.CodeFeatureUnsupported, "task %q: op %s has no kernel", t.Name, t.Op)
	}
	if err := t.check(); err != nil {
		return acl.Errorf("ge.RunTask", acl.CodeInvalidParam, "task %q (%s): %v", t.Name, t.Op, err)
	}
	if len(args) != len(t.Args) {
		return acl.Errorf("ge.RunTask", acl.CodeInvalidParam, "task %q (%s): %d arguments, want %d", t.Name, t.Op, len(args), len(t.Args))
	}
	for i, a := range t.Args {
		if int64(len(args[i])) < a.Size {
			return acl.Errorf("ge.RunTask", acl.CodeRTParamInvalid, "task %q (%s): argument %d holds %d bytes, needs %d", t.Name, t.Op, i, len(args[i]), a.Size)
		}
	}
	return s.kernel(t, args)
}

// check verifies that the task is self-consistent: a task op, outputs equal
// to what inference derives from the inputs and attributes, the workspace
// the op needs, and one slot per input, output and workspace whose size is
// the tensor's.
func (t *Task) check() error {
	if !t.Op.HasTask() {
		return fmt.Errorf("op %s does not run as a task", t.Op)
	}
	out, err := inferOp(t.Op, t.Inputs, t.Attrs)
	if err != nil {
		return err
	}
	if len(out) != len(t.Outputs) {
		return fmt.Errorf("%d outputs, inference gives %d", len(t.Outputs), len(out))
	}
	for i := range out {
		if !out[i].Equal(TensorDesc{DataType: t.Outputs[i].DataType, Format: out[i].Format, Dims: t.Outputs[i].Dims}) {
			return fmt.Errorf("output %d is %s, inference gives %s", i, t.Outputs[i], out[i])
		}
		if !plainFormat(t.Outputs[i].Format) {
			return fmt.Errorf("output %d: format %s is not plain", i, t.Outputs[i].Format)
		}
	}
	ws := workspaceOf(t.Op, t.Inputs, t.Outputs, t.Attrs)
	if len(t.Workspace) != len(ws) {
		return fmt.Errorf("%d workspace buffers, op needs %d", len(t.Workspace), len(ws))
	}
	for i := range ws {
		if t.Workspace[i] < ws[i] || t.Workspace[i] > MaxTensorBytes {
			return fmt.Errorf("workspace %d is %d bytes, op needs %d", i, t.Workspace[i], ws[i])
		}
	}
	n := len(t.Inputs) + len(t.Outputs) + len(t.Workspace)
	if len(t.Args) != n {
		return fmt.Errorf("%d argument slots, want %d", len(t.Args), n)
	}
	for i, a := range t.Args {
		var want int64
		switch {
		case i < len(t.Inputs):
			want = t.Inputs[i].Size()
		case i < len(t.Inputs)+len(t.Outputs):
			want = t.Outputs[i-len(t.Inputs)].Size()
		default:
			want = t.Workspace[i-len(t.Inputs)-len(t.Outputs)]
		}
		if a.Size != want {
			return fmt.Errorf("argument %d slot is %d bytes, tensor is %d", i, a.Size, want)
		}
	}
	return t.checkCollectiveSlots()
}
