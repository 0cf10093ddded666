package onnx

import (
	"encoding/binary"
	"math"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// trainingDomain is ONNX's domain of training ops (optimizer steps). Its
// only version is 1; a model may import it without the default domain
// (ONNX's optimizer tests do).
const trainingDomain = "ai.onnx.preview.training"

// trainingOpset reports whether the model imports the training domain, and
// refuses a version other than 1.
func trainingOpset(m *pb.ModelProto) (bool, error) {
	for _, o := range m.GetOpsetImport() {
		if o.GetDomain() != trainingDomain {
			continue
		}
		if o.GetVersion() != 1 {
			return false, modelError(ErrUnsupportedOp, "%s version %d is not supported (version 1 is)", trainingDomain, o.GetVersion())
		}
		return true, nil
	}
	return false, nil
}

func init() {
	// The optimizers: inputs R, T, then the variadic tensors grouped by
	// kind (X1…Xn, G1…Gn, then each state's n tensors); outputs the new
	// X1…Xn, then each new state's n tensors. Each tensor is one ge op.
	optimizer := func(op ge.OpType, kinds int, attrs func(c *nodeCtx) (ge.Attrs, error)) converter {
		return func(c *nodeCtx) ([]*value, error) {
			if len(c.ins) < 2+kinds || (len(c.ins)-2)%kinds != 0 {
				return nil, c.errf(ErrInvalidModel, "takes R, T and %d tensors per optimized tensor, got %d inputs", kinds, len(c.ins))
			}
			for i, v := range c.ins {
				if v == nil {
					return nil, c.errf(ErrInvalidModel, "input %d is required", i)
				}
			}
			a, err := attrs(c)
			if err != nil {
				return nil, err
			}
			n := (len(c.ins) - 2) / kinds
			outs := make([]*value, (kinds-1)*n)
			for i := range n {
				ins := []*value{c.ins[0], c.ins[1]}
				for k := range kinds {
					ins = append(ins, c.ins[2+k*n+i])
				}
				vs, err := c.emitN(op, a, ins...)
				if err != nil {
					return nil, err
				}
				for k, v := range vs {
					outs[k*n+i] = v
				}
			}
			return outs, nil
		}
	}
	// floats reads the float attributes; those without a default (NaN)
	// are required. A default is a float attribute, so float32 precision.
	floats := func(c *nodeCtx, a ge.Attrs, defs map[string]float64) error {
		for k, def := range defs {
			if math.IsNaN(def) && c.attr(k) == nil {
				return c.errf(ErrInvalidModel, "attribute %q is required", k)
			}
			a[k] = ge.FloatAttr(c.floatAttr(k, float64(float32(def))))
		}
		return nil
	}
	req := math.NaN()
	converters[trainingDomain+"/Adagrad"] = optimizer(ge.OpAdagrad, 3, func(c *nodeCtx) (ge.Attrs, error) {
		a := ge.Attrs{}
		return a, floats(c, a, map[string]float64{ge.AttrDecayFactor: 0, ge.AttrEpsilon: 1e-6, ge.AttrNormCoefficient: 0})
	})
	converters[trainingDomain+"/Adam"] = optimizer(ge.OpAdam, 4, func(c *nodeCtx) (ge.Attrs, error) {
		a := ge.Attrs{}
		return a, floats(c, a, map[string]float64{ge.AttrAlpha: 0.9, ge.AttrBeta: 0.999, ge.AttrEpsilon: 1e-6,
			ge.AttrNormCoefficient: 0, ge.AttrNormCoefficientPost: 0})
	})
	converters[trainingDomain+"/Momentum"] = optimizer(ge.OpMomentum, 3, func(c *nodeCtx) (ge.Attrs, error) {
		a := ge.Attrs{}
		if err := floats(c, a, map[string]float64{ge.AttrAlpha: req, ge.AttrBeta: req, ge.AttrNormCoefficient: req}); err != nil {
			return nil, err
		}
		switch m := c.strAttr("mode", ""); m {
		case "standard", "nesterov":
			a[ge.AttrNesterov] = ge.BoolAttr(m == "nesterov")
		case "":
			return nil, c.errf(ErrInvalidModel, "attribute \"mode\" is required")
		default:
			return nil, c.errf(ErrInvalidModel, "mode %q: want \"standard\" or \"nesterov\"", m)
		}
		return a, nil
	})

	// TfIdfVectorizer (opset 9) with an integer pool; string pools and
	// inputs are not supported (the fallback has no string tensors).
	converters["TfIdfVectorizer"] = func(c *nodeCtx) ([]*value, error) {
		if c.im.opset < 9 {
			return nil, c.errf(ErrUnsupportedOp, "TfIdfVectorizer exists from opset 9")
		}
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		if c.attr("pool_strings") != nil {
			return nil, c.errf(ErrUnsupportedDataType, "string pools (pool_strings) are not supported: string tensors are not")
		}
		a := ge.Attrs{}
		for _, k := range []string{ge.AttrMinGramLength, ge.AttrMaxGramLength, ge.AttrMaxSkipCount} {
			if c.attr(k) == nil {
				return nil, c.errf(ErrInvalidModel, "attribute %q is required", k)
			}
			a[k] = ge.IntAttr(c.intAttr(k, 0))
		}
		for _, k := range []string{ge.AttrNgramCounts, ge.AttrNgramIndexes, ge.AttrPoolInt64s} {
			v, ok := c.intsAttr(k)
			if !ok {
				return nil, c.errf(ErrInvalidModel, "attribute %q is required", k)
			}
			a[k] = ge.IntsAttr(v)
		}
		switch m := c.strAttr("mode", ""); m {
		case "TF":
			a[ge.AttrTfIdfMode] = ge.IntAttr(ge.TfIdfTF)
		case "IDF":
			a[ge.AttrTfIdfMode] = ge.IntAttr(ge.TfIdfIDF)
		case "TFIDF":
			a[ge.AttrTfIdfMode] = ge.IntAttr(ge.TfIdfTFIDF)
		default:
			return nil, c.errf(ErrInvalidModel, "mode %q: want \"TF\", \"IDF\" or \"TFIDF\"", m)
		}
		ins := []*value{c.ins[0]}
		if w := c.attr("weights"); w != nil && len(w.GetFloats()) > 0 {
			b := make([]byte, 4*len(w.GetFloats()))
			for i, f := range w.GetFloats() {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
			}
			ins = append(ins, konst(acl.Float32, []int64{int64(len(w.GetFloats()))}, b))
		}
		return one(c.emit(ge.OpTfIdfVectorizer, a, ins...))
	}
}
