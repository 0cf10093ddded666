package ge

import (
	"fmt"
	"strconv"
)

// OpType identifies an operator. The numeric values are part of the model
// format and never change meaning; values 100 to 199 are reserved for
// collective (HCCL) ops, whose tasks carry per-address zero-copy flags
// (ArgSlot.NoZeroCopy); compute ops added after 0.1.0 take values from
// 200. An OpType is a plain value, safe for concurrent use.
type OpType uint16

// Operators. Data, Const and NetOutput describe the graph's boundary and
// produce no task; Reshape and Identity are aliases (their output shares the
// input's memory) and produce no task either; Memcpy is the copy kernel the
// compiler inserts where an output would otherwise share memory with an
// input, a weight or another output.
const (
	OpData      OpType = 1
	OpConst     OpType = 2
	OpNetOutput OpType = 3

	OpMatMul    OpType = 10
	OpAdd       OpType = 11
	OpSub       OpType = 12
	OpMul       OpType = 13
	OpDiv       OpType = 14
	OpRelu      OpType = 20
	OpGelu      OpType = 21
	OpSilu      OpType = 22
	OpSoftmax   OpType = 23
	OpLayerNorm OpType = 24
	OpRMSNorm   OpType = 25
	OpGather    OpType = 30
	OpReshape   OpType = 31
	OpIdentity  OpType = 32
	OpCast      OpType = 33
	OpConcat    OpType = 34
	OpSlice     OpType = 35
	OpMemcpy    OpType = 40
)

// opClass says how the compiler treats an op.
type opClass uint8

const (
	classTask     opClass = iota // runs a kernel task
	classAlias                   // output 0 shares input 0's memory, no task
	classBoundary                // Data, Const, NetOutput
)

// Kernel runs one task on resolved argument memory: args[i] is the memory
// behind task.Args[i], already checked to be large enough. The built-in
// kernels are safe for concurrent use on distinct argument memory.
type Kernel func(t *Task, args [][]byte) error

type opSpec struct {
	name         string
	class        opClass
	minIn, maxIn int // maxIn < 0: unbounded
	attrs        map[string]AttrKind
	infer        func(in []TensorDesc, a Attrs) ([]TensorDesc, error)
	workspace    func(in, out []TensorDesc, a Attrs) []int64
	kernel       Kernel
}

var opSpecs = map[OpType]*opSpec{}

func registerOp(t OpType, s *opSpec) { opSpecs[t] = s }

// String returns the op name ("MatMul").
func (t OpType) String() string {
	if s, ok := opSpecs[t]; ok {
		return s.name
	}
	return "OpType(" + strconv.Itoa(int(t)) + ")"
}

// Known reports whether t is an operator this package defines.
func (t OpType) Known() bool { _, ok := opSpecs[t]; return ok }

// HasTask reports whether the op becomes a kernel task when compiled.
func (t OpType) HasTask() bool { s, ok := opSpecs[t]; return ok && s.class == classTask }

// IsAlias reports whether the op's output shares its input's memory.
func (t OpType) IsAlias() bool { s, ok := opSpecs[t]; return ok && s.class == classAlias }

// KernelFor returns the kernel of a task op, or nil for ops without one.
func KernelFor(t OpType) Kernel {
	if s, ok := opSpecs[t]; ok {
		return s.kernel
	}
	return nil
}

// inferOp checks the input count and attribute kinds, infers the outputs
// and validates them against the limits.
func inferOp(t OpType, in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	return inferOpWith(t, in, a, false)
}

// inferOpWith is inferOp that, with empty set, lets inputs and outputs
// have zero dims (host evaluation only: a compiled model never holds an
// empty tensor).
func inferOpWith(t OpType, in []TensorDesc, a Attrs, empty bool) ([]TensorDesc, error) {
	s, ok := opSpecs[t]
	if !ok {
		return nil, fmt.Errorf("unknown op type %d", t)
	}
	if len(in) < s.minIn || (s.maxIn >= 0 && len(in) > s.maxIn) {
		if s.minIn == s.maxIn {
			return nil, fmt.Errorf("takes %d inputs, got %d", s.minIn, len(in))
		}
		return nil, fmt.Errorf("takes at least %d inputs, got %d", s.minIn, len(in))
	}
	for k, v := range a {
		if want, ok := s.attrs[k]; ok && v.Kind != want {
			return nil, fmt.Errorf("attribute %q has kind %d, want %d", k, v.Kind, want)
		}
	}
	for i, d := range in {
		if err := checkDescWith(d, empty); err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
	}
	if s.infer == nil {
		return nil, nil
	}
	out, err := s.infer(in, a)
	if err != nil {
		return nil, err
	}
	for i, d := range out {
		if err := checkDescWith(d, empty); err != nil {
			return nil, fmt.Errorf("output %d: %w", i, err)
		}
	}
	return out, nil
}

// workspaceOf returns the workspace sizes a task of this op needs.
func workspaceOf(t OpType, in, out []TensorDesc, a Attrs) []int64 {
	if s, ok := opSpecs[t]; ok && s.workspace != nil {
		return s.workspace(in, out, a)
	}
	return nil
}
