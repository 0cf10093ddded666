package ge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"unicode/utf8"

	"github.com/ascend-go/cann/acl"
)

// ParseModel decodes and validates a serialised model. It never trusts a
// length: every count is bounded by the bytes that remain, so allocation
// stays proportional to len(data), and the decoded model passes the same
// validation as a freshly compiled one (regions, offsets, IO layout, task
// slots and their tags, op types, inferred shapes). Failures are *acl.Error:
//
//   - ACL_ERROR_INVALID_FILE_SIZE: shorter than the header, or the header's
//     payload length disagrees with the data's length;
//   - ACL_ERROR_PARSE_MODEL: not a model this package reads — wrong magic,
//     unknown version or flags, checksum mismatch;
//   - ACL_ERROR_DESERIALIZE_MODEL: the payload is well-framed and its
//     checksum matches but its contents are malformed or inconsistent.
//
// The returned CompiledModel shares no memory with data.
func ParseModel(data []byte) (*CompiledModel, error) {
	const op = "ge.ParseModel"
	if len(data) < HeaderSize {
		return nil, acl.Errorf(op, acl.CodeInvalidFileSize, "model is %d bytes, shorter than the %d-byte header", len(data), HeaderSize)
	}
	if string(data[:8]) != ModelMagic {
		return nil, acl.Errorf(op, acl.CodeParseModel, "bad magic %q", data[:8])
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != ModelVersion {
		return nil, acl.Errorf(op, acl.CodeParseModel, "unsupported model version %d (this reader handles %d)", v, ModelVersion)
	}
	if f, r := binary.LittleEndian.Uint32(data[12:]), binary.LittleEndian.Uint32(data[28:]); f != 0 || r != 0 {
		return nil, acl.Errorf(op, acl.CodeParseModel, "unknown header flags %#x / reserved word %#x", f, r)
	}
	payload := data[HeaderSize:]
	if n := binary.LittleEndian.Uint64(data[16:]); n != uint64(len(payload)) {
		return nil, acl.Errorf(op, acl.CodeInvalidFileSize, "header declares a %d-byte payload, %d bytes follow", n, len(payload))
	}
	if sum, want := crc32.Checksum(payload, castagnoli), binary.LittleEndian.Uint32(data[24:]); sum != want {
		return nil, acl.Errorf(op, acl.CodeParseModel, "payload checksum %#08x, header says %#08x", sum, want)
	}
	m, err := decodePayload(payload)
	if err != nil {
		return nil, acl.Errorf(op, acl.CodeDeserializeModel, "%v", err)
	}
	if err := validateModel(m); err != nil {
		return nil, acl.Errorf(op, acl.CodeDeserializeModel, "%v", err)
	}
	return m, nil
}

var errShort = errors.New("truncated")

// decoder reads little-endian values; the first failure sticks.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.off {
		d.err = fmt.Errorf("%w: need %d bytes at offset %d, %d left", errShort, n, d.off, len(d.b)-d.off)
		return nil
	}
	s := d.b[d.off : d.off+n]
	d.off += n
	return s
}

func (d *decoder) left() int { return len(d.b) - d.off }

func (d *decoder) u8() uint8 {
	if s := d.take(1); s != nil {
		return s[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if s := d.take(2); s != nil {
		return binary.LittleEndian.Uint16(s)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if s := d.take(4); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

func (d *decoder) i64() int64 {
	if s := d.take(8); s != nil {
		return int64(binary.LittleEndian.Uint64(s))
	}
	return 0
}

// count reads a u32 count of items of at least minSize bytes each and
// rejects it when it exceeds limit or the bytes left.
func (d *decoder) count(what string, minSize, limit int) int {
	n := d.u32()
	if d.err != nil {
		return 0
	}
	if int64(n) > int64(limit) || int64(n)*int64(minSize) > int64(d.left()) {
		d.fail("%s count %d exceeds the limit %d or the %d bytes left", what, n, limit, d.left())
		return 0
	}
	return int(n)
}

func (d *decoder) index(what string) int {
	v := d.u32()
	if v > math.MaxInt32 {
		d.fail("%s %d out of range", what, v)
	}
	return int(v)
}

func (d *decoder) str(what string) string {
	n := d.count(what+" length", 1, maxString)
	s := d.take(n)
	if d.err == nil && !utf8.Valid(s) {
		d.fail("%s is not UTF-8", what)
	}
	return string(s)
}

func (d *decoder) boolean(what string) bool {
	v := d.u8()
	if v > 1 {
		d.fail("%s flag %d is not 0 or 1", what, v)
	}
	return v == 1
}

func (d *decoder) ints(what string, limit int) []int64 {
	n := d.count(what, 8, limit)
	if n == 0 {
		return nil
	}
	v := make([]int64, n)
	for i := range v {
		v[i] = d.i64()
	}
	return v
}

func (d *decoder) desc() TensorDesc {
	var t TensorDesc
	t.DataType = acl.DataType(int32(d.u32()))
	t.Format = acl.Format(int32(d.u32()))
	r := int(d.u8())
	if r > MaxRank {
		d.fail("rank %d exceeds %d", r, MaxRank)
		return t
	}
	t.Dims = make([]int64, r)
	for i := range t.Dims {
		t.Dims[i] = d.i64()
	}
	if d.err == nil {
		if err := checkDesc(t); err != nil {
			d.fail("%v", err)
		}
	}
	return t
}

// section reads a section header with the expected id and returns a
// decoder over its body.
func (d *decoder) section(id uint32) *decoder {
	got := d.u32()
	zero := d.u32()
	n := d.i64()
	if d.err != nil {
		return &decoder{err: d.err}
	}
	if got != id || zero != 0 {
		d.fail("section %d (word %d) where section %d belongs", got, zero, id)
		return &decoder{err: d.err}
	}
	if n < 0 || n > int64(d.left()) {
		d.fail("section %d declares %d bytes, %d left", id, n, d.left())
		return &decoder{err: d.err}
	}
	return &decoder{b: d.take(int(n))}
}

// done checks that a section body was consumed exactly.
func (d *decoder) done(parent *decoder, id int) {
	if d.err == nil && d.left() != 0 {
		d.fail("section %d has %d trailing bytes", id, d.left())
	}
	if d.err != nil && parent.err == nil {
		parent.err = fmt.Errorf("section %d: %w", id, d.err)
	}
}

func decodePayload(p []byte) (*CompiledModel, error) {
	top := &decoder{b: p}
	m := &CompiledModel{Attrs: map[string]string{}}

	s := top.section(secModel)
	m.Name = s.str("model name")
	m.MemorySize, m.ZeroCopySize, m.WeightSize = s.i64(), s.i64(), s.i64()
	s.done(top, secModel)

	s = top.section(secIO)
	for _, dir := range []IODir{IOInput, IOOutput} {
		// name len, dtype, format, rank, size, zc, basic, nrel, buffer
		n := s.count(dir.String()+"s", 4+4+4+1+8+1+8+4+4, math.MaxInt32)
		list := make([]IODesc, n)
		for i := range list {
			io := &list[i]
			io.Name = s.str(dir.String() + " name")
			td := s.desc()
			io.DataType, io.Format, io.Dims = td.DataType, td.Format, td.Dims
			io.Size = s.i64()
			io.ZeroCopy = s.boolean("zero-copy")
			io.BasicOffset = s.i64()
			io.RelativeOffsets = s.ints("relative offsets", maxArgs)
			io.Buffer = s.index("buffer index")
		}
		if dir == IOInput {
			m.Inputs = list
		} else {
			m.Outputs = list
		}
	}
	s.done(top, secIO)

	s = top.section(secPlan)
	n := s.count("plan buffers", 4+3+4+8+8+4+4, math.MaxInt32)
	m.Plan = make([]Buffer, n)
	for i := range m.Plan {
		b := &m.Plan[i]
		b.Name = s.str("buffer name")
		b.Kind, b.Mem, b.IO.Dir = BufferKind(s.u8()), MemType(s.u8()), IODir(s.u8())
		b.IO.Index = s.index("IO index")
		b.Offset, b.Size = s.i64(), s.i64()
		b.Def, b.Last = s.index("lifetime start"), s.index("lifetime end")
	}
	s.done(top, secPlan)

	s = top.section(secWeights)
	if int64(s.left()) != m.WeightSize {
		s.fail("weights section holds %d bytes, weight size is %d", s.left(), m.WeightSize)
	} else {
		m.Weights = append([]byte{}, s.take(s.left())...)
	}
	s.done(top, secWeights)

	s = top.section(secTasks)
	n = s.count("tasks", 2+4+4+4+4+4+4, math.MaxInt32)
	m.Tasks = make([]Task, n)
	for i := range m.Tasks {
		decodeTask(s, &m.Tasks[i])
	}
	s.done(top, secTasks)

	s = top.section(secAttrs)
	n = s.count("model attributes", 8, maxAttrs)
	for range n {
		k := s.str("attribute name")
		m.Attrs[k] = s.str("attribute value")
	}
	s.done(top, secAttrs)

	if top.err == nil && top.left() != 0 {
		top.fail("%d bytes after the last section", top.left())
	}
	return m, top.err
}

func decodeTask(s *decoder, t *Task) {
	t.Op = OpType(s.u16())
	t.Name = s.str("task name")
	if s.err == nil && !t.Op.HasTask() {
		s.fail("task %q: op type %d is not a task op", t.Name, t.Op)
		return
	}
	na := s.count("attributes", 4+1+1, maxAttrs)
	t.Attrs = make(Attrs, na)
	for range na {
		k := s.str("attribute name")
		var a Attr
		a.Kind = AttrKind(s.u8())
		switch a.Kind {
		case AttrInt:
			a.I = s.i64()
		case AttrBool:
			a.I = s.i64()
			if a.I != 0 && a.I != 1 {
				s.fail("task %q: bool attribute %q is %d", t.Name, k, a.I)
			}
		case AttrFloat:
			a.F = math.Float64frombits(uint64(s.i64()))
		case AttrInts:
			a.L = s.ints("attribute ints", maxIntsAttr)
		case AttrString:
			a.S = s.str("attribute string")
		default:
			s.fail("task %q: attribute %q has unknown kind %d", t.Name, k, a.Kind)
		}
		if _, dup := t.Attrs[k]; dup {
			s.fail("task %q: attribute %q repeated", t.Name, k)
		}
		t.Attrs[k] = a
	}
	for _, list := range []*[]TensorDesc{&t.Inputs, &t.Outputs} {
		n := s.count("task tensors", 4+4+1, maxTaskIO)
		*list = make([]TensorDesc, n)
		for i := range *list {
			(*list)[i] = s.desc()
		}
	}
	t.Workspace = s.ints("workspace sizes", maxTaskIO)
	n := s.count("argument slots", 3+4+8+8+4, maxArgs)
	t.Args = make([]ArgSlot, n)
	for i := range t.Args {
		a := &t.Args[i]
		a.Mem, a.IO.Dir = MemType(s.u8()), IODir(s.u8())
		flags := s.u8()
		if flags&^1 != 0 {
			s.fail("task %q: argument %d has unknown flags %#x", t.Name, i, flags)
		}
		a.NoZeroCopy = flags&1 != 0
		a.IO.Index = s.index("IO index")
		a.Offset, a.Size = s.i64(), s.i64()
		a.Buffer = s.index("buffer index")
	}
}
