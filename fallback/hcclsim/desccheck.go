package hcclsim

// maxDescElems bounds every element count and displacement a peer states
// in a collective's descriptor, so that count × element size (16 bytes at
// most) and sums of counts and displacements fit an int with room to
// spare; no host memory comes near it.
const maxDescElems = 1 << 48

// checkDesc checks the shape of a descriptor that came from another
// process, before agree or a data phase indexes it: a known kind, known
// data types, a root inside the world, and for AlltoAllV one count and one
// displacement per rank. It says nothing about agreement (agree does) and
// is run by the hub on every arrival and by each rank on what the hub
// relays.
func checkDesc(d *opDesc, n int) error {
	if d == nil {
		return errf(codePara, "missing descriptor")
	}
	if d.Kind < kindBarrier || d.Kind > kindAlltoAllV {
		return errf(codePara, "unknown collective %v", d.Kind)
	}
	if d.Count > maxDescElems {
		return errf(codePara, "%v: count %d", d.Kind, d.Count)
	}
	switch d.Kind {
	case kindBarrier:
		return nil
	case kindBroadcast:
		if d.Root >= uint32(n) {
			return errf(codePara, "Broadcast: root %d of %d ranks", d.Root, n)
		}
	case kindAllReduce, kindReduceScatter:
		if d.Op > opMin {
			return errf(codePara, "%v: reduce op %v", d.Kind, d.Op)
		}
	case kindAlltoAllV:
		if d.RecvDT.size() == 0 {
			return errf(codePara, "AlltoAllV: receive type %v", d.RecvDT)
		}
		for _, xs := range [][]uint64{d.SendCounts, d.SDispls, d.RecvCounts, d.RDispls} {
			if len(xs) != n {
				return errf(codePara, "AlltoAllV: %d counts or displacements for %d ranks", len(xs), n)
			}
		}
		// A zero count may come with any displacement (nothing is
		// touched); a range that is used must be small.
		for r := range n {
			for _, cd := range [][2]uint64{{d.SendCounts[r], d.SDispls[r]}, {d.RecvCounts[r], d.RDispls[r]}} {
				if cd[0] != 0 && (cd[0] > maxDescElems || cd[1] > maxDescElems-cd[0]) {
					return errf(codePara, "AlltoAllV: %d elements at displacement %d for rank %d", cd[0], cd[1], r)
				}
			}
		}
	}
	if d.DT.size() == 0 {
		return errf(codePara, "%v: data type %v", d.Kind, d.DT)
	}
	return nil
}
