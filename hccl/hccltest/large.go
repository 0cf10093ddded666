package hccltest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	mbits "math/bits"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

// Large buffers: AllReduce (fp32 and bf16 SUM) and Broadcast at 1, 16 and
// 64 MiB per rank (largeCases), which a backend moves in pieces (staging
// memory, a transport's chunks) that small counts never exercise.
//
// The reduction inputs are random multiples of a power of two small
// enough that every partial sum is exact in the data type, so the
// reference is exact integer arithmetic and the outputs must match it bit
// for bit whatever order a backend adds in. Rounding is the small-count
// subtests' business; here a misplaced, repeated or dropped piece shows
// as a wrong element.

// largeCases are the rank counts and the per-rank sizes (MiB) of each.
// 64 MiB (a whole default staging area of the fallback's rank processes,
// the largest size here) runs on 3 ranks only, where a ring's pieces
// split unevenly; 2 ranks stop at 16 MiB, which already moves in many
// pieces, so the slowest size runs once per env instead of twice.
var largeCases = []struct {
	ranks int
	mib   []int
}{{2, []int{1, 16}}, {3, []int{1, 16, 64}}, {maxSuiteRanks, []int{1}}}

// largeChunk is how much of an output a rank reads back and compares at a
// time, so a check holds no second copy of a 64 MiB output.
const largeChunk = 4 << 20

// largeExecTimeout (seconds) is the Large groups' exec timeout.
const largeExecTimeout = 120

func (s *suite) testLarge(t *testing.T) {
	for _, lc := range largeCases {
		t.Run(fmt.Sprintf("ranks=%d", lc.ranks), func(t *testing.T) {
			// The size subtests exist (and skip) even where they cannot
			// run, so every env lists the same names.
			var g *group
			if !s.short && lc.ranks <= s.maxRanks {
				// A 64 MiB AllReduce may outlast a short exec timeout on a
				// loaded machine: this communicator overrides it, as
				// HcclCommConfig's hcclExecTimeOut allows.
				cfg := hccl.NewCommConfig()
				cfg.ExecTimeOut = largeExecTimeout
				g = s.newGroup(t, lc.ranks)
				g.noErr("CommInitRootInfoConfig", g.initRoot(cfg))
			}
			for _, mib := range lc.mib {
				t.Run(fmt.Sprintf("size=%dMiB", mib), func(t *testing.T) {
					if s.short {
						s.skip(t, "buffers up to 64 MiB per rank: skipped with Options.Short or -short")
					}
					s.needRanks(t, lc.ranks)
					rng := s.rng(t)
					g := g.in(t)
					nb := mib << 20
					for _, dt := range []hccl.DataType{hccl.Float32, hccl.BFloat16} {
						largeAllReduce(g, rng, dt, nb)
					}
					largeBroadcast(g, rng, nb)
				})
			}
			if g != nil {
				g.noErr("CommDestroy", g.destroy())
			}
		})
	}
}

// mix is the output function of splitmix64. The generators below keep
// their state in a local variable, so that drawing costs no memory access
// (which the race detector would instrument: these loops run over
// hundreds of MiB).
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

const golden = 0x9e3779b97f4a7c15

// exactSum describes inputs of dt whose sums over n ranks are exact: each
// element is k·2^exp with |k| ≤ lim, and lim·n fits the significand.
type exactSum struct {
	dt   hccl.DataType
	lim  int32
	span uint64 // 2·lim + 1 values of k
	exp  int
}

func newExactSum(dt hccl.DataType, n int) exactSum {
	e := exactSum{dt: dt, lim: (1<<24 - 1) / int32(n), exp: -8} // fp32: 24 significant bits
	if dt == hccl.BFloat16 {
		e.lim, e.exp = 255/int32(n), -4 // bf16: 8 significant bits
	}
	e.span = uint64(2*e.lim + 1)
	return e
}

// k maps 32 random bits onto [-lim, lim] (multiply-shift; its bias of
// span/2^32 is harmless here).
func (e exactSum) k(bits uint32) int32 { return int32(uint64(bits)*e.span>>32) - e.lim }

// enc encodes k·2^exp in dt, built from the IEEE fields in integer
// arithmetic (exact: |k| < 2^24; bf16 is the upper half of fp32).
func (e exactSum) enc(k int32) uint64 {
	if k == 0 {
		return 0
	}
	var sign uint32
	if k < 0 {
		sign, k = 1<<31, -k
	}
	u := uint32(k)
	top := mbits.Len32(u) - 1 // k·2^exp = 1.f × 2^(top+exp)
	f := sign | uint32(top+e.exp+127)<<23 | u<<(23-top)&(1<<23-1)
	if e.dt == hccl.BFloat16 {
		return uint64(f >> 16)
	}
	return uint64(f)
}

// words writes len(dst)/8 little-endian words, each holding the
// element-wise sums over the streams states (one per rank, at most
// maxSuiteRanks; one stream gives that rank's input), and advances the
// streams. Each call writes a buffer only its goroutine sees, hundreds of
// MiB in all: norace spares the race detector a check per word, which
// would make this the slowest part of the suite under -race.
//
//go:norace
func (e exactSum) words(dst []byte, states []uint64) {
	var st [maxSuiteRanks]uint64
	n := copy(st[:], states)
	quad := e.dt.Size() == 2 // four 16-bit elements per word, else two 32-bit
	for i := 0; i+8 <= len(dst); i += 8 {
		var acc [4]int32
		for r := 0; r < n; r++ {
			st[r] += golden
			x := mix(st[r])
			acc[0] += e.k(uint32(x))
			acc[1] += e.k(uint32(x >> 32))
			if quad {
				st[r] += golden
				y := mix(st[r])
				acc[2] += e.k(uint32(y))
				acc[3] += e.k(uint32(y >> 32))
			}
		}
		w := e.enc(acc[0]) | e.enc(acc[1])<<32
		if quad {
			w = e.enc(acc[0]) | e.enc(acc[1])<<16 | e.enc(acc[2])<<32 | e.enc(acc[3])<<48
		}
		binary.LittleEndian.PutUint64(dst[i:], w)
	}
	copy(states, st[:n])
}

// genBytes returns n random bytes (n a multiple of 8) from seed (norace:
// as words).
//
//go:norace
func genBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		seed += golden
		binary.LittleEndian.PutUint64(b[i:], mix(seed))
	}
	return b
}

// largeBufs are one rank's buffers of a large case.
type largeBufs struct{ send, recv unsafe.Pointer }

// largeAllReduce checks a SUM AllReduce of nb bytes of dt per rank. Each
// rank writes its input in chunks from its own stream; the reference is
// the streams' exact sums. The ranks call the collective only once all
// have written, so the time to write 64 MiB does not count against the
// backend's timeout.
func largeAllReduce(g *group, rng *rand.Rand, dt hccl.DataType, nb int) {
	g.t.Helper()
	n := len(g.ws)
	e := newExactSum(dt, n)
	es := int(dt.Size())
	count := nb / es
	seeds := make([]uint64, n)
	for r := range seeds {
		seeds[r] = rng.Uint64()
	}
	want := make([]byte, nb)
	e.words(want, append([]uint64(nil), seeds...))
	pre := bytes.Repeat([]byte{0xa5}, guard)
	bufs := make([]largeBufs, n)
	what := fmt.Sprintf("AllReduce %v sum, %d MiB per rank, ranks=%d", dt, nb>>20, n)
	g.noErr(what+": write the inputs", g.each(func(w *worker) error {
		b := &bufs[w.rank]
		var err error
		if b.send, err = w.alloc(uintptr(nb)); err != nil {
			return err
		}
		if b.recv, err = w.alloc(uintptr(nb + guard)); err != nil {
			return err
		}
		st := seeds[w.rank : w.rank+1 : w.rank+1]
		chunk := make([]byte, min(largeChunk, nb))
		for off := 0; off < nb; off += len(chunk) {
			c := chunk[:min(len(chunk), nb-off)]
			e.words(c, st)
			if err := w.r.Write(unsafe.Add(b.send, off), c); err != nil {
				return err
			}
		}
		return w.r.Write(unsafe.Add(b.recv, nb), pre)
	}))
	g.noErr(what, g.each(func(w *worker) error {
		b := bufs[w.rank]
		defer w.free(b.send)
		defer w.free(b.recv)
		if err := g.b.AllReduce(b.send, b.recv, uint64(count), dt, hccl.Sum, w.comm, w.r.Stream()); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		return w.compareLarge(b.recv, want, pre, func(off int, got []byte) string {
			for i := 0; i < len(got)/es; i++ {
				if !bytes.Equal(got[i*es:(i+1)*es], want[off+i*es:off+(i+1)*es]) {
					j := off/es + i
					return fmt.Sprintf("element %d of %d: want %s got %s", j, count, fmtElem(dt, want, j), fmtElem(dt, got, i))
				}
			}
			return ""
		})
	}))
}

// largeBroadcast checks a Broadcast of nb random bytes from a random root.
func largeBroadcast(g *group, rng *rand.Rand, nb int) {
	g.t.Helper()
	n := len(g.ws)
	root := rng.IntN(n)
	data := genBytes(rng.Uint64(), nb)
	pre := bytes.Repeat([]byte{0x5a}, guard)
	bufs := make([]unsafe.Pointer, n)
	what := fmt.Sprintf("Broadcast %d MiB, root %d, ranks=%d", nb>>20, root, n)
	g.noErr(what+": write the input", g.each(func(w *worker) error {
		var err error
		if bufs[w.rank], err = w.alloc(uintptr(nb + guard)); err != nil {
			return err
		}
		if w.rank == root {
			if err := w.r.Write(bufs[w.rank], data); err != nil {
				return err
			}
		}
		return w.r.Write(unsafe.Add(bufs[w.rank], nb), pre)
	}))
	g.noErr(what, g.each(func(w *worker) error {
		buf := bufs[w.rank]
		defer w.free(buf)
		if err := g.b.Broadcast(buf, uint64(nb), hccl.Uint8, uint32(root), w.comm, w.r.Stream()); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		return w.compareLarge(buf, data, pre, func(off int, got []byte) string {
			return firstDiff(data[off:off+len(got)], got)
		})
	}))
}

// compareLarge reads the output at p back chunk by chunk and compares it
// with want, then checks that the guard bytes after it still hold pre.
// diff describes the first difference within a chunk at byte offset off.
func (w *worker) compareLarge(p unsafe.Pointer, want, pre []byte, diff func(off int, got []byte) string) error {
	chunk := make([]byte, min(largeChunk, len(want)))
	for off := 0; off < len(want); off += len(chunk) {
		got := chunk[:min(len(chunk), len(want)-off)]
		if err := w.r.Read(got, unsafe.Add(p, off)); err != nil {
			return err
		}
		if !bytes.Equal(got, want[off:off+len(got)]) {
			return fmt.Errorf("rank %d: output differs from the reference at byte offset %d: %s", w.rank, off, diff(off, got))
		}
	}
	tail := make([]byte, len(pre))
	if err := w.r.Read(tail, unsafe.Add(p, len(want))); err != nil {
		return err
	}
	if d := firstDiff(pre, tail); d != "" {
		return fmt.Errorf("rank %d wrote past the end of its output: %s", w.rank, d)
	}
	return nil
}
