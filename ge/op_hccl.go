package ge

import (
	"fmt"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// OpHcclAllReduce is the HCCL AllReduce op (GE's HcomAllReduce): one input,
// one output of the same descriptor, reduced over every rank of the
// communicator its group attribute names. It is the first collective op
// (OpType values from 100 up); its task has no host kernel of its own
// (KernelFor returns nil) and runs through RunCollective with the rank's
// communicator.
const OpHcclAllReduce OpType = 100

// Attribute names of the HCCL ops, as GE spells them.
const (
	// AttrReduction is the reduce operation of HcclAllReduce: a string,
	// one of "sum", "prod", "max", "min" (ReduceOp.String).
	AttrReduction = "reduction"
	// AttrGroup names the communicator an HCCL op runs on: a string;
	// absent or empty means DefaultGroup.
	AttrGroup = "group"
	// AttrInputZeroCopyFlag gives one flag per input of an HCCL op (ints);
	// SupportZeroCopy marks an input the task can read from an external
	// address. See HcclZeroCopyFlags for the rules.
	AttrInputZeroCopyFlag = "input_zero_copy_flag"
	// AttrOutputZeroCopyFlag gives one flag per output of an HCCL op
	// (ints), as AttrInputZeroCopyFlag.
	AttrOutputZeroCopyFlag = "output_zero_copy_flag"
)

// DefaultGroup is HCCL's world group: the group of an HCCL op whose group
// attribute is absent or empty.
const DefaultGroup = "hccl_world_group"

// SupportZeroCopy is the zero-copy flag value that marks an HCCL op's
// address as able to take an external address (GE's kSupportZeroCopy).
const SupportZeroCopy int64 = 1

// ParseReduceOp reads the reduction attribute spelling (hccl.ReduceOp's
// String: "sum", "prod", "max" or "min").
func ParseReduceOp(s string) (hccl.ReduceOp, error) {
	for _, op := range hccl.ReduceOps() {
		if op.String() == s {
			return op, nil
		}
	}
	return 0, fmt.Errorf("reduction %q is not one of sum, prod, max, min", s)
}

// IsCollective reports whether t is a collective (HCCL) op: its task runs
// through a communicator (RunCollective), not a kernel, and its addresses
// are zero-copy capable only where its zero-copy flags say so.
func (t OpType) IsCollective() bool { return t >= 100 && t < 200 && t.Known() }

// HcclAllReduce reduces x with op over every rank of the communicator
// named group (DefaultGroup when empty) and returns the result, of x's
// type and dims, on every rank. The types HCCL reduces are supported:
// float32, float16, bfloat16, float64 and the 8- to 64-bit integers.
//
// Without HcclZeroCopyFlags the op takes no external address: a model
// input it reads or a model output it writes is copied by the runtime, as
// GE disables every address of an HCCL task that carries no flags.
func (g *Graph) HcclAllReduce(x *Tensor, op hccl.ReduceOp, group string, opts ...OpOption) *Tensor {
	attrs := Attrs{AttrReduction: StringAttr(op.String())}
	if group != "" {
		attrs[AttrGroup] = StringAttr(group)
	}
	return g.single(OpHcclAllReduce, []*Tensor{x}, attrs, opts)
}

// HcclZeroCopyFlags sets an HCCL op's input_zero_copy_flag and
// output_zero_copy_flag attributes (a nil slice leaves that attribute
// unset). GE's rules apply: each list, when present, has one entry per
// input (output), else the graph does not compile; an entry equal to
// SupportZeroCopy lets the task take the caller's address there, so a
// model input or output reached through it can be zero-copy; any other
// value disables the address (the IO it touches is copied); with neither
// attribute every address is disabled.
func HcclZeroCopyFlags(in, out []int64) OpOption {
	return func(c *opConfig) {
		if c.attrs == nil {
			c.attrs = Attrs{}
		}
		if in != nil {
			c.attrs[AttrInputZeroCopyFlag] = IntsAttr(in)
		}
		if out != nil {
			c.attrs[AttrOutputZeroCopyFlag] = IntsAttr(out)
		}
	}
}

// hcclAttrs are the attribute kinds of every HCCL op.
var hcclAttrs = map[string]AttrKind{
	AttrReduction:          AttrString,
	AttrGroup:              AttrString,
	AttrInputZeroCopyFlag:  AttrInts,
	AttrOutputZeroCopyFlag: AttrInts,
}

func init() {
	registerOp(OpHcclAllReduce, &opSpec{name: "HcclAllReduce", minIn: 1, maxIn: 1,
		attrs: hcclAttrs, infer: inferHcclAllReduce})
}

// hcclReducible lists the types HCCL reduces (those with an HcclDataType).
func hcclReducible(t acl.DataType) bool {
	switch t {
	case acl.Float32, acl.Float16, acl.BFloat16, acl.Float64, acl.Int8, acl.Int16, acl.Int32, acl.Int64,
		acl.Uint8, acl.Uint16, acl.Uint32, acl.Uint64:
		return true
	}
	return false
}

func inferHcclAllReduce(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if !hcclReducible(in[0].DataType) {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, which HCCL cannot reduce", in[0].DataType)}
	}
	if _, ok := a[AttrReduction]; !ok {
		return nil, fmt.Errorf("missing %q attribute", AttrReduction)
	}
	if _, err := ParseReduceOp(a.String(AttrReduction)); err != nil {
		return nil, err
	}
	if err := checkZeroCopyFlags(a, 1, 1); err != nil {
		return nil, err
	}
	return []TensorDesc{cloneDesc(in[0])}, nil
}

// checkZeroCopyFlags enforces GE's rule on an HCCL op's flags: a flag list
// that is present has exactly one entry per input (output).
func checkZeroCopyFlags(a Attrs, nin, nout int) error {
	for _, f := range [...]struct {
		key, what string
		n         int
	}{{AttrInputZeroCopyFlag, "input", nin}, {AttrOutputZeroCopyFlag, "output", nout}} {
		if v, ok := a[f.key]; ok && len(v.L) != f.n {
			return fmt.Errorf("%s has %d entries, the op has %d %ss", f.key, len(v.L), f.n, f.what)
		}
	}
	return nil
}

// collectiveNoZeroCopy adds the addresses an HCCL op's flags disable to the
// compiler's per-address "no zero copy" flags: an address is capable only
// when its flag is SupportZeroCopy, and with no flag attribute at all none
// is (GE's HcclTaskInfo). Other ops are left as they are.
func collectiveNoZeroCopy(op OpType, a Attrs, inNo, outNo []bool) {
	if !op.IsCollective() {
		return
	}
	for _, f := range [...]struct {
		key   string
		flags []bool
	}{{AttrInputZeroCopyFlag, inNo}, {AttrOutputZeroCopyFlag, outNo}} {
		l := a.Ints(f.key) // nil when absent: every address disabled
		for i := range f.flags {
			capable := i < len(l) && l[i] == SupportZeroCopy
			f.flags[i] = f.flags[i] || !capable
		}
	}
}

// checkCollectiveSlots verifies that a collective task's slots take no
// external address its flags disable, so a model edited by hand cannot
// claim a zero-copy address the op does not support.
func (t *Task) checkCollectiveSlots() error {
	if !t.Op.IsCollective() {
		return nil
	}
	in, out := make([]bool, len(t.Inputs)), make([]bool, len(t.Outputs))
	collectiveNoZeroCopy(t.Op, t.Attrs, in, out)
	for i, no := range append(in, out...) {
		if no && !t.Args[i].NoZeroCopy {
			return fmt.Errorf("argument %d takes external addresses, but the op's zero-copy flags disable it", i)
		}
	}
	return nil
}

// CollectiveGroup returns the communicator group of a collective task
// (DefaultGroup when its group attribute is absent or empty).
func CollectiveGroup(t *Task) string {
	if t == nil {
		return DefaultGroup
	}
	if g := t.Attrs.String(AttrGroup); g != "" {
		return g
	}
	return DefaultGroup
}
