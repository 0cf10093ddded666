package hccltest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

// osState is the one-sided setup of a group: every rank's region and the
// peer memory it enabled.
type osState struct {
	size   []int            // region size per rank
	data   [][]byte         // expected region content per rank
	region []unsafe.Pointer // per rank
	desc   [][]hccl.MemDesc // desc[r][p]: r's registration for p
	peer   [][]hccl.MemDesc // peer[r][p]: the descriptor r received from p
	mem    [][]hccl.CommMem // mem[r][p]: p's region as r enabled it
}

// setupOneSided registers every rank's region for every peer, exchanges
// the descriptors (ascending peer order) and enables every peer's region.
// It skips the test when the backend lacks the one-sided service.
func (s *suite) setupOneSided(t *testing.T, g *group, rng *rand.Rand) *osState {
	t.Helper()
	if s.opts.SkipOneSided {
		s.skip(t, "Options.SkipOneSided")
	}
	n := len(g.ws)
	st := &osState{size: make([]int, n), data: make([][]byte, n), region: make([]unsafe.Pointer, n),
		desc: make([][]hccl.MemDesc, n), peer: make([][]hccl.MemDesc, n), mem: make([][]hccl.CommMem, n)}
	for r := range st.size {
		st.size[r] = 4096 + rng.IntN(8192)
		st.data[r] = randBytes(rng, st.size[r])
	}
	errs := g.each(func(w *worker) error {
		r := w.rank
		p, err := w.buffer(st.data[r], 0)
		if err != nil {
			return err
		}
		st.region[r] = p
		st.desc[r] = make([]hccl.MemDesc, n)
		for q := 0; q < n; q++ {
			d, err := g.b.RegisterMem(w.comm, uint32(q), w.r.MemType(), p, uint64(st.size[r]))
			if err != nil {
				return fmt.Errorf("RegisterMem for rank %d: %w", q, err)
			}
			st.desc[r][q] = d
		}
		return nil
	})
	s.unsupported(t, OneSided, errs[0])
	g.noErr("RegisterMem", errs)
	g.noErr("ExchangeMemDesc", g.each(func(w *worker) error {
		r := w.rank
		st.peer[r] = make([]hccl.MemDesc, n)
		for q := 0; q < n; q++ {
			remote := make([]hccl.MemDesc, 4)
			got, err := g.b.ExchangeMemDesc(w.comm, uint32(q), st.desc[r][q:q+1], 0, remote)
			if err != nil {
				return fmt.Errorf("ExchangeMemDesc with rank %d: %w", q, err)
			}
			want := uint32(1)
			if q == r {
				want = 0 // HCCL: registering and exchanging with oneself does nothing
			}
			if got != want {
				return fmt.Errorf("ExchangeMemDesc with rank %d: actualNum %d, want %d", q, got, want)
			}
			st.peer[r][q] = remote[0]
		}
		return nil
	}))
	g.noErr("EnableMemAccess", g.each(func(w *worker) error {
		r := w.rank
		st.mem[r] = make([]hccl.CommMem, n)
		for q := 0; q < n; q++ {
			if q == r {
				continue
			}
			m, err := g.b.EnableMemAccess(w.comm, &st.peer[r][q])
			if err != nil {
				return fmt.Errorf("EnableMemAccess of rank %d's memory: %w", q, err)
			}
			if m.Size != uint64(st.size[q]) || m.Type != w.r.MemType() {
				return fmt.Errorf("EnableMemAccess of rank %d's memory: %+v, want size %d type %v", q, m, st.size[q], w.r.MemType())
			}
			st.mem[r][q] = m
		}
		return nil
	}))
	return st
}

// base is the address rank r names to reach peer q's region: the address
// r enabled. (A batch addressed to the caller's own rank is HCCL_E_PARA.)
func (st *osState) base(r, q int) uintptr { return st.mem[r][q].Addr }

// teardown disables every access, waits for every rank, then deregisters.
func (st *osState) teardown(g *group) {
	g.t.Helper()
	n := len(g.ws)
	g.noErr("DisableMemAccess", g.each(func(w *worker) error {
		for q := 0; q < n; q++ {
			if q != w.rank {
				if err := g.b.DisableMemAccess(w.comm, &st.peer[w.rank][q]); err != nil {
					return err
				}
			}
		}
		return g.b.Barrier(w.comm, w.r.Stream())
	}))
	g.noErr("DeregisterMem", g.each(func(w *worker) error {
		for q := 0; q < n; q++ {
			if q != w.rank {
				if err := g.b.DeregisterMem(w.comm, &st.desc[w.rank][q]); err != nil {
					return err
				}
			}
		}
		return w.free(st.region[w.rank])
	}))
}

// span is one random transfer: byte offset in the peer region, byte offset
// in the local scratch, element count and type.
type span struct {
	remote, local int
	count         int
	dt            hccl.DataType
}

func (sp span) bytes() int { return sp.count * int(sp.dt.Size()) }

// randSpans returns random transfers over a peer region of size bytes:
// always the whole region, its first and its last byte, then random ranges
// of random types; local offsets are disjoint in a scratch of the returned
// size.
func randSpans(rng *rand.Rand, size int, k int) ([]span, int) {
	sps := []span{{0, 0, size, hccl.Uint8}, {0, 0, 1, hccl.Int8}, {size - 1, 0, 1, hccl.Uint8}}
	dts := hccl.DataTypes()
	for i := 0; i < k; i++ {
		dt := dts[rng.IntN(len(dts))]
		es := int(dt.Size())
		maxCount := size / es
		count := rng.IntN(min(maxCount, 300)) + 1
		off := rng.IntN(size/es-count+1) * es
		sps = append(sps, span{off, 0, count, dt})
	}
	local := 0
	for i := range sps {
		local += rng.IntN(8)
		sps[i].local = local
		local += sps[i].bytes()
	}
	return sps, local + guard
}

func (s *suite) testOneSided(t *testing.T) {
	counts := []int{2, 3, 5, maxSuiteRanks}
	if s.short {
		counts = counts[:2]
	}
	for _, n := range counts {
		t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
			s.needRanks(t, n)
			rng := s.rng(t)
			g := s.newGroup(t, n).mustInit()
			st := s.setupOneSided(t, g, rng)

			// BatchGet: random descriptor sets from every peer (not the
			// reader's own rank: HCCL_E_PARA, one_sided_service_adapt.cc:427),
			// compared byte for byte with the owner's memory; gaps stay
			// untouched.
			for round := 0; round < 3; round++ {
				type plan struct {
					sps  []span
					pre  []byte
					got  []byte
					peer int
				}
				plans := make([][]plan, n)
				for r := 0; r < n; r++ {
					for q := 0; q < n; q++ {
						if q == r {
							continue
						}
						sps, sz := randSpans(rng, st.size[q], 1+rng.IntN(16))
						plans[r] = append(plans[r], plan{sps: sps, pre: randBytes(rng, sz), peer: q})
					}
				}
				g.noErr("BatchGet", g.each(func(w *worker) error {
					for i := range plans[w.rank] {
						pl := &plans[w.rank][i]
						buf, err := w.buffer(pl.pre, 0)
						if err != nil {
							return err
						}
						descs := make([]hccl.OneSideOpDesc, len(pl.sps))
						for j, sp := range pl.sps {
							descs[j] = hccl.OneSideOpDesc{LocalAddr: unsafe.Add(buf, sp.local),
								RemoteAddr: st.base(w.rank, pl.peer) + uintptr(sp.remote), Count: uint64(sp.count), DataType: sp.dt}
						}
						// Shuffle: order within a batch must not matter.
						rand.New(rand.NewPCG(uint64(i), uint64(w.rank))).Shuffle(len(descs), func(a, b int) { descs[a], descs[b] = descs[b], descs[a] })
						if err := g.b.BatchGet(w.comm, uint32(pl.peer), descs, w.r.Stream()); err != nil {
							return fmt.Errorf("BatchGet from rank %d: %w", pl.peer, err)
						}
						if err := w.r.Sync(); err != nil {
							return err
						}
						if pl.got, err = w.read(buf, len(pl.pre)); err != nil {
							return err
						}
						if err := w.free(buf); err != nil {
							return err
						}
					}
					return nil
				}))
				for r := range plans {
					for _, pl := range plans[r] {
						want := append([]byte(nil), pl.pre...)
						for _, sp := range pl.sps {
							copy(want[sp.local:], st.data[pl.peer][sp.remote:sp.remote+sp.bytes()])
						}
						if d := firstDiff(want, pl.got); d != "" {
							t.Errorf("BatchGet round %d: rank %d from rank %d: %s", round, r, pl.peer, d)
						}
					}
				}
			}

			// BatchPut: rank r writes segment r of every peer's region; then
			// every rank reads its own memory back, byte for byte.
			puts := make([][][]byte, n) // puts[r][q]: what r writes into q
			for r := 0; r < n; r++ {
				puts[r] = make([][]byte, n)
				for q := 0; q < n; q++ {
					puts[r][q] = randBytes(rng, st.size[q]/n)
				}
			}
			g.noErr("BatchPut", g.each(func(w *worker) error {
				r := w.rank
				for q := 0; q < n; q++ {
					if q == r {
						continue
					}
					seg := st.size[q] / n
					buf, err := w.buffer(puts[r][q], 0)
					if err != nil {
						return err
					}
					// Two descriptors per segment: halves of different types.
					half := seg / 2 &^ 7
					descs := []hccl.OneSideOpDesc{
						{LocalAddr: buf, RemoteAddr: st.base(r, q) + uintptr(r*seg), Count: uint64(half / 8), DataType: hccl.Uint64},
						{LocalAddr: unsafe.Add(buf, half), RemoteAddr: st.base(r, q) + uintptr(r*seg+half), Count: uint64(seg - half), DataType: hccl.Uint8},
					}
					if err := g.b.BatchPut(w.comm, uint32(q), descs, w.r.Stream()); err != nil {
						return fmt.Errorf("BatchPut to rank %d: %w", q, err)
					}
					if err := w.r.Sync(); err != nil {
						return err
					}
					if err := w.free(buf); err != nil {
						return err
					}
				}
				return g.b.Barrier(w.comm, w.r.Stream())
			}))
			own := make([][]byte, n)
			g.noErr("read own memory", g.each(func(w *worker) error {
				var err error
				own[w.rank], err = w.read(st.region[w.rank], st.size[w.rank])
				return err
			}))
			for q := 0; q < n; q++ {
				seg := st.size[q] / n
				for r := 0; r < n; r++ {
					if r != q {
						copy(st.data[q][r*seg:], puts[r][q])
					}
				}
				if d := firstDiff(st.data[q], own[q]); d != "" {
					t.Errorf("BatchPut: rank %d's own memory: %s", q, d)
				}
			}
			st.teardown(g)
			g.noErr("CommDestroy", g.destroy())
		})
	}
}
