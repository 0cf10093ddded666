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
	out, err := inferOp(op, descs, attrs)
	if err != nil {
		return nil, inferErr("eval", op, err)
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
	out, err := inferOp(op, in, attrs)
	if err != nil {
		return nil, inferErr("infer", op, err)
	}
	return out, nil
}
