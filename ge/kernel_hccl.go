package ge

import (
	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// Collective is what a collective task needs from the rank that runs it:
// its communicator for the task's group. Methods block until the
// collective has completed on this rank (every rank of the communicator
// must take part) or failed; an implementation bounds the wait by its own
// timeout. Implementations must be safe for concurrent use with the
// communicator's other operations, as a model execution may run on any
// goroutine.
type Collective interface {
	// AllReduce reduces count elements of type dt in send over every rank
	// with op and writes the result to recv (len(send) and len(recv) are
	// at least count elements; send may equal recv).
	AllReduce(send, recv []byte, count uint64, dt acl.DataType, op hccl.ReduceOp) error
}

// RunCollective executes a collective task (OpType.IsCollective) on
// resolved argument memory through c: args[i] is the memory behind
// t.Args[i], as for RunTask. The task is validated first (a hand-built or
// corrupted task gives ACL_ERROR_INVALID_PARAM, a short argument
// ACL_ERROR_RT_PARAM_INVALID, a task that is not a collective or a nil
// communicator ACL_ERROR_FEATURE_UNSUPPORTED); an error of the
// communicator is returned as it is, for the executor to report.
//
// RunCollective is safe for concurrent use; it blocks as long as c does.
func RunCollective(t *Task, args [][]byte, c Collective) error {
	if t == nil {
		return acl.NilHandle("ge.RunCollective", "task")
	}
	const op = "ge.RunCollective"
	if !t.Op.IsCollective() {
		return acl.Errorf(op, acl.CodeFeatureUnsupported, "task %q: op %s is not a collective", t.Name, t.Op)
	}
	if c == nil {
		return acl.Errorf(op, acl.CodeFeatureUnsupported, "task %q (%s): no communicator for group %q", t.Name, t.Op, CollectiveGroup(t))
	}
	if err := t.check(); err != nil {
		return acl.Errorf(op, acl.CodeInvalidParam, "task %q (%s): %v", t.Name, t.Op, err)
	}
	if len(args) != len(t.Args) {
		return acl.Errorf(op, acl.CodeInvalidParam, "task %q (%s): %d arguments, want %d", t.Name, t.Op, len(args), len(t.Args))
	}
	for i, a := range t.Args {
		if int64(len(args[i])) < a.Size {
			return acl.Errorf(op, acl.CodeRTParamInvalid, "task %q (%s): argument %d holds %d bytes, needs %d", t.Name, t.Op, i, len(args[i]), a.Size)
		}
	}
	return runCollective(t, args, c)
}

// runCollective dispatches a validated collective task.
func runCollective(t *Task, args [][]byte, c Collective) error {
	switch t.Op {
	case OpHcclAllReduce:
		// The reduction was validated with the task.
		rop, _ := ParseReduceOp(t.Attrs.String(AttrReduction))
		d := t.Inputs[0]
		return c.AllReduce(args[0][:d.Size()], args[1][:d.Size()], uint64(d.NumElements()), d.DataType, rop)
	}
	return acl.Errorf("ge.RunCollective", acl.CodeFeatureUnsupported, "task %q: collective op %s has no runner", t.Name, t.Op)
}
