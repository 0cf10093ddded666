package ge

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
)

// TestCompareFlatMatchesBroadcast: the comparisons' in-place path gives
// the broadcasting path's bytes for every op, for float32 (with NaN,
// ±Inf, ±0 and ties), int64 and int32 (with the extremes), same-shape and
// with either side one element; shapes it does not take are left to the
// broadcasting path.
func TestCompareFlatMatchesBroadcast(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 7))
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1}
	fill := func(dt acl.DataType, n int) []byte {
		b := alignedBytes(n * dt.Size())
		for i := range n {
			pick := r.IntN(4) == 0
			v := int64(r.IntN(5) - 2) // ties are common
			switch dt {
			case acl.Float32:
				f := float32(v)
				if pick {
					f = float32(specials[r.IntN(len(specials))])
				}
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
			case acl.Int64:
				if pick {
					v = []int64{math.MinInt64, math.MaxInt64}[r.IntN(2)]
				}
				binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
			case acl.Int32:
				if pick {
					v = []int64{math.MinInt32, math.MaxInt32}[r.IntN(2)]
				}
				binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(v)))
			}
		}
		return b
	}
	shapes := [][2][]int64{{{3, 5}, {3, 5}}, {{3, 5}, {}}, {{}, {7}}, {{1}, {2, 3}}, {{2, 1}, {1, 3}}}
	for _, op := range []OpType{OpEqual, OpLess, OpLessEqual, OpGreater, OpGreaterEqual} {
		for _, dt := range []acl.DataType{acl.Float32, acl.Int64, acl.Int32} {
			for _, sh := range shapes {
				in := []TensorDesc{{DataType: dt, Format: acl.FormatND, Dims: sh[0]}, {DataType: dt, Format: acl.FormatND, Dims: sh[1]}}
				out, err := opSpecs[op].infer(in, nil)
				require.NoError(t, err)
				task := &Task{Op: op, Inputs: in, Outputs: out}
				a, b := fill(dt, prod(sh[0])), fill(dt, prod(sh[1]))
				n := prod(out[0].Dims)
				fast, slow := alignedBytes(n), alignedBytes(n)
				took := compareFlat(op, dt, dt, prod(sh[0]), prod(sh[1]), n, a, b, fast)
				require.NoError(t, compareBroadcast(task, [][]byte{a, b, slow}))
				if !took {
					require.Equal(t, len(sh[0]) == 2 && len(sh[1]) == 2 && sh[0][1] == 1, true, "%s %v: only a true broadcast is left out", op, sh)
					continue
				}
				require.Equal(t, slow, fast, "%s %s %v", op, dt, sh)
				require.NoError(t, compareKernel(task, [][]byte{a, b, fast}))
				require.Equal(t, slow, fast)
			}
		}
	}
}
