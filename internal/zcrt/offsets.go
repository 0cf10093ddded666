package zcrt

import (
	"fmt"
	"slices"

	"github.com/ascend-go/cann/ge"
)

// CopyReason says why an IO is copied instead of refreshed in place.
type CopyReason uint8

// Reasons an IO is copy-only (GE's copy_only_addrs_ and copy infos).
const (
	// NotCopyOnly: the IO is refreshed by model IO address (zero copy)
	// whenever the caller's buffer is device memory.
	NotCopyOnly CopyReason = iota
	// CopyInFeatureMap: the IO's block lies inside the feature map
	// (IODesc.ZeroCopy false), so its address cannot be replaced.
	CopyInFeatureMap
	// CopyNoZeroCopyConsumer: a task reaches the IO through a slot that
	// cannot take an external address (NoZeroCopy; GE's DisableZeroCopy).
	CopyNoZeroCopyConsumer
	// CopyNoTask: an output no task writes (GE's SetCopyOnlyOutput).
	CopyNoTask
)

// String returns a short description of why the IO is copied.
func (r CopyReason) String() string {
	switch r {
	case NotCopyOnly:
		return "zero copy"
	case CopyInFeatureMap:
		return "block inside the feature map"
	case CopyNoZeroCopyConsumer:
		return "consumer cannot take an external address"
	case CopyNoTask:
		return "no task writes it"
	}
	return "CopyReason(?)"
}

// SlotRecord is one 8-byte argument slot that refers to an IO.
type SlotRecord struct {
	Task, Arg int
	// Index is the slot's position in the argument memory (Runtime.Args).
	Index int
	// Rel is the slot's offset from the IO's basic offset: the slot holds
	// the IO's current address plus Rel.
	Rel int64
	// Size is the number of bytes the task accesses through the slot.
	Size int64
}

// IORecord is the offset record of one model input or output (GE's
// ZeroCopyOffset): every slot that refers to it and how it is bound.
// Records are built at load and read-only afterwards, except for the
// address the slots hold, which only Apply changes.
type IORecord struct {
	Ref   ge.IORef
	Name  string
	Size  int64 // bytes the model reads or writes
	Basic int64 // the block's logical offset in the model memory region
	// CopyOnly is why the IO is always copied; NotCopyOnly when its slots
	// are refreshed with the caller's address.
	CopyOnly CopyReason
	// Slots lists every slot referring to the IO, in task order.
	Slots []SlotRecord
	// current is the address the IO's slots hold (plus Rel).
	current uint64
}

// ZeroCopy reports whether the IO's slots take the caller's address.
func (r *IORecord) ZeroCopy() bool { return r.CopyOnly == NotCopyOnly }

func (r *IORecord) label() string { return fmt.Sprintf("%s %d (%q)", r.Ref.Dir, r.Ref.Index, r.Name) }

// buildRecords makes the offset records of every IO of m. start[i] is the
// index of task i's first slot in the argument memory.
func buildRecords(m *ge.CompiledModel, start []int) (in, out []IORecord, err error) {
	in = make([]IORecord, len(m.Inputs))
	out = make([]IORecord, len(m.Outputs))
	byBuffer := make(map[int]*IORecord, len(in)+len(out))
	for _, io := range []struct {
		dir   ge.IODir
		descs []ge.IODesc
		recs  []IORecord
	}{{ge.IOInput, m.Inputs, in}, {ge.IOOutput, m.Outputs, out}} {
		for i := range io.descs {
			d := &io.descs[i]
			r := &io.recs[i]
			*r = IORecord{Ref: ge.IORef{Dir: io.dir, Index: i}, Name: d.Name, Size: d.Size, Basic: d.BasicOffset}
			if !d.ZeroCopy {
				r.CopyOnly = CopyInFeatureMap
			}
			if d.Size <= 0 || d.BasicOffset < 0 || d.BasicOffset+d.Size > m.MemorySize {
				return nil, nil, fmt.Errorf("%s: block [%d, +%d) outside the model memory of %d bytes", r.label(), d.BasicOffset, d.Size, m.MemorySize)
			}
			if d.ZeroCopy && d.BasicOffset < m.FeatureMapSize() {
				return nil, nil, fmt.Errorf("%s: zero-copy block at %d lies inside the feature map [0, %d)", r.label(), d.BasicOffset, m.FeatureMapSize())
			}
			if o := byBuffer[d.Buffer]; o != nil {
				return nil, nil, fmt.Errorf("%s and %s share plan buffer %d", o.label(), r.label(), d.Buffer)
			}
			byBuffer[d.Buffer] = r
		}
	}
	for ti := range m.Tasks {
		for ai, a := range m.Tasks[ti].Args {
			r := byBuffer[a.Buffer]
			if r == nil {
				if a.Mem == ge.MemModelIO {
					return nil, nil, fmt.Errorf("task %d (%q) slot %d: IO address with no model input or output", ti, m.Tasks[ti].Name, ai)
				}
				continue
			}
			if a.Mem == ge.MemFixed {
				return nil, nil, fmt.Errorf("task %d (%q) slot %d: %s addressed as weight memory", ti, m.Tasks[ti].Name, ai, r.label())
			}
			if a.Mem == ge.MemModelIO && a.IO != r.Ref {
				return nil, nil, fmt.Errorf("task %d (%q) slot %d: tagged %s %d but addresses %s", ti, m.Tasks[ti].Name, ai, a.IO.Dir, a.IO.Index, r.label())
			}
			rel := a.Offset - r.Basic
			if rel < 0 || a.Size < 0 || rel+a.Size > r.Size {
				return nil, nil, fmt.Errorf("task %d (%q) slot %d: [%d, +%d) outside %s block [%d, +%d)", ti, m.Tasks[ti].Name, ai, a.Offset, a.Size, r.label(), r.Basic, r.Size)
			}
			d := &m.Inputs
			if r.Ref.Dir == ge.IOOutput {
				d = &m.Outputs
			}
			if rels := (*d)[r.Ref.Index].RelativeOffsets; !slices.Contains(rels, rel) {
				// GE registers a slot only against the (basic + relative)
				// addresses the model declares; an undeclared one would
				// never be refreshed.
				return nil, nil, fmt.Errorf("task %d (%q) slot %d: offset %d from %s is not among its relative offsets %v", ti, m.Tasks[ti].Name, ai, rel, r.label(), rels)
			}
			if a.NoZeroCopy && r.CopyOnly == NotCopyOnly {
				r.CopyOnly = CopyNoZeroCopyConsumer
			}
			r.Slots = append(r.Slots, SlotRecord{Task: ti, Arg: ai, Index: start[ti] + ai, Rel: rel, Size: a.Size})
		}
	}
	for i := range out {
		if len(out[i].Slots) == 0 && out[i].CopyOnly == NotCopyOnly {
			out[i].CopyOnly = CopyNoTask
		}
	}
	return in, out, nil
}
