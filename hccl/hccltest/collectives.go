package hccltest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

// guard is the number of bytes after each output buffer that must not change.
const guard = 64

// caseIO runs one collective on every rank: each rank gets a send buffer
// holding in[r] and a receive buffer of outLen[r]+guard bytes prefilled
// with pre[r]; call issues the operation; the rank then synchronises its
// stream and reads the receive buffer back (including the guard).
func (g *group) caseIO(in [][]byte, pre [][]byte, call func(w *worker, send, recv unsafe.Pointer) error) ([][]byte, []error) {
	g.t.Helper()
	outs := make([][]byte, len(g.ws))
	errs := g.each(func(w *worker) error {
		send, err := w.buffer(in[w.rank], 0)
		if err != nil {
			return err
		}
		defer w.free(send)
		recv, err := w.buffer(pre[w.rank], 0)
		if err != nil {
			return err
		}
		defer w.free(recv)
		if err := call(w, send, recv); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		outs[w.rank], err = w.read(recv, len(pre[w.rank]))
		return err
	})
	return outs, errs
}

// inPlace runs one collective with a single buffer per rank holding
// in[r] (grown to size[r] bytes) and returns its content afterwards.
func (g *group) inPlace(in [][]byte, size []int, call func(w *worker, buf unsafe.Pointer) error) ([][]byte, []error) {
	g.t.Helper()
	outs := make([][]byte, len(g.ws))
	errs := g.each(func(w *worker) error {
		buf, err := w.buffer(in[w.rank], size[w.rank])
		if err != nil {
			return err
		}
		defer w.free(buf)
		if err := call(w, buf); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		outs[w.rank], err = w.read(buf, size[w.rank])
		return err
	})
	return outs, errs
}

func prefill(rng *rand.Rand, sizes []int) [][]byte {
	out := make([][]byte, len(sizes))
	for i, n := range sizes {
		out[i] = randBytes(rng, n+guard)
	}
	return out
}

func same(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// checkGuard asserts the guard bytes after the output are untouched.
func checkGuard(t *testing.T, what string, rank int, pre, out []byte) {
	t.Helper()
	n := len(pre) - guard
	if d := firstDiff(pre[n:], out[n:]); d != "" {
		t.Errorf("%s: rank %d wrote past the end of its output: %s", what, rank, d)
	}
}

func (s *suite) testAllReduce(t *testing.T) {
	for _, n := range s.rankCounts() {
		t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
			s.needRanks(t, n)
			rng := s.rng(t)
			g := s.newGroup(t, n).mustInit()
			for _, dt := range reducibleTypes {
				for _, op := range hccl.ReduceOps() {
					if !dt.ReducibleBy(op) {
						continue // Errors asserts HCCL_E_NOT_SUPPORT
					}
					for _, count := range s.counts() {
						what := fmt.Sprintf("AllReduce %v %v count=%d ranks=%d", dt, op, count, n)
						in := make([][]byte, n)
						for r := range in {
							in[r] = genReduce(rng, dt, op, n, count)
						}
						want, tol := reduceRef(dt, op, in, count)
						nb := count * int(dt.Size())
						pre := prefill(rng, same(n, nb))
						outs, errs := g.caseIO(in, pre, func(w *worker, send, recv unsafe.Pointer) error {
							return g.b.AllReduce(send, recv, uint64(count), dt, op, w.comm, w.r.Stream())
						})
						g.noErr(what, errs)
						for r := range outs {
							if bad := compareReduce(dt, want, outs[r][:nb], tol, count); bad != nil {
								t.Errorf("%s: rank %d: %v", what, r, bad)
							}
							checkGuard(t, what, r, pre[r], outs[r])
						}
					}
				}
			}
			// In place: send == recv.
			for _, dt := range []hccl.DataType{hccl.Int32, hccl.Float32, hccl.BFloat16} {
				count := 257
				in := make([][]byte, n)
				for r := range in {
					in[r] = genReduce(rng, dt, hccl.Sum, n, count)
				}
				want, tol := reduceRef(dt, hccl.Sum, in, count)
				outs, errs := g.inPlace(in, same(n, len(in[0])), func(w *worker, buf unsafe.Pointer) error {
					return g.b.AllReduce(buf, buf, uint64(count), dt, hccl.Sum, w.comm, w.r.Stream())
				})
				g.noErr("AllReduce in place", errs)
				for r := range outs {
					if bad := compareReduce(dt, want, outs[r], tol, count); bad != nil {
						t.Errorf("AllReduce in place %v: rank %d: %v", dt, r, bad)
					}
				}
			}
			g.noErr("CommDestroy", g.destroy())
		})
	}
}

func (s *suite) testBroadcast(t *testing.T) {
	for _, n := range s.rankCounts() {
		t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
			s.needRanks(t, n)
			rng := s.rng(t)
			g := s.newGroup(t, n).mustInit()
			roots := []int{0, n - 1, rng.IntN(n)}
			for _, dt := range hccl.DataTypes() {
				for _, count := range s.counts() {
					root := roots[rng.IntN(len(roots))]
					what := fmt.Sprintf("Broadcast %v count=%d root=%d ranks=%d", dt, count, root, n)
					nb := count * int(dt.Size())
					in := make([][]byte, n)
					for r := range in {
						in[r] = randBytes(rng, nb)
					}
					outs, errs := g.inPlace(in, same(n, nb), func(w *worker, buf unsafe.Pointer) error {
						return g.b.Broadcast(buf, uint64(count), dt, uint32(root), w.comm, w.r.Stream())
					})
					g.noErr(what, errs)
					for r := range outs {
						if d := firstDiff(in[root], outs[r]); d != "" {
							t.Errorf("%s: rank %d: %s", what, r, d)
						}
					}
				}
			}
			g.noErr("CommDestroy", g.destroy())
		})
	}
}

func (s *suite) testAllGather(t *testing.T) {
	for _, n := range s.rankCounts() {
		t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
			s.needRanks(t, n)
			rng := s.rng(t)
			g := s.newGroup(t, n).mustInit()
			for _, dt := range hccl.DataTypes() {
				for _, count := range s.counts() {
					what := fmt.Sprintf("AllGather %v count=%d ranks=%d", dt, count, n)
					nb := count * int(dt.Size())
					in := make([][]byte, n)
					var want []byte
					for r := range in {
						in[r] = randBytes(rng, nb)
						want = append(want, in[r]...)
					}
					pre := prefill(rng, same(n, n*nb))
					outs, errs := g.caseIO(in, pre, func(w *worker, send, recv unsafe.Pointer) error {
						return g.b.AllGather(send, recv, uint64(count), dt, w.comm, w.r.Stream())
					})
					g.noErr(what, errs)
					for r := range outs {
						if d := firstDiff(want, outs[r][:n*nb]); d != "" {
							t.Errorf("%s: rank %d: %s", what, r, d)
						}
						checkGuard(t, what, r, pre[r], outs[r])
					}
				}
			}
			g.noErr("CommDestroy", g.destroy())
		})
	}
}

func (s *suite) testReduceScatter(t *testing.T) {
	for _, n := range s.rankCounts() {
		t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
			s.needRanks(t, n)
			rng := s.rng(t)
			g := s.newGroup(t, n).mustInit()
			for _, dt := range reducibleTypes {
				for _, op := range hccl.ReduceOps() {
					if !dt.ReducibleBy(op) {
						continue // Errors asserts HCCL_E_NOT_SUPPORT
					}
					for _, count := range s.counts() {
						what := fmt.Sprintf("ReduceScatter %v %v recvCount=%d ranks=%d", dt, op, count, n)
						in := make([][]byte, n)
						for r := range in {
							in[r] = genReduce(rng, dt, op, n, n*count)
						}
						want, tol := reduceRef(dt, op, in, n*count)
						nb := count * int(dt.Size())
						pre := prefill(rng, same(n, nb))
						outs, errs := g.caseIO(in, pre, func(w *worker, send, recv unsafe.Pointer) error {
							return g.b.ReduceScatter(send, recv, uint64(count), dt, op, w.comm, w.r.Stream())
						})
						g.noErr(what, errs)
						for r := range outs {
							var tr []float64
							if tol != nil {
								tr = tol[r*count : (r+1)*count]
							}
							if bad := compareReduce(dt, want[r*nb:(r+1)*nb], outs[r][:nb], tr, count); bad != nil {
								t.Errorf("%s: rank %d: %v", what, r, bad)
							}
							checkGuard(t, what, r, pre[r], outs[r])
						}
					}
				}
			}
			g.noErr("CommDestroy", g.destroy())
		})
	}
}

// layout places blocks of the given element counts in a buffer in random
// order with random gaps and returns their displacements and the total
// number of elements.
func layout(rng *rand.Rand, counts []uint64) (displs []uint64, total uint64) {
	displs = make([]uint64, len(counts))
	for _, j := range rng.Perm(len(counts)) {
		total += uint64(rng.IntN(3))
		displs[j] = total
		total += counts[j]
	}
	return displs, total + uint64(rng.IntN(2))
}

func (s *suite) testAlltoAllV(t *testing.T) {
	for _, n := range s.rankCounts() {
		t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
			s.needRanks(t, n)
			rng := s.rng(t)
			g := s.newGroup(t, n).mustInit()
			rounds := 6
			if s.short {
				rounds = 2
			}
			for round := 0; round < rounds; round++ {
				dts := hccl.DataTypes()
				dt := dts[rng.IntN(len(dts))]
				es := int(dt.Size())
				// c[i][j]: elements rank i sends to rank j.
				c := make([][]uint64, n)
				for i := range c {
					c[i] = make([]uint64, n)
					for j := range c[i] {
						if rng.IntN(4) != 0 { // some pairs exchange nothing
							c[i][j] = uint64(rng.IntN(50))
						}
					}
				}
				sendCounts, sdispls, recvCounts, rdispls := make([][]uint64, n), make([][]uint64, n), make([][]uint64, n), make([][]uint64, n)
				in, pre := make([][]byte, n), make([][]byte, n)
				for r := 0; r < n; r++ {
					sendCounts[r] = c[r]
					var tot uint64
					sdispls[r], tot = layout(rng, c[r])
					in[r] = randBytes(rng, int(tot)*es)
					recvCounts[r] = make([]uint64, n)
					for i := 0; i < n; i++ {
						recvCounts[r][i] = c[i][r]
					}
					rdispls[r], tot = layout(rng, recvCounts[r])
					pre[r] = randBytes(rng, int(tot)*es+guard)
				}
				what := fmt.Sprintf("AlltoAllV %v round %d ranks=%d", dt, round, n)
				outs, errs := g.caseIO(in, pre, func(w *worker, send, recv unsafe.Pointer) error {
					r := w.rank
					return g.b.AlltoAllV(send, sendCounts[r], sdispls[r], dt, recv, recvCounts[r], rdispls[r], dt, w.comm, w.r.Stream())
				})
				g.noErr(what, errs)
				for j := 0; j < n; j++ {
					want := append([]byte(nil), pre[j]...)
					for i := 0; i < n; i++ {
						src := in[i][int(sdispls[i][j])*es : int(sdispls[i][j]+c[i][j])*es]
						copy(want[int(rdispls[j][i])*es:], src)
					}
					if d := firstDiff(want, outs[j]); d != "" {
						t.Errorf("%s: rank %d: %s (gaps and the guard must stay untouched)", what, j, d)
					}
				}
			}
			g.noErr("CommDestroy", g.destroy())
		})
	}
}

func (s *suite) testBarrier(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
			s.needRanks(t, n)
			g := s.newGroup(t, n).mustInit()
			for i := 0; i < 5; i++ {
				g.noErr("Barrier", g.each(func(w *worker) error {
					if err := g.b.Barrier(w.comm, w.r.Stream()); err != nil {
						return err
					}
					return w.r.Sync()
				}))
			}
			g.noErr("CommDestroy", g.destroy())
		})
	}
}

// testCountZero: count 0 succeeds at once on a single rank, with no
// rendezvous, for every collective and for Send/Recv.
func (s *suite) testCountZero(t *testing.T) {
	g := s.newGroup(t, 2).mustInit()
	errs := g.some([]int{0}, func(w *worker) error {
		buf, err := w.alloc(64)
		if err != nil {
			return err
		}
		defer w.free(buf)
		st := w.r.Stream()
		checks := []struct {
			name string
			err  error
		}{
			{"AllReduce", g.b.AllReduce(buf, buf, 0, hccl.Float32, hccl.Sum, w.comm, st)},
			{"Broadcast", g.b.Broadcast(buf, 0, hccl.Float32, 1, w.comm, st)},
			{"AllGather", g.b.AllGather(buf, buf, 0, hccl.Int8, w.comm, st)},
			{"ReduceScatter", g.b.ReduceScatter(buf, buf, 0, hccl.Int32, hccl.Max, w.comm, st)},
			{"Send", g.b.Send(buf, 0, hccl.Int8, 1, w.comm, st)},
			{"Recv", g.b.Recv(buf, 0, hccl.Int8, 1, w.comm, st)},
		}
		for _, c := range checks {
			if c.err != nil {
				return fmt.Errorf("%s with count 0 on one rank: %w", c.name, c.err)
			}
		}
		return w.r.Sync()
	})
	g.noErr("count 0", errs)
	// The communicator is still in step: a real collective works.
	g.noErr("Barrier after count 0", g.each(func(w *worker) error { return g.b.Barrier(w.comm, w.r.Stream()) }))
	g.noErr("CommDestroy", g.destroy())
}
