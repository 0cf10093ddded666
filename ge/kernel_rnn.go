package ge

import (
	"fmt"
	"math"
)

// Recurrent layers, forward direction, with the ONNX default activations
// (sigmoid gates, tanh cell). Inputs: X [seq, batch, in], W [1, G·H, in],
// R [1, G·H, H], B [1, 2·G·H], H0 [1, batch, H] (LSTM also C0
// [1, batch, H] and peepholes P [1, 3·H]); G is 3 for GRU (gates z, r, h)
// and 4 for LSTM (i, o, f, c). Outputs: Y [seq, 1, batch, H], Y_h
// [1, batch, H] (LSTM also Y_c). Matrix products go through sgemm; the
// gate math is float64 per element.
const (
	OpGRU  OpType = 90
	OpLSTM OpType = 91
)

// Attributes of the recurrent ops.
const (
	AttrHiddenSize        = "hidden_size"         // int
	AttrLinearBeforeReset = "linear_before_reset" // GRU: bool
)

func init() {
	registerOp(OpGRU, &opSpec{name: "GRU", minIn: 5, maxIn: 5,
		attrs: map[string]AttrKind{AttrHiddenSize: AttrInt, AttrLinearBeforeReset: AttrBool}, infer: inferRNN, kernel: rnnKernel})
	registerOp(OpLSTM, &opSpec{name: "LSTM", minIn: 7, maxIn: 7,
		attrs: map[string]AttrKind{AttrHiddenSize: AttrInt}, infer: inferRNN, kernel: rnnKernel})
}

func inferRNN(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if err := needFloat("input", in[0].DataType); err != nil {
		return nil, err
	}
	if err := sameType(in); err != nil {
		return nil, err
	}
	g := int64(3)
	if len(in) == 7 {
		g = 4
	}
	x := in[0].Dims
	if len(x) != 3 {
		return nil, fmt.Errorf("input 0 (X) %s must be [seq, batch, input]", dimsString(x))
	}
	seq, batch, inSize := x[0], x[1], x[2]
	h := a.Int(AttrHiddenSize, 0)
	if h < 1 || h > MaxDim/g {
		return nil, fmt.Errorf("hidden_size %d must be positive", h)
	}
	want := [][]int64{nil, {1, g * h, inSize}, {1, g * h, h}, {1, 2 * g * h}, {1, batch, h}, {1, batch, h}, {1, 3 * h}}
	for i := 1; i < len(in); i++ {
		if !dimsEqual(in[i].Dims, want[i]) {
			return nil, fmt.Errorf("input %d is %s, want %s", i, dimsString(in[i].Dims), dimsString(want[i]))
		}
	}
	dt, f := in[0].DataType, in[0].Format
	out := []TensorDesc{{DataType: dt, Format: f, Dims: []int64{seq, 1, batch, h}}, {DataType: dt, Format: f, Dims: []int64{1, batch, h}}}
	if g == 4 {
		out = append(out, TensorDesc{DataType: dt, Format: f, Dims: []int64{1, batch, h}})
	}
	return out, nil
}

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

func rnnKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	d := t.Inputs
	dt := d[0].DataType
	seq, batch, in := int(d[0].Dims[0]), int(d[0].Dims[1]), int(d[0].Dims[2])
	h := int(t.Attrs.Int(AttrHiddenSize, 0))
	lstm := t.Op == OpLSTM
	g := 3
	if lstm {
		g = 4
	}
	gh := g * h
	x := readFloats(&s, dt, args[0], seq*batch*in)
	w := readFloats(&s, dt, args[1], gh*in)
	r := readFloats(&s, dt, args[2], gh*h)
	b := readFloats(&s, dt, args[3], 2*gh)
	hPrev := append([]float32(nil), readFloats(&s, dt, args[4], batch*h)...)
	var cPrev, p []float32
	nIn := 5
	if lstm {
		cPrev = append([]float32(nil), readFloats(&s, dt, args[5], batch*h)...)
		p = readFloats(&s, dt, args[6], 3*h)
		nIn = 7
	}
	y := outFloats(&s, dt, args[nIn], seq*batch*h)
	yh := outFloats(&s, dt, args[nIn+1], batch*h)
	// Input projections of every step at once: [seq·batch, G·H].
	xw := s.f32(seq * batch * gh)
	sgemm(false, true, seq*batch, gh, in, 1, x, in, w, in, 0, xw, gh)
	hr := s.f32(batch * gh)
	rh := s.f32(batch * h) // GRU: r ⊙ H(t-1)
	lbr := t.Attrs.Bool(AttrLinearBeforeReset)
	for step := range seq {
		gx := xw[step*batch*gh : (step+1)*batch*gh]
		if lstm || lbr {
			sgemm(false, true, batch, gh, h, 1, hPrev, h, r, h, 0, hr, gh)
		} else {
			sgemm(false, true, batch, 2*h, h, 1, hPrev, h, r, h, 0, hr[:batch*gh], gh)
		}
		yt := y[step*batch*h : (step+1)*batch*h]
		if lstm {
			for n := range batch {
				for j := range h {
					at := func(k int) float64 {
						return float64(gx[n*gh+k*h+j]) + float64(hr[n*gh+k*h+j]) + float64(b[k*h+j]) + float64(b[gh+k*h+j])
					}
					c0 := float64(cPrev[n*h+j])
					i := sigmoid(at(0) + float64(p[j])*c0)
					f := sigmoid(at(2) + float64(p[2*h+j])*c0)
					c := f*c0 + i*math.Tanh(at(3))
					o := sigmoid(at(1) + float64(p[h+j])*c)
					cPrev[n*h+j] = float32(c)
					yt[n*h+j] = float32(o * math.Tanh(c))
				}
			}
		} else {
			for n := range batch {
				for j := range h {
					k := n*gh + j
					z := sigmoid(float64(gx[k]) + float64(hr[k]) + float64(b[j]) + float64(b[gh+j]))
					rr := sigmoid(float64(gx[k+h]) + float64(hr[k+h]) + float64(b[h+j]) + float64(b[gh+h+j]))
					if lbr {
						hr[k+2*h] = float32(rr * (float64(hr[k+2*h]) + float64(b[gh+2*h+j])))
					} else {
						rh[n*h+j] = float32(rr * float64(hPrev[n*h+j]))
					}
					hr[k] = float32(z)
				}
			}
			if !lbr {
				// (r ⊙ H(t-1))·Rhᵀ, then the reset-gate bias.
				sgemm(false, true, batch, h, h, 1, rh, h, r[2*h*h:], h, 0, hr[2*h:], gh)
				for n := range batch {
					for j := range h {
						hr[n*gh+2*h+j] += b[gh+2*h+j]
					}
				}
			}
			for n := range batch {
				for j := range h {
					k := n*gh + j
					z := float64(hr[k])
					hh := math.Tanh(float64(gx[k+2*h]) + float64(hr[k+2*h]) + float64(b[2*h+j]))
					yt[n*h+j] = float32((1-z)*hh + z*float64(hPrev[n*h+j]))
				}
			}
		}
		copy(hPrev, yt)
	}
	copy(yh, hPrev)
	storeFloats(dt, args[nIn], y)
	storeFloats(dt, args[nIn+1], yh)
	if lstm {
		yc := outFloats(&s, dt, args[nIn+2], batch*h)
		copy(yc, cPrev)
		storeFloats(dt, args[nIn+2], yc)
	}
	return nil
}
