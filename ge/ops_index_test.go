package ge_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

// Kernel tests of the index ops against ref_index_test.go, over every
// type each op takes.

var (
	idxFloatTypes = []acl.DataType{acl.Float32, acl.Float16, acl.BFloat16, acl.Float64}
	idxIntTypes   = []acl.DataType{acl.Int8, acl.Uint8, acl.Int16, acl.Int32, acl.Int64}
	idxAllTypes   = append(append(append([]acl.DataType{}, idxFloatTypes...), idxIntTypes...), acl.Bool)
)

// idxIn is one graph input: type, dims and values.
type idxIn struct {
	dt   acl.DataType
	dims []int64
	v    []float64
}

// idxRand returns values for dt: normal floats, small integers (many
// ties), 0/1 for bool.
func idxRand(r *rand.Rand, dt acl.DataType, dims []int64) idxIn {
	v := make([]float64, numel(dims))
	for i := range v {
		switch dt {
		case acl.Bool:
			v[i] = float64(r.IntN(2))
		case acl.Uint8:
			v[i] = float64(r.IntN(10))
		case acl.Int8, acl.Int16, acl.Int32, acl.Int64:
			v[i] = float64(r.IntN(10) - 5)
		default:
			v[i] = r.NormFloat64()
		}
	}
	return idxIn{dt, dims, v}
}

// idxInts makes an int64 input.
func idxInts(dims []int64, v ...float64) idxIn { return idxIn{acl.Int64, dims, v} }

// idxBuild builds a graph of one Data per input.
func idxBuild(ins []idxIn, build func(g *ge.Graph, in []*ge.Tensor) []*ge.Tensor) (*ge.Graph, [][]byte) {
	g := ge.NewGraph("idx")
	var ts []*ge.Tensor
	var data [][]byte
	for i, x := range ins {
		ts = append(ts, g.Data(fmt.Sprintf("in%d", i), i, x.dt, x.dims))
		data = append(data, encodeAny(x.dt, x.v))
	}
	g.Output(build(g, ts)...)
	return g, data
}

// checkIdx runs the op and compares output 0 with the reference within
// tol (0: exact).
func checkIdx(t *testing.T, ins []idxIn, build func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor, tol float64) [][]byte {
	t.Helper()
	g, data := idxBuild(ins, func(g *ge.Graph, in []*ge.Tensor) []*ge.Tensor { return []*ge.Tensor{build(g, in)} })
	require.NoError(t, g.Err())
	want := refEval(t, g, data)
	got := runGraph(t, g, data)
	requireClose(t, want[0], got[0], tol, t.Name())
	return got
}

func idxOp1(op ge.OpType, a ge.Attrs) func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
	return func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor { return g.AddOp(op, in, a).Output(0) }
}

// idxTol is exact for integers and one unit in the last place for floats.
func idxTol(dt acl.DataType) float64 {
	if dt == acl.Float64 {
		return 1e-12
	}
	if dt == acl.Float32 || dt == acl.Float16 || dt == acl.BFloat16 {
		return tolerance(dt)
	}
	return 0
}

func TestArgMaxArgMin(t *testing.T) {
	r := newRand(t)
	for _, op := range []ge.OpType{ge.OpArgMax, ge.OpArgMin} {
		for _, dt := range idxAllTypes {
			for _, axis := range []int64{0, 1, -1} {
				for _, keep := range []bool{false, true} {
					for _, last := range []bool{false, true} {
						t.Run(fmt.Sprintf("%s/%s/axis%d/keep=%v/last=%v", op, dt, axis, keep, last), func(t *testing.T) {
							checkIdx(t, []idxIn{idxRand(r, dt, []int64{3, 5, 4})}, idxOp1(op, ge.Attrs{ge.AttrAxis: ge.IntAttr(axis),
								ge.AttrKeepDims: ge.BoolAttr(keep), ge.AttrSelectLastIndex: ge.BoolAttr(last)}), 0)
						})
					}
				}
			}
		}
	}
}

func TestHardmax(t *testing.T) {
	r := newRand(t)
	for _, dt := range idxAllTypes {
		for _, axis := range []int64{0, 1, -1} {
			t.Run(fmt.Sprintf("%s/axis%d", dt, axis), func(t *testing.T) {
				checkIdx(t, []idxIn{idxRand(r, dt, []int64{3, 6, 2})}, idxOp1(ge.OpHardmax, ge.Attrs{ge.AttrAxis: ge.IntAttr(axis)}), 0)
			})
		}
	}
}

func TestTopK(t *testing.T) {
	r := newRand(t)
	for _, dt := range idxAllTypes {
		for _, axis := range []int64{0, -1} {
			for _, largest := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/axis%d/largest=%v", dt, axis, largest), func(t *testing.T) {
					x := idxRand(r, dt, []int64{7, 6})
					a := ge.Attrs{ge.AttrK: ge.IntAttr(3), ge.AttrAxis: ge.IntAttr(axis), ge.AttrLargest: ge.BoolAttr(largest), ge.AttrSorted: ge.BoolAttr(true)}
					g, data := idxBuild([]idxIn{x}, func(g *ge.Graph, in []*ge.Tensor) []*ge.Tensor {
						n := g.AddOp(ge.OpTopK, in, a)
						return []*ge.Tensor{n.Output(0), n.Output(1)}
					})
					require.NoError(t, g.Err())
					got := runGraph(t, g, data)
					in := refEval(t, g, data) // output 0 only
					dims := []int64{7, 3}
					if axis == 0 {
						dims = []int64{3, 6}
					}
					xv := refVal{dt, x.dims, decodeAll(dt, data[0], len(x.v))}
					vals, ids := refTopK(xv, a, dims)
					requireClose(t, vals, got[0], 0, "values")
					requireClose(t, in[0], got[0], 0, "values (refEval)")
					requireClose(t, ids, got[1], 0, "indices")
				})
			}
		}
	}
}

func TestCumSum(t *testing.T) {
	r := newRand(t)
	for _, dt := range append(append([]acl.DataType{}, idxFloatTypes...), idxIntTypes...) {
		for _, axis := range []int64{0, 1, -1} {
			for _, f := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				t.Run(fmt.Sprintf("%s/axis%d/excl=%v/rev=%v", dt, axis, f[0], f[1]), func(t *testing.T) {
					checkIdx(t, []idxIn{idxRand(r, dt, []int64{4, 5, 3})}, idxOp1(ge.OpCumSum, ge.Attrs{ge.AttrAxis: ge.IntAttr(axis),
						ge.AttrExclusive: ge.BoolAttr(f[0]), ge.AttrReverse: ge.BoolAttr(f[1])}), 4*idxTol(dt))
				})
			}
		}
	}
}

func TestNonZeroAndUnique(t *testing.T) {
	r := newRand(t)
	for _, dt := range idxAllTypes {
		t.Run("NonZero/"+dt.String(), func(t *testing.T) {
			x := idxRand(r, dt, []int64{3, 4, 2})
			x.v[0] = 1 // at least one non-zero
			n, err := ge.ValueDependentCount(ge.OpNonZero, nil, []ge.HostTensor{{Desc: ge.TensorDesc{DataType: dt, Dims: x.dims}, Data: encodeAny(dt, x.v)}})
			require.NoError(t, err)
			checkIdx(t, []idxIn{x}, idxOp1(ge.OpNonZero, ge.Attrs{ge.AttrCount: ge.IntAttr(n)}), 0)
		})
		for _, axis := range []int64{-2, 0, 1, 2} {
			for _, sorted := range []bool{true, false} {
				t.Run(fmt.Sprintf("Unique/%s/axis%d/sorted=%v", dt, axis, sorted), func(t *testing.T) {
					x := idxRand(r, dt, []int64{6, 2, 3})
					if !isIdxInt(dt) {
						for i := range x.v { // ties for float types too
							x.v[i] = math.Round(x.v[i])
						}
					}
					// Repeat some slices along the axis.
					a := ge.Attrs{ge.AttrSorted: ge.BoolAttr(sorted)}
					if axis != -2 {
						a[ge.AttrAxis] = ge.IntAttr(axis)
						if axis == 0 {
							copy(x.v[3*6:4*6], x.v[0:6])
						}
					}
					h := ge.HostTensor{Desc: ge.TensorDesc{DataType: dt, Dims: x.dims}, Data: encodeAny(dt, x.v)}
					n, err := ge.ValueDependentCount(ge.OpUnique, a, []ge.HostTensor{h})
					require.NoError(t, err)
					a[ge.AttrCount] = ge.IntAttr(n)
					g, data := idxBuild([]idxIn{x}, func(g *ge.Graph, in []*ge.Tensor) []*ge.Tensor {
						nd := g.AddOp(ge.OpUnique, in, a)
						return []*ge.Tensor{nd.Output(0), nd.Output(1), nd.Output(2), nd.Output(3)}
					})
					require.NoError(t, g.Err())
					got := runGraph(t, g, data)
					want := refUnique(refVal{dt, x.dims, decodeAll(dt, data[0], len(x.v))}, a)
					require.Equal(t, n, want[1].dims[0])
					for i := range want {
						requireClose(t, want[i], got[i], 0, fmt.Sprintf("output %d", i))
					}
				})
			}
		}
	}
}

func isIdxInt(dt acl.DataType) bool {
	for _, x := range idxIntTypes {
		if x == dt {
			return true
		}
	}
	return dt == acl.Bool
}

func TestGatherElementsAndND(t *testing.T) {
	r := newRand(t)
	for _, dt := range idxAllTypes {
		for _, it := range []acl.DataType{acl.Int32, acl.Int64} {
			for _, axis := range []int64{0, 1, -1} {
				t.Run(fmt.Sprintf("GatherElements/%s/%s/axis%d", dt, it, axis), func(t *testing.T) {
					x := idxRand(r, dt, []int64{4, 5, 3})
					ax := normAxisRef(axis, 3)
					id := idxIn{it, []int64{3, 5, 2}, nil}
					for range numel(id.dims) {
						id.v = append(id.v, float64(r.IntN(int(2*x.dims[ax]))-int(x.dims[ax]))) // negatives too
					}
					checkIdx(t, []idxIn{x, id}, idxOp1(ge.OpGatherElements, ge.Attrs{ge.AttrAxis: ge.IntAttr(axis)}), 0)
				})
			}
			for _, c := range []struct {
				x, id []int64
				b     int64
			}{{[]int64{4, 5, 3}, []int64{2, 2}, 0}, {[]int64{4, 5, 3}, []int64{6, 3}, 0}, {[]int64{4, 5}, []int64{3, 2, 1}, 0},
				{[]int64{2, 5, 3}, []int64{2, 4, 1}, 1}, {[]int64{2, 5, 3}, []int64{2, 2}, 1}} {
				t.Run(fmt.Sprintf("GatherND/%s/%s/%v/%v/b%d", dt, it, c.x, c.id, c.b), func(t *testing.T) {
					x := idxRand(r, dt, c.x)
					k := c.id[len(c.id)-1]
					id := idxIn{it, c.id, nil}
					for i := range numel(c.id) {
						d := c.x[int(c.b)+i%int(k)]
						id.v = append(id.v, float64(r.IntN(int(2*d))-int(d)))
					}
					checkIdx(t, []idxIn{x, id}, idxOp1(ge.OpGatherND, ge.Attrs{ge.AttrBatchDims: ge.IntAttr(c.b)}), 0)
				})
			}
		}
	}
}

func TestScatter(t *testing.T) {
	r := newRand(t)
	for _, dt := range idxAllTypes {
		for _, red := range []string{"none", "add", "mul", "max", "min"} {
			if dt == acl.Bool && red != "none" {
				continue
			}
			tol := 0.0
			if red == "add" || red == "mul" {
				tol = idxTol(dt)
			}
			for _, axis := range []int64{0, -1} {
				t.Run(fmt.Sprintf("ScatterElements/%s/%s/axis%d", dt, red, axis), func(t *testing.T) {
					x := idxRand(r, dt, []int64{4, 5})
					ax := normAxisRef(axis, 2)
					id := idxInts([]int64{3, 4})
					for range 12 {
						id.v = append(id.v, float64(r.IntN(int(2*x.dims[ax]))-int(x.dims[ax])))
					}
					checkIdx(t, []idxIn{x, id, idxRand(r, dt, []int64{3, 4})}, idxOp1(ge.OpScatterElements,
						ge.Attrs{ge.AttrAxis: ge.IntAttr(axis), ge.AttrReduction: ge.StringAttr(red)}), tol)
				})
			}
			t.Run(fmt.Sprintf("ScatterND/%s/%s", dt, red), func(t *testing.T) {
				x := idxRand(r, dt, []int64{4, 5, 2})
				// Two tuples of length 2 (slices of [2]) and one repeated.
				id := idxInts([]int64{3, 2}, 1, -1, 3, 0, 1, 4)
				checkIdx(t, []idxIn{x, id, idxRand(r, dt, []int64{3, 2})}, idxOp1(ge.OpScatterND, ge.Attrs{ge.AttrReduction: ge.StringAttr(red)}), tol)
			})
		}
	}
}

func TestOneHotTileTriluReverseSequence(t *testing.T) {
	r := newRand(t)
	for _, dt := range idxAllTypes {
		for _, axis := range []int64{0, 1, -1} {
			neg := axis != 1
			t.Run(fmt.Sprintf("OneHot/%s/axis%d/neg=%v", dt, axis, neg), func(t *testing.T) {
				id := idxIn{acl.Float32, []int64{2, 3}, []float64{0, 4, -1, -5, 7, 2.7}} // 7: all off
				vals := idxIn{dt, []int64{2}, []float64{0, 1}}
				if !isIdxInt(dt) {
					vals.v = []float64{-0.5, 3}
				}
				checkIdx(t, []idxIn{id, vals}, idxOp1(ge.OpOneHot, ge.Attrs{ge.AttrDepth: ge.IntAttr(5), ge.AttrAxis: ge.IntAttr(axis),
					ge.AttrNegativeIndices: ge.BoolAttr(neg)}), 0)
			})
		}
		t.Run("Tile/"+dt.String(), func(t *testing.T) {
			checkIdx(t, []idxIn{idxRand(r, dt, []int64{2, 3, 4})}, idxOp1(ge.OpTile, ge.Attrs{ge.AttrRepeats: ge.IntsAttr([]int64{3, 1, 2})}), 0)
		})
		for _, k := range []int64{-7, -1, 0, 2, 9} {
			for _, upper := range []bool{false, true} {
				t.Run(fmt.Sprintf("Trilu/%s/k%d/upper=%v", dt, k, upper), func(t *testing.T) {
					checkIdx(t, []idxIn{idxRand(r, dt, []int64{2, 4, 6})}, idxOp1(ge.OpTrilu, ge.Attrs{ge.AttrK: ge.IntAttr(k), ge.AttrUpper: ge.BoolAttr(upper)}), 0)
				})
			}
		}
		for _, ba := range []int64{0, 1} {
			t.Run(fmt.Sprintf("ReverseSequence/%s/batch%d", dt, ba), func(t *testing.T) {
				x := idxRand(r, dt, []int64{4, 4, 3})
				checkIdx(t, []idxIn{x, idxInts([]int64{4}, 4, 0, 1, 3)}, idxOp1(ge.OpReverseSequence,
					ge.Attrs{ge.AttrBatchAxis: ge.IntAttr(ba), ge.AttrTimeAxis: ge.IntAttr(1 - ba)}), 0)
			})
		}
	}
}

// TestPadModes covers Pad's modes, cropping (negative pads) and the fill
// value as an input.
func TestPadModes(t *testing.T) {
	r := newRand(t)
	for _, dt := range idxAllTypes {
		for _, mode := range []string{"constant", "edge", "reflect", "wrap"} {
			for _, pads := range [][]int64{{1, 2, 0, 3}, {0, 5, 2, 0}, {-1, 1, 2, -2}} {
				t.Run(fmt.Sprintf("%s/%s/%v", dt, mode, pads), func(t *testing.T) {
					checkIdx(t, []idxIn{idxRand(r, dt, []int64{3, 4})}, idxOp1(ge.OpPad, ge.Attrs{ge.AttrPads: ge.IntsAttr(pads),
						ge.AttrMode: ge.StringAttr(mode), ge.AttrValue: ge.FloatAttr(1)}), 0)
				})
			}
		}
		t.Run(fmt.Sprintf("%s/fill-input", dt), func(t *testing.T) {
			checkIdx(t, []idxIn{idxRand(r, dt, []int64{2, 3}), {dt, []int64{}, []float64{1}}}, idxOp1(ge.OpPad, ge.Attrs{ge.AttrPads: ge.IntsAttr([]int64{1, 0, 1, 2})}), 0)
		})
	}
}

func TestDetAndEinsum(t *testing.T) {
	r := newRand(t)
	for _, dt := range idxFloatTypes {
		for _, dims := range [][]int64{{1, 1}, {3, 3}, {2, 4, 4}, {2, 1, 5, 5}} {
			t.Run(fmt.Sprintf("Det/%s/%v", dt, dims), func(t *testing.T) {
				checkIdx(t, []idxIn{idxRand(r, dt, dims)}, idxOp1(ge.OpDet, nil), 4*idxTol(dt))
			})
		}
	}
	t.Run("Det/singular", func(t *testing.T) {
		checkIdx(t, []idxIn{{acl.Float32, []int64{3, 3}, []float64{1, 2, 3, 2, 4, 6, 0, 1, 1}}}, idxOp1(ge.OpDet, nil), 0)
	})
	cases := []struct {
		eq   string
		dims [][]int64
	}{
		{"ij,jk->ik", [][]int64{{3, 4}, {4, 5}}},
		{"bij,bjk->bik", [][]int64{{2, 3, 4}, {2, 4, 5}}},
		{"ij->ji", [][]int64{{3, 4}}},
		{"ij->", [][]int64{{3, 4}}},
		{"ii->i", [][]int64{{4, 4}}},
		{"ii->", [][]int64{{4, 4}}},
		{"bii->bi", [][]int64{{2, 3, 3}}},
		{"i,i->", [][]int64{{5}, {5}}},
		{"i,j->ij", [][]int64{{3}, {4}}},
		{"ij,ij->ij", [][]int64{{3, 4}, {3, 4}}},
		{"abc,cd,de->abe", [][]int64{{2, 3, 4}, {4, 2}, {2, 3}}},
		{"bhqd,bhkd->bhqk", [][]int64{{1, 2, 3, 4}, {1, 2, 5, 4}}},
	}
	for _, dt := range append(append([]acl.DataType{}, idxFloatTypes...), acl.Int32, acl.Int64) {
		for _, c := range cases {
			t.Run(fmt.Sprintf("Einsum/%s/%s", dt, c.eq), func(t *testing.T) {
				var ins []idxIn
				for _, d := range c.dims {
					ins = append(ins, idxRand(r, dt, d))
				}
				checkIdx(t, ins, idxOp1(ge.OpEinsum, ge.Attrs{ge.AttrEquation: ge.StringAttr(c.eq)}), 4*idxTol(dt))
			})
		}
	}
}

// TestEinsumImplicitAndEllipsis checks the forms the reference does not
// take against equivalent explicit equations.
func TestEinsumImplicitAndEllipsis(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		eq, same string
		dims     [][]int64
		sameDims [][]int64
	}{
		{"ij,jk", "ij,jk->ik", [][]int64{{3, 4}, {4, 5}}, nil},
		{"ii", "ii->", [][]int64{{4, 4}}, nil},
		{"ba", "ba->ab", [][]int64{{3, 4}}, nil},
		{"...ij,...jk->...ik", "bij,bjk->bik", [][]int64{{2, 3, 4}, {2, 4, 5}}, nil},
		{"...ii->...i", "bii->bi", [][]int64{{2, 3, 3}}, nil},
		{"...ij->...ji", "bcij->bcji", [][]int64{{2, 2, 3, 4}}, nil},
		{"ij...,jk...", "ijb,jkb->bik", [][]int64{{3, 4, 2}, {4, 5, 2}}, nil},
		// broadcast ellipsis: [1,3,4] with [2,4,5] → [2,3,5]
		{"...ij,...jk->...ik", "bij,bjk->bik", [][]int64{{1, 3, 4}, {2, 4, 5}}, [][]int64{{2, 3, 4}, {2, 4, 5}}},
	} {
		t.Run(c.eq, func(t *testing.T) {
			var ins []idxIn
			for _, d := range c.dims {
				ins = append(ins, idxRand(r, acl.Float64, d))
			}
			g, data := idxBuild(ins, func(g *ge.Graph, in []*ge.Tensor) []*ge.Tensor {
				return []*ge.Tensor{g.AddOp(ge.OpEinsum, in, ge.Attrs{ge.AttrEquation: ge.StringAttr(c.eq)}).Output(0)}
			})
			require.NoError(t, g.Err())
			got := runGraph(t, g, data)
			same := ins
			if c.sameDims != nil {
				// Broadcast the first operand by repetition for the explicit form.
				same = []idxIn{{acl.Float64, c.sameDims[0], append(append([]float64{}, ins[0].v...), ins[0].v...)}, ins[1]}
			}
			g2, data2 := idxBuild(same, func(g *ge.Graph, in []*ge.Tensor) []*ge.Tensor {
				return []*ge.Tensor{g.AddOp(ge.OpEinsum, in, ge.Attrs{ge.AttrEquation: ge.StringAttr(c.same)}).Output(0)}
			})
			want := refEval(t, g2, data2)
			requireClose(t, want[0], got[0], 1e-12, c.eq)
		})
	}
}

// TestIndexOpErrors: bad operands are typed errors: at build time for
// shapes, types and attributes, and as an AI Core exception naming the
// node for indices out of range at run time.
func TestIndexOpErrors(t *testing.T) {
	build := []struct {
		name string
		op   ge.OpType
		ins  []idxIn
		a    ge.Attrs
	}{
		{"argmax axis", ge.OpArgMax, []idxIn{idxIn{acl.Float32, []int64{2, 3}, nil}}, ge.Attrs{ge.AttrAxis: ge.IntAttr(2)}},
		{"topk k", ge.OpTopK, []idxIn{{acl.Float32, []int64{2, 3}, nil}}, ge.Attrs{ge.AttrK: ge.IntAttr(4)}},
		{"det int", ge.OpDet, []idxIn{{acl.Int32, []int64{3, 3}, nil}}, nil},
		{"det not square", ge.OpDet, []idxIn{{acl.Float32, []int64{3, 2}, nil}}, nil},
		{"gather index type", ge.OpGatherElements, []idxIn{{acl.Float32, []int64{3}, nil}, {acl.Float32, []int64{3}, nil}}, nil},
		{"gathernd tuple", ge.OpGatherND, []idxIn{{acl.Float32, []int64{3}, nil}, {acl.Int64, []int64{1, 2}, nil}}, nil},
		{"scatter reduction", ge.OpScatterElements, []idxIn{{acl.Float32, []int64{3}, nil}, {acl.Int64, []int64{1}, nil}, {acl.Float32, []int64{1}, nil}},
			ge.Attrs{ge.AttrReduction: ge.StringAttr("sub")}},
		{"scatternd updates", ge.OpScatterND, []idxIn{{acl.Float32, []int64{3, 2}, nil}, {acl.Int64, []int64{1, 1}, nil}, {acl.Float32, []int64{1}, nil}}, nil},
		{"tile repeats", ge.OpTile, []idxIn{{acl.Float32, []int64{3}, nil}}, ge.Attrs{ge.AttrRepeats: ge.IntsAttr([]int64{0})}},
		{"pad mode", ge.OpPad, []idxIn{{acl.Float32, []int64{3}, nil}}, ge.Attrs{ge.AttrPads: ge.IntsAttr([]int64{1, 1}), ge.AttrMode: ge.StringAttr("mirror")}},
		{"pad crop", ge.OpPad, []idxIn{{acl.Float32, []int64{3}, nil}}, ge.Attrs{ge.AttrPads: ge.IntsAttr([]int64{-2, -1})}},
		{"pad fill", ge.OpPad, []idxIn{{acl.Float32, []int64{3}, nil}, {acl.Float16, []int64{1}, nil}}, ge.Attrs{ge.AttrPads: ge.IntsAttr([]int64{1, 1})}},
		{"trilu rank", ge.OpTrilu, []idxIn{{acl.Float32, []int64{3}, nil}}, nil},
		{"einsum equation", ge.OpEinsum, []idxIn{{acl.Float32, []int64{3}, nil}}, ge.Attrs{ge.AttrEquation: ge.StringAttr("ij->i")}},
		{"einsum sizes", ge.OpEinsum, []idxIn{{acl.Float32, []int64{3}, nil}, {acl.Float32, []int64{4}, nil}}, ge.Attrs{ge.AttrEquation: ge.StringAttr("i,i->")}},
		{"einsum label", ge.OpEinsum, []idxIn{{acl.Float32, []int64{3}, nil}}, ge.Attrs{ge.AttrEquation: ge.StringAttr("i->j")}},
		{"nonzero count", ge.OpNonZero, []idxIn{{acl.Float32, []int64{3}, nil}}, ge.Attrs{ge.AttrCount: ge.IntAttr(4)}},
		{"reversesequence axes", ge.OpReverseSequence, []idxIn{{acl.Float32, []int64{3, 2}, nil}, {acl.Int64, []int64{2}, nil}},
			ge.Attrs{ge.AttrBatchAxis: ge.IntAttr(1), ge.AttrTimeAxis: ge.IntAttr(1)}},
	}
	for _, c := range build {
		t.Run(c.name, func(t *testing.T) {
			g := ge.NewGraph("bad")
			var ts []*ge.Tensor
			for i, x := range c.ins {
				ts = append(ts, g.Data(fmt.Sprintf("in%d", i), i, x.dt, x.dims))
			}
			g.AddOp(c.op, ts, c.a)
			require.Error(t, g.Err())
			require.NotZero(t, acl.CodeOf(g.Err()))
		})
	}
	run := []struct {
		name string
		op   ge.OpType
		ins  []idxIn
		a    ge.Attrs
	}{
		{"gatherelements", ge.OpGatherElements, []idxIn{{acl.Float32, []int64{3}, []float64{1, 2, 3}}, idxInts([]int64{2}, 0, 3)}, nil},
		{"gatherelements negative", ge.OpGatherElements, []idxIn{{acl.Float32, []int64{3}, []float64{1, 2, 3}}, idxInts([]int64{2}, -4, 0)}, nil},
		{"gathernd", ge.OpGatherND, []idxIn{{acl.Float32, []int64{3, 2}, make([]float64, 6)}, idxInts([]int64{1, 2}, 1, 1<<40)}, nil},
		{"scatterelements", ge.OpScatterElements, []idxIn{{acl.Float32, []int64{3}, make([]float64, 3)}, idxInts([]int64{1}, 7), {acl.Float32, []int64{1}, []float64{1}}}, nil},
		{"scatternd", ge.OpScatterND, []idxIn{{acl.Float32, []int64{3}, make([]float64, 3)}, idxInts([]int64{1, 1}, -9), {acl.Float32, []int64{1}, []float64{1}}}, nil},
		{"reversesequence", ge.OpReverseSequence, []idxIn{{acl.Float32, []int64{3, 2}, make([]float64, 6)}, idxInts([]int64{2}, 4, 1)}, nil},
		{"nonzero count", ge.OpNonZero, []idxIn{{acl.Float32, []int64{3}, []float64{1, 0, 2}}}, ge.Attrs{ge.AttrCount: ge.IntAttr(3)}},
		{"unique count", ge.OpUnique, []idxIn{{acl.Float32, []int64{3}, []float64{1, 1, 2}}}, ge.Attrs{ge.AttrCount: ge.IntAttr(3)}},
	}
	for _, c := range run {
		t.Run(c.name, func(t *testing.T) {
			g, data := idxBuild(c.ins, func(g *ge.Graph, in []*ge.Tensor) []*ge.Tensor {
				n := g.AddOp(c.op, in, c.a, ge.Name("victim"))
				var outs []*ge.Tensor
				for i := range n.NumOutputs() {
					outs = append(outs, n.Output(i))
				}
				return outs
			})
			require.NoError(t, g.Err())
			m, err := ge.Compile(g)
			require.NoError(t, err)
			_, err = getest.Run(m, data)
			require.Error(t, err)
			require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)
			require.Contains(t, err.Error(), `"victim"`)
		})
	}
	_, err := ge.ValueDependentCount(ge.OpTopK, nil, []ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{1}}, Data: make([]byte, 4)}})
	require.Error(t, err)
	_, err = ge.ValueDependentCount(ge.OpNonZero, nil, []ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{2}}, Data: make([]byte, 4)}})
	require.Error(t, err)
}

// TestIndexOpsRoundTrip: a model of index ops (string, bool and list
// attributes, several outputs) survives MarshalBinary/ParseModel and runs
// the same.
func TestIndexOpsRoundTrip(t *testing.T) {
	g := ge.NewGraph("rt")
	x := g.Data("x", 0, acl.Float32, []int64{4, 3})
	id := g.Data("id", 1, acl.Int64, []int64{2, 1})
	e := g.Einsum("ij,ik->jk", []*ge.Tensor{x, x})
	vals, ids := g.TopK(x, 2, -1, true)
	am := g.ArgReduce(ge.OpArgMin, x, 0, false, true)
	gn := g.AddOp(ge.OpGatherND, []*ge.Tensor{x, id}, nil).Output(0)
	p := g.AddOp(ge.OpPad, []*ge.Tensor{x}, ge.Attrs{ge.AttrPads: ge.IntsAttr([]int64{1, 1, 0, 2}), ge.AttrMode: ge.StringAttr("reflect")}).Output(0)
	g.Output(e, vals, ids, gn, p, am)
	require.NoError(t, g.Err())
	m, err := ge.Compile(g)
	require.NoError(t, err)
	b, err := m.MarshalBinary()
	require.NoError(t, err)
	m2, err := ge.ParseModel(b)
	require.NoError(t, err)
	in := [][]byte{encodeAny(acl.Float32, []float64{1, -2, 3, 0.5, 4, -1, 2, 2, 2, -3, 0, 1}), encodeAny(acl.Int64, []float64{3, -4})}
	want, err := getest.Run(m, in)
	require.NoError(t, err)
	got, err := getest.Run(m2, in)
	require.NoError(t, err)
	require.Equal(t, want, got)
}
