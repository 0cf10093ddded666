package hccltest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

// testComm exercises the idiomatic layer (hccl.Comm, hccl.Window) over the
// backend.
func (s *suite) testComm(t *testing.T) {
	n := min(3, s.maxRanks)
	rng := s.rng(t)
	g := s.newGroup(t, n)
	var root hccl.RootInfo
	g.noErr("GetRootInfo", g.some([]int{0}, func(w *worker) error {
		var err error
		root, err = g.b.GetRootInfo()
		return err
	}))
	comms := make([]*hccl.Comm, n)
	g.noErr("hccl.InitRootInfo", g.each(func(w *worker) error {
		c, err := hccl.InitRootInfo(g.b, &root, n, w.rank, hccl.WithStream(w.r.Stream()), hccl.WithDevice(w.dev))
		if err != nil {
			return err
		}
		comms[w.rank] = c
		if c.Rank() != w.rank || c.Size() != n || c.Device() != w.dev || c.Stream() != w.r.Stream() || c.Backend() != g.b {
			return fmt.Errorf("comm reports rank %d size %d device %d stream %v", c.Rank(), c.Size(), c.Device(), c.Stream())
		}
		if _, err := c.Name(); err != nil {
			return err
		}
		return c.AsyncError()
	}))
	ctx := context.Background()

	// AllReduce through Comm.
	count := 100
	in := make([][]byte, n)
	for r := range in {
		in[r] = genReduce(rng, hccl.Float32, hccl.Sum, n, count)
	}
	want, tol := reduceRef(hccl.Float32, hccl.Sum, in, count)
	outs, errs := g.inPlace(in, same(n, len(in[0])), func(w *worker, buf unsafe.Pointer) error {
		return comms[w.rank].AllReduce(ctx, buf, buf, uint64(count), hccl.Float32, hccl.Sum)
	})
	g.noErr("Comm.AllReduce", errs)
	for r := range outs {
		if bad := compareReduce(hccl.Float32, want, outs[r], tol, count); bad != nil {
			t.Errorf("Comm.AllReduce rank %d: %v", r, bad)
		}
	}

	// A cancelled context stops the call before it is issued, on one rank
	// alone, without desynchronising the ranks.
	g.noErr("cancelled context", g.some([]int{0}, func(w *worker) error {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := comms[0].Barrier(cctx); !errors.Is(err, context.Canceled) {
			return fmt.Errorf("barrier with a cancelled context: %v", err)
		}
		return nil
	}))
	g.noErr("Comm.Barrier", g.each(func(w *worker) error { return comms[w.rank].Barrier(ctx) }))

	// Window: every rank exposes a region; Get from every peer, Put into
	// every peer's slot, read back.
	if !s.opts.SkipOneSided {
		size := make([]int, n)
		data := make([][]byte, n)
		for r := range size {
			size[r] = 1024 * (r + 1)
			data[r] = randBytes(rng, size[r])
		}
		wins := make([]*hccl.Window, n)
		regions := make([]unsafe.Pointer, n)
		errs := g.each(func(w *worker) error {
			p, err := w.buffer(data[w.rank], 0)
			if err != nil {
				return err
			}
			regions[w.rank] = p
			wins[w.rank], err = comms[w.rank].OpenWindow(ctx, w.r.MemType(), p, uint64(size[w.rank]))
			return err
		})
		if errors.Is(errs[0], hccl.ErrNotSupported) && s.lacks(OneSided) {
			t.Logf("Window left out: the backend declares it lacks %s: %v", OneSided, errs[0])
		} else {
			g.noErr("OpenWindow", errs)
			got := make([][][]byte, n)
			g.noErr("Window.Get", g.each(func(w *worker) error {
				got[w.rank] = make([][]byte, n)
				for q := 0; q < n; q++ {
					if q == w.rank {
						continue // a one-sided batch to the own rank is HCCL_E_PARA (one_sided_service_adapt.cc:427-429)
					}
					if ps := wins[w.rank].PeerSize(q); ps != uint64(size[q]) {
						return fmt.Errorf("PeerSize(%d) = %d, want %d", q, ps, size[q])
					}
					buf, err := w.alloc(uintptr(size[q]))
					if err != nil {
						return err
					}
					half := size[q] / 2
					err = wins[w.rank].Get(ctx, q, []hccl.Transfer{
						{Local: unsafe.Add(buf, half), Offset: uint64(half), Count: uint64(size[q] - half), DataType: hccl.Uint8},
						{Local: buf, Offset: 0, Count: uint64(half / 4), DataType: hccl.Int32},
					})
					if err != nil {
						return err
					}
					if err := w.r.Sync(); err != nil {
						return err
					}
					if got[w.rank][q], err = w.read(buf, size[q]); err != nil {
						return err
					}
					if err := w.free(buf); err != nil {
						return err
					}
					// Out of range is refused before reaching the backend.
					err = wins[w.rank].Get(ctx, q, []hccl.Transfer{{Local: buf, Offset: uint64(size[q]) - 2, Count: 1, DataType: hccl.Int32}})
					if !errors.Is(err, hccl.ErrPara) {
						return fmt.Errorf("Window.Get past the end: %v", err)
					}
				}
				return nil
			}))
			for r := 0; r < n; r++ {
				for q := 0; q < n; q++ {
					if q != r {
						if d := firstDiff(data[q], got[r][q]); d != "" {
							t.Errorf("Window.Get: rank %d from rank %d: %s", r, q, d)
						}
					}
				}
			}
			// Put: rank r writes 8 bytes at offset 8r of every peer.
			g.noErr("Window.Put", g.each(func(w *worker) error {
				src, err := w.buffer([]byte{byte(w.rank), 1, 2, 3, 4, 5, 6, 7}, 0)
				if err != nil {
					return err
				}
				defer w.free(src)
				for q := 0; q < n; q++ {
					if q != w.rank {
						if err := wins[w.rank].Put(ctx, q, []hccl.Transfer{{Local: src, Offset: uint64(8 * w.rank), Count: 1, DataType: hccl.Uint64}}); err != nil {
							return err
						}
					}
				}
				if err := w.r.Sync(); err != nil {
					return err
				}
				return comms[w.rank].Barrier(ctx)
			}))
			g.noErr("Window read back", g.each(func(w *worker) error {
				own, err := w.read(regions[w.rank], size[w.rank])
				if err != nil {
					return err
				}
				exp := append([]byte(nil), data[w.rank]...)
				for r := 0; r < n; r++ {
					if r != w.rank {
						copy(exp[8*r:], []byte{byte(r), 1, 2, 3, 4, 5, 6, 7})
					}
				}
				if d := firstDiff(exp, own); d != "" {
					return fmt.Errorf("own window after Put: %s", d)
				}
				return comms[w.rank].Barrier(ctx)
			}))
			g.noErr("Window.Close", g.each(func(w *worker) error {
				if err := wins[w.rank].Close(); err != nil {
					return err
				}
				if err := wins[w.rank].Close(); err != nil {
					return fmt.Errorf("second Close: %w", err)
				}
				if err := wins[w.rank].Get(ctx, (w.rank+1)%n, nil); !errors.Is(err, hccl.ErrPara) {
					return fmt.Errorf("get on a closed window: %v", err)
				}
				return w.free(regions[w.rank])
			}))
		}
	}

	g.noErr("Comm.Close", g.each(func(w *worker) error {
		c := comms[w.rank]
		if err := c.Close(); err != nil {
			return err
		}
		if err := c.Close(); err != nil {
			return fmt.Errorf("second Close: %w", err)
		}
		if err := c.Barrier(ctx); !errors.Is(err, hccl.ErrPara) {
			return fmt.Errorf("barrier on a closed Comm: %v", err)
		}
		return nil
	}))
}
