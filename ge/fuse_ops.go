package ge

import (
	"fmt"
	"math"

	"github.com/ascend-go/cann/acl"
	sg "github.com/ascend-go/cann/internal/sgemm"
)

// Fused ops: what the compiler's fusion pass (fuse.go) turns patterns of
// the graph into, as ONNX Runtime does at its default optimisation level.
// They are ordinary ops — a graph may use them directly — with numbers of
// their own, so a reader that does not know them refuses the model rather
// than misreading it.
const (
	// FusedMatMul is MatMul (inputs A, B, attributes transpose_a and
	// transpose_b) scaled by AttrScale (float, default 1: the GEMM's
	// alpha), with an optional bias [N] added to every row and an
	// activation, both applied per tile inside the GEMM (the epilogue).
	OpFusedMatMul OpType = 650
	// FusedConv is Conv (x, w, optional bias [M]; Conv's attributes)
	// followed by an activation, applied per tile inside the implicit GEMM.
	OpFusedConv OpType = 651
	// ElemChain is a chain of float32 element-wise ops computed in one
	// pass: acc = input 0, then for each step acc = op(acc) (a unary op) or
	// acc = acc op in[k] (in[k] op acc when the step is swapped) for an
	// input k whose dims are the trailing dims of input 0 (a scalar, a
	// bias row or a tensor of the same shape). Each step rounds to float32
	// as the op's own kernel does.
	OpElemChain OpType = 652
)

// Attributes of the fused ops.
const (
	// AttrActivation is the activation of FusedMatMul and FusedConv: the
	// OpType of Relu, LeakyRelu (alpha), Clip (min, max), Sigmoid, Tanh,
	// HardSigmoid (alpha, beta), HardSwish, Gelu, GeluErf or Silu; absent or
	// 0 for none.
	AttrActivation = "activation"
	// AttrPackedB marks FusedMatMul's B as packed ahead into GEMM panels
	// of this many columns (int, 1 to 32): B is then a float32 [K·N'] (N
	// rounded up to the panel width) and AttrPackedN gives N.
	AttrPackedB   = "packed_b"
	AttrPackedN   = "packed_n"
	AttrChainOps  = "chain_ops"  // ElemChain: ints, the OpType of each step
	AttrChainArgs = "chain_args" // ElemChain: ints, per step the input index of the second operand, -1 for a unary step
	AttrChainSwap = "chain_swap" // ElemChain: ints, per step 1 when the operand comes first (in[k] op acc)
)

// maxChain bounds the steps of an ElemChain.
const maxChain = 64

// epilogueActs maps the activations the GEMM epilogue runs to sgemm's.
var epilogueActs = map[OpType]sg.Act{
	OpRelu: sg.ActRelu, OpLeakyRelu: sg.ActLeakyRelu, OpClip: sg.ActClip, OpSigmoid: sg.ActSigmoid,
	OpTanh: sg.ActTanh, OpHardSigmoid: sg.ActHardSigmoid, OpHardSwish: sg.ActHardSwish,
	OpGelu: sg.ActGelu, OpGeluErf: sg.ActGeluErf, OpSilu: sg.ActSilu,
}

// chainUnary and chainBinary are the ops an ElemChain step may be.
var (
	chainUnary = map[OpType]bool{OpRelu: true, OpGelu: true, OpSilu: true, OpSigmoid: true, OpTanh: true,
		OpErf: true, OpExp: true, OpLog: true, OpSqrt: true, OpReciprocal: true, OpNeg: true, OpAbs: true,
		OpGeluErf: true, OpHardSwish: true}
	chainBinary = map[OpType]bool{OpAdd: true, OpSub: true, OpMul: true, OpDiv: true}
)

func init() {
	actAttrs := map[string]AttrKind{AttrActivation: AttrInt, AttrAlpha: AttrFloat, AttrBeta: AttrFloat,
		AttrMin: AttrFloat, AttrMax: AttrFloat}
	mm := map[string]AttrKind{AttrTransposeA: AttrBool, AttrTransposeB: AttrBool, AttrScale: AttrFloat,
		AttrPackedB: AttrInt, AttrPackedN: AttrInt}
	conv := map[string]AttrKind{AttrStrides: AttrInts, AttrPads: AttrInts, AttrDilations: AttrInts, AttrGroups: AttrInt}
	for k, v := range actAttrs {
		mm[k], conv[k] = v, v
	}
	registerOp(OpFusedMatMul, &opSpec{name: "FusedMatMul", minIn: 2, maxIn: 3, attrs: mm,
		infer: inferFusedMatMul, workspace: matmulWorkspace, kernel: matmulKernel})
	registerOp(OpFusedConv, &opSpec{name: "FusedConv", minIn: 2, maxIn: 3, attrs: conv,
		infer: inferFusedConv, kernel: convKernel})
	registerOp(OpElemChain, &opSpec{name: "ElemChain", minIn: 1, maxIn: maxChain + 1,
		attrs: map[string]AttrKind{AttrChainOps: AttrInts, AttrChainArgs: AttrInts, AttrChainSwap: AttrInts},
		infer: inferElemChain, kernel: elemChainKernel})
}

// epilogueOf reads a fused op's activation into an sgemm epilogue (bias
// not set).
func epilogueOf(a Attrs) (sg.Epilogue, error) {
	v := a.Int(AttrActivation, 0)
	if v == 0 {
		return sg.Epilogue{}, nil
	}
	op := OpType(v)
	act, ok := epilogueActs[op]
	if !ok || v < 0 || v > math.MaxUint16 {
		return sg.Epilogue{}, fmt.Errorf("activation %s cannot be fused", op)
	}
	e := sg.Epilogue{Act: act}
	switch op {
	case OpLeakyRelu:
		e.Alpha = a.Float(AttrAlpha, 0.01)
	case OpHardSigmoid:
		e.Alpha, e.Beta = a.Float(AttrAlpha, 0.2), a.Float(AttrBeta, 0.5)
	case OpClip:
		e.Alpha, e.Beta = a.Float(AttrMin, math.Inf(-1)), a.Float(AttrMax, math.Inf(1))
	}
	return e, nil
}

func inferFusedMatMul(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if _, err := epilogueOf(a); err != nil {
		return nil, err
	}
	if s := a.Float(AttrScale, 1); math.IsNaN(s) || math.IsInf(s, 0) || s == 0 || float64(float32(s)) != s {
		return nil, fmt.Errorf("scale %v must be a finite, non-zero float32", s)
	}
	in, err := unpackedInputs(in, a)
	if err != nil {
		return nil, err
	}
	out, err := inferMatMul(in, a)
	if err != nil {
		return nil, err
	}
	if len(in) == 3 {
		n := out[0].Dims[len(out[0].Dims)-1]
		if len(in[2].Dims) != 1 || in[2].Dims[0] != n {
			return nil, fmt.Errorf("bias %s must be [%d]", dimsString(in[2].Dims), n)
		}
	}
	return out, nil
}

// unpackedInputs returns FusedMatMul's inputs with a packed B described
// as the [K, N] matrix it holds, after checking the packing.
func unpackedInputs(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	nr := a.Int(AttrPackedB, 0)
	if nr == 0 {
		return in, nil
	}
	n := a.Int(AttrPackedN, 0)
	x, b := in[0], in[1]
	switch {
	case nr < 1 || nr > 32:
		return nil, fmt.Errorf("packed B panel width %d must be 1 to 32", nr)
	case n < 1 || n > MaxDim:
		return nil, fmt.Errorf("packed B has %d columns", n)
	case a.Bool(AttrTransposeB):
		return nil, fmt.Errorf("a packed B is not transposed")
	case x.DataType != acl.Float32 || b.DataType != acl.Float32 || len(b.Dims) != 1 || len(x.Dims) < 2:
		return nil, fmt.Errorf("packed B %s needs float32 A of rank >= 2 and a float32 [K·N'] B", b)
	}
	k := x.Dims[len(x.Dims)-1]
	if a.Bool(AttrTransposeA) {
		k = x.Dims[len(x.Dims)-2]
	}
	npad := (n + nr - 1) / nr * nr
	if k > MaxTensorBytes/4/npad || b.Dims[0] != k*npad {
		return nil, fmt.Errorf("packed B %s does not hold K=%d rows of %d columns padded to %d", dimsString(b.Dims), k, n, npad)
	}
	out := append([]TensorDesc(nil), in...)
	out[1] = TensorDesc{DataType: acl.Float32, Format: b.Format, Dims: []int64{k, n}}
	return out, nil
}

func inferFusedConv(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if _, err := epilogueOf(a); err != nil {
		return nil, err
	}
	return inferConvOp(OpConv, in, a)
}

// checkChain checks an ElemChain's steps against n inputs.
func checkChain(a Attrs, n int) error {
	ops, args, swap := a.Ints(AttrChainOps), a.Ints(AttrChainArgs), a.Ints(AttrChainSwap)
	if len(ops) == 0 || len(ops) > maxChain || len(args) != len(ops) || len(swap) != len(ops) {
		return fmt.Errorf("chain of %d ops, %d operands, %d swap flags: want 1 to %d of each", len(ops), len(args), len(swap), maxChain)
	}
	for i, v := range ops {
		op := OpType(v)
		switch {
		case v < 0 || v > math.MaxUint16:
			return fmt.Errorf("step %d: op %d", i, v)
		case chainUnary[op]:
			if args[i] != -1 || swap[i] != 0 {
				return fmt.Errorf("step %d: unary %s takes no operand", i, op)
			}
		case chainBinary[op]:
			if args[i] < 0 || args[i] >= int64(n) || (swap[i] != 0 && swap[i] != 1) {
				return fmt.Errorf("step %d: operand %d (swap %d) of %d inputs", i, args[i], swap[i], n)
			}
		default:
			return fmt.Errorf("step %d: op %s cannot be chained", i, op)
		}
	}
	return nil
}

// trailingDims reports whether d, without its leading 1s, is the trailing
// dims of x (so element i of x pairs with element i mod |d| of d).
func trailingDims(d, x []int64) bool {
	for len(d) > 0 && d[0] == 1 {
		d = d[1:]
	}
	return len(d) <= len(x) && dimsEqual(d, x[len(x)-len(d):])
}

func inferElemChain(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	for i, d := range in {
		if d.DataType != acl.Float32 {
			return nil, &dtypeError{fmt.Sprintf("input %d has data type %s, want float32", i, d.DataType)}
		}
		if !trailingDims(d.Dims, in[0].Dims) {
			return nil, fmt.Errorf("input %d %s does not broadcast along the trailing dims of %s", i, dimsString(d.Dims), dimsString(in[0].Dims))
		}
	}
	if err := checkChain(a, len(in)); err != nil {
		return nil, err
	}
	return []TensorDesc{cloneDesc(in[0])}, nil
}

// chainBlock is how many elements an ElemChain carries through all its
// steps at a time: they stay in L1 between steps.
const chainBlock = 512
