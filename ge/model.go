package ge

import (
	"encoding/binary"

	"github.com/ascend-go/cann/acl"
)

// MemType says which memory an argument slot addresses (GE's MemoryAppType).
// The values are part of the model format. Plain value, safe for concurrent use.
type MemType uint8

// Memory types.
const (
	// MemFixed is the weight region: constants, never refreshed.
	MemFixed MemType = 1
	// MemFeatureMap is the feature-map part of the model memory region,
	// [0, MemorySize-ZeroCopySize), reused by lifetime.
	MemFeatureMap MemType = 2
	// MemModelIO is a zero-copy model input or output block; Slot.IO says
	// which. The runtime writes the caller's buffer address here.
	MemModelIO MemType = 3
)

// String returns the memory type name.
func (m MemType) String() string {
	switch m {
	case MemFixed:
		return "Fixed"
	case MemFeatureMap:
		return "FeatureMap"
	case MemModelIO:
		return "ModelIO"
	}
	return "MemType(?)"
}

// IODir says whether an IO reference is a model input or output (a plain
// value, safe for concurrent use).
type IODir uint8

// IO directions.
const (
	IOInput  IODir = 1
	IOOutput IODir = 2
)

// String returns "input" or "output".
func (d IODir) String() string {
	switch d {
	case IOInput:
		return "input"
	case IOOutput:
		return "output"
	}
	return "IODir(?)"
}

// IORef names one model input or output (a plain value, safe for
// concurrent use).
type IORef struct {
	Dir   IODir
	Index int
}

// ArgSlot is one 8-byte address slot of a task's argument table. It is a
// plain value, safe for concurrent reads.
type ArgSlot struct {
	// Mem is the memory the address points into.
	Mem MemType
	// IO is the model input or output for MemModelIO slots (zero value
	// otherwise).
	IO IORef
	// Offset is the logical address within the region: the weight region
	// for MemFixed, the model memory region [0, MemorySize) for the others.
	// It is what the slot holds at compile time.
	Offset int64
	// Size is the number of bytes the kernel accesses through the slot.
	Size int64
	// Buffer indexes CompiledModel.Plan: the memory block the slot refers to
	// (aliases share their source's block).
	Buffer int
	// NoZeroCopy is set when the op cannot take an external address here
	// (GE's zero-copy flag off, e.g. some HCCL tasks): an IO reached through
	// such a slot is never a zero-copy block and is copied by the runtime.
	NoZeroCopy bool
}

// Task is one kernel launch of a compiled model. Its argument table is
// len(Args) 8-byte slots: one per input, then one per output, then one per
// workspace buffer. A Task in a CompiledModel is read-only; it is safe for
// concurrent use by any number of readers.
type Task struct {
	Op        OpType
	Name      string // the graph node it came from
	Attrs     Attrs
	Inputs    []TensorDesc
	Outputs   []TensorDesc
	Workspace []int64 // byte sizes of the workspace buffers
	Args      []ArgSlot
}

// ZeroCopyCapable reports whether the task can take at least one external
// address (GE's per-task refresh flag is the OR over its addresses).
func (t *Task) ZeroCopyCapable() bool {
	if t == nil {
		return false
	}
	for _, a := range t.Args {
		if !a.NoZeroCopy {
			return true
		}
	}
	return false
}

// ArgTable returns the task's argument table as it is stored before load:
// one little-endian 8-byte logical offset per slot. A runtime copies it,
// adds region bases and patches IO slots with user addresses.
func (t *Task) ArgTable() []byte {
	if t == nil {
		return nil
	}
	b := make([]byte, 8*len(t.Args))
	for i, a := range t.Args {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(a.Offset))
	}
	return b
}

// IODesc describes one model input or output. Read-only in a CompiledModel; safe
// for concurrent reads.
type IODesc struct {
	Name     string // Data node name for inputs; producer tensor name for outputs
	DataType acl.DataType
	Format   acl.Format
	Dims     []int64
	Size     int64 // bytes: elements × element size
	// ZeroCopy is set when the IO has its own block in the IO region, so
	// the runtime may point the task slots at the caller's buffer. When
	// false the block lies in the feature map and the data is copied.
	ZeroCopy bool
	// BasicOffset is the logical offset of the IO's block in the model
	// memory region (GE's _zero_copy_basic_offset).
	BasicOffset int64
	// RelativeOffsets lists, for every distinct address through which tasks
	// reach this IO, its offset from BasicOffset (GE's
	// _zero_copy_relative_offset); it is [0] when tasks address the block's
	// start, empty when no task touches the IO.
	RelativeOffsets []int64
	// Buffer indexes CompiledModel.Plan.
	Buffer int
}

// BufferKind classifies a memory plan entry (a plain value, safe for
// concurrent use).
type BufferKind uint8

// Buffer kinds. The values are part of the model format.
const (
	BufWeight    BufferKind = 1 // a constant in the weight region
	BufFeature   BufferKind = 2 // an intermediate tensor in the feature map
	BufWorkspace BufferKind = 3 // a task's workspace in the feature map
	BufInput     BufferKind = 4 // a model input
	BufOutput    BufferKind = 5 // a model output
)

// Buffer is one entry of the memory plan: a tensor (with its aliases), a
// workspace or a constant, where it lives and when it is live. It is a
// plain value, safe for concurrent reads.
type Buffer struct {
	Name   string // tensor name "node:out", "node:ws0" for a workspace
	Kind   BufferKind
	Mem    MemType // MemModelIO only for zero-copy IO
	IO     IORef   // for BufInput and BufOutput
	Offset int64   // logical offset within the region
	Size   int64   // bytes used; the block occupies alignUp(Size)
	// Def and Last bound the tasks during which the buffer must hold its
	// value (inclusive task indexes). Weights and zero-copy IO are live for
	// the whole model; a copied input is live from the start, a copied
	// output until the end.
	Def, Last int
}

// CompiledModel is a compiled graph: IO descriptions, the memory plan, the weights
// and the tasks in execution order. A CompiledModel is immutable once built by
// Compile or ParseModel and safe for concurrent use.
type CompiledModel struct {
	Name    string
	Inputs  []IODesc
	Outputs []IODesc
	// MemorySize is the size of the model memory region: feature map plus
	// zero-copy IO (GE's memory_size).
	MemorySize int64
	// ZeroCopySize is the size of the IO region at the end of the model
	// memory (GE's zero_copy_memory_size).
	ZeroCopySize int64
	// WeightSize is the size of the weight region.
	WeightSize int64
	// Weights is the initial contents of the weight region.
	Weights []byte
	Plan    []Buffer
	Tasks   []Task
	// Attrs holds free-form model attributes.
	Attrs map[string]string
}

// FeatureMapSize is MemorySize - ZeroCopySize: what a caller-provided
// workspace must hold when every IO is bound to caller buffers.
func (m *CompiledModel) FeatureMapSize() int64 {
	if m == nil {
		return 0
	}
	return m.MemorySize - m.ZeroCopySize
}

// SlotRef locates one argument slot: CompiledModel.Tasks[Task].Args[Arg]. Plain
// value, safe for concurrent use.
type SlotRef struct{ Task, Arg int }

// IOSlots lists every argument slot that addresses the given IO's block
// (through MemModelIO or, for a copied IO, its feature-map buffer), in task
// order: the slots a runtime patches for that IO.
func (m *CompiledModel) IOSlots(r IORef) []SlotRef {
	var d *IODesc
	switch {
	case r.Dir == IOInput && r.Index >= 0 && r.Index < len(m.Inputs):
		d = &m.Inputs[r.Index]
	case r.Dir == IOOutput && r.Index >= 0 && r.Index < len(m.Outputs):
		d = &m.Outputs[r.Index]
	default:
		return nil
	}
	var refs []SlotRef
	for ti := range m.Tasks {
		for ai, a := range m.Tasks[ti].Args {
			if a.Buffer == d.Buffer {
				refs = append(refs, SlotRef{ti, ai})
			}
		}
	}
	return refs
}

// FeatureMapLowerBound is the peak, over tasks, of the summed (512-aligned)
// sizes of feature-map buffers live at once: no assignment of this plan can
// use less feature-map memory.
func (m *CompiledModel) FeatureMapLowerBound() int64 {
	if m == nil {
		return 0
	}
	n := len(m.Tasks)
	if n == 0 {
		return 0
	}
	delta := make([]int64, n+1)
	for _, b := range m.Plan {
		if b.Mem != MemFeatureMap || b.Def < 0 || b.Def >= n {
			continue
		}
		delta[b.Def] += alignUp(b.Size)
		delta[min(b.Last, n-1)+1] -= alignUp(b.Size)
	}
	var cur, peak int64
	for _, d := range delta[:n] {
		cur += d
		peak = max(peak, cur)
	}
	return peak
}
