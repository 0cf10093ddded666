package getest

import (
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// alignedBytes returns n bytes whose start is ge.MemAlignSize-aligned, as
// device memory is, filled with fill.
func alignedBytes(n int64, fill byte) []byte {
	raw := make([]byte, n+ge.MemAlignSize)
	off := 0
	if rem := int(uintptr(unsafe.Pointer(&raw[0])) % ge.MemAlignSize); rem != 0 {
		off = ge.MemAlignSize - rem
	}
	b := raw[off : int64(off)+n : int64(off)+n]
	for i := range b {
		b[i] = fill
	}
	return b
}

// Poison fills the model memory before a run: 0xff bytes read as NaN in
// every float type, so a kernel reading memory nobody wrote shows up.
const Poison = 0xff

func checkIO(m *ge.CompiledModel, inputs [][]byte, outputs [][]byte) error {
	if m == nil {
		return acl.NilHandle("getest", "compiled model")
	}
	if len(inputs) != len(m.Inputs) {
		return acl.Errorf("getest.Run", acl.CodeInvalidParam, "%d inputs, model has %d", len(inputs), len(m.Inputs))
	}
	for i, d := range m.Inputs {
		if int64(len(inputs[i])) < d.Size {
			return acl.Errorf("getest.Run", acl.CodeInvalidParam, "input %d (%q) holds %d bytes, needs %d", i, d.Name, len(inputs[i]), d.Size)
		}
	}
	if outputs == nil {
		return nil
	}
	if len(outputs) != len(m.Outputs) {
		return acl.Errorf("getest.Run", acl.CodeInvalidParam, "%d outputs, model has %d", len(outputs), len(m.Outputs))
	}
	for i, d := range m.Outputs {
		if int64(len(outputs[i])) < d.Size {
			return acl.Errorf("getest.Run", acl.CodeInvalidParam, "output %d (%q) holds %d bytes, needs %d", i, d.Name, len(outputs[i]), d.Size)
		}
	}
	return nil
}

// Run executes m in one host arena of m.MemorySize bytes (plus the weight
// region), as a runtime without zero copy does: inputs are copied into their
// blocks, every slot resolves to arena memory, outputs are copied out.
func Run(m *ge.CompiledModel, inputs [][]byte) ([][]byte, error) {
	if err := checkIO(m, inputs, nil); err != nil {
		return nil, err
	}
	mem := alignedBytes(m.MemorySize, Poison)
	w := alignedBytes(m.WeightSize, 0)
	copy(w, m.Weights)
	for i, d := range m.Inputs {
		copy(mem[d.BasicOffset:d.BasicOffset+d.Size], inputs[i])
	}
	if err := runTasks(m, mem, w, nil, nil); err != nil {
		return nil, err
	}
	out := make([][]byte, len(m.Outputs))
	for i, d := range m.Outputs {
		out[i] = append([]byte(nil), mem[d.BasicOffset:d.BasicOffset+d.Size]...)
	}
	return out, nil
}

// RunZeroCopy executes m as a zero-copy runtime does: every MemModelIO slot
// resolves to the caller's buffer (inputs[i] or outputs[j]) and only IO that
// is not zero-copy goes through the arena with a copy. It returns the number
// of IO copies made.
func RunZeroCopy(m *ge.CompiledModel, inputs, outputs [][]byte) (copies int, err error) {
	if err := checkIO(m, inputs, outputs); err != nil {
		return 0, err
	}
	mem := alignedBytes(m.FeatureMapSize(), Poison)
	w := alignedBytes(m.WeightSize, 0)
	copy(w, m.Weights)
	for i, d := range m.Inputs {
		if !d.ZeroCopy {
			copy(mem[d.BasicOffset:d.BasicOffset+d.Size], inputs[i])
			copies++
		}
	}
	if err := runTasks(m, mem, w, inputs, outputs); err != nil {
		return copies, err
	}
	for i, d := range m.Outputs {
		if !d.ZeroCopy {
			copy(outputs[i], mem[d.BasicOffset:d.BasicOffset+d.Size])
			copies++
		}
	}
	return copies, nil
}

// runTasks resolves each slot and runs the task. With user buffers given,
// MemModelIO slots resolve to them; otherwise to the arena.
func runTasks(m *ge.CompiledModel, mem, w []byte, inputs, outputs [][]byte) error {
	return runTasksTimed(m, mem, w, inputs, outputs, nil)
}

// RunTimed is Run that also returns each task's wall time, in task order:
// a per-op profile of the kernels on the host.
func RunTimed(m *ge.CompiledModel, inputs [][]byte) ([][]byte, []time.Duration, error) {
	if err := checkIO(m, inputs, nil); err != nil {
		return nil, nil, err
	}
	mem := alignedBytes(m.MemorySize, Poison)
	w := alignedBytes(m.WeightSize, 0)
	copy(w, m.Weights)
	for i, d := range m.Inputs {
		copy(mem[d.BasicOffset:d.BasicOffset+d.Size], inputs[i])
	}
	times := make([]time.Duration, len(m.Tasks))
	if err := runTasksTimed(m, mem, w, nil, nil, times); err != nil {
		return nil, nil, err
	}
	out := make([][]byte, len(m.Outputs))
	for i, d := range m.Outputs {
		out[i] = append([]byte(nil), mem[d.BasicOffset:d.BasicOffset+d.Size]...)
	}
	return out, times, nil
}

func runTasksTimed(m *ge.CompiledModel, mem, w []byte, inputs, outputs [][]byte, times []time.Duration) error {
	for ti := range m.Tasks {
		t := &m.Tasks[ti]
		args := make([][]byte, len(t.Args))
		for i, a := range t.Args {
			switch {
			case a.Mem == ge.MemFixed:
				args[i] = w[a.Offset : a.Offset+a.Size]
			case a.Mem == ge.MemModelIO && inputs != nil:
				var user [][]byte
				var basic int64
				if a.IO.Dir == ge.IOOutput {
					user, basic = outputs, m.Outputs[a.IO.Index].BasicOffset
				} else {
					user, basic = inputs, m.Inputs[a.IO.Index].BasicOffset
				}
				rel := a.Offset - basic
				args[i] = user[a.IO.Index][rel : rel+a.Size]
			default:
				args[i] = mem[a.Offset : a.Offset+a.Size]
			}
		}
		start := time.Now()
		if err := ge.RunTask(t, args); err != nil {
			return err
		}
		if times != nil {
			times[ti] = time.Since(start)
		}
	}
	return nil
}
