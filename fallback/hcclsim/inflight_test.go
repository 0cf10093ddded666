package hcclsim_test

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// TestPipelinedCollectives issues several times MaxAhead collectives back
// to back on 2 in-process ranks with a single synchronize at the end, so
// the calls run up to MaxAhead ahead of the streams and the records of
// finished collectives are reused while later ones are in flight. The
// collectives alternate AllReduce and AlltoAllV with a count that changes
// from one to the next, each into its own output buffer: a record that
// carried anything of an earlier collective (its descriptor, counts,
// buffers) would show as a wrong result or a mismatch. No meeting of the
// calls is left behind.
func TestPipelinedCollectives(t *testing.T) {
	const ranks, maxCount = 2, 64
	n := 3*hcclsim.MaxAhead + 17
	npu := newNPU(t, ranks)
	sim := newSim(t, npu)
	g := newGroup(t, &npuEnv{npu: npu, sim: sim}, ranks)
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))

	// Collective i reads source i%len(srcs) and writes output i.
	type src struct {
		count int
		ins   [][]int32 // by rank
	}
	srcs := make([]src, 11)
	for k := range srcs {
		s := &srcs[k]
		s.count = ranks * (1 + rng.IntN(maxCount/ranks))
		s.ins = make([][]int32, ranks)
		for r := range s.ins {
			s.ins[r] = make([]int32, s.count)
			for i := range s.ins[r] {
				s.ins[r][i] = rng.Int32()
			}
		}
	}
	op := func(i int) string {
		if i%2 == 0 {
			return "AllReduce"
		}
		return "AlltoAllV"
	}
	xs := make([][]unsafe.Pointer, ranks) // by rank, by source
	ys := make([][]unsafe.Pointer, ranks) // by rank, by collective
	g.must("buffers", g.each(func(w *rankW) error {
		for _, s := range srcs {
			p, err := w.buf(int32Bytes(s.ins[w.rank]), 4*s.count)
			if err != nil {
				return err
			}
			xs[w.rank] = append(xs[w.rank], p)
		}
		for i := range n {
			p, err := w.buf(nil, 4*srcs[i%len(srcs)].count)
			if err != nil {
				return err
			}
			ys[w.rank] = append(ys[w.rank], p)
		}
		return nil
	}))
	g.must("collectives", g.each(func(w *rankW) error {
		r := w.rank
		for i := range n {
			s := srcs[i%len(srcs)]
			var err error
			if op(i) == "AllReduce" {
				err = sim.AllReduce(xs[r][i%len(srcs)], ys[r][i], uint64(s.count), hccl.Int32, hccl.Sum, w.comm, w.r.Stream())
			} else {
				counts, displs := alltoallLayout(ranks, s.count)
				err = sim.AlltoAllV(xs[r][i%len(srcs)], counts, displs, hccl.Int32, ys[r][i], counts, displs, hccl.Int32, w.comm, w.r.Stream())
			}
			if err != nil {
				return err
			}
		}
		return w.r.Sync()
	}))
	// The posts of the calls (only the first collectives post, while
	// some rank is still building its links) are all consumed.
	require.Zero(t, hcclsim.OpenMeetings(sim), "meetings left open")
	for i := range n {
		s := srcs[i%len(srcs)]
		want := refSmall(op(i), s.ins)
		for r := range ranks {
			var got []byte
			g.on(r, func(w *rankW) error {
				var err error
				got, err = w.read(ys[r][i], 4*s.count)
				return err
			})
			require.Equal(t, want[r], bytesInt32(got), "collective %d (%s of %d), rank %d", i, op(i), s.count, r)
		}
	}
}
