package hcclsim

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
	"unsafe"
)

// The binary layout of a control message: every field of msg in
// declaration order, integers as varints, strings, byte strings and lists
// as a length followed by their elements, a descriptor as a presence byte
// followed by its fields. Decoding checks every length against the bytes
// that remain, and charges what it allocates to a budget proportional to
// the frame, before allocating: a frame of b bytes allocates O(b).

var errBadMsg = errors.New("malformed control message")

type msgEnc struct{ b []byte }

func (e *msgEnc) u(v uint64)       { e.b = binary.AppendUvarint(e.b, v) }
func (e *msgEnc) i(v int64)        { e.b = binary.AppendVarint(e.b, v) }
func (e *msgEnc) bytes(p []byte)   { e.u(uint64(len(p))); e.b = append(e.b, p...) }
func (e *msgEnc) str(s string)     { e.u(uint64(len(s))); e.b = append(e.b, s...) }
func (e *msgEnc) u64s(vs []uint64) { e.u(uint64(len(vs))); e.uvals(vs) }

func (e *msgEnc) uvals(vs []uint64) {
	for _, v := range vs {
		e.u(v)
	}
}

func (e *msgEnc) desc(d *opDesc) {
	if d == nil {
		e.u(0)
		return
	}
	e.u(1)
	e.u(uint64(d.Kind))
	e.u(d.Count)
	e.u(uint64(d.DT))
	e.u(uint64(d.Op))
	e.u(uint64(d.Root))
	e.u64s(d.SendCounts)
	e.u64s(d.SDispls)
	e.u64s(d.RecvCounts)
	e.u64s(d.RDispls)
	e.u(uint64(d.RecvDT))
}

// encodeMsg appends m's encoding to b.
func encodeMsg(b []byte, m *msg) []byte {
	e := msgEnc{b: b}
	e.u(uint64(m.Kind))
	e.i(int64(m.N))
	e.i(int64(m.Rank))
	e.i(int64(m.Pid))
	e.i(int64(m.Code))
	e.str(m.Text)
	e.u(uint64(m.Mode))
	e.i(int64(m.StageBytes))
	e.str(m.Seg)
	e.u(uint64(len(m.Segs)))
	for _, s := range m.Segs {
		e.str(s)
	}
	e.u(m.Seq)
	e.desc(m.Desc)
	e.u(uint64(len(m.Descs)))
	for _, d := range m.Descs {
		e.desc(d)
	}
	e.i(int64(m.Timeout))
	e.u(m.Id)
	e.u(uint64(m.PairKind))
	e.i(int64(m.Peer))
	e.i(int64(m.Side))
	e.u(m.PairSeq)
	e.u(m.Offer.Count)
	e.u(uint64(m.Offer.DT))
	e.u(uint64(len(m.Offer.Payload)))
	for _, p := range m.Offer.Payload {
		e.bytes(p)
	}
	e.bytes(m.Nonce)
	e.bytes(m.Proof)
	return e.b
}

type msgDec struct {
	b      []byte
	bad    bool
	budget int // bytes the decoder may still allocate
}

// take charges n bytes of allocation; false (and the message is bad) when
// the budget is spent.
func (d *msgDec) take(n int) bool {
	d.budget -= n
	if d.budget < 0 {
		d.bad = true
		d.b = nil
		return false
	}
	return true
}

func (d *msgDec) u() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *msgDec) i() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad = true
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// small reads an unsigned value that must fit in max.
func (d *msgDec) small(max uint64) uint64 {
	v := d.u()
	if v > max {
		d.bad = true
		return 0
	}
	return v
}

// int reads a signed value that must fit in an int32 (ranks, counts of
// ranks, pids, sides: nothing larger is meaningful).
func (d *msgDec) int() int {
	v := d.i()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.bad = true
		return 0
	}
	return int(v)
}

// count reads a list length whose elements take at least one byte each:
// a length beyond the bytes left is malformed.
func (d *msgDec) count() int {
	v := d.u()
	if v > uint64(len(d.b)) {
		d.bad = true
		d.b = nil
		return 0
	}
	return int(v)
}

func (d *msgDec) bytes() []byte {
	n := d.count()
	if n == 0 || !d.take(n+16) { // the allocator rounds small objects up
		return nil
	}
	p := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return p
}

func (d *msgDec) str() string {
	n := d.count()
	if !d.take(n) {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *msgDec) u64s() []uint64 {
	n := d.count()
	if n == 0 || !d.take(8*n) {
		return nil
	}
	vs := make([]uint64, n)
	for k := range vs {
		vs[k] = d.u()
	}
	return vs
}

func (d *msgDec) desc() *opDesc {
	switch d.small(1) {
	case 0:
		return nil
	}
	if !d.take(int(unsafe.Sizeof(opDesc{}))) {
		return nil
	}
	o := &opDesc{}
	o.Kind = opKind(d.small(math.MaxUint8))
	o.Count = d.u()
	o.DT = dtype(d.small(math.MaxUint32))
	o.Op = redOp(d.small(math.MaxUint32))
	o.Root = uint32(d.small(math.MaxUint32))
	o.SendCounts = d.u64s()
	o.SDispls = d.u64s()
	o.RecvCounts = d.u64s()
	o.RDispls = d.u64s()
	o.RecvDT = dtype(d.small(math.MaxUint32))
	return o
}

// decodeMsg decodes one frame's payload; anything malformed (a bad
// varint, a length beyond the frame, an unknown kind, trailing bytes) is
// an error.
func decodeMsg(b []byte) (*msg, error) {
	d := msgDec{b: b, budget: 16*len(b) + 64<<10}
	m := &msg{}
	m.Kind = msgKind(d.small(uint64(mLastKind)))
	m.N = d.int()
	m.Rank = d.int()
	m.Pid = d.int()
	m.Code = int32(d.int())
	m.Text = d.str()
	m.Mode = uint8(d.small(math.MaxUint8))
	m.StageBytes = int(d.i())
	m.Seg = d.str()
	if n := d.count(); n > 0 && d.take(16*n) {
		m.Segs = make([]string, n)
		for k := range m.Segs {
			m.Segs[k] = d.str()
		}
	}
	m.Seq = d.u()
	m.Desc = d.desc()
	if n := d.count(); n > 0 && d.take(8*n) {
		m.Descs = make([]*opDesc, n)
		for k := range m.Descs {
			m.Descs[k] = d.desc()
		}
	}
	m.Timeout = time.Duration(d.i())
	m.Id = d.u()
	m.PairKind = uint8(d.small(math.MaxUint8))
	m.Peer = d.int()
	m.Side = d.int()
	m.PairSeq = d.u()
	m.Offer.Count = d.u()
	m.Offer.DT = dtype(d.small(math.MaxUint32))
	if n := d.count(); n > 0 && d.take(24*n) {
		m.Offer.Payload = make([][]byte, n)
		for k := range m.Offer.Payload {
			m.Offer.Payload[k] = d.bytes()
		}
	}
	m.Nonce = d.bytes()
	m.Proof = d.bytes()
	if d.bad || len(d.b) != 0 || m.Kind == 0 {
		return nil, errBadMsg
	}
	return m, nil
}
