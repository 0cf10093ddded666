package getest

import (
	"math"
	"math/rand/v2"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// RandFloats returns n normal values with standard deviation sd.
func RandFloats(r *rand.Rand, n int, sd float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * sd)
	}
	return v
}

func weight(g *ge.Graph, r *rand.Rand, name string, dt acl.DataType, dims ...int64) *ge.Tensor {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	// Scale keeps activations of order 1 through the layers.
	return g.ConstFloat32(name, dt, dims, RandFloats(r, int(n), 1/math.Sqrt(float64(dims[0]))))
}

// MLP builds a chain x[batch, widths[0]] → MatMul → act → … → MatMul with
// one layer per width step, activations cycling Relu, Gelu, Silu.
func MLP(r *rand.Rand, dt acl.DataType, batch int64, widths ...int64) *ge.Graph {
	if r == nil || len(widths) == 0 {
		return nil // a nil graph: its Err reports it
	}
	g := ge.NewGraph("mlp")
	h := g.Data("x", 0, dt, []int64{batch, widths[0]})
	for i := 1; i < len(widths); i++ {
		h = g.MatMul(h, weight(g, r, "w"+itoa(i), dt, widths[i-1], widths[i]), ge.Name("fc"+itoa(i)))
		if i < len(widths)-1 {
			switch i % 3 {
			case 1:
				h = g.Relu(h)
			case 2:
				h = g.Gelu(h)
			default:
				h = g.Silu(h)
			}
		}
	}
	g.Output(h)
	return g
}

// Residual builds blocks of y = x + W2·relu(W1·x + b1) on x[batch, width],
// with hidden width `hidden`.
func Residual(r *rand.Rand, dt acl.DataType, batch, width, hidden int64, blocks int) *ge.Graph {
	g := ge.NewGraph("residual")
	x := g.Data("x", 0, dt, []int64{batch, width})
	for i := range blocks {
		s := itoa(i)
		h := g.MatMul(x, weight(g, r, "w1_"+s, dt, width, hidden))
		h = g.Add(h, weight(g, r, "b1_"+s, dt, hidden))
		h = g.Relu(h)
		h = g.MatMul(h, weight(g, r, "w2_"+s, dt, hidden, width))
		x = g.Add(x, h, ge.Name("res"+s))
	}
	g.Output(x)
	return g
}

// BranchConcat builds `branches` parallel MatMul+activation branches of
// different widths from one input, concatenated and projected back; with
// two inputs of different sizes and an extra output from a branch.
func BranchConcat(r *rand.Rand, dt acl.DataType, batch, width int64, branches int) *ge.Graph {
	if r == nil || branches <= 0 {
		return nil // a nil graph: its Err reports it
	}
	g := ge.NewGraph("branch_concat")
	x := g.Data("x", 0, dt, []int64{batch, width})
	bias := g.Data("bias", 1, dt, []int64{width})
	var outs []*ge.Tensor
	var total int64
	for i := range branches {
		w := width * int64(i+1) / 2
		if w == 0 {
			w = 1
		}
		h := g.MatMul(x, weight(g, r, "wb"+itoa(i), dt, width, w))
		h = g.Gelu(h)
		outs = append(outs, h)
		total += w
	}
	c := g.Concat(outs, 1, ge.Name("concat"))
	y := g.MatMul(c, weight(g, r, "wout", dt, total, width))
	y = g.Add(y, bias)
	g.Output(y, outs[0])
	return g
}

// TransformerBlock builds a pre-norm transformer block on x[batch, seq,
// hidden]: LayerNorm, per-head attention (heads split with Slice, scores by
// batched MatMul with TransposeB, Softmax, joined with Concat), output
// projection and residual, then RMSNorm, an MLP with Gelu and a residual.
func TransformerBlock(r *rand.Rand, dt acl.DataType, batch, seq, hidden int64, heads int) *ge.Graph {
	if r == nil || heads <= 0 {
		return nil // a nil graph: its Err reports it
	}
	g := ge.NewGraph("transformer_block")
	x := g.Data("x", 0, dt, []int64{batch, seq, hidden})
	ones := make([]float32, hidden)
	for i := range ones {
		ones[i] = 1 + float32(r.NormFloat64()*0.1)
	}
	gamma := g.ConstFloat32("ln1_gamma", dt, []int64{hidden}, ones)
	beta := g.ConstFloat32("ln1_beta", dt, []int64{hidden}, RandFloats(r, int(hidden), 0.1))
	h := g.LayerNorm(x, gamma, beta, 1e-5, ge.Name("ln1"))
	q := g.MatMul(h, weight(g, r, "wq", dt, hidden, hidden), ge.Name("q"))
	k := g.MatMul(h, weight(g, r, "wk", dt, hidden, hidden), ge.Name("k"))
	v := g.MatMul(h, weight(g, r, "wv", dt, hidden, hidden), ge.Name("v"))
	hd := hidden / int64(heads)
	scale := g.ConstFloat32("scale", dt, []int64{1}, []float32{float32(1 / math.Sqrt(float64(hd)))})
	var ctx []*ge.Tensor
	for i := range heads {
		s := itoa(i)
		begin := []int64{0, 0, int64(i) * hd}
		size := []int64{-1, -1, hd}
		qh := g.Slice(q, begin, size, ge.Name("q"+s))
		kh := g.Slice(k, begin, size, ge.Name("k"+s))
		vh := g.Slice(v, begin, size, ge.Name("v"+s))
		sc := g.Mul(g.MatMul(qh, kh, ge.TransposeB(), ge.Name("scores"+s)), scale)
		p := g.Softmax(sc, -1, ge.Name("softmax"+s))
		ctx = append(ctx, g.MatMul(p, vh, ge.Name("ctx"+s)))
	}
	a := g.Concat(ctx, 2, ge.Name("heads"))
	a = g.MatMul(a, weight(g, r, "wo", dt, hidden, hidden), ge.Name("proj"))
	x1 := g.Add(x, a, ge.Name("res1"))
	h2 := g.RMSNorm(x1, g.ConstFloat32("ln2_gamma", dt, []int64{hidden}, ones), 1e-6, ge.Name("ln2"))
	f := g.MatMul(h2, weight(g, r, "w_up", dt, hidden, 4*hidden), ge.Name("up"))
	f = g.Gelu(f)
	f = g.MatMul(f, weight(g, r, "w_down", dt, 4*hidden, hidden), ge.Name("down"))
	y := g.Add(x1, f, ge.Name("res2"))
	g.Output(g.Reshape(y, []int64{batch * seq, hidden}))
	return g
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
