package ge

import (
	"fmt"

	"github.com/ascend-go/cann/acl"
)

// HostTensor is a tensor in host memory: its descriptor and its dense
// little-endian bytes. It is a plain value; the slice is shared, not copied.
type HostTensor struct {
	Desc TensorDesc
	Data []byte
}

// EvalOp runs one op on host tensors and returns its outputs: inference,
// then the op's kernel on freshly allocated outputs and workspace. It is
// what constant folding uses, so a folded value is computed by the same
// kernel the model would run. Alias ops (Reshape, Identity) return their
// input's bytes under the new descriptor. Errors are the *acl.Error that
// building or running the op gives. EvalOp is safe for concurrent use.
func EvalOp(op OpType, attrs Attrs, in []HostTensor) ([]HostTensor, error) {
	if !op.Known() || op == OpData || op == OpConst || op == OpNetOutput || op.IsCollective() {
		return nil, acl.Errorf("ge.EvalOp", acl.CodeGEParamInvalid, "op %s cannot be evaluated on the host", op)
	}
	descs := make([]TensorDesc, len(in))
	for i, t := range in {
		descs[i] = t.Desc
	}
	out, empty, err := inferHost(op, descs, attrs)
	if err != nil {
		return nil, inferErr("eval", op, err)
	}
	if empty {
		return evalEmpty(op, attrs, in, out)
	}
	for i, t := range in {
		if int64(len(t.Data)) < t.Desc.Size() {
			return nil, acl.Errorf("ge.EvalOp", acl.CodeInvalidParam, "%s input %d holds %d bytes, %s needs %d", op, i, len(t.Data), t.Desc, t.Desc.Size())
		}
	}
	if op.IsAlias() {
		return []HostTensor{{Desc: out[0], Data: in[0].Data[:out[0].Size()]}}, nil
	}
	ws := workspaceOf(op, descs, out, attrs)
	t := &Task{Op: op, Name: "eval_" + op.String(), Attrs: attrs, Inputs: descs, Outputs: out, Workspace: ws}
	args := make([][]byte, 0, len(in)+len(out)+len(ws))
	for _, d := range in {
		t.Args = append(t.Args, ArgSlot{Size: d.Desc.Size()})
		args = append(args, d.Data)
	}
	res := make([]HostTensor, len(out))
	for i, d := range out {
		t.Args = append(t.Args, ArgSlot{Size: d.Size()})
		res[i] = HostTensor{Desc: d, Data: alignedBuf(d.Size())}
		args = append(args, res[i].Data)
	}
	for _, n := range ws {
		t.Args = append(t.Args, ArgSlot{Size: n})
		args = append(args, alignedBuf(n))
	}
	if err := RunTask(t, args); err != nil {
		return nil, err
	}
	return res, nil
}

// alignedBuf returns n zero bytes on an 8-byte boundary, so float kernels
// can use them in place.
func alignedBuf(n int64) []byte {
	if n == 0 {
		return []byte{}
	}
	w := make([]uint64, (n+7)/8)
	return unsafeBytes(w)[:n]
}

// String returns "f32[2,3]: 24 bytes".
func (h HostTensor) String() string { return fmt.Sprintf("%s: %d bytes", h.Desc, len(h.Data)) }

// InferOp returns the output descriptors op would give on inputs of the
// given descriptors, without running it (for callers that decide whether
// to fold an op before paying for it).
func InferOp(op OpType, attrs Attrs, in []TensorDesc) ([]TensorDesc, error) {
	out, _, err := inferHost(op, in, attrs)
	if err != nil {
		return nil, inferErr("infer", op, err)
	}
	return out, nil
}

// inferHost infers as a compile does and, where that fails on an empty
// operand or result, again with empty tensors allowed: a host evaluation
// (constant folding, an interpreted ONNX run) meets empty tensors that a
// compiled model never holds (an empty prefix of a shape, a slice past
// the end). empty reports that an input or output has a zero dim. An
// inference that cannot handle zero dims fails with an error saying so,
// never a panic.
func inferHost(op OpType, in []TensorDesc, attrs Attrs) (out []TensorDesc, empty bool, err error) {
	out, err = inferOp(op, in, attrs)
	if err == nil {
		return out, false, nil
	}
	strict := err
	defer func() {
		if r := recover(); r != nil {
			out, empty, err = nil, false, fmt.Errorf("empty tensors are not supported by %s's inference (%v)", op, r)
		}
	}()
	eout, eerr := inferOpWith(op, in, attrs, true)
	if eerr != nil {
		return nil, false, strict
	}
	for _, d := range append(append([]TensorDesc(nil), in...), eout...) {
		if d.NumElements() == 0 {
			return eout, true, nil
		}
	}
	return nil, false, strict
}

// evalEmpty evaluates an op with an empty operand or result: every result
// empty needs no kernel; Concat drops its empty operands; any other op of
// an empty operand is refused.
func evalEmpty(op OpType, attrs Attrs, in []HostTensor, out []TensorDesc) ([]HostTensor, error) {
	all := true
	for _, d := range out {
		all = all && d.NumElements() == 0
	}
	if all {
		res := make([]HostTensor, len(out))
		for i, d := range out {
			res[i] = HostTensor{Desc: d, Data: []byte{}}
		}
		return res, nil
	}
	if op == OpConcat {
		var keep []HostTensor
		for _, t := range in {
			if t.Desc.NumElements() > 0 {
				keep = append(keep, t)
			}
		}
		if len(keep) > 0 && len(keep) < len(in) {
			return EvalOp(op, attrs, keep)
		}
	}
	return nil, acl.Errorf("ge.EvalOp", acl.CodeGEParamInvalid, "%s: empty tensors are not supported as its operands (a result is not empty)", op)
}
