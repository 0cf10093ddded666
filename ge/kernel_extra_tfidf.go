package ge

import (
	"fmt"

	"github.com/ascend-go/cann/acl"
)

// OpTfIdfVectorizer counts the n-grams of a pool in each row of an integer
// sequence (ONNX TfIdfVectorizer with pool_int64s): input X is int32 or
// int64 of dims [C] or [N, C], optional input W (float32, one weight per
// pool n-gram) scales the counts; the output is float32 of dims
// [size] or [N, size], size = max(ngram_indexes) + 1, and the count of
// pool n-gram i goes to coordinate ngram_indexes[i].
//
// An n-gram of length n with skip s is X[j], X[j+s+1], …, X[j+(n-1)(s+1)]
// within one row, for every start j and every s in [0, max_skip_count]; a
// 1-gram is counted once per position (skips do not apply to it). Lengths
// min_gram_length to max_gram_length are counted.
const OpTfIdfVectorizer OpType = 603

// Attributes of TfIdfVectorizer.
const (
	AttrMinGramLength = "min_gram_length" // int ≥ 1
	AttrMaxGramLength = "max_gram_length" // int ≥ min_gram_length
	AttrMaxSkipCount  = "max_skip_count"  // int ≥ 0
	AttrNgramCounts   = "ngram_counts"    // ints: start in pool_int64s of the 1-grams, 2-grams, …
	AttrNgramIndexes  = "ngram_indexes"   // ints: output coordinate of each pool n-gram
	AttrPoolInt64s    = "pool_int64s"     // ints: the n-grams, 1-grams first
	AttrTfIdfMode     = "mode"            // int: TfIdfTF, TfIdfIDF or TfIdfTFIDF
)

// Weighting modes of TfIdfVectorizer (AttrTfIdfMode).
const (
	TfIdfTF    = 0 // the counts
	TfIdfIDF   = 1 // min(count, 1) · weight
	TfIdfTFIDF = 2 // count · weight
)

func init() {
	registerOp(OpTfIdfVectorizer, &opSpec{name: "TfIdfVectorizer", minIn: 1, maxIn: 2,
		attrs: map[string]AttrKind{AttrMinGramLength: AttrInt, AttrMaxGramLength: AttrInt, AttrMaxSkipCount: AttrInt,
			AttrNgramCounts: AttrInts, AttrNgramIndexes: AttrInts, AttrPoolInt64s: AttrInts, AttrTfIdfMode: AttrInt},
		infer: inferTfIdf, kernel: tfidfKernel})
}

// TfIdfVectorizer adds the n-gram counter; w (nil for none) holds one
// weight per pool n-gram for the IDF and TFIDF modes.
func (g *Graph) TfIdfVectorizer(x, w *Tensor, a Attrs, opts ...OpOption) *Tensor {
	in := []*Tensor{x}
	if w != nil {
		in = append(in, w)
	}
	return g.single(OpTfIdfVectorizer, in, a, opts)
}

// tfidfPool is the parsed pool: a trie of the n-grams, each node the id of
// the pool n-gram ending there (-1 for a prefix only).
type tfidfPool struct {
	minN, maxN, maxSkip int
	mode                int64
	indexes             []int64
	size                int64 // output coordinates
	root                *tfidfNode
}

type tfidfNode struct {
	id   int
	kids map[int64]*tfidfNode
}

// parseTfIdf validates the attributes and builds the trie.
func parseTfIdf(a Attrs) (*tfidfPool, error) {
	p := &tfidfPool{mode: a.Int(AttrTfIdfMode, TfIdfTF), indexes: a.Ints(AttrNgramIndexes)}
	minN, maxN, skip := a.Int(AttrMinGramLength, 1), a.Int(AttrMaxGramLength, 1), a.Int(AttrMaxSkipCount, 0)
	switch {
	case minN < 1 || maxN < minN:
		return nil, fmt.Errorf("gram lengths [%d, %d]: want 1 ≤ min_gram_length ≤ max_gram_length", minN, maxN)
	case maxN > MaxDim:
		return nil, fmt.Errorf("max_gram_length %d is too large", maxN)
	case skip < 0:
		return nil, fmt.Errorf("max_skip_count %d is negative", skip)
	case p.mode < TfIdfTF || p.mode > TfIdfTFIDF:
		return nil, fmt.Errorf("mode %d: want 0 (TF), 1 (IDF) or 2 (TFIDF)", p.mode)
	}
	p.minN, p.maxN, p.maxSkip = int(minN), int(maxN), int(min(skip, MaxDim))
	pool, counts := a.Ints(AttrPoolInt64s), a.Ints(AttrNgramCounts)
	if len(counts) == 0 {
		return nil, fmt.Errorf("ngram_counts is empty")
	}
	p.root = &tfidfNode{id: -1}
	id := 0
	for k, start := range counts {
		end := int64(len(pool))
		if k+1 < len(counts) {
			end = counts[k+1]
		}
		n := int64(k + 1)
		if start < 0 || start > end || end > int64(len(pool)) {
			return nil, fmt.Errorf("ngram_counts %v does not split pool_int64s (%d values) into ascending ranges", counts, len(pool))
		}
		if (end-start)%n != 0 {
			return nil, fmt.Errorf("the %d-grams span %d values of pool_int64s, not a multiple of %d", n, end-start, n)
		}
		for j := start; j < end; j += n {
			node := p.root
			for _, v := range pool[j : j+n] {
				kid := node.kids[v]
				if kid == nil {
					if node.kids == nil {
						node.kids = map[int64]*tfidfNode{}
					}
					kid = &tfidfNode{id: -1}
					node.kids[v] = kid
				}
				node = kid
			}
			if node.id < 0 { // a repeated n-gram counts for its first entry
				node.id = id
			}
			id++
		}
	}
	if counts[0] != 0 && len(pool) > 0 {
		return nil, fmt.Errorf("ngram_counts %v: the 1-grams must start at 0", counts)
	}
	if len(p.indexes) != id {
		return nil, fmt.Errorf("ngram_indexes has %d entries for %d pool n-grams", len(p.indexes), id)
	}
	if id == 0 {
		return nil, fmt.Errorf("the pool holds no n-gram")
	}
	for _, ix := range p.indexes {
		if ix < 0 || ix >= MaxDim {
			return nil, fmt.Errorf("ngram_indexes holds %d, outside [0, %d)", ix, int64(MaxDim))
		}
		p.size = max(p.size, ix+1)
	}
	return p, nil
}

func inferTfIdf(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	if !isInt(x.DataType) {
		return nil, &dtypeError{fmt.Sprintf("X has data type %s, want int32 or int64", x.DataType)}
	}
	if len(x.Dims) != 1 && len(x.Dims) != 2 {
		return nil, fmt.Errorf("input X has rank %d, want 1 or 2", len(x.Dims))
	}
	p, err := parseTfIdf(a)
	if err != nil {
		return nil, err
	}
	if len(in) > 1 {
		w := in[1]
		if w.DataType != acl.Float32 {
			return nil, &dtypeError{fmt.Sprintf("W has data type %s, want float32", w.DataType)}
		}
		if len(w.Dims) != 1 || w.Dims[0] != int64(len(p.indexes)) {
			return nil, fmt.Errorf("input W has dims %s, want [%d] (one weight per pool n-gram)", dimsString(w.Dims), len(p.indexes))
		}
	}
	dims := []int64{p.size}
	if len(x.Dims) == 2 {
		dims = []int64{x.Dims[0], p.size}
	}
	return []TensorDesc{{DataType: acl.Float32, Format: acl.FormatND, Dims: dims}}, nil
}

func tfidfKernel(t *Task, args [][]byte) error {
	p, err := parseTfIdf(t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	xd := t.Inputs[0]
	rows, c := 1, prod(xd.Dims)
	if len(xd.Dims) == 2 {
		rows, c = int(xd.Dims[0]), int(xd.Dims[1])
	}
	x := intsOf(xd.DataType, args[0], rows*c)
	var w []float64
	out := args[1]
	if len(t.Inputs) > 1 {
		w = f64sOf(acl.Float32, args[1], len(p.indexes))
		out = args[2]
	}
	// A skip of c-1 or more leaves no second item in a row.
	maxSkip := min(p.maxSkip, max(c-2, 0))
	counts := make([]float64, len(p.indexes))
	y := make([]float64, p.size)
	for r := range rows {
		row := x[r*c : (r+1)*c]
		clear(counts)
		for skip := 0; skip <= maxSkip; skip++ {
			for start := range row {
				node := p.root
				for n, pos := 1, start; n <= p.maxN && pos < c; n, pos = n+1, pos+skip+1 {
					node = node.kids[row[pos]]
					if node == nil {
						break
					}
					// 1-grams count once, on the skip-0 pass.
					if n >= p.minN && node.id >= 0 && (n > 1 || skip == 0) {
						counts[node.id]++
					}
				}
			}
		}
		clear(y)
		for i, n := range counts {
			switch {
			case n == 0:
				continue
			case p.mode == TfIdfIDF:
				n = 1
			}
			if p.mode != TfIdfTF && w != nil {
				n *= w[i]
			}
			y[p.indexes[i]] += n
		}
		for i, v := range y {
			writeFloat(out, acl.Float32, r*int(p.size)+i, v)
		}
	}
	return nil
}
