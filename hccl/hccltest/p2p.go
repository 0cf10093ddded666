package hccltest

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

// testSendRecv: a ring where rank r sends to r+1 and receives from r-1.
// Rank 0 sends first and the others receive first, the order that cannot
// deadlock with blocking point-to-point calls.
func (s *suite) testSendRecv(t *testing.T) {
	for _, n := range s.rankCounts() {
		if n < 2 {
			continue
		}
		t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
			s.needRanks(t, n)
			rng := s.rng(t)
			g := s.newGroup(t, n).mustInit()
			for _, dt := range []hccl.DataType{hccl.Int8, hccl.Float16, hccl.Uint32, hccl.Float64, hccl.Int128} {
				for _, count := range s.counts() {
					what := fmt.Sprintf("Send/Recv ring %v count=%d ranks=%d", dt, count, n)
					nb := count * int(dt.Size())
					in := make([][]byte, n)
					for r := range in {
						in[r] = randBytes(rng, nb)
					}
					pre := prefill(rng, same(n, nb))
					outs, errs := g.caseIO(in, pre, func(w *worker, send, recv unsafe.Pointer) error {
						next, prev := uint32((w.rank+1)%n), uint32((w.rank+n-1)%n)
						st := w.r.Stream()
						if w.rank == 0 {
							if err := g.b.Send(send, uint64(count), dt, next, w.comm, st); err != nil {
								return err
							}
							return g.b.Recv(recv, uint64(count), dt, prev, w.comm, st)
						}
						if err := g.b.Recv(recv, uint64(count), dt, prev, w.comm, st); err != nil {
							return err
						}
						return g.b.Send(send, uint64(count), dt, next, w.comm, st)
					})
					g.noErr(what, errs)
					for r := range outs {
						if d := firstDiff(in[(r+n-1)%n], outs[r][:nb]); d != "" {
							t.Errorf("%s: rank %d: %s", what, r, d)
						}
						checkGuard(t, what, r, pre[r], outs[r])
					}
				}
			}
			// Several messages on one channel arrive in order.
			what := "Send/Recv ordering"
			const msgs = 4
			sent := randBytes(rng, msgs*16)
			pre := randBytes(rng, msgs*16)
			errs := g.some([]int{0, 1}, func(w *worker) error {
				st := w.r.Stream()
				if w.rank == 0 {
					buf, err := w.buffer(sent, 0)
					if err != nil {
						return err
					}
					defer w.free(buf)
					for m := 0; m < msgs; m++ {
						if err := g.b.Send(unsafe.Add(buf, 16*m), 16, hccl.Uint8, 1, w.comm, st); err != nil {
							return err
						}
					}
					return w.r.Sync()
				}
				buf, err := w.buffer(pre, 0)
				if err != nil {
					return err
				}
				defer w.free(buf)
				for m := 0; m < msgs; m++ {
					if err := g.b.Recv(unsafe.Add(buf, 16*m), 16, hccl.Uint8, 0, w.comm, st); err != nil {
						return err
					}
				}
				if err := w.r.Sync(); err != nil {
					return err
				}
				got, err := w.read(buf, msgs*16)
				if err != nil {
					return err
				}
				if d := firstDiff(sent, got); d != "" {
					return fmt.Errorf("%s: %s", what, d)
				}
				return nil
			})
			g.noErr(what, errs)
			g.noErr("CommDestroy", g.destroy())
		})
	}
}

// testBatchSendRecv: every rank sends to both neighbours and receives from
// both in one batch (with the receive items first on odd ranks, so order
// within a batch does not matter).
func (s *suite) testBatchSendRecv(t *testing.T) {
	for _, n := range s.rankCounts() {
		if n < 2 {
			continue
		}
		t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
			s.needRanks(t, n)
			rng := s.rng(t)
			g := s.newGroup(t, n).mustInit()
			for _, dt := range []hccl.DataType{hccl.Uint8, hccl.BFloat16, hccl.Int64} {
				for _, count := range s.counts() {
					what := fmt.Sprintf("BatchSendRecv %v count=%d ranks=%d", dt, count, n)
					nb := count * int(dt.Size())
					// in[r] = [to next | to prev]; out[r] = [from prev | from next].
					in := make([][]byte, n)
					for r := range in {
						in[r] = randBytes(rng, 2*nb)
					}
					pre := prefill(rng, same(n, 2*nb))
					outs, errs := g.caseIO(in, pre, func(w *worker, send, recv unsafe.Pointer) error {
						next, prev := uint32((w.rank+1)%n), uint32((w.rank+n-1)%n)
						sends := []hccl.SendRecvItem{
							{Type: hccl.SendType, Buf: send, Count: uint64(count), DataType: dt, RemoteRank: next},
							{Type: hccl.SendType, Buf: unsafe.Add(send, nb), Count: uint64(count), DataType: dt, RemoteRank: prev},
						}
						recvs := []hccl.SendRecvItem{
							{Type: hccl.RecvType, Buf: recv, Count: uint64(count), DataType: dt, RemoteRank: prev},
							{Type: hccl.RecvType, Buf: unsafe.Add(recv, nb), Count: uint64(count), DataType: dt, RemoteRank: next},
						}
						items := append(sends, recvs...)
						if w.rank%2 == 1 {
							items = append(recvs, sends...)
						}
						return g.b.BatchSendRecv(items, w.comm, w.r.Stream())
					})
					g.noErr(what, errs)
					for r := range outs {
						prev, next := (r+n-1)%n, (r+1)%n
						want := append(append([]byte(nil), in[prev][:nb]...), in[next][nb:]...)
						if n == 2 {
							// prev == next: the two messages from the one peer
							// arrive in the order that peer posted them.
							want = append(append([]byte(nil), in[prev][:nb]...), in[prev][nb:]...)
						}
						if d := firstDiff(want, outs[r][:2*nb]); d != "" {
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
