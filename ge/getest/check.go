package getest

import (
	"fmt"
	"sort"

	"github.com/ascend-go/cann/ge"
)

func alignUp(n int64) int64 { return (n + ge.MemAlignSize - 1) &^ (ge.MemAlignSize - 1) }

// CheckModel verifies a compiled model's memory plan by brute force,
// independently of the planner:
//
//   - every block offset is 512-byte aligned, feature-map blocks end within
//     [0, MemorySize-ZeroCopySize), zero-copy IO blocks lie in the IO region
//     with the outputs first (in output order) and then the inputs ascending
//     by size, filling exactly ZeroCopySize bytes;
//   - no two feature-map blocks whose lifetimes intersect share a byte; no
//     IO block shares a byte with any other block; weights are disjoint;
//   - a dataflow simulation over the tasks, tracking which buffer owns every
//     byte, finds every input slot reading bytes last written by the buffer
//     it names and every buffer written by the task its lifetime starts at,
//     so a plan whose lifetimes understate real use fails too.
func CheckModel(m *ge.CompiledModel) error {
	if m == nil {
		return fmt.Errorf("getest.CheckModel: nil compiled model")
	}
	fm := m.FeatureMapSize()
	for i, b := range m.Plan {
		if b.Offset%ge.MemAlignSize != 0 {
			return fmt.Errorf("buffer %d (%q): offset %d not aligned", i, b.Name, b.Offset)
		}
		end := b.Offset + alignUp(b.Size)
		switch b.Mem {
		case ge.MemFeatureMap:
			if b.Offset < 0 || end > fm {
				return fmt.Errorf("buffer %d (%q): [%d, %d) outside feature map [0, %d)", i, b.Name, b.Offset, end, fm)
			}
		case ge.MemModelIO:
			if b.Offset < fm || end > m.MemorySize {
				return fmt.Errorf("buffer %d (%q): [%d, %d) outside IO region [%d, %d)", i, b.Name, b.Offset, end, fm, m.MemorySize)
			}
		case ge.MemFixed:
			if b.Offset < 0 || b.Offset+b.Size > m.WeightSize {
				return fmt.Errorf("buffer %d (%q): outside weights", i, b.Name)
			}
		}
	}
	if err := checkLayout(m); err != nil {
		return err
	}
	if err := checkLifetimes(m); err != nil {
		return err
	}
	if err := checkOverlaps(m); err != nil {
		return err
	}
	return simulate(m)
}

func checkLayout(m *ge.CompiledModel) error {
	cur := m.FeatureMapSize()
	for i, d := range m.Outputs {
		b := m.Plan[d.Buffer]
		if d.ZeroCopy != (b.Mem == ge.MemModelIO) {
			return fmt.Errorf("output %d: zero-copy flag %v but block in %s", i, d.ZeroCopy, b.Mem)
		}
		if !d.ZeroCopy {
			continue
		}
		if b.Offset != cur {
			return fmt.Errorf("output %d block at %d, expected %d", i, b.Offset, cur)
		}
		cur += alignUp(b.Size)
	}
	var ins []ge.Buffer
	for i, d := range m.Inputs {
		b := m.Plan[d.Buffer]
		if d.ZeroCopy != (b.Mem == ge.MemModelIO) {
			return fmt.Errorf("input %d: zero-copy flag %v but block in %s", i, d.ZeroCopy, b.Mem)
		}
		if d.ZeroCopy {
			ins = append(ins, b)
		}
	}
	sort.SliceStable(ins, func(a, b int) bool { return ins[a].Offset < ins[b].Offset })
	for k, b := range ins {
		if b.Offset != cur {
			return fmt.Errorf("input block %q at %d, expected %d", b.Name, b.Offset, cur)
		}
		if k > 0 && ins[k-1].Size > b.Size {
			return fmt.Errorf("input blocks not ascending by size: %q (%d) before %q (%d)", ins[k-1].Name, ins[k-1].Size, b.Name, b.Size)
		}
		cur += alignUp(b.Size)
	}
	if cur != m.MemorySize || m.MemorySize-m.ZeroCopySize != m.FeatureMapSize() {
		return fmt.Errorf("IO blocks end at %d, memory_size %d", cur, m.MemorySize)
	}
	return nil
}

// checkLifetimes requires every use of a buffer to fall inside its declared
// lifetime, and a feature-map buffer's lifetime to start at its writer, so
// the overlap check below reasons about real lifetimes.
func checkLifetimes(m *ge.CompiledModel) error {
	for ti, t := range m.Tasks {
		for ai, a := range t.Args {
			if a.Buffer < 0 || a.Buffer >= len(m.Plan) {
				return fmt.Errorf("task %d (%q) arg %d: buffer %d out of range", ti, t.Name, ai, a.Buffer)
			}
			b := m.Plan[a.Buffer]
			if ti < b.Def || ti > b.Last {
				return fmt.Errorf("task %d (%q) arg %d uses %q outside its lifetime %d..%d", ti, t.Name, ai, b.Name, b.Def, b.Last)
			}
			if ai >= len(t.Inputs) && b.Mem == ge.MemFeatureMap && b.Kind != ge.BufInput && b.Def != ti {
				return fmt.Errorf("task %d (%q) writes %q whose lifetime starts at %d", ti, t.Name, b.Name, b.Def)
			}
		}
	}
	return nil
}

func checkOverlaps(m *ge.CompiledModel) error {
	p := m.Plan
	for i := range p {
		for j := i + 1; j < len(p); j++ {
			a, b := p[i], p[j]
			if (a.Mem == ge.MemFixed) != (b.Mem == ge.MemFixed) || a.Size == 0 || b.Size == 0 {
				continue // different regions
			}
			disjoint := a.Offset+alignUp(a.Size) <= b.Offset || b.Offset+alignUp(b.Size) <= a.Offset
			if disjoint {
				continue
			}
			bothFM := a.Mem == ge.MemFeatureMap && b.Mem == ge.MemFeatureMap
			if bothFM && (a.Last < b.Def || b.Last < a.Def) {
				continue // reuse by lifetime
			}
			return fmt.Errorf("buffers %q [%d,+%d) live %d..%d and %q [%d,+%d) live %d..%d overlap",
				a.Name, a.Offset, a.Size, a.Def, a.Last, b.Name, b.Offset, b.Size, b.Def, b.Last)
		}
	}
	return nil
}

// simulate runs the tasks symbolically: each byte of both regions records
// the buffer that last wrote it.
func simulate(m *ge.CompiledModel) error {
	mem := make([]int32, m.MemorySize)
	w := make([]int32, m.WeightSize)
	for i := range mem {
		mem[i] = -1
	}
	fill := func(r []int32, off, size int64, id int) {
		for k := off; k < off+size; k++ {
			r[k] = int32(id)
		}
	}
	for i, b := range m.Plan {
		switch {
		case b.Mem == ge.MemFixed:
			fill(w, b.Offset, b.Size, i)
		case b.Kind == ge.BufInput:
			fill(mem, b.Offset, b.Size, i)
		}
	}
	written := make([]bool, len(m.Plan))
	for ti, t := range m.Tasks {
		nin := len(t.Inputs)
		for ai, a := range t.Args {
			r := mem
			if a.Mem == ge.MemFixed {
				r = w
			}
			if a.Offset < 0 || a.Offset+a.Size > int64(len(r)) {
				return fmt.Errorf("task %d (%q) arg %d: [%d,+%d) outside its region", ti, t.Name, ai, a.Offset, a.Size)
			}
			if ai < nin {
				for k := a.Offset; k < a.Offset+a.Size; k++ {
					if r[k] != int32(a.Buffer) {
						owner := "nobody"
						if r[k] >= 0 {
							owner = fmt.Sprintf("%q", m.Plan[r[k]].Name)
						}
						return fmt.Errorf("task %d (%q) arg %d reads %q but byte %d was last written by %s",
							ti, t.Name, ai, m.Plan[a.Buffer].Name, k, owner)
					}
				}
				continue
			}
			b := m.Plan[a.Buffer]
			if !written[a.Buffer] && b.Def != ti && b.Mem == ge.MemFeatureMap {
				return fmt.Errorf("task %d (%q) writes %q whose lifetime starts at task %d", ti, t.Name, b.Name, b.Def)
			}
			written[a.Buffer] = true
			fill(r, a.Offset, a.Size, a.Buffer)
		}
	}
	for i, d := range m.Outputs {
		b := m.Plan[d.Buffer]
		for k := b.Offset; k < b.Offset+d.Size; k++ {
			if mem[k] != int32(d.Buffer) {
				return fmt.Errorf("output %d (%q) clobbered at byte %d", i, d.Name, k)
			}
		}
	}
	return nil
}
