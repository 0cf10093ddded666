package hcclsim

import (
	"sync/atomic"
	"time"
	"unsafe"
)

// Direct collectives between processes: every rank maps every rank's
// device memory (peermap.go), so a collective runs exactly as in one
// process (localCompute) over views of every rank's buffers. Each rank
// publishes its buffers' addresses in its segment before the start
// barrier and reads the peers' after it; the end barrier keeps every rank
// in the phase until no peer reads its send buffer or writes its receive
// buffer any more. A rank publishes the next collective's addresses only
// after that end barrier, which every peer passes after it has read them.

// addrOf is the address of a view's first byte (0 for an empty view).
func addrOf(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

// publishBufs writes this rank's buffer addresses into its segment for
// the peers to read after the start barrier.
func (w *shmWorld) publishBufs(bufs opBufs) {
	own := w.own
	atomic.StoreUint64(own.dword(offBufs), uint64(addrOf(bufs.send)))
	atomic.StoreUint64(own.dword(offBufs+8), uint64(len(bufs.send)))
	atomic.StoreUint64(own.dword(offBufs+16), uint64(addrOf(bufs.recv)))
	atomic.StoreUint64(own.dword(offBufs+24), uint64(len(bufs.recv)))
}

// directCollective is a collective's data phase after the start barrier:
// it computes over every rank's mapped buffers and ends at the end
// barrier.
func (w *shmWorld) directCollective(c *comm, d *opDesc, ds []*opDesc, bufs opBufs, deadline time.Time) error {
	all := make([]opBufs, w.n)
	var fail error
	for k, s := range w.segs {
		if k == w.me {
			all[k] = bufs
			continue
		}
		sa, sn := uintptr(atomic.LoadUint64(s.dword(offBufs))), atomic.LoadUint64(s.dword(offBufs+8))
		ra, rn := uintptr(atomic.LoadUint64(s.dword(offBufs+16))), atomic.LoadUint64(s.dword(offBufs+24))
		// The lengths a peer publishes are its word: they must be what
		// its agreed descriptor makes them, or the computation would index
		// past them.
		if ws, wr := descBytes(ds[k], w.n); sn != ws || rn != wr {
			fail = errf(codeRemote, "rank %d published buffers of %d and %d bytes, its descriptor makes them %d and %d", k, sn, rn, ws, wr)
			break
		}
		sv, ok1 := w.peers[k].view(sa, sn)
		rv, ok2 := w.peers[k].view(ra, rn)
		if !ok1 || !ok2 {
			// Cannot happen with a sound peer (it checked its views);
			// fail every rank at the end barrier rather than guess.
			fail = errf(codeInternal, "rank %d's buffers [%#x, +%d) and [%#x, +%d) are not in its device memory", k, sa, sn, ra, rn)
			break
		}
		all[k] = opBufs{send: sv, recv: rv}
	}
	if fail == nil {
		localCompute(c.reducer(), c.rank, d, ds, all, nil)
		if d.Kind != kindBroadcast || d.Root != uint32(w.me) {
			countDirect(len(bufs.recv))
		}
	}
	return w.barrier(deadline, fail)
}

// descBytes is the length of a rank's send and receive buffers in a
// collective of n ranks described by d, as the calls (backend.go) size
// them: count elements each for AllReduce and Broadcast, n·count received
// by AllGather and sent by ReduceScatter, and for AlltoAllV the extent of
// the counts and displacements (checkDesc bounds them, so nothing
// overflows).
func descBytes(d *opDesc, n int) (send, recv uint64) {
	esz := d.DT.size()
	c := d.Count * esz
	switch d.Kind {
	case kindAllReduce, kindBroadcast:
		return c, c
	case kindAllGather:
		return c, c * uint64(n)
	case kindReduceScatter:
		return c * uint64(n), c
	case kindAlltoAllV:
		extent := func(counts, displs []uint64) uint64 {
			var hi uint64
			for i := range counts {
				if counts[i] != 0 {
					hi = max(hi, displs[i]+counts[i])
				}
			}
			return hi * esz
		}
		return extent(d.SendCounts, d.SDispls), extent(d.RecvCounts, d.RDispls)
	}
	return 0, 0
}
