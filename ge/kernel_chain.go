package ge

import (
	"github.com/ascend-go/cann/internal/par"
	sg "github.com/ascend-go/cann/internal/sgemm"
)

// elemChainKernel runs an ElemChain: blocks of chainBlock elements go
// through every step while they sit in L1, so the chain reads its inputs
// and writes its output once instead of once per op. Blocks are split over
// threads for large tensors; each element's result depends only on its
// inputs, so the split never changes a bit. On one thread it allocates
// nothing.
func elemChainKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	if err := checkChain(t.Attrs, len(t.Inputs)); err != nil {
		return kernelError(t, "%v", err)
	}
	n := prod(t.Inputs[0].Dims)
	outArg := args[len(t.Inputs)]
	out := outFloats(&s, t.Outputs[0].DataType, outArg, n)
	a := t.Attrs
	ops, opnd, swap := a.Ints(AttrChainOps), a.Ints(AttrChainArgs), a.Ints(AttrChainSwap)
	if th := par.Threads(n, parallelElems); th > 1 {
		// Split at block boundaries, so blocks are the same as on one
		// thread.
		c := chain{ops: ops, opnd: opnd, swap: swap, ins: make([][]float32, len(t.Inputs)), out: out}
		chainInputs(&s, t, args, c.ins)
		nb := (n + chainBlock - 1) / chainBlock
		par.Chunked(th, nb, func(lo, hi int) { c.run(lo*chainBlock, min(hi*chainBlock, n)) })
	} else {
		var ins [maxChain + 1][]float32
		c := chain{ops: ops, opnd: opnd, swap: swap, ins: ins[:len(t.Inputs)], out: out}
		chainInputs(&s, t, args, c.ins)
		c.run(0, n)
	}
	storeFloats(t.Outputs[0].DataType, outArg, out)
	return nil
}

// chainInputs reads the task's inputs as float32 into ins.
func chainInputs(s *scratch, t *Task, args [][]byte, ins [][]float32) {
	for i, d := range t.Inputs {
		ins[i] = readFloats(s, d.DataType, args[i], prod(d.Dims))
	}
}

// chain is an ElemChain task's steps and memory.
type chain struct {
	ops, opnd, swap []int64
	ins             [][]float32
	out             []float32
}

// run computes elements [lo, hi).
func (c *chain) run(lo, hi int) {
	var buf, tmp [chainBlock]float32
	for base := lo; base < hi; base += chainBlock {
		acc := buf[:min(chainBlock, hi-base)]
		copy(acc, c.ins[0][base:])
		for i, op := range c.ops {
			if c.opnd[i] < 0 {
				chainUnaryStep(OpType(op), acc)
				continue
			}
			x, swapped := c.ins[c.opnd[i]], c.swap[i] != 0
			if len(x) == 1 { // a scalar operand, the common case
				chainScalarStep(OpType(op), acc, x[0], swapped)
				continue
			}
			chainBinaryStep(OpType(op), acc, operandBlock(x, base, tmp[:len(acc)]), swapped)
		}
		copy(c.out[base:], acc)
	}
}

// operandBlock returns elements [base, base+len(tmp)) of x broadcast along
// the trailing dims (index i mod len(x)): x itself when it is as long as
// the output, else a copy in tmp.
func operandBlock(x []float32, base int, tmp []float32) []float32 {
	if len(x) == 1 {
		v := x[0]
		for i := range tmp {
			tmp[i] = v
		}
		return tmp
	}
	if base+len(tmp) <= len(x) {
		return x[base : base+len(tmp)]
	}
	j := base % len(x)
	for i := range tmp {
		tmp[i] = x[j]
		if j++; j == len(x) {
			j = 0
		}
	}
	return tmp
}

// chainVecOp maps a chain's binary op (checkChain admits only these four)
// to sgemm's vector arithmetic: one exactly rounded float32 operation per
// element, as binLoop computes the op.
func chainVecOp(op OpType) sg.VecOp {
	switch op {
	case OpSub:
		return sg.VecSub
	case OpMul:
		return sg.VecMul
	case OpDiv:
		return sg.VecDiv
	}
	return sg.VecAdd
}

// chainBinaryStep sets acc = acc op y (y op acc when swapped).
func chainBinaryStep(op OpType, acc, y []float32, swapped bool) {
	if swapped {
		sg.Vec(chainVecOp(op), acc, y, acc)
	} else {
		sg.Vec(chainVecOp(op), acc, acc, y)
	}
}

// chainScalarStep sets acc = acc op s (s op acc when swapped).
func chainScalarStep(op OpType, acc []float32, s float32, swapped bool) {
	if swapped {
		sg.ScalarVec(chainVecOp(op), acc, s, acc)
	} else {
		sg.VecScalar(chainVecOp(op), acc, acc, s)
	}
}

// chainUnaryStep applies a unary op in place with the routine the op's
// own kernel uses, so a chain step has the kernel's bits.
func chainUnaryStep(op OpType, x []float32) {
	switch {
	case fastUnaryOp(op): // HardSigmoid, the one that takes alpha and beta, is no chain step
		fastUnary(op, 0, 0, x, x)
	case !floatUnary(op, x, x):
		unary(op, x, x) // Relu, Gelu, Silu
	}
}
