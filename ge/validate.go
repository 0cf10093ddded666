package ge

import (
	"errors"
	"fmt"
	"sort"
	"unicode/utf8"
)

// validateModel checks everything a runtime relies on: region sizes and
// alignment, every plan buffer inside its region, IO descriptors consistent
// with their buffers and laid out by GE's rules, and every task consistent
// with its op and pointing at plan buffers that are live when it runs. It
// does not check that live buffers are disjoint (getest.CheckModel does);
// a model failing that computes wrong numbers but never touches memory
// outside its regions.
func validateModel(m *CompiledModel) error {
	if m == nil {
		return errors.New("nil compiled model")
	}
	if m.ZeroCopySize < 0 || m.MemorySize < m.ZeroCopySize || m.MemorySize > MaxMemorySize {
		return fmt.Errorf("memory_size %d and zero_copy_memory_size %d out of range", m.MemorySize, m.ZeroCopySize)
	}
	if m.WeightSize < 0 || m.WeightSize > MaxMemorySize {
		return fmt.Errorf("weight size %d out of range", m.WeightSize)
	}
	if m.MemorySize%MemAlignSize != 0 || m.ZeroCopySize%MemAlignSize != 0 || m.WeightSize%MemAlignSize != 0 {
		return fmt.Errorf("region sizes %d/%d/%d not %d-byte aligned", m.MemorySize, m.ZeroCopySize, m.WeightSize, MemAlignSize)
	}
	if int64(len(m.Weights)) != m.WeightSize {
		return fmt.Errorf("weights hold %d bytes, weight size is %d", len(m.Weights), m.WeightSize)
	}
	if err := checkEncodable(m); err != nil {
		return err
	}
	nt := len(m.Tasks)
	if nt == 0 {
		return fmt.Errorf("model has no tasks")
	}
	fm := m.FeatureMapSize()
	for i, b := range m.Plan {
		if err := checkBuffer(m, b, fm, nt); err != nil {
			return fmt.Errorf("plan buffer %d (%q): %w", i, b.Name, err)
		}
	}
	for _, io := range []struct {
		dir  IODir
		list []IODesc
	}{{IOInput, m.Inputs}, {IOOutput, m.Outputs}} {
		for i, d := range io.list {
			if err := checkIO(m, IORef{io.dir, i}, d); err != nil {
				return fmt.Errorf("%s %d (%q): %w", io.dir, i, d.Name, err)
			}
		}
	}
	if len(m.Outputs) == 0 {
		return fmt.Errorf("model has no outputs")
	}
	if err := checkIOLayout(m); err != nil {
		return err
	}
	for i := range m.Tasks {
		if err := checkTaskSlots(m, i); err != nil {
			return fmt.Errorf("task %d (%q): %w", i, m.Tasks[i].Name, err)
		}
	}
	return nil
}

func checkBuffer(m *CompiledModel, b Buffer, fm int64, nt int) error {
	if b.Size < 0 || b.Size > MaxTensorBytes || b.Offset < 0 || b.Offset%MemAlignSize != 0 {
		return fmt.Errorf("offset %d size %d invalid or unaligned", b.Offset, b.Size)
	}
	end := b.Offset + alignUp(b.Size)
	if b.Def < 0 || b.Last < b.Def || b.Last >= nt {
		return fmt.Errorf("lifetime [%d, %d] outside the %d tasks", b.Def, b.Last, nt)
	}
	switch b.Mem {
	case MemFixed:
		if b.Kind != BufWeight || b.Offset+b.Size > m.WeightSize {
			return fmt.Errorf("weight block [%d, +%d) outside %d weight bytes or wrong kind", b.Offset, b.Size, m.WeightSize)
		}
	case MemFeatureMap:
		if b.Kind == BufWeight || end > fm {
			return fmt.Errorf("feature-map block [%d, %d) outside the feature map [0, %d) or wrong kind", b.Offset, end, fm)
		}
	case MemModelIO:
		if (b.Kind != BufInput && b.Kind != BufOutput) || b.Offset < fm || end > m.MemorySize {
			return fmt.Errorf("IO block [%d, %d) outside the IO region [%d, %d) or wrong kind", b.Offset, end, fm, m.MemorySize)
		}
	default:
		return fmt.Errorf("unknown memory type %d", b.Mem)
	}
	switch b.Kind {
	case BufInput, BufOutput:
		d := ioDesc(m, b.IO)
		want := IOInput
		if b.Kind == BufOutput {
			want = IOOutput
		}
		if d == nil || b.IO.Dir != want {
			return fmt.Errorf("IO reference %s %d invalid", b.IO.Dir, b.IO.Index)
		}
		if b.Mem == MemModelIO && (b.Def != 0 || b.Last != nt-1) {
			return fmt.Errorf("zero-copy IO must be live for the whole model")
		}
	case BufWeight, BufFeature, BufWorkspace:
		if b.IO != (IORef{}) {
			return fmt.Errorf("non-IO buffer carries an IO reference")
		}
	default:
		return fmt.Errorf("unknown buffer kind %d", b.Kind)
	}
	return nil
}

func ioDesc(m *CompiledModel, r IORef) *IODesc {
	switch {
	case r.Dir == IOInput && r.Index >= 0 && r.Index < len(m.Inputs):
		return &m.Inputs[r.Index]
	case r.Dir == IOOutput && r.Index >= 0 && r.Index < len(m.Outputs):
		return &m.Outputs[r.Index]
	}
	return nil
}

func checkIO(m *CompiledModel, r IORef, d IODesc) error {
	if err := checkDesc(TensorDesc{DataType: d.DataType, Format: d.Format, Dims: d.Dims}); err != nil {
		return err
	}
	if d.Size != (TensorDesc{DataType: d.DataType, Dims: d.Dims}).Size() {
		return fmt.Errorf("size %d does not match %s", d.Size, TensorDesc{DataType: d.DataType, Dims: d.Dims})
	}
	if d.Buffer < 0 || d.Buffer >= len(m.Plan) {
		return fmt.Errorf("buffer index %d out of range", d.Buffer)
	}
	b := m.Plan[d.Buffer]
	if b.IO != r {
		return fmt.Errorf("buffer %d belongs to %s %d", d.Buffer, b.IO.Dir, b.IO.Index)
	}
	if d.Size != b.Size || d.BasicOffset != b.Offset || d.ZeroCopy != (b.Mem == MemModelIO) {
		return fmt.Errorf("size/offset/zero-copy flag disagree with buffer %d", d.Buffer)
	}
	for _, rel := range d.RelativeOffsets {
		if rel < 0 || rel >= max(d.Size, 1) {
			return fmt.Errorf("relative offset %d outside the tensor", rel)
		}
	}
	return nil
}

// checkIOLayout enforces GE's IO layout: zero-copy outputs in output order
// from the end of the feature map, then zero-copy inputs ascending by size,
// each block aligned, filling exactly zero_copy_memory_size bytes.
func checkIOLayout(m *CompiledModel) error {
	cur := m.FeatureMapSize()
	for i, d := range m.Outputs {
		if !d.ZeroCopy {
			continue
		}
		if d.BasicOffset != cur {
			return fmt.Errorf("output %d at offset %d, layout puts it at %d", i, d.BasicOffset, cur)
		}
		cur += alignUp(d.Size)
	}
	var ins []int
	for i, d := range m.Inputs {
		if d.ZeroCopy {
			ins = append(ins, i)
		}
	}
	sort.SliceStable(ins, func(a, b int) bool { return m.Inputs[ins[a]].Size < m.Inputs[ins[b]].Size })
	for _, i := range ins {
		d := m.Inputs[i]
		if d.BasicOffset != cur {
			return fmt.Errorf("input %d at offset %d, layout (ascending by size) puts it at %d", i, d.BasicOffset, cur)
		}
		cur += alignUp(d.Size)
	}
	if cur != m.MemorySize {
		return fmt.Errorf("IO blocks end at %d, memory_size is %d", cur, m.MemorySize)
	}
	return nil
}

func checkTaskSlots(m *CompiledModel, ti int) error {
	t := &m.Tasks[ti]
	if err := t.check(); err != nil {
		return err
	}
	nin, nout := len(t.Inputs), len(t.Outputs)
	for i, a := range t.Args {
		if a.Buffer < 0 || a.Buffer >= len(m.Plan) {
			return fmt.Errorf("argument %d: buffer %d out of range", i, a.Buffer)
		}
		b := m.Plan[a.Buffer]
		if a.Mem != b.Mem || a.Offset != b.Offset || a.Size > b.Size {
			return fmt.Errorf("argument %d (%s %d, +%d) does not match buffer %d (%s %d, +%d)", i, a.Mem, a.Offset, a.Size, a.Buffer, b.Mem, b.Offset, b.Size)
		}
		wantIO := IORef{}
		if a.Mem == MemModelIO {
			wantIO = b.IO
		}
		if a.IO != wantIO {
			return fmt.Errorf("argument %d: IO tag %s %d, buffer is %s %d", i, a.IO.Dir, a.IO.Index, wantIO.Dir, wantIO.Index)
		}
		if ti < b.Def || ti > b.Last {
			return fmt.Errorf("argument %d: buffer %d is not live at this task", i, a.Buffer)
		}
		switch {
		case i < nin:
			if b.Kind == BufWorkspace {
				return fmt.Errorf("input %d reads a workspace", i)
			}
		case i < nin+nout:
			if b.Kind != BufFeature && b.Kind != BufOutput {
				return fmt.Errorf("output %d writes a %d buffer", i-nin, b.Kind)
			}
			if b.Def != ti && b.Mem == MemFeatureMap {
				return fmt.Errorf("output %d: buffer %d is defined by task %d", i-nin, a.Buffer, b.Def)
			}
		default:
			if b.Kind != BufWorkspace {
				return fmt.Errorf("workspace argument %d is not a workspace buffer", i)
			}
		}
	}
	return nil
}

// checkEncodable enforces the format's limits on names, attributes and
// counts, so that whatever validates also serialises and parses back.
func checkEncodable(m *CompiledModel) error {
	str := func(what, s string) error {
		if len(s) > maxString || !utf8.ValidString(s) {
			return fmt.Errorf("%s is longer than %d bytes or not UTF-8", what, maxString)
		}
		return nil
	}
	if err := str("model name", m.Name); err != nil {
		return err
	}
	if len(m.Attrs) > maxAttrs {
		return fmt.Errorf("%d model attributes, limit %d", len(m.Attrs), maxAttrs)
	}
	for k, v := range m.Attrs {
		if err := errors.Join(str("attribute name", k), str("attribute value", v)); err != nil {
			return err
		}
	}
	for _, list := range [][]IODesc{m.Inputs, m.Outputs} {
		for _, d := range list {
			if err := str("IO name", d.Name); err != nil {
				return err
			}
			if len(d.RelativeOffsets) > maxArgs {
				return fmt.Errorf("IO %q: %d relative offsets, limit %d", d.Name, len(d.RelativeOffsets), maxArgs)
			}
		}
	}
	for _, b := range m.Plan {
		if err := str("buffer name", b.Name); err != nil {
			return err
		}
	}
	for i := range m.Tasks {
		t := &m.Tasks[i]
		if err := str("task name", t.Name); err != nil {
			return err
		}
		if len(t.Attrs) > maxAttrs || len(t.Inputs) > maxTaskIO || len(t.Outputs) > maxTaskIO ||
			len(t.Workspace) > maxTaskIO || len(t.Args) > maxArgs {
			return fmt.Errorf("task %q exceeds the format's attribute, tensor or argument limits", t.Name)
		}
		for k, a := range t.Attrs {
			if err := str("attribute name", k); err != nil {
				return err
			}
			switch a.Kind {
			case AttrInt, AttrFloat:
			case AttrBool:
				if a.I != 0 && a.I != 1 {
					return fmt.Errorf("task %q: bool attribute %q is %d", t.Name, k, a.I)
				}
			case AttrInts:
				if len(a.L) > maxIntsAttr {
					return fmt.Errorf("task %q: attribute %q has %d ints, limit %d", t.Name, k, len(a.L), maxIntsAttr)
				}
			case AttrString:
				if err := str("attribute value", a.S); err != nil {
					return err
				}
			default:
				return fmt.Errorf("task %q: attribute %q has unknown kind %d", t.Name, k, a.Kind)
			}
		}
	}
	return nil
}
