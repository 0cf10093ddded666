package ge

import (
	"encoding/binary"
	"hash/crc32"
	"math"

	"github.com/ascend-go/cann/acl"
)

// Model file layout (docs/model-format.md is the specification).
const (
	// ModelMagic opens every serialised model.
	ModelMagic = "ASCGEMDL"
	// ModelVersion is the format version this package writes and reads.
	ModelVersion = 1
	// HeaderSize is the size of the fixed header before the payload.
	HeaderSize = 32
)

// Section ids, in the order they appear.
const (
	secModel   = 1
	secIO      = 2
	secPlan    = 3
	secWeights = 4
	secTasks   = 5
	secAttrs   = 6
	numSecs    = 6
)

// Decoder limits: no length read from a model is trusted beyond these, and
// every count is also bounded by the bytes left to read.
const (
	maxString   = 4096
	maxIntsAttr = 1024
	maxAttrs    = 256
	maxTaskIO   = 4096
	maxArgs     = 3 * maxTaskIO
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary serialises the model (docs/model-format.md). The model is
// validated first, so what is written always parses back; an invalid model
// gives ACL_ERROR_INVALID_PARAM.
func (m *CompiledModel) MarshalBinary() ([]byte, error) {
	if m == nil {
		return nil, acl.NilHandle("ge.CompiledModel.MarshalBinary", "compiled model")
	}
	if err := validateModel(m); err != nil {
		return nil, acl.Errorf("ge.CompiledModel.MarshalBinary", acl.CodeInvalidParam, "invalid model: %v", err)
	}
	var e encoder
	e.section(secModel, func() {
		e.str(m.Name)
		e.i64(m.MemorySize)
		e.i64(m.ZeroCopySize)
		e.i64(m.WeightSize)
	})
	e.section(secIO, func() {
		for _, list := range [][]IODesc{m.Inputs, m.Outputs} {
			e.u32(uint32(len(list)))
			for _, d := range list {
				e.str(d.Name)
				e.desc(TensorDesc{DataType: d.DataType, Format: d.Format, Dims: d.Dims})
				e.i64(d.Size)
				e.bool(d.ZeroCopy)
				e.i64(d.BasicOffset)
				e.ints(d.RelativeOffsets)
				e.u32(uint32(d.Buffer))
			}
		}
	})
	e.section(secPlan, func() {
		e.u32(uint32(len(m.Plan)))
		for _, b := range m.Plan {
			e.str(b.Name)
			e.u8(uint8(b.Kind))
			e.u8(uint8(b.Mem))
			e.u8(uint8(b.IO.Dir))
			e.u32(uint32(b.IO.Index))
			e.i64(b.Offset)
			e.i64(b.Size)
			e.u32(uint32(b.Def))
			e.u32(uint32(b.Last))
		}
	})
	e.section(secWeights, func() { e.b = append(e.b, m.Weights...) })
	e.section(secTasks, func() {
		e.u32(uint32(len(m.Tasks)))
		for i := range m.Tasks {
			e.task(&m.Tasks[i])
		}
	})
	e.section(secAttrs, func() {
		keys := Attrs{}
		for k := range m.Attrs {
			keys[k] = Attr{}
		}
		e.u32(uint32(len(m.Attrs)))
		for _, k := range keys.keys() {
			e.str(k)
			e.str(m.Attrs[k])
		}
	})
	payload := e.b
	out := make([]byte, HeaderSize, HeaderSize+len(payload))
	copy(out, ModelMagic)
	binary.LittleEndian.PutUint32(out[8:], ModelVersion)
	binary.LittleEndian.PutUint64(out[16:], uint64(len(payload)))
	binary.LittleEndian.PutUint32(out[24:], crc32.Checksum(payload, castagnoli))
	return append(out, payload...), nil
}

type encoder struct{ b []byte }

func (e *encoder) u8(v uint8)   { e.b = append(e.b, v) }
func (e *encoder) u16(v uint16) { e.b = binary.LittleEndian.AppendUint16(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *encoder) i64(v int64)  { e.b = binary.LittleEndian.AppendUint64(e.b, uint64(v)) }
func (e *encoder) bool(v bool) {
	if v {
		e.u8(1)
	} else {
		e.u8(0)
	}
}
func (e *encoder) str(s string) { e.u32(uint32(len(s))); e.b = append(e.b, s...) }
func (e *encoder) ints(v []int64) {
	e.u32(uint32(len(v)))
	for _, x := range v {
		e.i64(x)
	}
}

func (e *encoder) desc(d TensorDesc) {
	e.u32(uint32(d.DataType))
	e.u32(uint32(d.Format))
	e.u8(uint8(len(d.Dims)))
	for _, v := range d.Dims {
		e.i64(v)
	}
}

// section writes id, a zero word, the body length and the body.
func (e *encoder) section(id uint32, body func()) {
	e.u32(id)
	e.u32(0)
	at := len(e.b)
	e.i64(0)
	body()
	binary.LittleEndian.PutUint64(e.b[at:], uint64(len(e.b)-at-8))
}

func (e *encoder) task(t *Task) {
	e.u16(uint16(t.Op))
	e.str(t.Name)
	keys := t.Attrs.keys()
	e.u32(uint32(len(keys)))
	for _, k := range keys {
		a := t.Attrs[k]
		e.str(k)
		e.u8(uint8(a.Kind))
		switch a.Kind {
		case AttrInt, AttrBool:
			e.i64(a.I)
		case AttrFloat:
			e.i64(int64(math.Float64bits(a.F)))
		case AttrInts:
			e.ints(a.L)
		case AttrString:
			e.str(a.S)
		}
	}
	for _, list := range [][]TensorDesc{t.Inputs, t.Outputs} {
		e.u32(uint32(len(list)))
		for _, d := range list {
			e.desc(d)
		}
	}
	e.ints(t.Workspace)
	e.u32(uint32(len(t.Args)))
	for _, a := range t.Args {
		e.u8(uint8(a.Mem))
		e.u8(uint8(a.IO.Dir))
		var flags uint8
		if a.NoZeroCopy {
			flags |= 1
		}
		e.u8(flags)
		e.u32(uint32(a.IO.Index))
		e.i64(a.Offset)
		e.i64(a.Size)
		e.u32(uint32(a.Buffer))
	}
}
