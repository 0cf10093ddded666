package zerocopy

import (
	"slices"

	"github.com/ascend-go/cann/acl"
)

// Models with unknown dims (ATC's -1; on the fallback an ONNX model whose
// shapes a run fixes): the description gives no size for such an IO, so
// the Binding allocates what the input's dims range bounds it to, or
// WithMaxBytes; each run's real input shapes go with the data
// (WriteInputDims, SetInputShape: aclmdlSetDatasetTensorDesc on the bound
// input dataset), and the outputs' real shapes come back with them
// (ReadOutputDims, OutputShape: aclmdlGetDatasetTensorDesc).

// WithMaxBytes sets the size of the buffer the Binding allocates for an
// IO of unknown dims whose range does not bound it (every output of such a
// model, an input with an unbounded dim). Without it, such an IO must be
// given (WithInputs, WithOutputs).
func WithMaxBytes(n uintptr) BindOption { return func(c *bindConfig) { c.maxBytes = n } }

// dynamicSize is the allocation for IO i of unknown dims: the bytes of the
// largest shape its range allows when every dim is bounded, else maxBytes.
func dynamicSize(op, dir string, i int, io acl.IODesc, maxBytes uintptr) (uintptr, error) {
	if len(io.Range) == len(io.Dims) && len(io.Dims) > 0 {
		hi := acl.TensorDesc{DataType: io.DataType, Dims: make([]int64, len(io.Dims))}
		bounded := true
		for k, r := range io.Range {
			hi.Dims[k] = r[1]
			bounded = bounded && r[1] > 0
		}
		if n := hi.Bytes(); bounded && n > 0 {
			return uintptr(n), nil
		}
	}
	if maxBytes == 0 {
		return 0, acl.Errorf(op, acl.CodeInvalidParam, "%s has unknown dims %v without an upper bound: give its memory (WithInputs, WithOutputs) or a size (WithMaxBytes)", ioName(dir, i, io), io.Dims)
	}
	return maxBytes, nil
}

// SetInputShape sets the real shape of input i for the next runs
// (aclmdlSetDatasetTensorDesc on the bound input dataset): an input of
// unknown dims needs one before its first run. The dims must have the
// input's rank and lie in its range; the run refuses them otherwise.
func (b *Binding) SetInputShape(i int, dims []int64) error {
	const op = "Binding.SetInputShape"
	if b == nil {
		return nilBinding(op)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.ready(op); err != nil {
		return err
	}
	if i < 0 || i >= len(b.desc.Inputs) {
		return acl.Errorf(op, acl.CodeInvalidParam, "input %d of %d", i, len(b.desc.Inputs))
	}
	io := b.desc.Inputs[i]
	return b.in.SetTensorDesc(i, &acl.TensorDesc{DataType: io.DataType, Format: io.Format, Dims: slices.Clone(dims)})
}

// WriteInputDims writes v into input i as WriteInput does and sets the
// input's real shape to dims for the next runs: the way to feed an input
// of unknown dims. v must hold exactly the elements of dims, and fit the
// bound memory.
func (b *Binding) WriteInputDims(i int, dims []int64, v []float32) error {
	return WriteInputDims(b, i, dims, v)
}

// WriteInputDims is Binding.WriteInputDims for any Element type.
func WriteInputDims[T Element](b *Binding, i int, dims []int64, v []T) error {
	const op = "zerocopy.WriteInputDims"
	if b == nil {
		return nilBinding(op)
	}
	t := acl.TensorDesc{Dims: dims}
	if n := t.Elements(); n < 0 || n != int64(len(v)) {
		return acl.Errorf(op, acl.CodeInvalidParam, "input %d: %d elements for dims %v", i, len(v), dims)
	}
	if err := WriteInput(b, i, v); err != nil {
		return err
	}
	return b.SetInputShape(i, dims)
}

// ReadOutputDims returns output i converted to float32, and its dims: for
// an output of unknown dims the real shape of the last run (call it once
// that run has finished), else the description's.
func (b *Binding) ReadOutputDims(i int) ([]float32, []int64, error) {
	return ReadOutputDims[float32](b, i)
}

// ReadOutputDims is Binding.ReadOutputDims for any Element type.
func ReadOutputDims[T Element](b *Binding, i int) ([]T, []int64, error) {
	if b == nil {
		return nil, nil, nilBinding("zerocopy.ReadOutputDims")
	}
	return readOutput[T](b, "zerocopy.ReadOutputDims", i)
}

// OutputShape returns output i's dims: for an output of unknown dims the
// real shape of the last run (aclmdlGetDatasetTensorDesc), else the
// description's.
func (b *Binding) OutputShape(i int) ([]int64, error) {
	const op = "Binding.OutputShape"
	if b == nil {
		return nil, nilBinding(op)
	}
	mm, io, err := b.io(op, "output", i)
	if err != nil {
		return nil, err
	}
	if !io.Dynamic() {
		return slices.Clone(io.Dims), nil
	}
	_, dims, err := b.realOutput(op, i, io, mm)
	return dims, err
}

// realOutput is the size and dims of output i after the last run, from
// the output dataset's description; an error before any run.
func (b *Binding) realOutput(op string, i int, io acl.IODesc, mm acl.Memory) (uintptr, []int64, error) {
	t, err := b.out.TensorDesc(i)
	if err != nil {
		return 0, nil, err
	}
	if t == nil {
		return 0, nil, acl.Errorf(op, acl.CodeInvalidParam, "%s has unknown dims %v and no run has set its shape yet", ioName("output", i, io), io.Dims)
	}
	t.DataType = io.DataType
	n := t.Bytes()
	if n < 0 || uintptr(n) > mm.Size() {
		return 0, nil, acl.Errorf(op, acl.CodeInvalidParam, "%s: the run's shape %v does not fit its %d-byte buffer", ioName("output", i, io), t.Dims, mm.Size())
	}
	return uintptr(n), t.Dims, nil
}
