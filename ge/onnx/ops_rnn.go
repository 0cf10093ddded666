package onnx

import (
	"github.com/ascend-go/cann/ge"
)

func init() {
	converters["GRU"] = convRNN(ge.OpGRU, 3, []string{"Sigmoid", "Tanh"})
	converters["LSTM"] = convRNN(ge.OpLSTM, 4, []string{"Sigmoid", "Tanh", "Tanh"})
}

// convRNN maps GRU/LSTM (forward, default activations, layout 0) onto ge's
// ops, filling absent optional inputs (B, initial_h, initial_c, P) with
// zeros; sequence_lens must be absent or cover the whole sequence.
func convRNN(op ge.OpType, gates int64, acts []string) converter {
	return func(c *nodeCtx) ([]*value, error) {
		maxIn := 6
		if op == ge.OpLSTM {
			maxIn = 8
		}
		if err := c.need(3, maxIn); err != nil {
			return nil, err
		}
		if d := c.strAttr("direction", "forward"); d != "forward" {
			return nil, c.errf(ErrUnsupportedAttr, "direction %q (only forward)", d)
		}
		if c.intAttr("layout", 0) != 0 {
			return nil, c.errf(ErrUnsupportedAttr, "layout 1 (batch first)")
		}
		if c.has("clip") {
			c.read["clip"] = true
			return nil, c.errf(ErrUnsupportedAttr, "clip")
		}
		if c.intAttr("input_forget", 0) != 0 {
			return nil, c.errf(ErrUnsupportedAttr, "input_forget 1")
		}
		if a := c.attr("activations"); a != nil {
			got := a.GetStrings()
			ok := len(got) == len(acts)
			for i := range got {
				ok = ok && string(got[i]) == acts[i]
			}
			if !ok {
				return nil, c.errf(ErrUnsupportedAttr, "activations %q (only the defaults %v)", got, acts)
			}
		}
		c.ignore("activation_alpha", "activation_beta")
		x := c.ins[0]
		if len(x.desc.Dims) != 3 {
			return nil, c.errf(ErrInvalidModel, "X is %s, want [seq, batch, input]", x.desc)
		}
		seq, batch := x.desc.Dims[0], x.desc.Dims[1]
		hs := c.intAttr("hidden_size", 0)
		if hs < 1 && len(c.ins[2].desc.Dims) == 3 {
			hs = c.ins[2].desc.Dims[2]
		}
		attrs := ge.Attrs{ge.AttrHiddenSize: ge.IntAttr(hs)}
		if op == ge.OpGRU {
			attrs[ge.AttrLinearBeforeReset] = ge.BoolAttr(c.intAttr("linear_before_reset", 0) != 0)
		}
		if v := c.in(4); v != nil {
			lens, err := c.constInts(v, "sequence_lens")
			if err != nil {
				return nil, err
			}
			for _, l := range lens {
				if l != seq {
					return nil, c.errf(ErrUnsupportedAttr, "sequence_lens %v shorter than the sequence (%d)", lens, seq)
				}
			}
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
			at   int
			dims []int64
		}{{3, []int64{1, 2 * gates * hs}}, {5, []int64{1, batch, hs}}}
		if op == ge.OpLSTM {
			opt = append(opt, struct {
				at   int
				dims []int64
			}{6, []int64{1, batch, hs}}, struct {
				at   int
				dims []int64
			}{7, []int64{1, 3 * hs}})
		}
		for _, o := range opt {
			v := c.in(o.at)
			if v == nil {
				var err error
				if v, err = zeros(o.dims...); err != nil {
					return nil, err
				}
			}
			ins = append(ins, v)
		}
		return c.emitN(op, attrs, ins...)
	}
}
