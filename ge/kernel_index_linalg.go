package ge

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ascend-go/cann/acl"
)

// Det and Einsum: determinants by LU decomposition with partial pivoting
// in float64, and Einstein summation by direct enumeration of the label
// space (any equation numpy accepts: repeated labels take diagonals,
// labels missing from the output are summed, "..." broadcasts).

func init() {
	registerOp(OpDet, &opSpec{name: "Det", minIn: 1, maxIn: 1, infer: inferDet, kernel: detKernel})
	registerOp(OpEinsum, &opSpec{name: "Einsum", minIn: 1, maxIn: -1,
		attrs: map[string]AttrKind{AttrEquation: AttrString}, infer: inferEinsum, kernel: einsumKernel})
}

func inferDet(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	x := in[0]
	if !isFloat(x.DataType) && x.DataType != acl.Float64 {
		return nil, &dtypeError{fmt.Sprintf("Det of %s; want a float type", x.DataType)}
	}
	r := len(x.Dims)
	if r < 2 || x.Dims[r-1] != x.Dims[r-2] {
		return nil, fmt.Errorf("input %s: want square matrices [..., M, M]", x)
	}
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: cloneDims(x.Dims[:r-2])}}, nil
}

func detKernel(t *Task, args [][]byte) error {
	x := t.Inputs[0]
	r := len(x.Dims)
	m := int(x.Dims[r-1])
	v := f64sOf(x.DataType, args[0], prod(x.Dims))
	nb := prod(x.Dims[:r-2])
	out := make([]float64, nb)
	for b := range nb {
		out[b] = det(v[b*m*m:(b+1)*m*m], m)
	}
	writeFromF64(args[1], x.DataType, out)
	return nil
}

// det returns the determinant of the m×m matrix a (overwritten).
func det(a []float64, m int) float64 {
	d := 1.0
	for c := range m {
		p := c
		for i := c + 1; i < m; i++ {
			if math.Abs(a[i*m+c]) > math.Abs(a[p*m+c]) {
				p = i
			}
		}
		if a[p*m+c] == 0 {
			return 0
		}
		if p != c {
			for j := range m {
				a[c*m+j], a[p*m+j] = a[p*m+j], a[c*m+j]
			}
			d = -d
		}
		piv := a[c*m+c]
		d *= piv
		for i := c + 1; i < m; i++ {
			f := a[i*m+c] / piv
			if f == 0 {
				continue
			}
			for j := c + 1; j < m; j++ {
				a[i*m+j] -= f * a[c*m+j]
			}
		}
	}
	return d
}

// einsumPlan is a parsed equation bound to operand dims: every dim of
// every operand and of the output is a label; labels have one size.
type einsumPlan struct {
	sizes []int64 // per label
	ops   [][]int // per operand: the label of each dim
	out   []int   // the label of each output dim
}

// parseEinsum binds the equation to the operand dims. Ellipsis dims are
// labels 0..ne-1 (right-aligned across operands, numpy-broadcast); letters
// follow.
func parseEinsum(eq string, in [][]int64) (*einsumPlan, error) {
	eq = strings.ReplaceAll(eq, " ", "")
	lhs, rhs, hasRhs := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(in) {
		return nil, fmt.Errorf("equation %q has %d operands, the op has %d inputs", eq, len(terms), len(in))
	}
	type term struct {
		letters  []rune // in order, with '.' standing for the ellipsis
		ellipsis bool
	}
	parse := func(s string) (term, error) {
		var tm term
		for i := 0; i < len(s); i++ {
			switch c := rune(s[i]); {
			case c == '.':
				if tm.ellipsis || !strings.HasPrefix(s[i:], "...") {
					return tm, fmt.Errorf("equation %q: bad ellipsis in %q", eq, s)
				}
				tm.ellipsis = true
				tm.letters = append(tm.letters, '.')
				i += 2
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				tm.letters = append(tm.letters, c)
			default:
				return tm, fmt.Errorf("equation %q: bad character %q", eq, c)
			}
		}
		return tm, nil
	}
	ts := make([]term, len(terms))
	ne := 0
	nes := make([]int, len(terms))
	for i, s := range terms {
		tm, err := parse(s)
		if err != nil {
			return nil, err
		}
		nl := len(tm.letters)
		if tm.ellipsis {
			nl--
			nes[i] = len(in[i]) - nl
		}
		if nes[i] < 0 || (!tm.ellipsis && nl != len(in[i])) {
			return nil, fmt.Errorf("equation %q: operand %d term %q does not fit dims %s", eq, i, s, dimsString(in[i]))
		}
		ne = max(ne, nes[i])
		ts[i] = tm
	}
	p := &einsumPlan{sizes: make([]int64, ne)}
	for i := range p.sizes {
		p.sizes[i] = 1
	}
	label := map[rune]int{}
	count := map[rune]int{}
	setSize := func(l int, s int64, bcast bool) error {
		switch {
		case p.sizes[l] == s || (bcast && s == 1):
		case bcast && p.sizes[l] == 1:
			p.sizes[l] = s
		default:
			return fmt.Errorf("equation %q: a label has sizes %d and %d", eq, p.sizes[l], s)
		}
		return nil
	}
	for i, tm := range ts {
		var ls []int
		d := 0
		for _, c := range tm.letters {
			if c == '.' {
				for k := range nes[i] {
					l := ne - nes[i] + k
					if err := setSize(l, in[i][d], true); err != nil {
						return nil, err
					}
					ls = append(ls, l)
					d++
				}
				continue
			}
			l, ok := label[c]
			if !ok {
				l = len(p.sizes)
				label[c] = l
				p.sizes = append(p.sizes, in[i][d])
			} else if err := setSize(l, in[i][d], false); err != nil {
				return nil, err
			}
			count[c]++
			ls = append(ls, l)
			d++
		}
		p.ops = append(p.ops, ls)
	}
	if hasRhs {
		out, err := parse(rhs)
		if err != nil {
			return nil, err
		}
		seen := map[rune]bool{}
		for _, c := range out.letters {
			if c == '.' {
				for k := range ne {
					p.out = append(p.out, k)
				}
				continue
			}
			l, ok := label[c]
			if !ok || seen[c] {
				return nil, fmt.Errorf("equation %q: output label %q is repeated or not an input label", eq, c)
			}
			seen[c] = true
			p.out = append(p.out, l)
		}
	} else {
		for k := range ne {
			p.out = append(p.out, k)
		}
		var once []rune
		for c, n := range count {
			if n == 1 {
				once = append(once, c)
			}
		}
		slices.Sort(once)
		for _, c := range once {
			p.out = append(p.out, label[c])
		}
	}
	if len(p.out) > MaxRank {
		return nil, fmt.Errorf("equation %q: output rank %d exceeds %d", eq, len(p.out), MaxRank)
	}
	return p, nil
}

func (p *einsumPlan) outDims() []int64 {
	dims := make([]int64, len(p.out))
	for i, l := range p.out {
		dims[i] = p.sizes[l]
	}
	return dims
}

func inferEinsum(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if err := sameType(in); err != nil {
		return nil, err
	}
	if err := needValueType("input", in[0].DataType); err != nil {
		return nil, err
	}
	dims := make([][]int64, len(in))
	for i, d := range in {
		dims[i] = d.Dims
	}
	p, err := parseEinsum(a.String(AttrEquation), dims)
	if err != nil {
		return nil, err
	}
	// The kernel enumerates every label combination: bound the work.
	work := 1.0
	for _, s := range p.sizes {
		work *= float64(s)
	}
	if work > 1<<40 {
		return nil, fmt.Errorf("equation %q: %g terms is too much work", a.String(AttrEquation), work)
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: acl.FormatND, Dims: p.outDims()}}, nil
}

// einsumKernel enumerates the output labels (outer) and the summed labels
// (inner), multiplying the operands' elements; float types accumulate in
// float64 and round once, integers in int64.
func einsumKernel(t *Task, args [][]byte) error {
	dims := make([][]int64, len(t.Inputs))
	for i, d := range t.Inputs {
		dims[i] = d.Dims
	}
	p, err := parseEinsum(t.Attrs.String(AttrEquation), dims)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	inOut := make([]bool, len(p.sizes))
	order := append([]int{}, p.out...)
	for _, l := range p.out {
		inOut[l] = true
	}
	for l := range p.sizes {
		if !inOut[l] {
			order = append(order, l)
		}
	}
	space := make([]int64, len(order))
	for i, l := range order {
		space[i] = p.sizes[l]
	}
	// st[k][i]: element stride of operand k along label order[i]
	// (repeated labels add up: a diagonal; broadcast dims stay 0).
	st := make([][]int, len(p.ops))
	pos := make([]int, len(p.sizes))
	for i, l := range order {
		pos[l] = i
	}
	for k, ls := range p.ops {
		st[k] = make([]int, len(order))
		rs := rowStrides(dims[k])
		for d, l := range ls {
			if dims[k][d] != 1 || p.sizes[l] == 1 {
				st[k][pos[l]] += rs[d]
			}
		}
	}
	dt := t.Inputs[0].DataType
	isInt := isIntType(dt)
	fv := make([][]float64, len(p.ops))
	iv := make([][]int64, len(p.ops))
	for k := range p.ops {
		n := prod(dims[k])
		if isInt {
			iv[k] = intsOf(dt, args[k], n)
		} else {
			fv[k] = f64sOf(dt, args[k], n)
		}
	}
	nOut := prod(p.outDims())
	inner := prod(space[len(p.out):])
	fo, io := make([]float64, nOut), make([]int64, nOut)
	offs := make([]int, len(p.ops))
	idx := make([]int, len(space))
	for o := range nOut {
		var fs float64
		var is int64
		for range inner {
			if isInt {
				m := int64(1)
				for k, off := range offs {
					m *= iv[k][off]
				}
				is += m
			} else {
				m := 1.0
				for k, off := range offs {
					m *= fv[k][off]
				}
				fs += m
			}
			for d := len(space) - 1; d >= 0; d-- {
				idx[d]++
				for k := range offs {
					offs[k] += st[k][d]
				}
				if idx[d] < int(space[d]) {
					break
				}
				for k := range offs {
					offs[k] -= st[k][d] * idx[d]
				}
				idx[d] = 0
			}
		}
		fo[o], io[o] = fs, is
	}
	if isInt {
		storeInts(dt, args[len(p.ops)], io)
	} else {
		writeFromF64(args[len(p.ops)], dt, fo)
	}
	return nil
}
