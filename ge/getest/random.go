package getest

import (
	"math/rand/v2"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// RandomGraph builds a random DAG of about n ops over float32 tensors of
// shape [rows, w] for a few widths: unary and binary elementwise ops
// (binary ops pick any earlier tensor of the same width, so values are
// consumed far from where they were made), MatMuls that change width,
// Concat and Slice, Softmax, and aliases (Reshape there and back,
// Identity). Some nodes are marked NoZeroCopy, and the outputs are a random
// pick that may include inputs, weights, aliases and repeats, so every
// copy-insertion rule of the compiler is exercised.
func RandomGraph(r *rand.Rand, n int) *ge.Graph {
	if r == nil {
		return nil // a nil graph: its Err reports it
	}
	g := ge.NewGraph("random")
	const rows = 4
	widths := []int64{8, 16, 24, 40}
	byWidth := map[int64][]*ge.Tensor{}
	var all []*ge.Tensor
	add := func(t *ge.Tensor) {
		w := t.Desc().Dims[1]
		byWidth[w] = append(byWidth[w], t)
		all = append(all, t)
	}
	nIn := 1 + r.IntN(3)
	for i := range nIn {
		add(g.Data("in"+itoa(i), i, acl.Float32, []int64{rows, widths[r.IntN(len(widths))]}))
	}
	pick := func() *ge.Tensor {
		// Favour recent tensors so chains form, but reach back sometimes.
		if r.IntN(3) > 0 {
			return all[len(all)-1-r.IntN(min(3, len(all)))]
		}
		return all[r.IntN(len(all))]
	}
	var opts []ge.OpOption
	var weights []*ge.Tensor
	for i := 0; i < n; i++ {
		opts = opts[:0]
		if r.IntN(12) == 0 {
			opts = append(opts, ge.NoZeroCopy())
		}
		x := pick()
		w := x.Desc().Dims[1]
		switch r.IntN(10) {
		case 0:
			add(g.Relu(x, opts...))
		case 1:
			add(g.Silu(x, opts...))
		case 2, 3:
			peers := byWidth[w]
			add(g.Add(x, peers[r.IntN(len(peers))], opts...))
		case 4:
			peers := byWidth[w]
			add(g.Mul(peers[r.IntN(len(peers))], x, opts...))
		case 5, 6:
			to := widths[r.IntN(len(widths))]
			wt := g.ConstFloat32("w"+itoa(i), acl.Float32, []int64{w, to}, RandFloats(r, int(w*to), 0.3))
			if r.IntN(4) == 0 {
				wt = g.Identity(wt) // an alias of a weight, maybe an output
				weights = append(weights, wt)
			}
			add(g.MatMul(x, wt, opts...))
		case 7:
			y := pick()
			add(g.Concat([]*ge.Tensor{x, y}, 1, opts...))
			if c := all[len(all)-1]; c.Desc().Dims[1] > 40 {
				add(g.Slice(c, []int64{0, 0}, []int64{-1, 24}, opts...))
			}
		case 8:
			add(g.Reshape(g.Reshape(x, []int64{-1}), []int64{rows, w}))
		default:
			if r.IntN(2) == 0 {
				add(g.Identity(x))
			} else {
				add(g.Softmax(x, -1, opts...))
			}
		}
	}
	var outs []*ge.Tensor
	for k := 1 + r.IntN(3); k > 0; k-- {
		outs = append(outs, pick())
	}
	if r.IntN(3) == 0 {
		outs = append(outs, all[r.IntN(len(all))]) // may be an input or a repeat
	}
	if len(weights) > 0 && r.IntN(3) == 0 {
		outs = append(outs, weights[r.IntN(len(weights))])
	}
	g.Output(outs...)
	return g
}
