package ge

import (
	"fmt"
	"math"
	"strconv"

	"github.com/ascend-go/cann/acl"
)

// Recurrent layers as ONNX defines them (layout 0: time major). Inputs:
// X [seq, batch, in], W [D, G·H, in], R [D, G·H, H], B [D, 2·G·H], H0
// [D, batch, H]; LSTM also C0 [D, batch, H] and peepholes P [D, 3·H];
// then an optional sequence_lens [batch] (int32 or int64, each in
// [1, seq]). D is 2 for AttrDirection "bidirectional" and 1 for
// "forward" (the default) or "reverse"; G is 1 for RNN, 3 for GRU (gates
// z, r, h) and 4 for LSTM (i, o, f, c). Outputs: Y [seq, D, batch, H],
// Y_h [D, batch, H] (LSTM also Y_c). A batch entry past its sequence
// length gets zeros in Y, and its Y_h is the state after its last step
// (the first step of the reverse direction is its last valid one).
//
// AttrActivations lists the activation functions per direction (RNN: f;
// GRU: f, g; LSTM: f, g, h; bidirectional: the forward ones, then the
// reverse ones), as RNNAct* codes; the default is sigmoid for f and tanh
// for g and h (RNN: tanh). activation_alpha_<i> and activation_beta_<i>
// (floats) give the parameters of activation i, with ONNX's defaults.
// AttrClip, when set, clamps every activation's input to [-clip, clip].
// Matrix products go through sgemm; the gate math is float32 over gate
// vectors for the default activations without clip (kernel_rnn_fast.go),
// float64 per element otherwise.
const (
	OpGRU  OpType = 90
	OpLSTM OpType = 91
	OpRNN  OpType = 520
)

// Attributes of the recurrent ops.
const (
	AttrHiddenSize        = "hidden_size"         // int
	AttrLinearBeforeReset = "linear_before_reset" // GRU: bool
	AttrDirection         = "direction"           // string: forward, reverse or bidirectional
	AttrActivations       = "activations"         // ints: RNNAct* codes
	AttrClip              = "clip"                // float: cell clip threshold
)

// Activation functions of the recurrent ops (AttrActivations), ONNX's list.
const (
	RNNActRelu            = 1
	RNNActTanh            = 2
	RNNActSigmoid         = 3
	RNNActAffine          = 4 // alpha·x + beta (default 1, 0)
	RNNActLeakyRelu       = 5 // alpha 0.01
	RNNActThresholdedRelu = 6 // alpha 1
	RNNActScaledTanh      = 7 // alpha·tanh(beta·x) (default 1, 1)
	RNNActHardSigmoid     = 8 // max(0, min(1, alpha·x + beta)) (default 0.2, 0.5)
	RNNActElu             = 9 // alpha 1
	RNNActSoftsign        = 10
	RNNActSoftplus        = 11
)

// maxRNNActs bounds AttrActivations: LSTM's three per direction, twice.
const maxRNNActs = 6

// RNNActAlpha and RNNActBeta name the float parameters of activation i.
func RNNActAlpha(i int) string { return "activation_alpha_" + strconv.Itoa(i) }

// RNNActBeta names the second float parameter of activation i.
func RNNActBeta(i int) string { return "activation_beta_" + strconv.Itoa(i) }

func init() {
	for _, op := range []struct {
		t      OpType
		name   string
		minIn  int
		gates  int64
		reqIns int
	}{{OpRNN, "RNN", 5, 1, 5}, {OpGRU, "GRU", 5, 3, 5}, {OpLSTM, "LSTM", 7, 4, 7}} {
		attrs := map[string]AttrKind{AttrHiddenSize: AttrInt, AttrDirection: AttrString,
			AttrActivations: AttrInts, AttrClip: AttrFloat}
		if op.t == OpGRU {
			attrs[AttrLinearBeforeReset] = AttrBool
		}
		for i := range maxRNNActs {
			attrs[RNNActAlpha(i)], attrs[RNNActBeta(i)] = AttrFloat, AttrFloat
		}
		g, req := op.gates, op.reqIns
		registerOp(op.t, &opSpec{name: op.name, minIn: op.minIn, maxIn: op.minIn + 1, attrs: attrs,
			infer: func(in []TensorDesc, a Attrs) ([]TensorDesc, error) { return inferRNN(g, req, in, a) }, kernel: rnnKernel})
	}
}

// rnnGates returns G for a recurrent op.
func rnnGates(op OpType) int {
	switch op {
	case OpGRU:
		return 3
	case OpLSTM:
		return 4
	}
	return 1
}

// rnnDirections returns D for the direction attribute.
func rnnDirections(a Attrs) (int, error) {
	switch d := a.String(AttrDirection); d {
	case "", "forward", "reverse":
		return 1, nil
	case "bidirectional":
		return 2, nil
	default:
		return 0, fmt.Errorf("direction %q is not forward, reverse or bidirectional", d)
	}
}

// rnnActs returns the activation codes and their parameters, checked.
func rnnActs(op OpType, dirs int, a Attrs) (rnnActSet, error) {
	var set rnnActSet
	per := rnnActsPer(op)
	acts := a.Ints(AttrActivations)
	if acts == nil {
		for d := range dirs {
			for i := range per {
				set.codes[d*per+i] = rnnDefaultAct(op, i)
			}
		}
		acts = set.codes[:per*dirs]
	}
	if len(acts) != per*dirs {
		return set, fmt.Errorf("activations: %d given, want %d", len(acts), per*dirs)
	}
	set.n = len(acts)
	for i, c := range acts {
		set.codes[i] = c
		da, db := 0.0, 0.0
		switch c {
		case RNNActRelu, RNNActTanh, RNNActSigmoid, RNNActSoftsign, RNNActSoftplus:
		case RNNActAffine, RNNActScaledTanh:
			da, db = 1, 0
			if c == RNNActScaledTanh {
				db = 1
			}
		case RNNActLeakyRelu:
			da = 0.01
		case RNNActThresholdedRelu, RNNActElu:
			da = 1
		case RNNActHardSigmoid:
			da, db = 0.2, 0.5
		default:
			return set, fmt.Errorf("activation code %d is not an RNNAct* value", c)
		}
		set.alpha[i], set.beta[i] = a.Float(RNNActAlpha(i), da), a.Float(RNNActBeta(i), db)
	}
	return set, nil
}

// rnnActSet is the activations of a recurrent op, per direction in
// order: codes, alphas and betas, n of each (held in arrays so a kernel
// run allocates nothing for them).
type rnnActSet struct {
	codes       [maxRNNActs]int64
	alpha, beta [maxRNNActs]float64
	n           int
}

// rnnActsPer is the number of activations per direction.
func rnnActsPer(op OpType) int {
	switch op {
	case OpGRU:
		return 2
	case OpLSTM:
		return 3
	}
	return 1
}

// rnnDefaultAct is ONNX's default activation i of op: sigmoid for the
// gates (f), tanh for g and h (RNN: tanh).
func rnnDefaultAct(op OpType, i int) int64 {
	if op != OpRNN && i == 0 {
		return RNNActSigmoid
	}
	return RNNActTanh
}

func rnnAct(code int64, alpha, beta, v float64) float64 {
	switch code {
	case RNNActRelu:
		return math.Max(v, 0)
	case RNNActTanh:
		return math.Tanh(v)
	case RNNActSigmoid:
		return sigmoid(v)
	case RNNActAffine:
		return alpha*v + beta
	case RNNActLeakyRelu:
		if v < 0 {
			return alpha * v
		}
		return v
	case RNNActThresholdedRelu:
		if v > alpha {
			return v
		}
		return 0
	case RNNActScaledTanh:
		return alpha * math.Tanh(beta*v)
	case RNNActHardSigmoid:
		return math.Max(0, math.Min(1, alpha*v+beta))
	case RNNActElu:
		if v < 0 {
			return alpha * (math.Exp(v) - 1)
		}
		return v
	case RNNActSoftsign:
		return v / (1 + math.Abs(v))
	case RNNActSoftplus:
		return math.Log1p(math.Exp(v))
	}
	return v
}

func inferRNN(g int64, req int, in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if err := needFloat("input", in[0].DataType); err != nil {
		return nil, err
	}
	if err := sameType(in[:req]); err != nil {
		return nil, err
	}
	op := map[int64]OpType{1: OpRNN, 3: OpGRU, 4: OpLSTM}[g]
	dirs, err := rnnDirections(a)
	if err != nil {
		return nil, err
	}
	if _, err := rnnActs(op, dirs, a); err != nil {
		return nil, err
	}
	if c := a.Float(AttrClip, 1); c <= 0 || c != c {
		return nil, fmt.Errorf("clip %g must be positive", c)
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
	d := int64(dirs)
	want := [][]int64{nil, {d, g * h, inSize}, {d, g * h, h}, {d, 2 * g * h}, {d, batch, h}, {d, batch, h}, {d, 3 * h}}
	for i := 1; i < req; i++ {
		if !dimsEqual(in[i].Dims, want[i]) {
			return nil, fmt.Errorf("input %d is %s, want %s", i, dimsString(in[i].Dims), dimsString(want[i]))
		}
	}
	if len(in) > req {
		sl := in[req]
		if sl.DataType != acl.Int32 && sl.DataType != acl.Int64 {
			return nil, &dtypeError{fmt.Sprintf("sequence_lens has data type %s, want int32 or int64", sl.DataType)}
		}
		if !dimsEqual(sl.Dims, []int64{batch}) {
			return nil, fmt.Errorf("sequence_lens is %s, want [%d]", dimsString(sl.Dims), batch)
		}
	}
	dt, f := in[0].DataType, in[0].Format
	out := []TensorDesc{{DataType: dt, Format: f, Dims: []int64{seq, d, batch, h}}, {DataType: dt, Format: f, Dims: []int64{d, batch, h}}}
	if g == 4 {
		out = append(out, TensorDesc{DataType: dt, Format: f, Dims: []int64{d, batch, h}})
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
	g := rnnGates(t.Op)
	req := 5
	if lstm {
		req = 7
	}
	dirs, err := rnnDirections(t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	set, err := rnnActs(t.Op, dirs, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	clip := math.Inf(1)
	if _, ok := t.Attrs[AttrClip]; ok {
		clip = t.Attrs.Float(AttrClip, 0)
	}
	var lensBuf [64]int64
	lens := lensBuf[:0]
	if batch > len(lensBuf) {
		lens = make([]int64, batch)
	}
	lens = lens[:batch]
	for i := range lens {
		lens[i] = int64(seq)
	}
	if len(d) > req {
		readInts(lens, d[req].DataType, args[req])
		for i, l := range lens {
			if l < 1 || l > int64(seq) {
				return kernelError(t, "sequence_lens[%d] = %d is outside [1, %d]", i, l, seq)
			}
		}
	}
	gh := g * h
	x := readFloats(&s, dt, args[0], seq*batch*in)
	wAll := readFloats(&s, dt, args[1], dirs*gh*in)
	rAll := readFloats(&s, dt, args[2], dirs*gh*h)
	bAll := readFloats(&s, dt, args[3], dirs*2*gh)
	h0 := readFloats(&s, dt, args[4], dirs*batch*h)
	var c0, pAll []float32
	if lstm {
		c0 = readFloats(&s, dt, args[5], dirs*batch*h)
		pAll = readFloats(&s, dt, args[6], dirs*3*h)
	}
	nIn := len(d)
	y := outFloats(&s, dt, args[nIn], seq*dirs*batch*h)
	yh := outFloats(&s, dt, args[nIn+1], dirs*batch*h)
	var yc []float32
	if lstm {
		yc = outFloats(&s, dt, args[nIn+2], dirs*batch*h)
	}
	clear(y)
	xw := s.f32(seq * batch * gh)
	hr := s.f32(batch * gh)
	rh := s.f32(batch * h)
	hPrev := s.f32(batch * h)
	cPrev := s.f32(batch * h)
	lbr := t.Attrs.Bool(AttrLinearBeforeReset)
	acts, alpha, beta := set.codes[:set.n], set.alpha[:set.n], set.beta[:set.n]
	per := len(acts) / dirs
	bs, pre, tmp := s.f32(gh), s.f32(gh), s.f32(h)
	for dir := range dirs {
		reverse := dir == 1 || t.Attrs.String(AttrDirection) == "reverse"
		w, r, b := wAll[dir*gh*in:(dir+1)*gh*in], rAll[dir*gh*h:(dir+1)*gh*h], bAll[dir*2*gh:(dir+1)*2*gh]
		act := func(k int, v float64) float64 {
			v = math.Max(-clip, math.Min(clip, v))
			i := dir*per + k
			return rnnAct(acts[i], alpha[i], beta[i], v)
		}
		copy(hPrev, h0[dir*batch*h:(dir+1)*batch*h])
		var p []float32
		if lstm {
			copy(cPrev, c0[dir*batch*h:(dir+1)*batch*h])
			p = pAll[dir*3*h : (dir+1)*3*h]
		}
		fast := rnnFastOK(t.Op, acts, dir, per, clip)
		rnnBiasSum(bs, b, gh)
		// Input projections of every step at once: [seq·batch, G·H].
		sgemm(false, true, seq*batch, gh, in, 1, x, in, w, in, 0, xw, gh)
		// The recurrent weights, all gates, packed once for every step.
		rAll, rCand := rnnPackR(&s, r, batch, h, gh, t.Op == OpGRU && !lbr)
		for step := range seq {
			rnnGemm(batch, gh, h, hPrev, rAll, hr, gh)
			if t.Op == OpGRU && !lbr {
				// z and r first: the candidate needs (r ⊙ H(t-1))·Rhᵀ.
				for n := range batch {
					tm := timeOf(step, lens[n], reverse)
					if tm < 0 {
						continue
					}
					gx := xw[(tm*batch+n)*gh:]
					if fast {
						gruResetFast(h, gx, hr[n*gh:], bs, hPrev[n*h:(n+1)*h], rh[n*h:(n+1)*h], tmp)
						continue
					}
					for j := range h {
						k := n*gh + h + j
						rr := act(0, float64(gx[h+j])+float64(hr[k])+float64(b[h+j])+float64(b[gh+h+j]))
						rh[n*h+j] = float32(rr * float64(hPrev[n*h+j]))
					}
				}
				rnnGemm(batch, h, h, rh, rCand, hr[2*h:], gh)
			}
			for n := range batch {
				tm := timeOf(step, lens[n], reverse)
				if tm < 0 {
					continue
				}
				gx := xw[(tm*batch+n)*gh:]
				hrow := hr[n*gh:]
				yt := y[((tm*dirs+dir)*batch+n)*h:]
				if fast {
					var c []float32
					if lstm {
						c = cPrev[n*h : (n+1)*h]
					}
					rnnRowFast(t.Op, lbr, h, gx, hrow, b, bs, p, hPrev[n*h:(n+1)*h], c, yt, pre, tmp)
					continue
				}
				for j := range h {
					pre := func(k int) float64 {
						return float64(gx[k*h+j]) + float64(hrow[k*h+j]) + float64(b[k*h+j]) + float64(b[gh+k*h+j])
					}
					hp := float64(hPrev[n*h+j])
					var hn float64
					switch t.Op {
					case OpRNN:
						hn = act(0, pre(0))
					case OpGRU:
						z := act(0, pre(0))
						var hh float64
						if lbr {
							rr := act(0, pre(1))
							hh = act(1, float64(gx[2*h+j])+float64(b[2*h+j])+rr*(float64(hrow[2*h+j])+float64(b[gh+2*h+j])))
						} else {
							hh = act(1, pre(2))
						}
						hn = (1-z)*hh + z*hp
					case OpLSTM:
						c0 := float64(cPrev[n*h+j])
						i := act(0, pre(0)+float64(p[j])*c0)
						f := act(0, pre(2)+float64(p[2*h+j])*c0)
						c := f*c0 + i*act(1, pre(3))
						o := act(0, pre(1)+float64(p[h+j])*c)
						cPrev[n*h+j] = float32(c)
						hn = o * act(2, c)
					}
					yt[j] = float32(hn)
				}
			}
			// The new state of the batch entries that took a step.
			for n := range batch {
				if tm := timeOf(step, lens[n], reverse); tm >= 0 {
					copy(hPrev[n*h:(n+1)*h], y[((tm*dirs+dir)*batch+n)*h:])
				}
			}
		}
		copy(yh[dir*batch*h:], hPrev)
		if lstm {
			copy(yc[dir*batch*h:], cPrev)
		}
	}
	storeFloats(dt, args[nIn], y)
	storeFloats(dt, args[nIn+1], yh)
	if lstm {
		storeFloats(dt, args[nIn+2], yc)
	}
	return nil
}

// timeOf is the time index a direction processes at step for a sequence
// of length l, or -1 once the sequence has ended.
func timeOf(step int, l int64, reverse bool) int {
	if int64(step) >= l {
		return -1
	}
	if reverse {
		return int(l) - 1 - step
	}
	return step
}
