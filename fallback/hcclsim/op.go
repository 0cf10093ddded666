package hcclsim

import "fmt"

// opKind names a collective.
type opKind uint8

const (
	kindBarrier opKind = iota + 1
	kindAllReduce
	kindBroadcast
	kindAllGather
	kindReduceScatter
	kindAlltoAllV
)

func (k opKind) String() string {
	switch k {
	case kindBarrier:
		return "Barrier"
	case kindAllReduce:
		return "AllReduce"
	case kindBroadcast:
		return "Broadcast"
	case kindAllGather:
		return "AllGather"
	case kindReduceScatter:
		return "ReduceScatter"
	case kindAlltoAllV:
		return "AlltoAllV"
	}
	return fmt.Sprintf("opKind(%d)", uint8(k))
}

// opDesc is what one rank says about a collective at the call: the
// arguments every rank must agree on. It crosses process boundaries (gob),
// so its fields are exported; it never carries a pointer.
type opDesc struct {
	Kind  opKind
	Count uint64 // AllReduce/Broadcast count, AllGather sendCount, ReduceScatter recvCount
	DT    dtype  // AlltoAllV: the send type
	Op    redOp
	Root  uint32
	// AlltoAllV, in elements, one entry per rank.
	SendCounts, SDispls, RecvCounts, RDispls []uint64
	RecvDT                                   dtype
}

// agree checks that the descriptors of all ranks (indexed by rank) describe
// the same collective. Every rank runs it on the same inputs and so reaches
// the same verdict: HCCL_E_PARA on all ranks, naming the first disagreement.
func agree(ds []*opDesc) error {
	d0 := ds[0]
	for r, d := range ds[1:] {
		r++
		if d.Kind != d0.Kind {
			return errf(codePara, "rank %d called %v while rank 0 called %v", r, d.Kind, d0.Kind)
		}
		switch d0.Kind {
		case kindAllReduce, kindReduceScatter:
			if d.Op != d0.Op {
				return errf(codePara, "%v: rank %d reduce op %v, rank 0 %v", d0.Kind, r, d.Op, d0.Op)
			}
			fallthrough
		case kindAllGather:
			if d.Count != d0.Count {
				return errf(codePara, "%v: rank %d count %d, rank 0 count %d", d0.Kind, r, d.Count, d0.Count)
			}
			if d.DT != d0.DT {
				return errf(codePara, "%v: rank %d data type %v, rank 0 %v", d0.Kind, r, d.DT, d0.DT)
			}
		case kindBroadcast:
			if d.Count != d0.Count {
				return errf(codePara, "Broadcast: rank %d count %d, rank 0 count %d", r, d.Count, d0.Count)
			}
			if d.DT != d0.DT {
				return errf(codePara, "Broadcast: rank %d data type %v, rank 0 %v", r, d.DT, d0.DT)
			}
			if d.Root != d0.Root {
				return errf(codePara, "Broadcast: rank %d root %d, rank 0 root %d", r, d.Root, d0.Root)
			}
		}
	}
	if d0.Kind == kindAlltoAllV {
		for r, d := range ds {
			if d.DT != d0.DT || d.RecvDT != d0.DT {
				return errf(codePara, "AlltoAllV: rank %d send/recv types %v/%v, rank 0 sends %v", r, d.DT, d.RecvDT, d0.DT)
			}
		}
		for s, ds_ := range ds {
			for r, dr := range ds {
				if ds_.SendCounts[r] != dr.RecvCounts[s] {
					return errf(codePara, "AlltoAllV: rank %d sends %d elements to rank %d, which expects %d",
						s, ds_.SendCounts[r], r, dr.RecvCounts[s])
				}
			}
		}
	}
	return nil
}

// share returns the balanced share [lo, hi) of count elements for part i of
// n: the first count%n parts get one more element.
func share(count uint64, n, i int) (lo, hi uint64) {
	q, rem := count/uint64(n), count%uint64(n)
	ui := uint64(i)
	lo = q*ui + min(ui, rem)
	hi = lo + q
	if ui < rem {
		hi++
	}
	return lo, hi
}
