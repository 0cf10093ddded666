package hcclsim_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// span of memory the test knows, with its content when it is a source.
type knownMem struct {
	base uintptr
	size int
	data []byte // the bytes a copy from it reads (sources only)
}

func (m knownMem) holds(a uintptr, n uint64) bool {
	return a >= m.base && a-m.base <= uintptr(m.size) && n <= uint64(m.size)-uint64(a-m.base)
}

func inAny(ms []knownMem, a uintptr, n uint64) (knownMem, bool) {
	for _, m := range ms {
		if m.holds(a, n) {
			return m, true
		}
	}
	return knownMem{}, false
}

// TestDescriptorChecksRandom: random CopyLocal and BatchGet batches of up
// to 256 descriptors over many allocations (more than a batch's region
// cache holds), with bad descriptors of every kind mixed in — past an
// allocation's end, in the gap after it, in freed memory, in another
// device's memory, in plain host memory, null, wrapping the address space,
// an undefined data type, peer memory never enabled or deregistered —
// checked against a reference validity check written here: a batch with a
// bad descriptor fails with the code of its first bad one (in the order
// the device checks a descriptor); CopyLocal then moves nothing, BatchGet
// moves exactly the descriptors before it (the device queues them one by
// one); a good batch moves every byte.
func TestDescriptorChecksRandom(t *testing.T) {
	const (
		nDst  = 10  // destination allocations: more than regionsMax
		slot  = 192 // bytes of destination per descriptor
		slots = (hccl.MaxOneSideDescs + nDst - 1) / nDst
		ownSz = 64 << 10 // each of rank 1's regions A, B, C, D
	)
	npu := newNPU(t, 2)
	sim := newSim(t, npu)
	g := newGroup(t, &npuEnv{npu: npu, sim: sim}, 2)
	seed := rand.Uint64()
	t.Logf("seed %#x", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	data := func(n int) []byte { return genData(rng, hccl.Uint8, n) }

	// Rank 1: one allocation of four regions: A registered and enabled,
	// B registered, enabled then deregistered, C registered and never
	// enabled, D never registered.
	ownData := data(4 * ownSz)
	var own unsafe.Pointer
	var other uintptr // device 1 memory: not rank 0's
	g.on(1, func(w *rankW) error {
		var err error
		own, err = w.buf(ownData, 0)
		other = uintptr(own)
		return err
	})
	var regs [3]hccl.MemDesc
	g.on(1, func(w *rankW) error {
		for i := range regs {
			var err error
			if regs[i], err = g.b.RegisterMem(w.comm, 0, hccl.MemDevice, unsafe.Add(own, i*ownSz), ownSz); err != nil {
				return err
			}
		}
		return nil
	})
	var got []hccl.MemDesc
	g.must("exchange", g.each(func(w *rankW) error {
		local, remote := regs[:], make([]hccl.MemDesc, 3)
		if w.rank == 0 {
			local = nil
		}
		k, err := g.b.ExchangeMemDesc(w.comm, uint32(1-w.rank), local, 0, remote)
		if w.rank == 0 {
			got = remote[:k]
		}
		return err
	}))
	require.Len(t, got, 3)
	g.on(0, func(w *rankW) error {
		for i := range 2 {
			if _, err := g.b.EnableMemAccess(w.comm, &got[i]); err != nil {
				return err
			}
		}
		return nil
	})
	g.on(1, func(w *rankW) error { return g.b.DeregisterMem(w.comm, &regs[1]) })
	base1 := uintptr(own)
	enabled := []knownMem{{base: base1, size: ownSz}, {base: base1 + ownSz, size: ownSz}}
	registered := []knownMem{{base: base1, size: ownSz, data: ownData[:ownSz]}}

	// Rank 0: destinations, two device sources (a table and a cache), a
	// freed allocation, and host memory of which the first half is
	// registered with the NPU. Sizes leave padding after each block.
	var dsts, devSrcs []knownMem
	var freed uintptr
	host, err := unix.Mmap(-1, 0, 16<<10, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Munmap(host) })
	copy(host, data(len(host)))
	hostBase := uintptr(unsafe.Pointer(&host[0]))
	g.on(0, func(w *rankW) error {
		for range nDst {
			sz := slots*slot + 100
			p, err := w.buf(nil, sz)
			if err != nil {
				return err
			}
			dsts = append(dsts, knownMem{base: uintptr(p), size: sz})
		}
		for _, sz := range []int{64<<10 + 36, 8<<10 + 52} {
			d := data(sz)
			p, err := w.buf(d, 0)
			if err != nil {
				return err
			}
			devSrcs = append(devSrcs, knownMem{base: uintptr(p), size: sz, data: d})
		}
		p, err := w.r.Alloc(4<<10 + 20)
		if err != nil {
			return err
		}
		freed = uintptr(p)
		if err := w.r.Free(p); err != nil {
			return err
		}
		if _, err := npu.HostRegister(unsafe.Pointer(&host[0]), 8<<10, acl.HostRegisterMapped); err != nil {
			return err
		}
		return nil
	})
	t.Cleanup(func() { _ = npu.HostUnregister(unsafe.Pointer(&host[0])) })
	regHost := knownMem{base: hostBase, size: 8 << 10, data: host[:8<<10]}
	rank0Dev := append(append([]knownMem{}, dsts...), devSrcs...)
	srcs := append(append([]knownMem{}, devSrcs...), regHost)

	// Candidate addresses of a range of n bytes: good ones and bad ones of
	// each kind (whether a bad one is bad is the reference's to say).
	wrap := ^uintptr(0) - 40
	pick := func(ms []knownMem, n uint64) uintptr {
		m := ms[rng.IntN(len(ms))]
		return m.base + uintptr(rng.IntN(m.size-int(n)+1))
	}
	// past is by how much a range of n bytes runs past an end: often by
	// one byte.
	past := func(n uint64) uintptr {
		if n < 2 || rng.IntN(2) == 0 {
			return 1
		}
		return 1 + uintptr(rng.IntN(int(n)-1))
	}
	badLocal := func(n uint64) uintptr {
		d := dsts[rng.IntN(len(dsts))]
		switch rng.IntN(7) {
		case 0:
			return d.base + uintptr(d.size) - uintptr(n) + past(n) // runs past the end
		case 1:
			return d.base + uintptr(d.size) + 8 // the gap after it
		case 2:
			return freed + 8
		case 3:
			return other + 64 // device 1
		case 4:
			return hostBase + 64 // registered host memory: not device memory
		case 5:
			return wrap
		}
		return 0 // null
	}
	badSource := func(n uint64) uintptr {
		s := devSrcs[rng.IntN(len(devSrcs))]
		switch rng.IntN(7) {
		case 0:
			return s.base + uintptr(s.size) - uintptr(n) + past(n)
		case 1:
			return s.base + uintptr(s.size) + 8
		case 2:
			return freed + 8
		case 3:
			return other + 64
		case 4:
			return hostBase + 12<<10 // plain host memory
		case 5:
			return wrap
		}
		return 0
	}
	badRemote := func(n uint64) uintptr {
		switch rng.IntN(5) {
		case 0:
			return base1 + ownSz + uintptr(rng.IntN(ownSz-int(n))) // B: deregistered
		case 1:
			return base1 + 2*ownSz + 8 // C: never enabled
		case 2:
			return base1 + 3*ownSz + 8 // D: never registered
		case 3:
			return base1 + ownSz - uintptr(n) + past(n) // runs from A into B
		}
		return wrap
	}

	const (
		cases = 300
		pBad  = 0.6
	)
	for _, op := range []string{"CopyLocal", "BatchGet"} {
		seen := map[hccl.Result]int{}
		for c := range cases {
			k := 1 + rng.IntN(hccl.MaxOneSideDescs)
			descs := make([]hccl.OneSideOpDesc, k)
			for j := range descs {
				n := uint64(64 + rng.IntN(97))
				d := dsts[j%nDst]
				off := (j/nDst)*slot + rng.IntN(slot-int(n)+1)
				descs[j] = hccl.OneSideOpDesc{LocalAddr: foreign(d.base + uintptr(off)), Count: n, DataType: hccl.Uint8}
				if op == "CopyLocal" {
					descs[j].RemoteAddr = pick(srcs, n)
				} else {
					descs[j].RemoteAddr = pick(registered, n)
				}
			}
			// Up to three bad descriptors, of any kind, anywhere; and a
			// few empty ones (moving nothing, whatever their local address).
			for range 3 {
				if rng.Float64() > pBad {
					break
				}
				d := &descs[rng.IntN(k)]
				switch rng.IntN(6) {
				case 0:
					d.DataType = hccl.DataType(99)
				case 1:
					d.Count = 0
					d.LocalAddr = foreign(badLocal(64))
				case 2, 3:
					d.LocalAddr = foreign(badLocal(d.Count))
				default:
					if op == "CopyLocal" {
						d.RemoteAddr = badSource(d.Count)
					} else {
						d.RemoteAddr = badRemote(d.Count)
					}
				}
			}
			// The reference: the first bad descriptor and its code.
			bad, want := k, hccl.Success
			for j, d := range descs {
				code := hccl.Success
				n := d.Count
				if op == "CopyLocal" {
					switch _, src := inAny(srcs, d.RemoteAddr, n); {
					case d.DataType == hccl.DataType(99):
						code = hccl.ENotSupport
					case n == 0:
					case d.LocalAddr == nil || d.RemoteAddr == 0:
						code = hccl.EPtr
					case !anyHolds(rank0Dev, uintptr(d.LocalAddr), n) || !src:
						code = hccl.EPara
					}
				} else {
					switch _, reg := inAny(registered, d.RemoteAddr, n); {
					case d.DataType == hccl.DataType(99):
						code = hccl.EPara
					case !anyHolds(enabled, d.RemoteAddr, n):
						code = hccl.EInternal
					case n == 0:
					case d.LocalAddr == nil:
						code = hccl.EPtr
					case !anyHolds(rank0Dev, uintptr(d.LocalAddr), n):
						code = hccl.EPara
					case !reg:
						code = hccl.ERemote
					}
				}
				if code != hccl.Success {
					bad, want = j, code
					break
				}
			}
			seen[want]++
			// What the destinations hold afterwards.
			wantDst := make([][]byte, nDst)
			for i, d := range dsts {
				wantDst[i] = make([]byte, d.size)
			}
			moved := bad
			if op == "CopyLocal" && bad < k {
				moved = 0
			}
			for _, d := range descs[:moved] {
				if d.Count == 0 {
					continue
				}
				from := srcs
				if op != "CopyLocal" {
					from = registered
				}
				src, ok := inAny(from, d.RemoteAddr, d.Count)
				require.True(t, ok)
				for i, m := range dsts {
					if m.holds(uintptr(d.LocalAddr), d.Count) {
						off := uintptr(d.RemoteAddr) - src.base
						copy(wantDst[i][uintptr(d.LocalAddr)-m.base:], src.data[off:off+uintptr(d.Count)])
					}
				}
			}
			g.on(0, func(w *rankW) error {
				for _, d := range dsts {
					if err := w.r.Write(foreign(d.base), make([]byte, d.size)); err != nil {
						return err
					}
				}
				var err error
				if op == "CopyLocal" {
					err = sim.CopyLocal(w.comm, descs, w.r.Stream())
				} else {
					err = sim.BatchGet(w.comm, 1, descs, w.r.Stream())
				}
				if r := hccl.ResultOf(err); r != want {
					return fmt.Errorf("%s case %d: %d descriptors, first bad %d: got %v (%v), want %v", op, c, k, bad, r, err, want)
				}
				if err := w.r.Sync(); err != nil {
					return err
				}
				for i, d := range dsts {
					b, err := w.read(foreign(d.base), d.size)
					if err != nil {
						return err
					}
					if diff := diffAt(wantDst[i], b); diff != "" {
						return fmt.Errorf("%s case %d: destination %d (%d descriptors, first bad %d): %s", op, c, i, k, bad, diff)
					}
				}
				return nil
			})
		}
		// Every outcome came up (the random mix is wide enough).
		codes := []hccl.Result{hccl.Success, hccl.EPtr, hccl.EPara, hccl.ENotSupport}
		if op == "BatchGet" {
			codes = []hccl.Result{hccl.Success, hccl.EPtr, hccl.EPara, hccl.EInternal, hccl.ERemote}
		}
		for _, code := range codes {
			require.NotZero(t, seen[code], "%s: no case ended with %v (%v)", op, code, seen)
		}
		t.Logf("%s: outcomes %v", op, seen)
	}
}

func anyHolds(ms []knownMem, a uintptr, n uint64) bool {
	_, ok := inAny(ms, a, n)
	return ok
}

// TestFreedBeforeRun: a CopyLocal or BatchGet batch whose destination (or
// CopyLocal source) allocation is freed after the call passed its checks
// and before the stream runs it fails the stream and moves nothing, not
// even into the allocation that is still live: the task checks its
// allocations again when it runs.
func TestFreedBeforeRun(t *testing.T) {
	const size = 4<<10 + 100
	npu := newNPU(t, 2)
	sim := newSim(t, npu)
	g := newGroup(t, &npuEnv{npu: npu, sim: sim}, 2)
	mem := make([]unsafe.Pointer, 2)
	content := genData(rand.New(rand.NewPCG(rand.Uint64(), 1)), hccl.Uint8, size)
	g.must("alloc", g.each(func(w *rankW) error {
		var err error
		mem[w.rank], err = w.buf(content, 0)
		return err
	}))
	enabled := exchangeAll(t, g, mem, size)
	for _, tc := range []struct{ op, free string }{{"CopyLocal", "destination"}, {"CopyLocal", "source"}, {"BatchGet", "destination"}} {
		g.on(0, func(w *rankW) error {
			var d [2]unsafe.Pointer
			for i := range d {
				var err error
				if d[i], err = w.r.Alloc(size); err != nil {
					return err
				}
				if err := w.r.Write(d[i], make([]byte, size)); err != nil {
					return err
				}
			}
			src := uintptr(mem[0])
			if tc.op == "BatchGet" {
				src = enabled[0][1].Addr
			}
			if tc.free == "source" {
				p, err := w.r.Alloc(size)
				if err != nil {
					return err
				}
				if err := w.r.Write(p, content); err != nil {
					return err
				}
				src = uintptr(p)
			}
			var descs []hccl.OneSideOpDesc
			for i := range 16 {
				descs = append(descs, hccl.OneSideOpDesc{LocalAddr: unsafe.Add(d[i%2], i*200), RemoteAddr: src + uintptr(i*100),
					Count: 160, DataType: hccl.Uint8})
			}
			if err := w.r.(holder).Hold(); err != nil {
				return err
			}
			var err error
			if tc.op == "CopyLocal" {
				err = sim.CopyLocal(w.comm, descs, w.r.Stream())
			} else {
				err = sim.BatchGet(w.comm, 1, descs, w.r.Stream())
			}
			if err != nil {
				return fmt.Errorf("%s at the call: %v", tc.op, err)
			}
			gone := d[1]
			if tc.free == "source" {
				gone = foreign(src)
			}
			if err := w.r.Free(gone); err != nil {
				return err
			}
			if err := w.r.(holder).Release(); err != nil {
				return err
			}
			if err := w.r.Sync(); err == nil {
				return fmt.Errorf("%s with its %s freed before it ran: the stream reports no error", tc.op, tc.free)
			}
			got, err := w.read(d[0], size)
			if err != nil {
				return err
			}
			if diff := diffAt(make([]byte, size), got); diff != "" {
				return fmt.Errorf("%s with its %s freed before it ran moved bytes: %s", tc.op, tc.free, diff)
			}
			for _, p := range d {
				if p != gone {
					_ = w.r.Free(p)
				}
			}
			return nil
		})
	}
}
