package onnx

import (
	"github.com/ascend-go/cann/ge"
)

func init() {
	converters["RNN"] = convRNN(ge.OpRNN, 1)
	converters["GRU"] = convRNN(ge.OpGRU, 3)
	converters["LSTM"] = convRNN(ge.OpLSTM, 4)
}

// rnnActCodes maps ONNX's activation names onto ge's codes.
var rnnActCodes = map[string]int64{"Relu": ge.RNNActRelu, "Tanh": ge.RNNActTanh, "Sigmoid": ge.RNNActSigmoid,
	"Affine": ge.RNNActAffine, "LeakyRelu": ge.RNNActLeakyRelu, "ThresholdedRelu": ge.RNNActThresholdedRelu,
	"ScaledTanh": ge.RNNActScaledTanh, "HardSigmoid": ge.RNNActHardSigmoid, "Elu": ge.RNNActElu,
	"Softsign": ge.RNNActSoftsign, "Softplus": ge.RNNActSoftplus}

// rnnActParams says which activations take alpha and beta: ONNX's
// activation_alpha/activation_beta lists are consumed in the order of the
// activations that use them (as onnxruntime reads them).
var rnnActParams = map[int64][2]bool{ge.RNNActAffine: {true, true}, ge.RNNActLeakyRelu: {true, false},
	ge.RNNActThresholdedRelu: {true, false}, ge.RNNActScaledTanh: {true, true}, ge.RNNActHardSigmoid: {true, true},
	ge.RNNActElu: {true, false}}

// convRNN maps RNN, GRU and LSTM onto ge's ops: every direction,
// activation list and clip; sequence_lens as a run-time input; layout 1
// (batch first) by transposing X and the initial states in and the outputs
// out. Absent optional inputs (B, initial_h, initial_c, P) are zeros.
func convRNN(op ge.OpType, gates int64) converter {
	return func(c *nodeCtx) ([]*value, error) {
		maxIn := 6
		if op == ge.OpLSTM {
			maxIn = 8
		}
		if err := c.need(3, maxIn); err != nil {
			return nil, err
		}
		dir := c.strAttr("direction", "forward")
		dirs := int64(1)
		switch dir {
		case "forward", "reverse":
		case "bidirectional":
			dirs = 2
		default:
			return nil, c.errf(ErrInvalidModel, "direction %q", dir)
		}
		layout := c.intAttr("layout", 0)
		if layout != 0 && layout != 1 {
			return nil, c.errf(ErrInvalidModel, "layout %d", layout)
		}
		if c.intAttr("input_forget", 0) != 0 {
			return nil, c.errf(ErrUnsupportedAttr, "input_forget 1 (coupled input and forget gates)")
		}
		attrs := ge.Attrs{ge.AttrDirection: ge.StringAttr(dir)}
		if c.has("clip") {
			attrs[ge.AttrClip] = ge.FloatAttr(c.floatAttr("clip", 0))
		}
		if a := c.attr("activations"); a != nil {
			var codes []int64
			alphas, betas := c.attr("activation_alpha").GetFloats(), c.attr("activation_beta").GetFloats()
			c.ignore("activation_alpha", "activation_beta")
			for i, s := range a.GetStrings() {
				code, ok := rnnActCodes[string(s)]
				if !ok {
					return nil, c.errf(ErrUnsupportedAttr, "activation %q", s)
				}
				codes = append(codes, code)
				p := rnnActParams[code]
				if p[0] && len(alphas) > 0 {
					attrs[ge.RNNActAlpha(i)] = ge.FloatAttr(float64(alphas[0]))
					alphas = alphas[1:]
				}
				if p[1] && len(betas) > 0 {
					attrs[ge.RNNActBeta(i)] = ge.FloatAttr(float64(betas[0]))
					betas = betas[1:]
				}
			}
			attrs[ge.AttrActivations] = ge.IntsAttr(codes)
		} else if c.has("activation_alpha") || c.has("activation_beta") {
			c.ignore("activation_alpha", "activation_beta") // no activation takes them
		}
		x := c.ins[0]
		if len(x.desc.Dims) != 3 {
			return nil, c.errf(ErrInvalidModel, "X is %s, want rank 3", x.desc)
		}
		var err error
		swap := func(v *value) (*value, error) {
			return c.emit(ge.OpTranspose, ge.Attrs{ge.AttrPerm: ge.IntsAttr([]int64{1, 0, 2})}, v)
		}
		if layout == 1 {
			if x, err = swap(x); err != nil {
				return nil, err
			}
		}
		batch := x.desc.Dims[1]
		hs := c.intAttr("hidden_size", 0)
		if hs < 1 && len(c.ins[2].desc.Dims) == 3 {
			hs = c.ins[2].desc.Dims[2]
		}
		attrs[ge.AttrHiddenSize] = ge.IntAttr(hs)
		if op == ge.OpGRU {
			attrs[ge.AttrLinearBeforeReset] = ge.BoolAttr(c.intAttr("linear_before_reset", 0) != 0)
		}
		zeros := func(dims ...int64) (*value, error) {
			v, err := scalar(x.desc.DataType, dims, 0)
			if err != nil {
				return nil, c.wrap(err)
			}
			return v, nil
		}
		ins := []*value{x, c.ins[1], c.ins[2]}
		opt := []struct {
			at    int
			dims  []int64
			state bool
		}{{3, []int64{dirs, 2 * gates * hs}, false}, {5, []int64{dirs, batch, hs}, true}}
		if op == ge.OpLSTM {
			opt = append(opt, struct {
				at    int
				dims  []int64
				state bool
			}{6, []int64{dirs, batch, hs}, true}, struct {
				at    int
				dims  []int64
				state bool
			}{7, []int64{dirs, 3 * hs}, false})
		}
		for _, o := range opt {
			v := c.in(o.at)
			switch {
			case v == nil:
				if v, err = zeros(o.dims...); err != nil {
					return nil, err
				}
			case o.state && layout == 1:
				if v, err = swap(v); err != nil {
					return nil, err
				}
			}
			ins = append(ins, v)
		}
		if v := c.in(4); v != nil {
			ins = append(ins, v)
		}
		outs, err := c.emitN(op, attrs, ins...)
		if err != nil || layout == 0 {
			return outs, err
		}
		// Batch first: Y [seq, D, batch, H] → [batch, seq, D, H], the
		// states [D, batch, H] → [batch, D, H].
		if outs[0], err = c.emit(ge.OpTranspose, ge.Attrs{ge.AttrPerm: ge.IntsAttr([]int64{2, 0, 1, 3})}, outs[0]); err != nil {
			return nil, err
		}
		for i := 1; i < len(outs); i++ {
			if outs[i], err = swap(outs[i]); err != nil {
				return nil, err
			}
		}
		return outs, nil
	}
}
