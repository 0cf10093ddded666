package ge_test

import (
	"math"
	"testing"

	"github.com/ascend-go/cann/ge"
)

// float64 references of Conv (2-D) and inference BatchNorm, written from
// the ONNX definitions, for the fusion tests: the unfused graphs they
// evaluate are what the fused models are held to.

func init() {
	if refOps[ge.OpConv] == nil {
		refOps[ge.OpConv] = refConv2D
	}
	if refOps[ge.OpBatchNorm] == nil {
		refOps[ge.OpBatchNorm] = refBatchNorm
	}
	if refOps[ge.OpLeakyRelu] == nil {
		refOps[ge.OpLeakyRelu] = elemArith[ge.OpLeakyRelu]
	}
	if refOps[ge.OpCast] == nil { // a float Cast rounds once to the new type
		refOps[ge.OpCast] = func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
			return elemRefMap(in[0], out, func(x float64) float64 { return x })
		}
	}
}

// refConv2D: y[n,m,i,j] = b[m] + Σ_{c,u,v} x[n, g·C/G + c, i·s0 − p0 + u·d0,
// j·s1 − p1 + v·d1] · w[m, c, u, v], outside the image reading 0.
func refConv2D(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x, w := in[0], in[1]
	if len(x.dims) != 4 {
		t.Fatalf("refConv2D: input %v", x.dims)
	}
	ints := func(k string, n int, def int64) []int64 {
		if v := a.Ints(k); v != nil {
			return v
		}
		v := make([]int64, n)
		for i := range v {
			v[i] = def
		}
		return v
	}
	s, d, p := ints(ge.AttrStrides, 2, 1), ints(ge.AttrDilations, 2, 1), ints(ge.AttrPads, 4, 0)
	groups := int(a.Int(ge.AttrGroups, 1))
	n, c, h, wd := int(x.dims[0]), int(x.dims[1]), int(x.dims[2]), int(x.dims[3])
	m, cg, kh, kw := int(w.dims[0]), int(w.dims[1]), int(w.dims[2]), int(w.dims[3])
	oh, ow := int(out.Dims[2]), int(out.Dims[3])
	mg := m / groups
	y := make([]float64, n*m*oh*ow)
	for b := range n {
		for o := range m {
			g := o / mg
			for i := range oh {
				for j := range ow {
					var acc float64
					if len(in) == 3 {
						acc = in[2].v[o]
					}
					for ci := range cg {
						for u := range kh {
							for v := range kw {
								r := i*int(s[0]) - int(p[0]) + u*int(d[0])
								q := j*int(s[1]) - int(p[1]) + v*int(d[1])
								if r < 0 || r >= h || q < 0 || q >= wd {
									continue
								}
								acc += x.v[((b*c+g*cg+ci)*h+r)*wd+q] * w.v[((o*cg+ci)*kh+u)*kw+v]
							}
						}
					}
					y[((b*m+o)*oh+i)*ow+j] = acc
				}
			}
		}
	}
	return rounded(out.DataType, out.Dims, y)
}

// refBatchNorm: y = (x − mean[c]) / √(var[c] + eps) · scale[c] + bias[c]
// over channel dim 1.
func refBatchNorm(_ testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	eps := a.Float(ge.AttrEpsilon, 1e-5)
	c := int(x.dims[1])
	inner := numel(x.dims[2:])
	y := make([]float64, len(x.v))
	for i, v := range x.v {
		ch := i / inner % c
		y[i] = (v-in[3].v[ch])/math.Sqrt(in[4].v[ch]+eps)*in[1].v[ch] + in[2].v[ch]
	}
	return rounded(out.DataType, out.Dims, y)
}
