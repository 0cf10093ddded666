package zerocopy

import (
	"encoding/binary"

	"github.com/ascend-go/cann/acl"
)

// Bits is an unsigned integer type whose values are the bit patterns of
// IO elements of the same size: uint16 for float16 and bfloat16, uint8 for
// the float8 types, and so on.
type Bits interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// ReadOutputBytes returns output i's bytes as the model wrote them, with
// no conversion: for a program that keeps float16 (or any type) as it is.
// An output of unknown dims has the bytes of the last run's real shape.
// Call it after the run that writes the output has finished (Wait).
func (b *Binding) ReadOutputBytes(i int) ([]byte, error) {
	const op = "zerocopy.ReadOutputBytes"
	if b == nil {
		return nil, nilBinding(op)
	}
	mm, io, err := b.io(op, "output", i)
	if err != nil {
		return nil, err
	}
	return b.outputBytes(op, i, io, mm, 1)
}

// WriteInputBytes writes data into input i with no conversion, starting
// at its first byte. data may be shorter than the input, not longer. The
// copy is synchronous, as WriteInput's.
func (b *Binding) WriteInputBytes(i int, data []byte) error {
	const op = "zerocopy.WriteInputBytes"
	if b == nil {
		return nilBinding(op)
	}
	mm, io, err := b.io(op, "input", i)
	if err != nil {
		return err
	}
	return writeMem(op, i, io, mm, data)
}

// ReadOutputBits returns output i's elements as their bit patterns
// (little-endian, as the device stores them), unconverted. T must have the
// size of the output's element: ReadOutputBits[uint16] of a float16 output
// gives its IEEE half-precision bits, where ReadOutput[uint16] converts the
// values to integers.
func ReadOutputBits[T Bits](b *Binding, i int) ([]T, error) {
	const op = "zerocopy.ReadOutputBits"
	if b == nil {
		return nil, nilBinding(op)
	}
	mm, io, err := b.io(op, "output", i)
	if err != nil {
		return nil, err
	}
	es, err := bitsSize[T](op, "output", i, io)
	if err != nil {
		return nil, err
	}
	raw, err := b.outputBytes(op, i, io, mm, es)
	if err != nil {
		return nil, err
	}
	return fromBytes[T](raw, es), nil
}

// WriteInputBits writes bit patterns v into input i unconverted (see
// ReadOutputBits), starting at its first element.
func WriteInputBits[T Bits](b *Binding, i int, v []T) error {
	const op = "zerocopy.WriteInputBits"
	if b == nil {
		return nilBinding(op)
	}
	mm, io, err := b.io(op, "input", i)
	if err != nil {
		return err
	}
	es, err := bitsSize[T](op, "input", i, io)
	if err != nil {
		return err
	}
	data := make([]byte, uintptr(len(v))*es)
	for k, x := range v {
		switch es {
		case 1:
			data[k] = byte(x)
		case 2:
			binary.LittleEndian.PutUint16(data[2*k:], uint16(x))
		case 4:
			binary.LittleEndian.PutUint32(data[4*k:], uint32(x))
		default:
			binary.LittleEndian.PutUint64(data[8*k:], uint64(x))
		}
	}
	return writeMem(op, i, io, mm, data)
}

// bitsSize is the element size of io, which must be T's.
func bitsSize[T Bits](op, dir string, i int, io acl.IODesc) (uintptr, error) {
	var zero T
	want := sizeOfBits(zero)
	es := uintptr(io.DataType.Size())
	if es == 0 || es != want {
		return 0, acl.Errorf(op, acl.CodeInvalidParam, "%s has data type %v (%d-byte elements), the bit-pattern type %d-byte ones",
			ioName(dir, i, io), io.DataType, es, want)
	}
	return es, nil
}

// sizeOfBits is the byte size of a Bits type, from the largest value it
// holds.
func sizeOfBits[T Bits](zero T) uintptr {
	x := ^zero
	switch {
	case uint64(x) == 0xff:
		return 1
	case uint64(x) == 0xffff:
		return 2
	case uint64(x) == 0xffff_ffff:
		return 4
	}
	return 8
}

// fromBytes decodes little-endian elements of es bytes.
func fromBytes[T Bits](raw []byte, es uintptr) []T {
	v := make([]T, uintptr(len(raw))/es)
	for k := range v {
		switch es {
		case 1:
			v[k] = T(raw[k])
		case 2:
			v[k] = T(binary.LittleEndian.Uint16(raw[2*k:]))
		case 4:
			v[k] = T(binary.LittleEndian.Uint32(raw[4*k:]))
		default:
			v[k] = T(binary.LittleEndian.Uint64(raw[8*k:]))
		}
	}
	return v
}

// writeMem copies data to the start of input memory mm, which must hold it.
func writeMem(op string, i int, io acl.IODesc, mm acl.Memory, data []byte) error {
	capacity := io.Size
	if io.Dynamic() {
		capacity = mm.Size()
	}
	if uintptr(len(data)) > capacity {
		return acl.Errorf(op, acl.CodeInvalidParam, "%d bytes for %s, which holds %d", len(data), ioName("input", i, io), capacity)
	}
	return copyIn(op, i, io, mm, data)
}

// copyIn copies data, already checked to fit, to the start of input
// memory mm: device memory through the runtime, pinned host memory
// directly.
func copyIn(op string, i int, io acl.IODesc, mm acl.Memory, data []byte) error {
	switch m := mm.(type) {
	case *acl.DeviceBuffer:
		return m.CopyFromHost(data)
	case *acl.HostBuffer:
		dst := m.Bytes()
		if dst == nil {
			return acl.Errorf(op, acl.CodeRTInvalidHandle, "%s: host buffer is closed", ioName("input", i, io))
		}
		copy(dst, data)
		return nil
	}
	return acl.Errorf(op, acl.CodeInvalidParam, "%s: memory of type %T", ioName("input", i, io), mm)
}

// outputBytes reads output i's bytes unconverted, a whole number of es-byte
// elements: all of them, or the last run's real shape's for unknown dims.
func (b *Binding) outputBytes(op string, i int, io acl.IODesc, mm acl.Memory, es uintptr) ([]byte, error) {
	size := io.Size
	if io.Dynamic() {
		var err error
		if size, _, err = b.realOutput(op, i, io, mm); err != nil {
			return nil, err
		}
	}
	return readMem[uint8](op, i, acl.IODesc{Name: io.Name, DataType: acl.Uint8}, mm, 1, size/es*es)
}
