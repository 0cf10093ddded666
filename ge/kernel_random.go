package ge

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ascend-go/cann/acl"
)

// Random number generators, as ONNX defines them. Each task draws from its
// own PCG generator seeded with AttrSeed (an int; absent means 0) every
// time it runs, so a model's runs repeat: the same seed gives the same
// numbers, run after run and in EvalOp. (An importer gives every node a
// distinct seed when the model sets none: see ge/onnx.) These ops must
// stay ops of a model: folding them at import would freeze one draw.
//
//   - RandomUniform (no input): AttrShape of AttrDstType values uniform in
//     [AttrLow, AttrHigh) (defaults 0, 1).
//   - RandomNormal (no input): normal values of mean AttrMean (0) and
//     standard deviation AttrScale (1).
//   - Bernoulli (p): 1 where a uniform draw in [0, 1) is below p, else 0,
//     in AttrDstType (default p's type); a p outside [0, 1] is an error.
//   - Multinomial (logits [batch, classes]): AttrSampleSize class indices
//     per batch row (int32 or int64, AttrDstType), drawn with probability
//     softmax(logits).
const (
	OpRandomUniform OpType = 540
	OpRandomNormal  OpType = 541
	OpBernoulli     OpType = 542
	OpMultinomial   OpType = 543
)

// Attributes of the random ops.
const (
	AttrSeed       = "seed"        // int: the generator's seed
	AttrLow        = "low"         // RandomUniform: float
	AttrHigh       = "high"        // RandomUniform: float
	AttrMean       = "mean"        // RandomNormal: float
	AttrScale      = "scale"       // RandomNormal: float
	AttrSampleSize = "sample_size" // Multinomial: int
)

func init() {
	registerOp(OpRandomUniform, &opSpec{name: "RandomUniform", minIn: 0, maxIn: 0,
		attrs: map[string]AttrKind{AttrSeed: AttrInt, AttrShape: AttrInts, AttrDstType: AttrInt, AttrLow: AttrFloat, AttrHigh: AttrFloat},
		infer: inferRandom, kernel: randomKernel})
	registerOp(OpRandomNormal, &opSpec{name: "RandomNormal", minIn: 0, maxIn: 0,
		attrs: map[string]AttrKind{AttrSeed: AttrInt, AttrShape: AttrInts, AttrDstType: AttrInt, AttrMean: AttrFloat, AttrScale: AttrFloat},
		infer: inferRandom, kernel: randomKernel})
	registerOp(OpBernoulli, &opSpec{name: "Bernoulli", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrSeed: AttrInt, AttrDstType: AttrInt}, infer: inferBernoulli, kernel: bernoulliKernel})
	registerOp(OpMultinomial, &opSpec{name: "Multinomial", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrSeed: AttrInt, AttrDstType: AttrInt, AttrSampleSize: AttrInt}, infer: inferMultinomial, kernel: multinomialKernel})
}

// rng returns the task's generator, seeded from AttrSeed.
func rng(a Attrs) *rand.Rand {
	s := uint64(a.Int(AttrSeed, 0))
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

func inferRandom(_ []TensorDesc, a Attrs) ([]TensorDesc, error) {
	dt := acl.DataType(a.Int(AttrDstType, int64(acl.Float32)))
	if !isFloat(dt) && dt != acl.Float64 {
		return nil, &dtypeError{fmt.Sprintf("dtype %s is not a float type", dt)}
	}
	if a.Float(AttrHigh, 1) < a.Float(AttrLow, 0) || a.Float(AttrScale, 1) < 0 {
		return nil, fmt.Errorf("high below low or a negative scale")
	}
	return []TensorDesc{{DataType: dt, Format: acl.FormatND, Dims: cloneDims(a.Ints(AttrShape))}}, nil
}

func randomKernel(t *Task, args [][]byte) error {
	r := rng(t.Attrs)
	out := make([]float64, prod(t.Outputs[0].Dims))
	lo, hi := t.Attrs.Float(AttrLow, 0), t.Attrs.Float(AttrHigh, 1)
	mean, sd := t.Attrs.Float(AttrMean, 0), t.Attrs.Float(AttrScale, 1)
	for i := range out {
		if t.Op == OpRandomUniform {
			out[i] = lo + (hi-lo)*r.Float64()
		} else {
			out[i] = mean + sd*r.NormFloat64()
		}
	}
	writeFromF64(args[0], t.Outputs[0].DataType, out)
	return nil
}

func inferBernoulli(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if !isFloat(in[0].DataType) && in[0].DataType != acl.Float64 {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, want a float type", in[0].DataType)}
	}
	dt := acl.DataType(a.Int(AttrDstType, int64(in[0].DataType)))
	if !storable(dt) || dt == acl.String {
		return nil, &dtypeError{fmt.Sprintf("dtype %s cannot hold 0 and 1", dt)}
	}
	return []TensorDesc{{DataType: dt, Format: in[0].Format, Dims: cloneDims(in[0].Dims)}}, nil
}

func bernoulliKernel(t *Task, args [][]byte) error {
	r := rng(t.Attrs)
	p := readF64s(t.Inputs[0], args[0])
	out := make([]float64, len(p))
	for i, v := range p {
		if !(v >= 0 && v <= 1) {
			return kernelError(t, "probability %v at element %d is outside [0, 1]", v, i)
		}
		if r.Float64() < v {
			out[i] = 1
		}
	}
	writeFromF64(args[1], t.Outputs[0].DataType, out)
	return nil
}

func inferMultinomial(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if !isFloat(in[0].DataType) && in[0].DataType != acl.Float64 {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, want a float type", in[0].DataType)}
	}
	if len(in[0].Dims) != 2 {
		return nil, fmt.Errorf("input %s must be [batch, classes]", dimsString(in[0].Dims))
	}
	dt := acl.DataType(a.Int(AttrDstType, int64(acl.Int32)))
	if dt != acl.Int32 && dt != acl.Int64 {
		return nil, &dtypeError{fmt.Sprintf("dtype %s: want int32 or int64", dt)}
	}
	n := a.Int(AttrSampleSize, 1)
	if n < 1 || n > MaxDim {
		return nil, fmt.Errorf("sample_size %d must be positive", n)
	}
	return []TensorDesc{{DataType: dt, Format: acl.FormatND, Dims: []int64{in[0].Dims[0], n}}}, nil
}

func multinomialKernel(t *Task, args [][]byte) error {
	r := rng(t.Attrs)
	x := readF64s(t.Inputs[0], args[0])
	batch, classes := int(t.Inputs[0].Dims[0]), int(t.Inputs[0].Dims[1])
	n := int(t.Attrs.Int(AttrSampleSize, 1))
	out := make([]int64, batch*n)
	cdf := make([]float64, classes)
	for b := range batch {
		row := x[b*classes : (b+1)*classes]
		mx := math.Inf(-1)
		for _, v := range row {
			if v != v || math.IsInf(v, 1) {
				return kernelError(t, "row %d holds %v", b, v)
			}
			mx = math.Max(mx, v)
		}
		if math.IsInf(mx, -1) {
			return kernelError(t, "row %d has no class of positive probability", b)
		}
		var sum float64
		for j, v := range row {
			sum += math.Exp(v - mx)
			cdf[j] = sum
		}
		for s := range n {
			u := r.Float64() * sum
			k := 0
			for k < classes-1 && cdf[k] <= u {
				k++
			}
			out[b*n+s] = int64(k)
		}
	}
	writeFromInts(args[1], t.Outputs[0].DataType, out)
	return nil
}
