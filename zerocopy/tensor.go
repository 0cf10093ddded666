package zerocopy

import (
	"encoding/binary"
	"math"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/floatx"
)

// Element is a Go number type the tensor helpers convert from and to the
// data type of a model IO.
type Element interface {
	~float32 | ~float64 | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// WriteInput writes v into input i, converted to the input's data type
// (float32, float16, bfloat16, float8 e4m3fn and e5m2 rounded to nearest
// even with package floatx; float64; the integer types and bool by Go
// conversion), little-endian, starting at the first element. v may be
// shorter than the input, not longer. The copy is synchronous: call it
// between runs, not while one that reads the input is queued.
func (b *Binding) WriteInput(i int, v []float32) error { return WriteInput(b, i, v) }

// ReadOutput returns output i converted to float32 (see WriteInput): one
// element per element of the output's size. Call it after the run that
// writes the output has finished (Wait).
func (b *Binding) ReadOutput(i int) ([]float32, error) { return ReadOutput[float32](b, i) }

// WriteInput is Binding.WriteInput for any Element type.
func WriteInput[T Element](b *Binding, i int, v []T) error {
	const op = "zerocopy.WriteInput"
	mm, io, err := b.io(op, "input", i)
	if err != nil {
		return err
	}
	es, err := elemSize(op, io)
	if err != nil {
		return err
	}
	capacity := io.Size
	if io.Dynamic() {
		capacity = mm.Size() // the run's shape says how much is read (WriteInputDims)
	}
	if uintptr(len(v))*es > capacity {
		return acl.Errorf(op, acl.CodeInvalidParam, "%d elements for %s, which holds %d", len(v), ioName("input", i, io), capacity/es)
	}
	data := make([]byte, uintptr(len(v))*es)
	encode(io.DataType, data, v)
	return copyIn(op, i, io, mm, data)
}

// ReadOutput is Binding.ReadOutput for any Element type. An output of
// unknown dims has as many elements as the last run's real shape
// (ReadOutputDims returns it). The values are converted: ReadOutput[uint16]
// of a float16 output gives integers; ReadOutputBits and
// Binding.ReadOutputBytes give the bits unconverted.
func ReadOutput[T Element](b *Binding, i int) ([]T, error) {
	v, _, err := readOutput[T](b, "zerocopy.ReadOutput", i)
	return v, err
}

// readOutput reads output i and its dims: the real shape of the last run
// for an output of unknown dims, the description's otherwise.
func readOutput[T Element](b *Binding, op string, i int) ([]T, []int64, error) {
	mm, io, err := b.io(op, "output", i)
	if err != nil {
		return nil, nil, err
	}
	es, err := elemSize(op, io)
	if err != nil {
		return nil, nil, err
	}
	size, dims := io.Size, io.Dims
	if io.Dynamic() {
		if size, dims, err = b.realOutput(op, i, io, mm); err != nil {
			return nil, nil, err
		}
	}
	v, err := readMem[T](op, i, io, mm, es, size)
	return v, append([]int64(nil), dims...), err
}

// readMem reads size bytes of output memory mm as elements.
func readMem[T Element](op string, i int, io acl.IODesc, mm acl.Memory, es, size uintptr) ([]T, error) {
	data := make([]byte, size/es*es)
	switch m := mm.(type) {
	case *acl.DeviceBuffer:
		if err := m.CopyToHostAt(data, 0); err != nil {
			return nil, err
		}
	case *acl.HostBuffer:
		src := m.Bytes()
		if src == nil {
			return nil, acl.Errorf(op, acl.CodeRTInvalidHandle, "%s: host buffer is closed", ioName("output", i, io))
		}
		copy(data, src)
	default:
		return nil, acl.Errorf(op, acl.CodeInvalidParam, "%s: memory of type %T", ioName("output", i, io), mm)
	}
	v := make([]T, len(data)/int(es))
	decode(io.DataType, v, data)
	return v, nil
}

// io returns the memory bound to IO i of a direction and its description.
func (b *Binding) io(op, dir string, i int) (acl.Memory, acl.IODesc, error) {
	if b == nil {
		return nil, acl.IODesc{}, nilBinding(op)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, acl.IODesc{}, acl.Errorf(op, acl.CodeRTInvalidHandle, "binding is closed")
	}
	mems, ios := b.inMem, b.desc.Inputs
	if dir == "output" {
		mems, ios = b.outMem, b.desc.Outputs
	}
	if i < 0 || i >= len(ios) {
		return nil, acl.IODesc{}, acl.Errorf(op, acl.CodeInvalidParam, "%s %d of %d", dir, i, len(ios))
	}
	return mems[i], ios[i], nil
}

// elemSize is the byte size of one element of io, for the data types the
// helpers convert.
func elemSize(op string, io acl.IODesc) (uintptr, error) {
	switch io.DataType {
	case acl.Float32, acl.Float16, acl.BFloat16, acl.Float8E4M3FN, acl.Float8E5M2, acl.Float64,
		acl.Int8, acl.Int16, acl.Int32, acl.Int64, acl.Uint8, acl.Uint16, acl.Uint32, acl.Uint64, acl.Bool:
		return uintptr(io.DataType.Size()), nil
	}
	return 0, acl.Errorf(op, acl.CodeAPINotSupport, "%q has data type %v, which the tensor helpers do not convert", io.Name, io.DataType)
}

// encode writes v into dst (len(v) elements of dt). Narrow floats round
// once from float64, so a float64 element is not rounded twice.
func encode[T Element](dt acl.DataType, dst []byte, v []T) {
	le := binary.LittleEndian
	for i, x := range v {
		switch dt {
		case acl.Float32:
			le.PutUint32(dst[4*i:], math.Float32bits(float32(x)))
		case acl.Float64:
			le.PutUint64(dst[8*i:], math.Float64bits(float64(x)))
		case acl.Float16:
			le.PutUint16(dst[2*i:], floatx.F64ToF16(float64(x)))
		case acl.BFloat16:
			le.PutUint16(dst[2*i:], floatx.F64ToBF16(float64(x)))
		case acl.Float8E4M3FN:
			dst[i] = floatx.F64ToE4M3FN(float64(x))
		case acl.Float8E5M2:
			dst[i] = floatx.F64ToE5M2(float64(x))
		case acl.Int8, acl.Uint8:
			dst[i] = byte(int64(x))
		case acl.Bool:
			dst[i] = 0
			if x != 0 {
				dst[i] = 1
			}
		case acl.Int16, acl.Uint16:
			le.PutUint16(dst[2*i:], uint16(int64(x)))
		case acl.Int32, acl.Uint32:
			le.PutUint32(dst[4*i:], uint32(int64(x)))
		case acl.Int64:
			le.PutUint64(dst[8*i:], uint64(int64(x)))
		case acl.Uint64:
			le.PutUint64(dst[8*i:], uint64(x))
		}
	}
}

// decode fills v from src (len(v) elements of dt).
func decode[T Element](dt acl.DataType, v []T, src []byte) {
	le := binary.LittleEndian
	for i := range v {
		switch dt {
		case acl.Float32:
			v[i] = T(math.Float32frombits(le.Uint32(src[4*i:])))
		case acl.Float64:
			v[i] = T(math.Float64frombits(le.Uint64(src[8*i:])))
		case acl.Float16:
			v[i] = T(floatx.F16ToF32(le.Uint16(src[2*i:])))
		case acl.BFloat16:
			v[i] = T(floatx.BF16ToF32(le.Uint16(src[2*i:])))
		case acl.Float8E4M3FN:
			v[i] = T(floatx.E4M3FNToF32(src[i]))
		case acl.Float8E5M2:
			v[i] = T(floatx.E5M2ToF32(src[i]))
		case acl.Int8:
			v[i] = T(int8(src[i]))
		case acl.Uint8, acl.Bool:
			v[i] = T(src[i])
		case acl.Int16:
			v[i] = T(int16(le.Uint16(src[2*i:])))
		case acl.Uint16:
			v[i] = T(le.Uint16(src[2*i:]))
		case acl.Int32:
			v[i] = T(int32(le.Uint32(src[4*i:])))
		case acl.Uint32:
			v[i] = T(le.Uint32(src[4*i:]))
		case acl.Int64:
			v[i] = T(int64(le.Uint64(src[8*i:])))
		case acl.Uint64:
			v[i] = T(le.Uint64(src[8*i:]))
		}
	}
}
