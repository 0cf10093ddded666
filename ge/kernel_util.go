package ge

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/floatx"
)

// nativeLE reports whether the host stores integers little-endian, the
// device byte order; only then may float32 data be used in place.
var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// viewF32 returns the first n float32 values of b in place, or nil when b is
// not 4-byte aligned (device memory always is; arbitrary callers' slices may
// not be) or the host is big-endian.
func viewF32(b []byte, n int) []float32 {
	if n == 0 || !nativeLE || len(b) < 4*n || uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
}

// f32Pools holds pooled float32 buffers by size class: class c holds
// buffers of capacity 1<<c, so a request always finds one large enough
// and a kernel's mix of sizes reaches a steady state with no allocation.
var f32Pools [40]sync.Pool

// scratch hands out pooled float32 buffers for one kernel call.
type scratch struct {
	bufs [16]*[]float32 // the first buffers handed out; more go in more
	n    int
	more []*[]float32
}

func (s *scratch) f32(n int) []float32 {
	c := bits.Len(uint(max(n, 1) - 1))
	p, _ := f32Pools[c].Get().(*[]float32)
	if p == nil {
		b := make([]float32, 1<<c)
		p = &b
	}
	if s.n < len(s.bufs) {
		s.bufs[s.n] = p
	} else {
		s.more = append(s.more, p)
	}
	s.n++
	return (*p)[:n]
}

func (s *scratch) release() {
	for i := range min(s.n, len(s.bufs)) {
		put(s.bufs[i])
	}
	for _, p := range s.more {
		put(p)
	}
	s.n, s.more = 0, s.more[:0]
}

func put(p *[]float32) {
	f32Pools[bits.Len(uint(cap(*p)-1))].Put(p)
}

// readFloats returns n values of the float tensor b as float32: b itself for
// aligned float32 data, otherwise a decoded copy.
func readFloats(s *scratch, dt acl.DataType, b []byte, n int) []float32 {
	if dt == acl.Float32 {
		if v := viewF32(b, n); v != nil {
			return v
		}
	}
	v := s.f32(n)
	decodeFloats(v, dt, b)
	return v
}

func decodeFloats(dst []float32, dt acl.DataType, b []byte) {
	switch dt {
	case acl.Float32:
		for i := range dst {
			dst[i] = float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case acl.Float16:
		floatx.DecodeF16(dst, b)
	case acl.BFloat16:
		floatx.DecodeBF16(dst, b)
	}
}

// outFloats returns where a kernel computes n output values: b itself for
// aligned float32 data, otherwise scratch that storeFloats writes back.
func outFloats(s *scratch, dt acl.DataType, b []byte, n int) []float32 {
	if dt == acl.Float32 {
		if v := viewF32(b, n); v != nil {
			return v
		}
	}
	return s.f32(n)
}

// storeFloats writes v into b in dtype dt unless v already is b.
func storeFloats(dt acl.DataType, b []byte, v []float32) {
	if len(v) == 0 || (len(b) > 0 && unsafe.Pointer(&b[0]) == unsafe.Pointer(&v[0])) {
		return
	}
	switch dt {
	case acl.Float32:
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], float32bits(x))
		}
	case acl.Float16:
		floatx.EncodeF16(b, v)
	case acl.BFloat16:
		floatx.EncodeBF16(b, v)
	}
}

func float32bits(f float32) uint32     { return math.Float32bits(f) }
func float32frombits(b uint32) float32 { return math.Float32frombits(b) }

// prod multiplies dims as ints (the descs were validated, so it fits).
func prod(d []int64) int {
	n := 1
	for _, v := range d {
		n *= int(v)
	}
	return n
}

// kernelError is a failure detected inside a kernel, as the device reports
// an AI Core exception.
func kernelError(t *Task, format string, args ...any) error {
	return acl.Errorf("ge.RunTask", acl.CodeRTAICoreException, "task %q (%s): "+format, append([]any{t.Name, t.Op}, args...)...)
}

// u64Pools holds pooled 8-byte-word buffers by size class, for kernels
// that need float64, int or bool scratch (Resize's plans and rows).
var u64Pools [40]sync.Pool

// wordArena hands out zeroed typed scratch carved from pooled word
// buffers for one kernel call; release returns them.
type wordArena struct {
	bufs [32]*[]uint64
	n    int
	more []*[]uint64
}

func (a *wordArena) words(n int) []uint64 {
	c := bits.Len(uint(max(n, 1) - 1))
	p, _ := u64Pools[c].Get().(*[]uint64)
	if p == nil {
		b := make([]uint64, 1<<c)
		p = &b
	}
	if a.n < len(a.bufs) {
		a.bufs[a.n] = p
	} else {
		a.more = append(a.more, p)
	}
	a.n++
	w := (*p)[:n]
	clear(w)
	return w
}

func (a *wordArena) f64(n int) []float64 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&a.words(n)[0])), n)
}

func (a *wordArena) ints(n int) []int {
	if n == 0 {
		return nil
	}
	per := 8 / int(unsafe.Sizeof(int(0)))
	return unsafe.Slice((*int)(unsafe.Pointer(&a.words((n + per - 1) / per)[0])), n)
}

func (a *wordArena) bools(n int) []bool {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*bool)(unsafe.Pointer(&a.words((n + 7) / 8)[0])), n)
}

func (a *wordArena) release() {
	for i := range min(a.n, len(a.bufs)) {
		u64Pools[bits.Len(uint(cap(*a.bufs[i])-1))].Put(a.bufs[i])
	}
	for _, p := range a.more {
		u64Pools[bits.Len(uint(cap(*p)-1))].Put(p)
	}
	a.n, a.more = 0, a.more[:0]
}
